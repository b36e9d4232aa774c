"""The aim for goal-based search, checked on the accuracy table: the paper's 88.1% optimal first decisions and 9.4%
mean relative loss, reached while exploring at most 1% of AB's nodes (GB's mean tree over AB's mean). The budget is
judged on tree nodes, as the paper counts them; the states a goal's own algorithm looks at (the `grab` and `strike`
goals' searches over their own turn, the rules' probes) are not tree nodes, so the share of generated states is
shown beside it: the work the search did, against AB's with its transposition table."""

from __future__ import annotations

import pandas as pd

PAPER_OPTIMAL = 0.881
PAPER_LOSS = 0.094
NODE_BUDGET = 0.01
MEASURES = ("optimal", "relative_loss", "node_share", "generated_share")  # per search, from the accuracy table


def _require(df: pd.DataFrame, columns: set[str], name: str) -> None:
    if missing := columns - set(df.columns):
        raise ValueError(f"{name} table lacks columns {sorted(missing)}")


def meets_paper(optimal: float, loss: float) -> bool:
    return optimal >= PAPER_OPTIMAL and loss <= PAPER_LOSS


def aim_table(accuracy: pd.DataFrame, references: tuple[str, ...] = ()) -> pd.DataFrame:
    """Per player count and look-ahead: the most accurate search inside the node budget (ties: lower loss, then
    fewer nodes) and the most accurate at any cost, and whether the inside one meets the paper. `accuracy` has
    the columns of `search_accuracy`; the `references` (yardsticks, not searches) are left out."""
    _require(accuracy, {"search", "players", "lookahead", *MEASURES}, "accuracy")
    searches = accuracy[~accuracy.search.isin(references)].sort_values(
        ["optimal", "relative_loss", "node_share"], ascending=[False, True, True], kind="stable")
    none = pd.Series({"search": "", **dict.fromkeys(MEASURES, float("nan"))})
    rows = []
    for (players, lookahead), d in searches.groupby(["players", "lookahead"], sort=True):
        inside, best = d[d.node_share <= NODE_BUDGET], d.iloc[0]
        b = inside.iloc[0] if len(inside) else none  # NaNs meet no threshold
        rows.append({"players": players, "lookahead": lookahead, "in_budget": b.search,
                     "in_budget_optimal": b.optimal, "in_budget_loss": b.relative_loss, "in_budget_share": b.node_share,
                     "in_budget_generated_share": b.generated_share,
                     "paper_met": meets_paper(b.optimal, b.relative_loss), "most_accurate": best.search,
                     "most_accurate_optimal": best.optimal, "most_accurate_share": best.node_share})
    return pd.DataFrame(rows)
