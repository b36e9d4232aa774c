"""The publish protocol under faults: a signal at every step of every write path leaves the complete old state or
the complete new one, never neither; `riskcore check` finds nothing wrong afterwards and says what it finished or
undid; damaged and missing files are named."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from riskcore.cli import main
from riskcore.db import query
from riskcore.integrity import check
from riskcore.publish import STEPS, verify

SIM = ["simulate", "--run", "r", "--players", "4", "--agents", "mission,random", "--quiet"]
BEFORE_COMMIT = STEPS[:STEPS.index("committed")]


def _riskcore(args: list[str], data: Path, fault: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "RISKCORE_FAULT_AT": fault} if fault else {**os.environ}
    env.pop("RISKCORE_FAULT_AT", None) if not fault else None
    return subprocess.run([sys.executable, "-m", "riskcore.cli", *args, "--data-dir", str(data)],
                          capture_output=True, text=True, env=env, timeout=300)


def _state(data: Path) -> tuple[int, str]:
    """(games of run r, its generation) as the database holds them."""
    games = int(query("SELECT count(*) AS n FROM games WHERE run = 'r'", data_dir=data).n[0])
    generation = query("SELECT generation FROM generations_traces WHERE run = 'r'", data_dir=data).generation[0]
    return games, generation


@pytest.fixture(scope="module")
def old_run(tmp_path_factory):
    """A data directory holding run r (3 games) with features, posteriors and metrics, copied for each case."""
    data = tmp_path_factory.mktemp("old")
    assert main(SIM + ["--games", "3", "--seed", "1", "--data-dir", str(data)]) == 0
    assert main(["recognize", "--run", "r", "--recogniser", "uniform", "--quiet", "--data-dir", str(data)]) == 0
    assert main(["evaluate", "--run", "r", "--bootstrap", "10", "--data-dir", str(data)]) == 0
    return data


def _copy(src: Path, dst: Path) -> Path:
    import shutil

    shutil.copytree(src, dst)
    return dst


WRITES = {  # a write path: the command, and whether the new state differs from the old one in games
    "simulate": (SIM + ["--games", "5", "--seed", "2"], True),
    "features": (["recognize", "--run", "r", "--recogniser", "uniform", "--rebuild-features", "--quiet"], False),
    "posteriors": (["recognize", "--run", "r", "--recogniser", "goal", "--quiet"], False),
    "metrics": (["evaluate", "--run", "r", "--bootstrap", "10", "--checkpoints", "game"], False),
}


# KILL at every step of every write path; TERM (caught: the command cleans up and says what it left) either side
# of the commit
CASES = [(w, step, "KILL") for w in sorted(WRITES) for step in STEPS] + [
    (w, step, "TERM") for w in sorted(WRITES) for step in ("new-placed", "committed")]


@pytest.mark.parametrize("write,step,signal_name", CASES)
def test_a_signal_at_any_step_leaves_the_old_state_or_the_new_one(old_run, tmp_path, write, step, signal_name):
    data = _copy(old_run, tmp_path / "data")
    before = _state(data)
    args, changes_games = WRITES[write]
    done = _riskcore(args, data, f"{step}:{signal_name}")
    if signal_name == "TERM":
        assert done.returncode == 130, done.stderr
        if step == "committed":
            assert "stopped by signal 15 after its write had completed; the new state is in place" in done.stderr
        else:
            assert "nothing half-written was kept" in done.stderr
    else:
        assert done.returncode == -9
    report = check(data)  # finishes or undoes what the killed process left, then checks everything
    assert not report.problems, report.problems
    after = _state(data)
    committed = STEPS.index(step) >= STEPS.index("committed")
    if changes_games:
        assert after == (before if not committed else after) and (after != before) == committed
        assert after[0] == (5 if committed else 3)
    else:
        assert after == before
    assert not [p for p in data.rglob(".trash-*")] and not list((data / ".journal").glob("*.json"))
    assert _riskcore(["replay", "--run", "r"], data).returncode == 0


def test_an_undo_and_a_completion_are_reported(old_run, tmp_path):
    data = _copy(old_run, tmp_path / "undo")
    assert _riskcore(SIM + ["--games", "5", "--seed", "2"], data, "new-placed:KILL").returncode == -9
    assert check(data).recovered[0].startswith("undid the interrupted write")
    data = _copy(old_run, tmp_path / "forward")
    assert _riskcore(SIM + ["--games", "5", "--seed", "2"], data, "committed:KILL").returncode == -9
    assert check(data).recovered[0].startswith("completed the interrupted write")


def test_missing_and_damaged_files_are_named(old_run, tmp_path, capsys):
    data = _copy(old_run, tmp_path / "data")
    run = data / "traces" / "run=r"
    games = sorted((run / "games").glob("*.parquet"))[0]
    games.unlink()
    events = sorted((run / "events").glob("*.parquet"))[0]
    raw = bytearray(events.read_bytes())
    raw[len(raw) // 2:len(raw) // 2 + 16] = os.urandom(16)
    events.write_bytes(bytes(raw))
    (run / "stray").mkdir()
    (run / "stray" / "extra.parquet").write_bytes(b"x")
    assert main(["check", "--data-dir", str(data)]) == 2
    out = capsys.readouterr()
    assert f"{games}: missing" in out.out and f"{events}: damaged" in out.out
    assert f"{run / 'stray' / 'extra.parquet'}: not recorded" in out.out
    assert main(["replay", "--run", "r", "--data-dir", str(data)]) == 2
    assert f"{games}: missing" in capsys.readouterr().err
    assert main(["db", "--rebuild", "--data-dir", str(data)]) == 2
    err = capsys.readouterr().err
    assert f"{games}: missing" in err and f"{events}: damaged" in err
    assert verify(data / "posteriors" / "run=r") == []


def test_a_damaged_database_is_moved_aside_and_rebuilt(old_run, tmp_path, capsys):
    data = _copy(old_run, tmp_path / "data")
    db = data / "riskcore.duckdb"
    raw = bytearray(db.read_bytes())
    raw[:64] = b"\0" * 64
    db.write_bytes(bytes(raw))
    assert main(["db", "--rebuild", "--data-dir", str(data)]) == 0
    assert list(data.glob("riskcore.duckdb.damaged-*"))
    assert _state(data)[0] == 3 and not check(data).problems


def test_stale_derived_data_is_refused_or_rebuilt(old_run, tmp_path, capsys):
    data = _copy(old_run, tmp_path / "data")
    assert main(SIM + ["--games", "4", "--seed", "9", "--data-dir", str(data)]) == 0
    capsys.readouterr()
    assert main(["evaluate", "--run", "r", "--data-dir", str(data)]) == 2  # its posteriors are of the old games
    err = capsys.readouterr().err
    assert "computed from an earlier version of its games" in err and "riskcore recognize --run r" in err
    report = check(data)
    assert not report.problems and len(report.stale) == 3  # features, posteriors, metrics
    assert main(["recognize", "--run", "r", "--recogniser", "uniform", "--quiet", "--data-dir", str(data)]) == 0
    assert "rebuilding them" in capsys.readouterr().err
    rows = query("SELECT count(DISTINCT game_id) AS n FROM rec_observations WHERE run = 'r'", data_dir=data).n[0]
    assert rows == 4
    assert main(["evaluate", "--run", "r", "--bootstrap", "10", "--data-dir", str(data)]) == 0
    assert not check(data).stale
