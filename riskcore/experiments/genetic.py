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
from riskcore.config import GameConfig
from riskcore.game import play_game
from riskcore.parallel import run_tasks
from riskcore.simulate import game_seeds
from riskcore.stats import wilson_interval
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


def tune_and_validate(cfg: GAConfig, validation_games: int, name: str = "interactive",
                      data_dir: Path | None = None, workers: int | None = None, dask: str | None = None,
                      progress: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Run (or resume) the GA with checkpoints under the data directory's tuning folder (`name`), then play the
    best gene against equal weights. Returns (every generation's population, the validation row)."""
    history = run_ga(cfg, paths.tuning_dir(data_dir) / name, workers, dask, progress)
    tuned = best_gene(history)
    result = head_to_head(agent_spec(tuned, cfg), agent_spec(np.ones(len(tuned)), cfg), validation_games, cfg,
                          seed=cfg.seed + 1, workers=workers)
    validation = pd.DataFrame([{**{f"tuned_w{i + 1}": w for i, w in enumerate(tuned)}, **result,
                                "seed": cfg.seed}])
    return history.assign(seed=cfg.seed), validation


def write_summary(sweep: str, name: str, data_dir: Path | None = None) -> Path:
    """The tuned weights of a GA sweep, their head-to-head validation and the fitness per generation, as
    `reports/tables/NAME.md` (for a run too long for `make report`, e.g. the reference sizes of `make genetic`)."""
    from riskcore.db import query
    from riskcore.experiments.bench import machine
    from riskcore.notebook import markdown_table
    from riskcore.storage import write_text

    val = query("SELECT * FROM ga_validation WHERE sweep = ?", [sweep], data_dir)
    hist = query("SELECT generation, count(*) AS genes, max(fitness) AS best, avg(fitness) AS mean FROM ga_history "
                 "WHERE sweep = ? AND fitness IS NOT NULL GROUP BY generation ORDER BY generation", [sweep], data_dir)
    seconds = query("SELECT seconds FROM sweep_points WHERE sweep = ?", [sweep], data_dir).seconds
    if val.empty:
        raise ValueError(f"sweep {sweep!r} has no validation: run it first")
    v = val.iloc[0]
    decided = int(v.games - v.draws)
    cols = [c for c in val.columns if c.startswith("tuned_w")] + ["games", "wins", "draws", "win_rate", "ci_low",
                                                                   "ci_high"]
    text = (f"# Genetic tuning, sweep `{sweep}`\n\nTuned weights against equal weights over {int(v.games)} games: "
            f"{int(v.wins)} wins, {int(v.draws)} draws ({v.wins / decided:.1%} of the decided games). The sweep took "
            f"{seconds.sum() / 60:.1f} min on: " + ", ".join(f"{k} {x}" for k, x in machine().items())
            + ".\n\n" + markdown_table(val[cols]) + "\n\nFitness (wins / games) per generation:\n\n"
            + markdown_table(hist) + "\n")
    path = paths.tables_dir() / f"{name}.md"
    write_text(path, text)
    return path


if __name__ == "__main__":
    import sys

    print(write_summary(sys.argv[1], sys.argv[2]))
