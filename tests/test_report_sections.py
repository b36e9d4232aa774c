"""The report's sections state their answers by the rules they declare: the numbers behind each sentence."""

import pandas as pd
import pytest

from riskcore.experiments.agents_report import AgentResults
from riskcore.experiments.recognition.generalisation_report import span, verdict
from riskcore.experiments.recognition.focus_report import RecognitionResults

VALIDATION = pd.Series({"games": 100, "wins": 50, "draws": 0})
YARDSTICK = pd.DataFrame({"generation": [0], "wins": [10], "games": [20], "draws": [0], "decided_share": [0.5]})
ROUND_ROBIN = pd.DataFrame({"agent": ["a", "b"], "win_rate": [0.9, 0.1], "ci_low": [0.85, 0.05],
                            "ci_high": [0.95, 0.15], "games": [200, 200]})
DICE = pd.DataFrame({"side": ["attacker"], "learned: agrees with the optimum": [0.7]})


def _agents(weight_wins: list[int], games: int = 400) -> AgentResults:
    belief = pd.DataFrame({"belief_weight": [0.0] + [1.0 + i for i in range(len(weight_wins))],
                           "wins": [100] + weight_wins, "games": [games] * (1 + len(weight_wins))})
    return AgentResults(ROUND_ROBIN, belief, VALIDATION, YARDSTICK, DICE)


@pytest.mark.parametrize("wins, answer", [([160, 100], "yes"), ([40, 100], "no"), ([100, 104], "not decided")])
def test_recognising_missions_wins_by_the_declared_rule(wins, answer):
    agents = _agents(wins)
    assert agents.recognition_wins().startswith(answer)
    assert agents.blocking_costs() == (answer == "no")
    if answer == "not decided":  # the undecided answer gives the size that would decide it
        assert "needs about" in agents.recognition_wins()


def test_the_agents_section_reads_its_tables():
    agents = _agents([100])
    assert agents.leaders.startswith("`a` leads") and agents.dice("attacker", "learned: agrees with the optimum") == 0.7
    assert [round(x, 3) for x in agents.versus[0][:2]] == [1.0, 0.0]


@pytest.mark.parametrize("low, high, answer", [(0.01, 0.2, "higher"), (-0.2, -0.01, "lower"),
                                               (-0.1, 0.1, "not decided")])
def test_a_paired_difference_is_answered_by_its_interval(low, high, answer):
    assert verdict(pd.Series({"ci_low": low, "ci_high": high, "games": 80})).startswith(answer)


def test_a_span_of_no_families_says_so():
    assert span([]) == "none" and span([0.42, 0.8, 0.61]) == "0.42 to 0.80"


def test_the_recognition_section_picks_by_focus_and_checkpoint():
    rows = [{"setting": s, "metric": "top1", "point": p, "focus": f, "value": v, "ci_low": v - 0.05,
             "ci_high": v + 0.05, "subset": "all", "ablation": False}
            for s, p, f, v in [("uniform", 0.5, 0.8, 0.17), ("goal", 0.5, 0.8, 0.6), ("goal", 0.5, 0.0, 0.1),
                               ("uniform", 0.5, 0.0, 0.2), ("goal", 1.0, 0.0, 0.25)]]
    rows.append({**rows[1], "value": 0.99, "ablation": True})  # an ablation never answers the main question
    rec = RecognitionResults(pd.DataFrame(rows), 300, 0.8)
    assert rec.best_at(0.5) == "goal" and rec.best_at(0.5, focus=0.0) == "uniform"
    assert rec.top1("goal", 0.5) == "60.0% [55.0%, 65.0%]" and rec.best_top1_at_focus_zero() == 0.25
