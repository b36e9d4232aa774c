"""The time each step of `make report` takes, recorded by the Makefile and written with the machine it ran on.

    python -m riskcore.experiments.steps start               # a new record
    python -m riskcore.experiments.steps run NAME -- CMD...  # run one step's command, record its times
    python -m riskcore.experiments.steps write               # the record as reports/benchmarks/make-report.md

Wall time is the step's; CPU time is the children's user + system time (all cores), so CPU / wall shows how much
of the machine a step kept busy. A rerun over an existing data directory reuses its caches (the search's results,
genetic tuning's checkpoints) and is much faster than a first run, so the record says which it was.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pandas as pd

from riskcore import paths
from riskcore.storage import write_text

RECORD = "make-report.jsonl"


def _record_path():
    return paths.benchmarks_dir() / RECORD


def reusable_caches() -> list[str]:
    """The data directory's caches that a run of the steps would reuse, as paths relative to it."""
    data = paths.data_dir()
    found = [p for d in (paths.cache_dir(), paths.tuning_dir()) if d.is_dir() for p in sorted(d.iterdir())]
    return [str(p.relative_to(data)) for p in found]


def start() -> None:
    path = _record_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"caches": reusable_caches()}) + "\n")


def run(name: str, command: list[str]) -> int:
    before, wall = os.times(), time.monotonic()
    code = subprocess.call(command)
    after = os.times()
    row = {"step": name, "seconds": round(time.monotonic() - wall, 1),
           "cpu_seconds": round(after.children_user + after.children_system
                                - before.children_user - before.children_system, 1), "exit": code}
    path = _record_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as f:
        f.write(json.dumps(row) + "\n")
    return code


def write() -> None:
    from riskcore.experiments.bench import machine

    path = _record_path()
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []
    df = pd.DataFrame([r for r in lines if "step" in r])
    caches = next((r["caches"] for r in lines if "caches" in r), None)
    total = f"{df.seconds.sum() / 60:.1f} min" if len(df) else "nothing recorded"
    meta = machine()
    started = ("not recorded" if caches is None else "no caches in the data directory (a first run)" if not caches
               else "caches of an earlier run reused: " + ", ".join(f"`{c}`" for c in caches))
    write_text(paths.benchmarks_dir() / "make-report.md",
               "# `make report`: time per step\n\nMeasured on: " + ", ".join(f"{k} {v}" for k, v in meta.items())
               + f"\n\nStarted with: {started}.\n\nTotal: {total} (the environment's install, when `make` had to "
               "do it, is not a step here).\n\n" + (df.to_markdown(index=False) if len(df) else "") + "\n")


def main(argv: list[str]) -> int:
    if argv[:1] == ["start"]:
        start()
        return 0
    if argv[:1] == ["write"]:
        write()
        return 0
    if len(argv) >= 4 and argv[0] == "run" and argv[2] == "--":
        return run(argv[1], argv[3:])
    print("usage: python -m riskcore.experiments.steps start | run NAME -- COMMAND... | write", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
