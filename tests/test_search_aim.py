"""The aim check picks, per player count and look-ahead, the most accurate search inside the node budget and
says whether its intervals decide the paper's accuracy met; yardsticks never count. The paired table compares two
searches position by position."""

import pandas as pd
import pytest

from riskcore.experiments.search_aim import aim_table, meets_paper, paired_table

ROWS = [  # search, players, lookahead, optimal (low, high), relative_loss (low, high), node_share, generated_share
    ("A", 2, 3, 0.95, 0.90, 0.98, 0.05, 0.03, 0.07, 0.005, 0.30),  # many goal states: shown, not judged
    ("B", 2, 3, 0.97, 0.90, 0.99, 0.03, 0.02, 0.04, 0.050, 0.20),  # more accurate, over the budget
    ("AB one turn shorter", 2, 3, 0.99, 0.95, 1.0, 0.01, 0.0, 0.02, 0.001, 0.001),  # a yardstick: left out
    ("C", 2, 4, 0.80, 0.70, 0.90, 0.12, 0.05, 0.2, 0.00001, 0.01),
    ("E", 2, 4, 0.80, 0.70, 0.90, 0.10, 0.05, 0.15, 0.004, 0.02),  # C's accuracy at a lower loss
    ("D", 3, 4, 0.95, 0.90, 0.98, 0.02, 0.01, 0.03, 0.020, 0.05),  # nothing inside the budget
    ("F", 3, 5, 0.70, 0.60, 0.80, 0.02, 0.01, 0.03, 0.00001, 0.05),  # decided short of 88.1%
]
COLUMNS = ["search", "players", "lookahead", "optimal", "optimal_low", "optimal_high", "relative_loss", "loss_low",
           "loss_high", "node_share", "generated_share"]


@pytest.fixture
def table():
    acc = pd.DataFrame(ROWS, columns=COLUMNS)
    return aim_table(acc, references=("AB one turn shorter",)).set_index(["players", "lookahead"])


def test_the_most_accurate_search_inside_the_budget_is_picked_and_judged(table):
    row = table.loc[(2, 3)]
    assert (row.in_budget, row.paper, row.in_budget_generated_share) == ("A", "met", 0.30)
    assert not row.paper_regime
    assert (row.most_accurate, row.most_accurate_share) == ("B", 0.05)


def test_equal_accuracy_goes_to_the_lower_loss_and_short_of_the_paper_is_not_met(table):
    row = table.loc[(2, 4)]
    assert (row.in_budget, row.in_budget_loss, row.paper) == ("E", 0.10, "not decided")


def test_no_search_inside_the_budget_is_reported_as_not_met(table):
    row = table.loc[(3, 4)]
    assert (row.in_budget, row.paper, row.most_accurate) == ("", "missed", "D")
    assert pd.isna(row.in_budget_optimal) and pd.isna(row.in_budget_generated_share)


def test_a_search_decided_short_of_the_paper_in_its_regime_is_missed(table):
    row = table.loc[(3, 5)]
    assert (row.in_budget, row.paper, row.paper_regime) == ("F", "missed", True)


def test_the_paper_is_met_only_when_both_intervals_decide_it_and_the_thresholds_are_inclusive():
    assert meets_paper((0.881, 0.95), (0.01, 0.094)) == "met"
    assert meets_paper((0.80, 0.95), (0.01, 0.05)) == "not decided"  # 88.3% [77.8, 94.2] is not a yes
    assert meets_paper((0.95, 0.99), (0.02, 0.095)) == "not decided"
    assert meets_paper((0.70, 0.880), (0.01, 0.05)) == "missed"
    assert meets_paper((0.95, 0.99), (0.0941, 0.2)) == "missed"


def test_paired_comparisons_count_the_discordant_positions_and_bootstrap_the_difference():
    rows = []
    for position in range(40):
        a, b = (1.0, 0.0) if position < 12 else (1.0, 1.0) if position < 38 else (0.0, 1.0)
        rows += [("A", 2, position, 3, a), ("B", 2, position, 3, b), ("random placement", 2, position, 3, 0.5)]
    nodes = pd.DataFrame(rows, columns=["search", "players", "position", "lookahead", "optimal"])
    t = paired_table(nodes, [("A", "B"), ("A", "random placement"), ("A", "missing")]).set_index("b")
    assert list(t.index) == ["B", "random placement"]
    ab = t.loc["B"]
    assert (ab.positions, ab.a_optimal, ab.b_optimal) == (40, 0.95, 0.7)
    assert ab.difference == pytest.approx(0.25) and ab.ci_low > 0 and ab.answer == "higher"
    assert ab.mcnemar_p == pytest.approx(2 * sum(__import__("math").comb(14, k) for k in range(0, 3)) / 2**14)
    assert pd.isna(t.loc["random placement"].mcnemar_p) and t.loc["random placement"].answer == "higher"
    again = paired_table(nodes, [("A", "B")])
    assert again.ci_low.iloc[0] == ab.ci_low  # the bootstrap's seed is recorded


def test_a_table_without_the_needed_columns_is_refused_by_name():
    with pytest.raises(ValueError, match="generated_share"):
        aim_table(pd.DataFrame(columns=COLUMNS[:-1]))


def test_a_handful_of_positions_decides_nothing():
    rows = [(s, 2, p, 4, 1.0 if s == "A" else 0.0) for p in range(5) for s in ("A", "B")]
    nodes = pd.DataFrame(rows, columns=["search", "players", "position", "lookahead", "optimal"])
    assert paired_table(nodes, [("A", "B")]).answer.tolist() == ["too few positions"]


def test_the_search_report_gives_an_undecided_paired_comparison_the_size_its_table_says_would_decide_it():
    from riskcore.experiments.search_report import SearchResults

    accuracy = pd.DataFrame([{"search": "GB", "players": 2, "lookahead": 4, "positions": 60, "optimal": 0.8,
                              "relative_loss": 0.1, "node_share": 0.01}])
    paired = pd.DataFrame([
        {"players": 2, "turns": 4, "comparison": "X vs GB", "positions": 60, "difference": 0.05, "ci_low": -0.03,
         "ci_high": 0.13, "answer": "not decided", "needs": 427, "a_optimal": 0.85},
        {"players": 2, "turns": 4, "comparison": "Y vs GB", "positions": 60, "difference": 0.2, "ci_low": 0.1,
         "ci_high": 0.3, "answer": "higher", "needs": None, "a_optimal": 0.95}])
    aim = pd.DataFrame({"paper_regime": pd.Series([], dtype=bool)})
    s = SearchResults(accuracy, pd.Series(dtype=float), aim, paired)
    assert s.pair("X", "GB", 2) == ("+5.0% [-3.0%, +13.0%], not decided at 60 positions (a half-width of 0.03 "
                                    "needs about 427)")
    assert s.pair("Y", "GB", 2) == "+20.0% [+10.0%, +30.0%], higher"
    assert s.pair("Z", "GB", 2).startswith("not measured")
    assert s.like_for_like().startswith("the goal-based tree is never")
