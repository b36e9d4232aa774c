"""Genetic tuning of the minimax agent's weights, run and validated: the GA (`tuning.genetic`) with its
checkpoints in the data directory, then the tuned weights head-to-head against equal weights (seat-rotated
two-player games, win rate with a Wilson interval). The sweep point `notebooks/points/genetic_point.py` calls
`tune_and_validate`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from riskcore import paths
from riskcore.engine.config import GameConfig
from riskcore.game import play_game
from riskcore.parallel import run_tasks
from riskcore.simulate import game_seeds
from riskcore.stats import wilson_interval
from riskcore.verdicts import (HALF_WIDTH, direction, rate_difference, sign_test_share,
                               trials_for_half_width)
from riskcore.tuning.genetic import GAConfig, agent_spec, best_gene, run_ga


def _chunk(a: str, b: str, config: GameConfig, items: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out = []
    for k, seed in items:
        seats = [a, b] if k % 2 == 0 else [b, a]
        winner = play_game(config, seats, seed).winner
        out.append((k, -1 if winner < 0 else (winner if k % 2 == 0 else 1 - winner)))
    return out


def head_to_head(a: str, b: str, games: int, cfg, seed: int = 0, workers: int | None = None) -> dict:
    """`a` against `b` over `games` games (seats alternate); win rate of `a` among all games, draws counted."""
    config = GameConfig(n_players=2, mode=cfg.mode, turn_cap=cfg.turn_cap)
    seeds = game_seeds(seed, games)
    items = list(enumerate(seeds))
    chunks = [items[i::max(1, min(games, 16))] for i in range(max(1, min(games, 16)))]
    results = [r for _, part in run_tasks(_chunk, [(a, b, config, c) for c in chunks], workers, progress=False)
               for r in part]
    winners = np.array([w for _, w in results])
    wins, draws = int((winners == 0).sum()), int((winners < 0).sum())
    low, high = wilson_interval(wins, games)
    return {"agent": a, "opponent": b, "games": games, "wins": wins, "draws": draws, "win_rate": wins / games,
            "ci_low": float(low), "ci_high": float(high)}


def _yardstick_row(generation: int, gene: np.ndarray, result: dict) -> dict:
    share, low, high = sign_test_share(result["wins"], result["games"] - result["wins"] - result["draws"])
    return {"generation": generation, **{f"w{i + 1}": w for i, w in enumerate(gene)}, "games": result["games"],
            "wins": result["wins"], "draws": result["draws"], "decided_share": share, "ci_low": low,
            "ci_high": high}


def tune_and_validate(cfg: GAConfig, validation_games: int, name: str = "interactive",
                      data_dir: Path | None = None, workers: int | None = None, dask: str | None = None,
                      progress: bool = False, yardstick_games: int = 0
                      ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Run (or resume) the GA with checkpoints under the data directory's tuning folder (`name`), then play the
    best gene against equal weights. Returns (every generation's population, the validation row, the yardstick).

    The yardstick measures progress on a fixed scale: each evaluated generation's fittest gene against equal
    weights, `yardstick_games` games each on the validation's game seeds; the last generation's row is the
    validation itself. (Fitness inside the population cannot show progress: genes are scored against each other,
    so the population's mean win rate is fixed by its draws, and its best is the luckiest of many small samples.)"""
    history = run_ga(cfg, paths.tuning_dir(data_dir) / name, workers, dask, progress)
    tuned = best_gene(history)
    equal = agent_spec(np.ones(len(tuned)), cfg)
    result = head_to_head(agent_spec(tuned, cfg), equal, validation_games, cfg, seed=cfg.seed + 1, workers=workers)
    validation = pd.DataFrame([{**{f"tuned_w{i + 1}": w for i, w in enumerate(tuned)}, **result,
                                "seed": cfg.seed}])
    rows = []
    for g in range(cfg.generations - 1 if yardstick_games else 0):
        gene = best_gene(history[history.generation <= g + 1])
        rows.append(_yardstick_row(g, gene, head_to_head(agent_spec(gene, cfg), equal, yardstick_games, cfg,
                                                         seed=cfg.seed + 1, workers=workers)))
    rows.append(_yardstick_row(cfg.generations - 1, tuned, result))
    return history.assign(seed=cfg.seed), validation, pd.DataFrame(rows).assign(seed=cfg.seed)


