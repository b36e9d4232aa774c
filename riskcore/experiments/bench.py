"""`riskcore bench`: games per second per core and time per action, written to `reports/benchmarks/`.

Speed targets live here, not in timed tests. Each configuration runs single-process on one core.
"""

from __future__ import annotations

import json
import platform
import time
from pathlib import Path

import numpy as np
import pandas as pd

from riskcore import ENGINE_VERSION, paths
from riskcore.board import load_board
from riskcore.config import GameConfig
from riskcore.game import play_game
from riskcore.simulate import game_seeds
from riskcore.storage import write_text

CASES = {
    "mission agents, 4p mission": (GameConfig(n_players=4, mode="mission"), ["mission"] * 4),
    "random agents, 4p mission (turn cap 400)": (GameConfig(n_players=4, mode="mission"), ["random"] * 4),
    "domination agents, 4p domination": (GameConfig(n_players=4, mode="domination"), ["domination"] * 4),
}


def bench_case(config: GameConfig, agents: list[str], games: int, seed: int = 0) -> dict:
    board = load_board(config.board)
    play_game(config, agents, 12345, board)  # warm the caches (battle tables) outside the timing
    actions = turns = 0
    start = time.perf_counter()
    for s in game_seeds(seed, games):
        rec = play_game(config, agents, s, board)
        actions += rec.actions
        turns += rec.state.turn
    seconds = time.perf_counter() - start
    return {"games": games, "seconds": round(seconds, 3), "games_per_s": round(games / seconds, 2),
            "actions_per_game": round(actions / games, 1), "turns_per_game": round(turns / games, 1),
            "us_per_action": round(1e6 * seconds / actions, 2)}


def _sweep_chunk(run: str, data_dir: Path | None, settings: list[dict]) -> int:
    from riskcore.recognition.features import load_features
    from riskcore.recognition.phatt import PhattWeights
    from riskcore.recognition.scoring import Scorer

    scorer = Scorer(load_features(run, "cards6", data_dir))
    scorer.sweep_phatt([PhattWeights.from_params(params) for params in settings])
    return len(settings)


def bench_recognition(run: str, settings: int = 100, workers: int = 2, data_dir: Path | None = None,
                      out_dir: Path | None = None) -> pd.DataFrame:
    """Wall time to score `settings` PHATT weight settings on a run's stored features (features loaded per worker)."""
    from riskcore.db import query
    from riskcore.parallel import run_tasks

    half = settings // 2
    labels = [{"scheme": "simple", "c": 1.0, "i": float(x)} for x in np.linspace(0.3, 0.99, half)]
    labels += [{"scheme": "proportional", "lam": float(x)} for x in np.linspace(0.5, 0.99, settings - half)]
    games = int(query("SELECT count(*) AS n FROM games WHERE run = ?", [run], data_dir).n[0])
    chunks = [labels[i::workers] for i in range(workers)]
    start = time.perf_counter()
    done = sum(n for _, n in run_tasks(_sweep_chunk, [(run, data_dir, c) for c in chunks], workers, progress=False))
    seconds = time.perf_counter() - start
    df = pd.DataFrame([{"run": run, "games": games, "settings": done, "workers": workers,
                        "seconds": round(seconds, 2), "target_seconds": 60}])
    out_dir = Path(out_dir or paths.benchmarks_dir())
    write_text(out_dir / "recognition.md", "# PHATT weight sweep benchmark\n\n"
               "Scoring (posteriors and top-1 / top-3 / log loss at the checkpoints) of weight settings over a "
               "run's stored pending-set counts, features loaded once per worker.\n\n"
               + df.to_markdown(index=False) + "\n")
    return df


def run_bench(games: int = 200, out_dir: Path | None = None) -> pd.DataFrame:
    rows = []
    for name, (config, agents) in CASES.items():
        n = games if agents[0] != "random" else max(10, games // 5)
        rows.append({"case": name, **bench_case(config, agents, n)})
    df = pd.DataFrame(rows)
    out_dir = Path(out_dir or paths.benchmarks_dir())
    meta = {"engine_version": ENGINE_VERSION, "python": platform.python_version(), "machine": platform.machine(),
            "processor": platform.processor() or "unknown", "target": ">= 25 mission games/s/core"}
    write_text(out_dir / "engine.md", "# Engine benchmark (one core)\n\n" + json.dumps(meta) + "\n\n"
               + df.to_markdown(index=False) + "\n")
    write_text(out_dir / "engine.json", json.dumps({"meta": meta, "rows": rows}, indent=1))
    return df
