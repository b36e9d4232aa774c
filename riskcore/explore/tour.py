"""Queries behind the explore notebook's tour of the dataset, written so that runs never mix and so that each
aggregates inside DuckDB and returns only what its chart draws (a row per dice pair, per run, per point), never a
table's rows: the full dataset holds tens of millions of events and posteriors."""

from __future__ import annotations

import pandas as pd

from riskcore.db import query
from riskcore.engine.battle import roll_outcomes
from riskcore.explore.beliefs import has_table, true_card_probability

__all__ = ["exact_roll_losses", "game_length_quantiles", "play_per_turn", "runs_with_posteriors",
           "single_roll_losses", "top_runs", "true_card_probability"]

QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)  # a box plot's whiskers, box and median


def runs_with_posteriors(data_dir=None) -> list[str]:
    """The runs that have per-turn posteriors stored (the explorer's belief charts need them), by name."""
    if not has_table("posteriors", data_dir):
        return []
    return list(query("SELECT DISTINCT run FROM posteriors WHERE point_kind = 'turn' ORDER BY run",
                      data_dir=data_dir).run)


def top_runs(sizes: pd.Series, n: int = 8, other: str = "other runs") -> dict[str, str]:
    """A label per run: the `n` largest (by `sizes`, a Series indexed by run) keep their names, the rest share
    `other`, so a plot stays readable however many runs the database holds."""
    keep = set(sizes.sort_values(ascending=False, kind="stable").index[:n])
    return {run: run if run in keep else other for run in sizes.index}


def _grouped(sizes: pd.Series, n: int, other: str = "other runs") -> tuple[str, list]:
    """SQL of a run's group (`top_runs`, ties to the first run by name) and its parameters: the kept runs' names."""
    kept = [run for run, name in top_runs(sizes.sort_index(), n, other).items() if name == run]
    marks = ", ".join("?" for _ in kept) or "NULL"
    return f"CASE WHEN run IN ({marks}) THEN run ELSE '{other}' END", kept


def exact_roll_losses(attacker_dice: int, defender_dice: int) -> tuple[float, float]:
    """The expected (attacker, defender) losses of one roll of these dice, from the exact roll outcomes."""
    outcomes = roll_outcomes(int(attacker_dice), int(defender_dice))
    return (float(sum(p * a for (a, _), p in outcomes.items())),
            float(sum(p * d for (_, d), p in outcomes.items())))


def single_roll_losses(data_dir=None) -> tuple[pd.DataFrame, int]:
    """(the mean losses per dice pair over single rolls, beside the exact expectation; the number of whole-battle
    attack events left out). A whole battle (`stop_at` set) rolls until the territory falls or the attacker stops,
    and records its total losses under its first roll's dice: it is no roll, and counting it as one doubles the
    losses."""
    rolls = query("""SELECT attacker_dice AS a, defender_dice AS d, count(*) AS rolls,
                            avg(attacker_losses) AS attacker_loss, avg(defender_losses) AS defender_loss
                     FROM events WHERE kind = 'attack' AND stop_at IS NULL AND attacker_dice > 0 AND defender_dice > 0
                     GROUP BY ALL ORDER BY a, d""", data_dir=data_dir)
    exact = [exact_roll_losses(a, d) for a, d in zip(rolls.a, rolls.d)]
    rolls["exact_attacker_loss"] = [a for a, _ in exact]
    rolls["exact_defender_loss"] = [d for _, d in exact]
    battles = int(query("SELECT count(*) AS n FROM events WHERE kind = 'attack' AND stop_at IS NOT NULL",
                        data_dir=data_dir).n[0])
    return rolls, battles


def game_length_quantiles(n: int = 6, data_dir=None) -> pd.DataFrame:
    """Per run (the `n` with most games by name, the others pooled): games, mean turns and the turn counts'
    `QUANTILES`, as a box plot draws them."""
    sizes = query("SELECT run, count(*) AS games FROM games GROUP BY run", data_dir=data_dir).set_index("run").games
    group, kept = _grouped(sizes, n)
    names = ", ".join(f"q[{k + 1}] AS q{round(100 * q):02d}" for k, q in enumerate(QUANTILES))
    return query(f"""SELECT run, games, mean_turns, {names}
                     FROM (SELECT {group} AS run, count(*) AS games, avg(turns) AS mean_turns,
                                  quantile_cont(turns, {list(QUANTILES)}) AS q
                           FROM games GROUP BY 1)
                     ORDER BY run = 'other runs', games DESC, run""", kept, data_dir)


def play_per_turn(n: int = 12, data_dir=None) -> pd.DataFrame:
    """Per run (the `n` with most turns by name, the others pooled): what a player does in a turn, single rolls,
    whole battles (an attack rolled to its end in one event, as imported runs and riskcore's agents record most
    attacks), conquests, fortifications and card trades."""
    totals = query("""SELECT run, count(DISTINCT (game_id, turn)) AS turns,
                             count(*) FILTER (WHERE kind = 'attack' AND stop_at IS NULL) AS single_rolls,
                             count(*) FILTER (WHERE kind = 'attack' AND stop_at IS NOT NULL) AS whole_battles,
                             count(*) FILTER (WHERE kind = 'attack' AND conquered) AS conquests,
                             count(*) FILTER (WHERE kind = 'fortify') AS fortifies,
                             count(*) FILTER (WHERE kind = 'trade') AS trades
                      FROM events GROUP BY run ORDER BY run""", data_dir=data_dir).set_index("run")
    pooled = totals.groupby(totals.index.map(top_runs(totals.turns, n))).sum()
    per_turn = pooled.drop(columns="turns").div(pooled.turns, axis=0)
    return per_turn.rename(columns=lambda c: c.replace("_", " ")).sort_index()
