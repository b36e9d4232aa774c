"""`riskcore bench`: the speed of the engine (games per second on one core, time per action), of the search
(generated states per second, compiled against the plain-numpy reference) and of recognition, written with the
machine they ran on to `reports/benchmarks/`.

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
from riskcore.engine.board import load_board
from riskcore.engine.config import GameConfig
from riskcore.game import play_game
from riskcore.simulate import game_seeds
from riskcore.storage import write_text

# (config, agents, compiled): games of plain `mission` and `domination` agents run on the compiled kernel unless
# `compiled` is False (the Python engine stepping Python agents, the same games)
CASES = {
    "mission agents, 4p mission": (GameConfig(n_players=4, mode="mission"), ["mission"] * 4, True),
    "mission agents, 4p mission (Python step loop)": (GameConfig(n_players=4, mode="mission"), ["mission"] * 4, False),
    "random agents, 4p mission (turn cap 400)": (GameConfig(n_players=4, mode="mission"), ["random"] * 4, True),
    "domination agents, 4p domination": (GameConfig(n_players=4, mode="domination"), ["domination"] * 4, True),
    "domination agents, 4p domination (Python step loop)": (GameConfig(n_players=4, mode="domination"),
                                                            ["domination"] * 4, False),
    "mcs agents (default settings), 4p mission": (GameConfig(n_players=4, mode="mission"), ["mcs"] * 4, True),
}
# games per case relative to `--games`: random games are long, mcs plays out every attack decision
SHARE = {"random": 5, "mcs": 40}


def machine() -> dict:
    """What the numbers were measured on."""
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import os

    return {"engine_version": ENGINE_VERSION, "python": platform.python_version(), "machine": platform.machine(),
            "processor": cpu, "cores": os.cpu_count(), "date": time.strftime("%Y-%m-%d")}


def write_benchmark(name: str, title: str, intro: str, df: pd.DataFrame, out_dir: Path | None, extra: dict) -> None:
    out_dir = Path(out_dir or paths.benchmarks_dir())
    meta = {**machine(), **extra}
    write_text(out_dir / f"{name}.md", f"# {title}\n\n{intro}\n\nMeasured on: " +
               ", ".join(f"{k} {v}" for k, v in meta.items()) + "\n\n" + df.to_markdown(index=False) + "\n")
    write_text(out_dir / f"{name}.json", json.dumps({"meta": meta, "rows": df.to_dict("records")}, indent=1))


REPEATS = 5


def bench_search(positions_per_count: int = 6, lookahead: int = 3, seed: int = 2011,
                 out_dir: Path | None = None) -> pd.DataFrame:
    """Generated states per second of exhaustive max^n and of the experiment's GB searches on seeded small-board
    positions: compiled (`Model`) and plain numpy (`PlainModel`), the same work on both."""
    from riskcore.experiments.search import SEARCHES, policy_search, positions
    from riskcore.search.abstract import Model, PlainModel
    from riskcore.search.exhaustive import MaxN

    board = load_board("small")
    rows = []
    for players in (2, 3):
        states = positions(positions_per_count, players, seed + players)
        warm = Model(board, players, 2)
        MaxN(warm).root(states[0], 1)  # compile or load the kernels outside the timing
        for policy in SEARCHES.values():
            policy_search(warm, states[0].to_move, policy).decide(states[0], 1)
        searches = {"AB": None, **SEARCHES}
        for name, policy in searches.items():
            for label, kind in (("compiled", Model), ("plain", PlainModel)):
                times = []
                # work done in under a second (every compiled search, the smallest plain ones): the median of
                # several repeats of the same work
                while len(times) < REPEATS and (not times or times[0] < 1.0):
                    model, start = kind(board, players, 2), time.perf_counter()
                    for s in states:
                        if policy is None:
                            MaxN(model).root(s, lookahead)
                        else:
                            policy_search(model, s.to_move, policy).decide(s, lookahead)
                    times.append(time.perf_counter() - start)
                seconds = float(np.median(times))
                rows.append({"players": players, "search": name, "model": label, "lookahead": lookahead,
                             "positions": len(states), "states": model.generated, "seconds": round(seconds, 3),
                             "states_per_s": round(model.generated / seconds)})
    df = pd.DataFrame(rows)
    wide = df.pivot_table(index=["players", "search"], columns="model", values="states_per_s", sort=False)
    df = df.merge((wide.compiled / wide.plain).rename("speedup").round(1).reset_index(), on=["players", "search"])
    write_benchmark("search", "Search benchmark (one core)", "Generated states per second (`Model.generated`: every state "
           "a search makes) on the same positions, compiled kernels against the plain-numpy reference; speedup = "
           "compiled / plain; seconds under one second are the median of 5 repeats.", df, out_dir,
           {"target": ">= 20 x the plain model's states/s for AB and the GB searches"})
    return df


def bench_case(config: GameConfig, agents: list[str], games: int, seed: int = 0, compiled: bool = True) -> dict:
    board = load_board(config.board)
    # warm the caches (battle tables, the compiled kernel) outside the timing, with cheap players
    for warm in (True, False):
        play_game(config, ["mission" if config.mode == "mission" else "domination"] * config.n_players, 12345, board,
                  compiled=warm)
    actions = turns = 0
    start = time.perf_counter()
    for s in game_seeds(seed, games):
        rec = play_game(config, agents, s, board, compiled=compiled)
        actions += rec.actions
        turns += rec.state.turn
    seconds = time.perf_counter() - start
    return {"games": games, "seconds": round(seconds, 3), "games_per_s": round(games / seconds, 2),
            "seconds_per_game": round(seconds / games, 4), "actions_per_game": round(actions / games, 1),
            "turns_per_game": round(turns / games, 1), "us_per_action": round(1e6 * seconds / actions, 2)}


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
    write_benchmark("recognition", "PHATT weight sweep benchmark", "Scoring (posteriors and top-1 / top-3 / log loss at the "
           "checkpoints) of weight settings over a run's stored pending-set counts, features loaded once per "
           "worker.", df, out_dir, {})
    return df


def run_bench(games: int = 200, out_dir: Path | None = None) -> pd.DataFrame:
    rows = []
    for name, (config, agents, compiled) in CASES.items():
        share = SHARE.get(agents[0], 1)
        n = games if share == 1 else max(1 if agents[0] == "mcs" else 10, games // share)
        rows.append({"case": name, **bench_case(config, agents, n, compiled=compiled)})
    df = pd.DataFrame(rows)
    write_benchmark("engine", "Engine benchmark (one core)", "Full-rules games played by one process, agents' decisions "
           "included. Games whose seats are all plain mission or domination agents run on the compiled kernel "
           "(the Python step loop plays the very same games, shown beside them); mcs plays its candidate moves in "
           "Python and its playouts on the kernel.", df, out_dir,
           {"targets": ">= 200 four-player mission games/s/core; mcs <= 10 s a game"})
    return df


def bench_explore(run: str, game: int | None = None, moves: int = 60, switches: int = 10,
                  data_dir: Path | None = None, out_dir: Path | None = None) -> pd.DataFrame:
    """Seconds the game explorer takes to open a game (by default the run's longest), to redraw board, beliefs and
    log per slider move (evenly spaced events of the game, its last included, then single steps), and to switch
    to another game (`switches` game ids spread over the run)."""
    from riskcore.db import query
    from riskcore.explore import GameExplorer

    games = query("SELECT game_id FROM games WHERE run = ? ORDER BY turns DESC, game_id", [run], data_dir).game_id
    game = int(games.iat[0]) if game is None else game
    start = time.perf_counter()
    ex = GameExplorer(run, game, data_dir=data_dir)
    opened = time.perf_counter() - start
    ex.step_seconds.clear()
    for k in np.linspace(0, ex.slider.max, moves // 2).astype(int):
        ex.slider.value = int(k)
    for _ in range(moves // 2):
        ex.move(-1)
    steps, events = np.array(ex.step_seconds), ex.slider.max + 1
    ex.load_seconds.clear()
    for g in sorted(set(games.iloc[np.linspace(0, len(games) - 1, switches + 1).astype(int)]) - {game})[:switches]:
        ex.game_box.value = int(g)
    loads = np.array(ex.load_seconds)
    if ex.error.value:
        raise RuntimeError(f"explorer benchmark: the explorer showed an error: {ex.error.value[:500]}")
    df = pd.DataFrame([{"run": run, "games_in_run": len(games), "game": game, "events_in_game": events,
                        "open_seconds": round(opened, 3), "redraws": len(steps),
                        "median_redraw_seconds": round(float(np.median(steps)), 3),
                        "max_redraw_seconds": round(float(steps.max()), 3), "target_redraw_seconds": 0.3,
                        "game_switches": len(loads), "median_switch_seconds": round(float(np.median(loads)), 3),
                        "max_switch_seconds": round(float(loads.max()), 3), "target_switch_seconds": 1.0}])
    write_benchmark("explore", "Game explorer benchmark", "Opening a game of a run (its longest unless one is named: "
                    "replayed once, drawn once), redrawing the board, the belief table and the event log for each "
                    "move of the slider (evenly spaced events to the last, then single steps back), and switching "
                    "to other games of the run (each replayed and drawn), as medians and maxima.", df, out_dir, {})
    return df
