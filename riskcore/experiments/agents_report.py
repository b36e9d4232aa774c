"""The agent studies' numbers as the report states them: the round robin, the aware agent's belief weights, the
genetic tuning's answers and Monte Carlo control of dice choices.

The report notebook's agents section reads its sentences from here, so the section's code stays a page of prose.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pandas as pd

from riskcore.db import query
from riskcore.experiments.genetic import answers as ga_answers
from riskcore.verdicts import leaders_sentence, rate_difference, undecided


class AgentResults:
    """`round_robin` (best first), `belief` (the aware sweep by weight), the GA's validation and yardstick, and the
    dice-learning table (`mcrl-agreement`, by side)."""

    def __init__(self, round_robin: pd.DataFrame, belief: pd.DataFrame, validation: pd.Series,
                 yardstick: pd.DataFrame, dice: pd.DataFrame):
        self.round_robin, self.belief, self.dice_table = round_robin, belief, dice.set_index("side")
        self.leaders = leaders_sentence(round_robin)
        self.base = belief.iloc[0]  # belief weight 0: plain mission play
        # each belief weight above 0 against 0: (weight, difference of win rates, Newcombe's 95% interval)
        self.versus = [(w.belief_weight, *rate_difference(int(w.wins), int(w.games), int(self.base.wins),
                                                          int(self.base.games))) for w in belief.iloc[1:].itertuples()]
        self.ga_beat, self.ga_progress = ga_answers(validation, yardstick)

    @classmethod
    def load(cls, load_table: Callable[[str], pd.DataFrame], data_dir: Path | None = None) -> "AgentResults":
        read = lambda sql: query(sql, data_dir=data_dir)  # noqa: E731
        return cls(read("SELECT * FROM tournament_results WHERE tournament = 'round-robin' "
                        "ORDER BY win_rate DESC, bt_elo DESC"),
                   read("SELECT * FROM aware_sweep WHERE tournament = 'aware' ORDER BY belief_weight"),
                   read("SELECT * FROM ga_validation WHERE sweep = 'genetic_tuning'").iloc[0],
                   read("SELECT * FROM ga_yardstick WHERE sweep = 'genetic_tuning' ORDER BY generation"),
                   load_table("mcrl-agreement"))

    def recognition_wins(self) -> str:
        """Does recognising the opponents' missions win games: yes if some weight is decided better, no if none is
        and some is decided worse, else not decided (with the size the widest interval needs)."""
        better = [x for x in self.versus if x[2] > 0]
        worse = [x for x in self.versus if x[3] < 0]
        widest = max(self.versus, key=lambda x: x[3] - x[2])
        return "yes" if better else "no" if worse else undecided(int(self.base.games), widest[2], widest[3])

    def blocking_costs(self) -> bool:
        return any(x[3] < 0 for x in self.versus) and not any(x[2] > 0 for x in self.versus)

    def dice(self, side: str, column: str) -> float:
        return float(self.dice_table.loc[side, column])
