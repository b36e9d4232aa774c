"""The search study's numbers as the report states them: accuracy per search, the paper's aim, paired comparisons.

The report notebook's search section reads its sentences from here, so the section's code stays a page of prose.
"""

from __future__ import annotations

import pandas as pd

from riskcore.db import query
from riskcore.experiments.search import REFERENCES
from riskcore.verdicts import HALF_WIDTH, pct, trials_for_half_width, undecided


class SearchResults:
    """One search experiment's tables: `accuracy` (search_accuracy rows), `ab_nodes` (AB's mean tree per player
    count and look-ahead), `aim` (search-aim) and `paired` (search-paired)."""

    def __init__(self, accuracy: pd.DataFrame, ab_nodes: pd.Series, aim: pd.DataFrame, paired: pd.DataFrame):
        self.full = int(accuracy[accuracy.positions == accuracy.positions.max()].lookahead.max())  # every position
        self.deep = int(accuracy.lookahead.max())  # one turn deeper on the first few
        self.by = accuracy.set_index(["search", "players", "lookahead"])
        self.ab_mean = ab_nodes
        self.aim = aim
        self.paired = paired.set_index(["players", "turns", "comparison"])

    @classmethod
    def load(cls, run: str, load_table) -> "SearchResults":
        accuracy = query("SELECT * FROM search_accuracy WHERE run = ?", [run])
        ab_nodes = query("SELECT players, lookahead, avg(nodes) AS nodes FROM search_nodes WHERE run = ? AND "
                         "search = 'AB' GROUP BY players, lookahead", [run]).set_index(["players", "lookahead"]).nodes
        return cls(accuracy, ab_nodes, load_table("search-aim"), load_table("search-paired"))

    def positions(self, turns: int) -> int:
        return int(self.by.loc[("GB", 2, turns)].positions)

    def searched(self, name: str, players: int, turns: int | None = None) -> str:
        r = self.by.loc[(name, players, turns or self.full)]
        return f"{pct(r.optimal)} (loss {r.relative_loss:.3f}, {r.node_share:.2%} of AB's tree)"

    def share(self, name: str, players: int, turns: int) -> str:
        return f"{self.by.loc[(name, players, turns)].node_share:.3%}"

    def pair(self, a: str, b: str, players: int, turns: int | None = None) -> str:
        key = (players, turns or self.full, f"{a} vs {b}")
        if key not in self.paired.index:
            return "not measured (no opponent's turn at this look-ahead)"
        r = self.paired.loc[key]
        if r.answer != "not decided":
            return f"{r.difference:+.1%} [{r.ci_low:+.1%}, {r.ci_high:+.1%}], {r.answer}"
        # `needs`: the positions the measured interval needs to narrow to 0.03 (the search notebook's table)
        return (f"{r.difference:+.1%} [{r.ci_low:+.1%}, {r.ci_high:+.1%}], "
                f"{undecided(int(r.positions), r.ci_low, r.ci_high, 'positions', int(r.needs))}")

    def random_answers(self, turns: int) -> str:
        """How the searches fare against random placement at one look-ahead: counts of answers, both player
        counts."""
        rows = [self.paired.loc[key] for key in self.paired.index
                if key[1] == turns and key[2].endswith(f" vs {REFERENCES[1]}")]
        if not rows:
            return "not measured"
        counts = pd.Series([r.answer for r in rows]).value_counts()
        return f"of {len(rows)} comparisons, " + ", ".join(f"{n} {answer}" for answer, n in counts.items())

    def like_for_like(self) -> str:
        regime = self.aim[self.aim.paper_regime]
        if regime.empty:
            return "the goal-based tree is never as small a share of AB's as the paper's, so no row is like for like"
        return "like for like only at " + "; ".join(
            f"{int(r.players)} players, {int(r.lookahead)} turns (`{r.in_budget}`, {r.in_budget_optimal:.1%}: "
            f"{r.paper})" for r in regime.itertuples())

    def aim_answer(self, r) -> str:
        """Met, missed, or not decided with the size that would decide it."""
        if r.paper != "not decided":
            return r.paper
        n = int(self.by.loc[(r.in_budget, int(r.players), int(r.lookahead))].positions)
        return (f"not decided at {n} positions (`{r.in_budget}` {r.in_budget_optimal:.1%}; a half-width of "
                f"{HALF_WIDTH} needs about {trials_for_half_width(r.in_budget_optimal):,})")

    def own_aim(self) -> str:
        return "; ".join(f"{int(r.players)} players, {int(r.lookahead)} turns: {self.aim_answer(r)}"
                         for r in self.aim[self.aim.lookahead >= self.full].itertuples())
