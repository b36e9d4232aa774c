"""`riskcore bench --memory`: peak memory of `simulate` at growing numbers of games, of feature building, and the
DuckDB file's size when the same run name is written again.

Each measurement runs in a fresh process tree in a scratch data folder. A peak is the largest resident set of any
one process of the tree (the command or one of its workers), as the kernel reports it for waited-for children.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd

from riskcore import paths

# run a command as a child, pass its output on, then print the largest resident set (kB) among it and its descendants
_PEAK = ("import resource, subprocess, sys; done = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, text=True); "
         "print(done.stdout, end=''); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); "
         "sys.exit(done.returncode)")


def run_with_peak(argv: list[str], what: str) -> tuple[list[str], float]:
    """Run `argv`: (its output lines, the peak resident memory of its largest process in MB); raises naming `what`."""
    done = subprocess.run([sys.executable, "-c", _PEAK, *argv], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"memory benchmark: {what} failed: {done.stderr.strip()[-300:]}")
    *lines, peak = done.stdout.strip().split("\n")
    return lines, round(int(peak) / 1024, 1)


def peak_mb(argv: list[str]) -> float:
    """Run `argv` and return the peak resident memory of its largest process in MB; raises naming the command."""
    return run_with_peak(argv, f"{' '.join(argv[:4])} ...")[1]


def riskcore_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "riskcore.cli", *args]


def _simulate(run: str, games: int, data: Path) -> list[str]:
    return riskcore_command("simulate", "--run", run, "--games", str(games), "--players", "4", "--quiet",
                            "--data-dir", str(data))


def bench_memory(games: tuple[int, ...] = (1000, 5000, 10000), feature_games: int = 1000, reruns: int = 3,
                 out_dir: Path | None = None) -> pd.DataFrame:
    from riskcore.experiments.bench import write_benchmark

    rows = []
    with tempfile.TemporaryDirectory(prefix="riskcore-memory-") as tmp:
        data = Path(tmp)
        for n in games:
            rows.append({"measure": f"simulate {n:,} games: peak MB", "value": peak_mb(_simulate(f"m{n}", n, data))})
        run = f"m{feature_games}" if feature_games in games else "features"
        if run == "features":
            peak_mb(_simulate(run, feature_games, data))
        build = (f"from riskcore.recognition.features import build_features; "
                 f"build_features({run!r}, 'cards6', data_dir={str(data)!r}, progress=False)")
        rows.append({"measure": f"features of {feature_games:,} games: peak MB",
                     "value": peak_mb([sys.executable, "-c", build])})
        db = paths.db_path(data)
        for k in range(reruns):
            peak_mb(_simulate("again", games[0], data))
            rows.append({"measure": f"DuckDB file after writing run 'again' ({games[0]:,} games) "
                                    f"{k + 1} time(s): MB", "value": round(db.stat().st_size / 2**20, 2)})
    df = pd.DataFrame(rows)
    write_benchmark("memory", "Memory benchmark", "Peak resident memory of the largest process (command or worker) of "
           "`riskcore simulate` (4 players, mission agents, default workers) and of feature building, and the size "
           "of the DuckDB file as the same run name is written again.", df, out_dir,
           {"targets": json.dumps({"simulate": "flat in the number of games", "features": "< 500 MB",
                                   "DuckDB file": "no growth on rewriting a run"})})
    return df


# one exhaustive search in a fresh process, its counters as JSON on stdout
_SEARCH = """
import json, sys, time
from riskcore.engine.board import load_board
from riskcore.experiments.search import positions
from riskcore.search.abstract import Model
from riskcore.search.exhaustive import MaxN
players, index, lookahead, seed = (int(x) for x in sys.argv[1:5])
mb = float(sys.argv[5])
state = positions(index + 1, players, seed)[index]
model = Model(load_board("small"), players, 2)
MaxN(model).root(state, 1)  # load the compiled kernels outside the timing
ab, start = MaxN(model, table_mb=mb), time.perf_counter()
ab.root(state, lookahead)
print(json.dumps({"seconds": round(time.perf_counter() - start, 2), "nodes": ab.nodes, "subtrees_searched": ab.distinct,
                  "replaced": ab.replaced, "table_MB": round(ab.table_bytes / 2**20, 1)}))
