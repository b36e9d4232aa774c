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

# run a command as a child and print the largest resident set (kB) among it and its descendants
_PEAK = ("import resource, subprocess, sys; code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode; "
         "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); sys.exit(code)")


def peak_mb(argv: list[str]) -> float:
    """Run `argv` and return the peak resident memory of its largest process in MB; raises naming the command."""
    done = subprocess.run([sys.executable, "-c", _PEAK, *argv], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"memory benchmark: {' '.join(argv[:4])} ... failed: {done.stderr.strip()[-300:]}")
    return round(int(done.stdout.split()[-1]) / 1024, 1)


def _riskcore(*args: str) -> list[str]:
    return [sys.executable, "-m", "riskcore.cli", *args]


def _simulate(run: str, games: int, data: Path) -> list[str]:
    return _riskcore("simulate", "--run", run, "--games", str(games), "--players", "4", "--quiet",
                     "--data-dir", str(data))


def bench_memory(games: tuple[int, ...] = (1000, 5000, 10000), feature_games: int = 1000, reruns: int = 3,
                 out_dir: Path | None = None) -> pd.DataFrame:
    from riskcore.experiments.bench import _write

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
    _write("memory", "Memory benchmark", "Peak resident memory of the largest process (command or worker) of "
           "`riskcore simulate` (4 players, mission agents, default workers) and of feature building, and the size "
           "of the DuckDB file as the same run name is written again.", df, out_dir,
           {"targets": json.dumps({"simulate": "flat in the number of games", "features": "< 500 MB",
                                   "DuckDB file": "no growth on rewriting a run"})})
    return df
