"""A campaign of stops at random moments: `kill -9` or SIGTERM sent to simulate, recognize, evaluate and a two-run
import at a random instant of their run, over and over on one data directory. After every stop a reader must see
no mixture (every run's games, events and generation agree; an import's runs are all of one import) and no stale
number without a flag (metrics not flagged stale equal metrics computed afresh from what is there now), and
`riskcore check` must find nothing wrong and nothing left behind.

Slow (about 15 minutes): `pytest -m slow tests/test_campaign.py`; `RISKCORE_CAMPAIGN_TRIALS` sets the number of
stops (default 100), `RISKCORE_CAMPAIGN_SEED` their random moments.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from riskcore import paths
from riskcore.db import connect, query, stale_derivations
from riskcore.integrity import check

LOGS = paths.datasets_dir() / "domination" / "logs"
FIXED = sorted(LOGS.glob("dom-mission-fixed-*.log"))
INCREASING = sorted(LOGS.glob("dom-mission-increasing-*.log"))
IMPORTS = {"a": [FIXED[0], INCREASING[0]], "b": [FIXED[1], INCREASING[1], FIXED[2]]}  # two imports, two runs each
DOM_RUNS = ("dom-escalating", "dom-fixed")


def _sim(seed: int, games: int) -> list[str]:
    return ["simulate", "--run", "r", "--games", str(games), "--chunk", "5", "--seed", str(seed), "--players", "4",
            "--agents", "mission,random", "--workers", "2", "--quiet"]


def _commands(rng: np.random.Generator) -> tuple[str, list[str]]:
    """A random write: its kind and its arguments."""
    kind = ["simulate", "recognize", "evaluate", "import"][int(rng.integers(4))]
    if kind == "simulate":
        return kind, _sim(int(rng.integers(1, 4)), int(rng.choice([20, 30, 40])))
    if kind == "recognize":
        extra = [[], ["--rebuild-features"], ["--hypotheses", "deck14"]][int(rng.integers(3))]
        return kind, ["recognize", "--run", "r", "--recogniser", "uniform", "--workers", "2", "--quiet", *extra]
    if kind == "evaluate":
        return kind, ["evaluate", "--run", "r", "--bootstrap", "200",
                      "--checkpoints", ["window", "game", "both"][int(rng.integers(3))]]
    return kind, ["import", "domination", *map(str, IMPORTS["ab"[int(rng.integers(2))]]), "--run", "dom"]


def _run(args: list[str], data: Path, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "riskcore.cli", *args, "--data-dir", str(data)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def _trace_state(data: Path, run: str) -> tuple:
    """(runs.games, games rows, games in the events view, generation) of a run as a reader sees them."""
    return (int(query("SELECT games FROM runs WHERE run = ?", [run], data).games[0]),
            int(query("SELECT count(*) AS n FROM games WHERE run = ?", [run], data).n[0]),
            int(query("SELECT count(DISTINCT game_id) AS n FROM events WHERE run = ?", [run], data).n[0]),
            query("SELECT generation FROM generations_traces WHERE run = ?", [run], data).generation[0])


def _fresh_metrics(data: Path, scratch: Path) -> "object":
    """The metrics' point values computed afresh from the posteriors there are now (on a copy)."""
    from riskcore.recognition.pipeline import evaluate

    shutil.rmtree(scratch, ignore_errors=True)
    shutil.copytree(data, scratch)
    return evaluate("r", scratch, n_boot=10, clocks=("window", "game"))