"""


def bench_search_table(positions: int = 4, lookahead: int = 5, bounds: tuple[float, ...] | None = None,
                       out_dir: Path | None = None) -> pd.DataFrame:
    """Exhaustive max^n on the search experiment's first positions (those it searches one turn deeper), each in a
    fresh process, under the default transposition-table bound and a sixteen times larger one: the time, the work
    (subtrees searched, stored subtrees replaced), the table's final size and the process's peak memory."""
    from riskcore.experiments import EXPERIMENT_SEED
    from riskcore.experiments.bench import write_benchmark
    from riskcore.search.exhaustive import TABLE_MB

    bounds = bounds or (TABLE_MB, 16 * TABLE_MB)

    rows = []
    for players in (2, 3):
        for index in range(positions):
            for mb in bounds:
                argv = [sys.executable, "-c", _SEARCH, str(players), str(index), str(lookahead),
                        str(EXPERIMENT_SEED + players), str(mb)]
                lines, peak = run_with_peak(argv, f"search of {players} players, position {index}, {mb} MB")
                rows.append({"players": players, "position": index, "lookahead": lookahead, "bound_MB": mb,
                             **json.loads(lines[-1]), "peak_MB": peak})
    df = pd.DataFrame(rows)
    write_benchmark("search-table", "Transposition table benchmark (one core)", "Exhaustive max^n to "
           f"{lookahead} turns on the search experiment's first {positions} positions per player count, each in a "
           "fresh process, under the default bound of its transposition table and a larger one: seconds, the "
           "tree's size (`nodes`, the same under every bound), subtrees searched (the work), stored subtrees the "
           "bound replaced, the table's final size and the process's peak resident memory (Python and the "
           "compiled kernels included).", df, out_dir,
           {"target": "peak memory bounded; nodes identical under every bound"})
    return df


RECOGNISERS = ("uniform", "placements", "goal:temperature=0.1", "phatt:scheme=simple:c=1:i=0.98",
               "phatt:scheme=khan2013", "inverse:beta=5:focus=-1:eps=0.2", "mixture:beta=5:temper=0.5",
               "mixture:beta=5:goals=3:rho=0.05:temper=1", "classifier:train=small")


def bench_recognition_memory(games: int = 500, players: int = 6, out_dir: Path | None = None) -> pd.DataFrame:
    """Peak memory of `riskcore recognize` with every recogniser on one simulated run of `games` games of
    `players` players, each in a fresh process, one worker; the classifier trains on a second, small run. (Games
    are simulated rather than imported: the importer keeps one copy of a repeated game, and the bundled logs hold
    far fewer than 500 distinct six-player games.)"""
    from riskcore.experiments.bench import write_benchmark

    rows = []
    with tempfile.TemporaryDirectory(prefix="riskcore-recognition-memory-") as tmp:
        data = Path(tmp)
        for run, n in (("big", games), ("small", 8)):
            peak_mb(riskcore_command("simulate", "--run", run, "--games", str(n), "--players", str(players),
                                     "--quiet", "--data-dir", str(data)))
        peak_mb(riskcore_command("recognize", "--run", "small", "--recogniser", "uniform", "--quiet", "--data-dir",
                                 str(data)))  # the classifier's training features
        rows.append({"measure": f"features of {games} {players}-player games", "peak_MB": peak_mb(
            riskcore_command("recognize", "--run", "big", "--recogniser", "uniform", "--workers", "1", "--quiet",
                             "--data-dir", str(data)))})
        for spec in RECOGNISERS:
            rows.append({"measure": f"recognize {spec}", "peak_MB": peak_mb(
                riskcore_command("recognize", "--run", "big", "--recogniser", spec, "--workers", "1", "--quiet",
                                 "--data-dir", str(data)))})
    df = pd.DataFrame(rows)
    write_benchmark("recognition-memory", "Recognition memory benchmark", f"Peak resident memory of `riskcore recognize` "
           f"(one worker, a fresh process each) on one simulated run of {games} {players}-player games "
           "(default agents); the first row builds the run's features (with the uniform prior), every later one "
           "computes one recogniser's posteriors from them.", df, out_dir,
           {"target": "every recogniser at most 4 GB (4,096 MB)"})
    return df
