"""`riskcore bench --versus COMMAND`: riskcore against another program on the same number of four-player mission
games, whole process from start to exit on both sides.

riskcore's side is `riskcore simulate` (four-player mission games of `mission` agents, every core, traces written)
in a fresh scratch data folder each run. The other side is COMMAND as given, with `{games}` replaced by the number
of games; it must play that many four-player mission games of its own AI and exit 0. The two alternate run by run
(riskcore first on odd runs, the other first on even ones) so that a machine that slows down or speeds up over the
measure weighs on both alike, and the speed-up is the median of the runs' own ratios.
"""

from __future__ import annotations

import re
import shlex
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Callable

import pandas as pd

from riskcore.experiments.bench_memory import riskcore_command

TARGET = 20.0  # the speed-up over Domination's own AI the project aims at


def other_command(command: str, games: int) -> list[str]:
    """COMMAND split as a shell would, `{games}` replaced; refuses an empty command or one of unknown fields."""
    argv = shlex.split(command)
    if not argv:
        raise ValueError("--versus: the command is empty")
    unknown = sorted({name for arg in argv for name in re.findall(r"\{(\w*)\}", arg)} - {"games"})
    if unknown:
        raise ValueError(f"--versus: unknown field(s) {', '.join('{' + u + '}' for u in unknown)} in {command!r}; "
                         "the one field is {games}")
    return [arg.replace("{games}", str(games)) for arg in argv]


def riskcore_side(games: int) -> Callable[[Path], list[str]]:
    """`riskcore simulate` of `games` four-player mission games into a data folder of its own."""
    return lambda data: riskcore_command("simulate", "--run", "versus", "--games", str(games), "--players", "4",
                                         "--mode", "mission", "--quiet", "--data-dir", str(data))


def wall_seconds(argv: list[str], what: str) -> float:
    """Wall seconds of one run of `argv` from start to exit; raises naming `what`, its exit code and its last
    words."""
    start = time.perf_counter()
    try:
        done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    except OSError as exc:
        raise RuntimeError(f"versus benchmark: {what} could not start: {exc}") from None
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"versus benchmark: {what} exited with code {done.returncode}: "
                           f"{done.stderr.strip()[-300:]}")
    return seconds


def measure(ours: Callable[[Path], list[str]], theirs: list[str], runs: int, name: str,
            scratch: Path | None = None) -> pd.DataFrame:
    """One row per run: both sides' wall seconds, the order they ran in, and the run's speed-up (theirs / ours)."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="riskcore-versus-", dir=scratch) as tmp:
        for run in range(1, runs + 1):
            sides = {"riskcore": (ours(Path(tmp) / f"run-{run}"), "riskcore simulate"),
                     name: (theirs, f"{name} ({shlex.join(theirs)})")}
            order = list(sides) if run % 2 else list(reversed(sides))
            seconds = {side: wall_seconds(*sides[side]) for side in order}
            rows.append({"run": run, "first": order[0], "riskcore_s": round(seconds["riskcore"], 2),
                         f"{name}_s": round(seconds[name], 2),
                         "speed_up": round(seconds[name] / seconds["riskcore"], 2)})
    return pd.DataFrame(rows)


def summary(runs: pd.DataFrame, name: str) -> dict:
    """Medians over the runs; the speed-up is the median of the runs' own ratios, not a ratio of medians."""
    return {"riskcore_median_s": round(statistics.median(runs["riskcore_s"]), 2),
            f"{name}_median_s": round(statistics.median(runs[f"{name}_s"]), 2),
            "speed_up_median": round(statistics.median(runs["speed_up"]), 2),
            "speed_up_range": f"{runs['speed_up'].min():.2f}-{runs['speed_up'].max():.2f}"}


def bench_versus(command: str, games: int = 2000, runs: int = 5, name: str = "Domination",
                 out_dir: Path | None = None, scratch: Path | None = None,
                 ours: Callable[[Path], list[str]] | None = None) -> pd.DataFrame:
    """Measure, then write reports/benchmarks/versus-<name>.md; nothing is written unless every run succeeded."""
    from riskcore.experiments.bench import write_benchmark

    if not re.fullmatch(r"[A-Za-z][\w-]*", name) or name.lower() == "riskcore":
        raise ValueError(f"--versus-name: {name!r} is not a plain name (letters, digits, '-' and '_') "
                         "other than riskcore")
    theirs = other_command(command, games)
    df = measure(ours or riskcore_side(games), theirs, runs, name, scratch)
    stats = summary(df, name)
    write_benchmark(f"versus-{name.lower()}", f"riskcore against {name}",
                    f"The same number of four-player mission games ({games:,}) played by `riskcore simulate` "
                    f"(`mission` agents, every core, traces written) and by {name}'s own AI "
                    f"(`{shlex.join(theirs)}`), each whole process from start to exit, alternating run by run; "
                    f"`speed_up` is {name}'s seconds over riskcore's in the same run.", df, out_dir,
                    {"games": games, **stats, "target": f"speed-up at least {TARGET:g}x",
                     "target_met": stats["speed_up_median"] >= TARGET})
    return df