def answers(validation: pd.Series, yardstick: pd.DataFrame) -> tuple[str, str]:
    """The GA study's two answers, by the rules declared in `riskcore.verdicts`: do the tuned weights beat equal
    weights (the sign test on the validation's decided games), and did the generations improve on the first
    generation's fittest gene (the yardstick's last row against its first: the difference of their decided-game
    shares with Newcombe's interval)."""
    losses = int(validation.games - validation.wins - validation.draws)
    share, low, high = sign_test_share(int(validation.wins), losses)
    word = direction(low, high, 0.5)
    decided = int(validation.wins) + losses
    beat = {"higher": "yes", "lower": "no: equal weights do better", "not decided":
            f"not decided at {decided:,} decided games (a half-width of {HALF_WIDTH} needs about "
            f"{trials_for_half_width(share):,})"}[word]
    first = f"Do the tuned weights beat equal weights? {beat}: the tuned gene wins {share:.1%} [{low:.1%}, " \
            f"{high:.1%}] of the {decided:,} decided games ({int(validation.draws)} of {int(validation.games):,} " \
            "were draws at the turn cap)."
    if len(yardstick) < 2:
        return first, "The run has one generation: whether the generations improved anything is not measured."
    a, b = yardstick.iloc[0], yardstick.iloc[-1]
    d, dlow, dhigh = rate_difference(int(b.wins), int(b.games - b.draws), int(a.wins), int(a.games - a.draws))
    needed = 2 * trials_for_half_width(float(b.decided_share))  # two independent rates: twice the variance
    progress = {"higher": "yes", "lower": "no: it did worse", "not decided": "not decided at this size (a "
                f"half-width of {HALF_WIDTH} on the difference needs about {needed:,} decided games a generation)"
                }[direction(dlow, dhigh)]
    second = (f"Did the generations improve on the first generation's fittest gene? {progress}: against equal "
              f"weights the last generation's fittest wins {b.decided_share:.1%} of decided games and generation "
              f"0's {a.decided_share:.1%} (difference {d:+.1%} [{dlow:+.1%}, {dhigh:+.1%}]).")
    return first, second


def reference_engine(summary: str) -> str:
    """The engine version a `write_summary` table was made with ('unknown' when it does not say)."""
    import re

    found = re.search(r"engine_version ([^,\s]+)", summary)
    return found.group(1) if found else "unknown"


def write_summary(sweep: str, name: str, data_dir: Path | None = None) -> Path:
    """The tuned weights of a GA sweep, their head-to-head validation, the yardstick per generation and the
    fitness per generation, as `reports/tables/NAME.md` (for a run too long for `make report`, e.g. the reference
    sizes of `make genetic`), with the engine version that made them."""
    from riskcore.db import query
    from riskcore.experiments.bench import machine
    from riskcore.notebook import markdown_table
    from riskcore.storage import write_text

    val = query("SELECT * FROM ga_validation WHERE sweep = ?", [sweep], data_dir)
    yard = query("SELECT * FROM ga_yardstick WHERE sweep = ? ORDER BY generation", [sweep], data_dir)
    hist = query("SELECT generation, count(*) AS genes, max(fitness) AS best, avg(fitness) AS mean FROM ga_history "
                 "WHERE sweep = ? AND fitness IS NOT NULL GROUP BY generation ORDER BY generation", [sweep], data_dir)
    seconds = query("SELECT seconds FROM sweep_points WHERE sweep = ?", [sweep], data_dir).seconds
    if val.empty:
        raise ValueError(f"sweep {sweep!r} has no validation: run it first")
    v = val.iloc[0]
    cols = [c for c in val.columns if c.startswith("tuned_w")] + ["games", "wins", "draws", "win_rate", "ci_low",
                                                                   "ci_high"]
    first, second = answers(v, yard)
    text = (f"# Genetic tuning, sweep `{sweep}`\n\n{first}\n\n{second}\n\nThe sweep took "
            f"{seconds.sum() / 60:.1f} min on: " + ", ".join(f"{k} {x}" for k, x in machine().items())
            + ".\n\nValidation (win_rate counts draws as not won):\n\n" + markdown_table(val[cols])
            + "\n\nEach generation's fittest gene against equal weights (the last row is the validation):\n\n"
            + markdown_table(yard.drop(columns=["sweep", "point", "seed"], errors="ignore"))
            + "\n\nFitness inside the population (wins / games against other genes) per generation:\n\n"
            + markdown_table(hist) + "\n")
    path = paths.tables_dir() / f"{name}.md"
    write_text(path, text)
    return path


if __name__ == "__main__":
    import sys

    print(write_summary(sys.argv[1], sys.argv[2]))