def _mixture_and_stale_numbers(data: Path, scratch: Path, import_pairs: set) -> list[str]:
    """What a reader would see wrong: a mixture, or a number stale without a flag."""
    wrong = []
    games, rows, events, _ = _trace_state(data, "r")
    if not games == rows == events:
        wrong.append(f"run r: runs says {games} games, games holds {rows}, events {events}")
    pair = tuple(_trace_state(data, run)[3] for run in DOM_RUNS)
    if pair not in import_pairs:
        wrong.append(f"the import's runs are of different imports: {pair}")
    con = connect(data, read_only=True)
    try:
        flagged = {(x.tree, x.key) for x in stale_derivations(con, "r")}
    finally:
        con.close()
    try:
        stored = query("SELECT clock, setting, metric, point, subset, value FROM recognition_metrics "
                       "WHERE run = 'r' AND subset = 'all' AND metric IN ('top1', 'brier')", data_dir=data)
    except Exception:  # noqa: BLE001 - no metrics yet
        return wrong
    current = stored[~stored.clock.map(lambda c: ("metrics", c) in flagged)]
    if current.empty:
        return wrong
    fresh = _fresh_metrics(data, scratch)
    fresh = fresh[(fresh.subset == "all") & fresh.metric.isin(["top1", "brier"])]
    keys = ["clock", "setting", "metric", "point", "subset"]
    merged = current.merge(fresh[keys + ["value"]], on=keys, how="left", suffixes=("", "_fresh"))
    bad = merged[~np.isclose(merged.value, merged.value_fresh, equal_nan=True)]
    if len(bad):
        wrong.append(f"metrics shown as current differ from the posteriors': {bad.head(3).to_dict('records')}")
    return wrong


def _left_behind(data: Path) -> list[str]:
    left = [str(p) for p in data.rglob(".trash-*")] + [str(p) for p in data.rglob(".journal/*.json")]
    return left + [str(p) for p in data.rglob(".tmp-*")]


@pytest.mark.slow
def test_a_campaign_of_stops_at_random_moments_never_shows_a_mixture_or_an_unflagged_stale_number(tmp_path):
    trials = int(os.environ.get("RISKCORE_CAMPAIGN_TRIALS", 100))
    rng = np.random.default_rng(int(os.environ.get("RISKCORE_CAMPAIGN_SEED", 72)))
    data, scratch = tmp_path / "data", tmp_path / "scratch"
    import_pairs = set()
    durations: dict[str, list[float]] = {}
    setup = [_sim(1, 30), ["recognize", "--run", "r", "--recogniser", "uniform", "--quiet"],
             ["evaluate", "--run", "r", "--bootstrap", "200", "--checkpoints", "both"],
             ["import", "domination", *map(str, IMPORTS["b"]), "--run", "dom"],
             ["import", "domination", *map(str, IMPORTS["a"]), "--run", "dom"]]
    for args in setup:
        start = time.monotonic()
        proc = _run(args, data)
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err
        durations.setdefault(args[0], []).append(time.monotonic() - start)
        if args[0] == "import":
            import_pairs.add(tuple(_trace_state(data, run)[3] for run in DOM_RUNS))
    log, failures = [], []
    for trial in range(trials):
        kind, args = _commands(rng)
        sig = [signal.SIGKILL, signal.SIGTERM][int(rng.integers(2))]
        delay = float(rng.uniform(0, 1.2 * max(durations.get(kind, [5.0]))))
        start = time.monotonic()
        proc = _run(args, data)
        try:
            proc.wait(timeout=delay)
        except subprocess.TimeoutExpired:
            proc.send_signal(sig)
        out, err = proc.communicate(timeout=600)
        if proc.returncode == 0:
            durations.setdefault(kind, []).append(time.monotonic() - start)
        wrong = _mixture_and_stale_numbers(data, scratch, import_pairs)  # a reader first, before any check
        report = check(data)
        wrong += report.problems + _left_behind(data)
        if kind == "import" and proc.returncode == 0:
            import_pairs.add(tuple(_trace_state(data, run)[3] for run in DOM_RUNS))
        line = (f"{trial:3d} {kind:9s} {signal.Signals(sig).name if proc.returncode != 0 else 'none':7s} "
                f"at {delay:5.2f}s exit {proc.returncode:4d} stale {len(report.stale)} "
                f"{'WRONG: ' + '; '.join(wrong) if wrong else 'ok'}")
        log.append(line)
        print(line, flush=True)
        if wrong:
            failures.append(line)
        # -15: a SIGTERM before the command set its handler (the interpreter starting) or after it let it go
        if proc.returncode not in (0, 2, 130, -9, -15):
            failures.append(f"{line}: unexpected exit {proc.returncode}: {err[-2000:]}")
        if "Traceback" in err:
            failures.append(f"{line}: a traceback: {err[-2000:]}")
    stopped = sum(1 for line in log if " none " not in line)
    print(f"{trials} trials, {stopped} stopped by a signal, {len(failures)} wrong")
    assert not failures, "\n".join(failures)
