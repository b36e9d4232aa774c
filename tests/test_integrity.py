"""`riskcore check` never crashes: a missing part, a damaged database, a journal it may not settle are lines of its
list, each with the command that repairs it; it reads a read-only data directory."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from riskcore.cli import main
from riskcore.db import query
from riskcore.integrity import check

SIM = ["simulate", "--run", "c", "--games", "6", "--chunk", "3", "--workers", "1", "--quiet"]


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


@pytest.fixture
def read_only(monkeypatch):
    """Make `os.access` answer as for a data directory the user may not write (the tests run as root, whom a
    directory's mode does not stop)."""

    real = os.access

    def deny(under: Path | None) -> None:  # None: writable again
        def access(path, mode, *args, **kwargs):
            if under is not None and mode & os.W_OK and Path(path).resolve().is_relative_to(under.resolve()):
                return False
            return real(path, mode, *args, **kwargs)

        monkeypatch.setattr(os, "access", access)

    return deny


def test_a_missing_viewed_part_is_a_line_of_the_list(evaluated, tmp_path, capsys):
    data = _copy(evaluated, tmp_path / "data")
    gone = sorted((data / "traces" / "run=c" / "events").glob("*.parquet"))[0]
    gone.unlink()
    capsys.readouterr()
    assert main(["check", "--data-dir", str(data)]) == 2
    out = capsys.readouterr()
    assert f"{gone}: missing: play or import run c again" in out.out
    assert "Traceback" not in out.err and out.err.count("\n") == 1


def test_a_truncated_database_is_named_with_the_command_that_rebuilds_it(evaluated, tmp_path, capsys):
    data = _copy(evaluated, tmp_path / "data")
    db = data / "riskcore.duckdb"
    with open(db, "r+b") as f:
        f.truncate(db.stat().st_size // 2)
    capsys.readouterr()
    assert main(["check", "--data-dir", str(data)]) == 2
    out = capsys.readouterr()
    assert "`riskcore db --rebuild` rebuilds it" in out.out and "Traceback" not in out.err
    for command in (["recognize", "--run", "c", "--recogniser", "goal", "--quiet"],
                    ["evaluate", "--run", "c", "--bootstrap", "10"]):
        assert main(command + ["--data-dir", str(data)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "`riskcore db --rebuild`" in err, err
    assert main(["db", "--rebuild", "--data-dir", str(data)]) == 0
    report = check(data)
    assert not report.problems and not report.stale
    assert main(["evaluate", "--run", "c", "--bootstrap", "10", "--data-dir", str(data)]) == 0


def test_check_reads_a_read_only_data_directory(evaluated, tmp_path, read_only, capsys):
    data = _copy(evaluated, tmp_path / "data")
    read_only(data)
    assert main(["check", "--data-dir", str(data)]) == 0
    assert "every file is as recorded" in capsys.readouterr().out


def test_an_interrupted_write_in_a_read_only_data_directory_is_named_not_read(evaluated, tmp_path, read_only,
                                                                              capsys):
    data = _copy(evaluated, tmp_path / "data")
    env = {**os.environ, "RISKCORE_FAULT_AT": "new-placed:KILL"}
    killed = subprocess.run([sys.executable, "-m", "riskcore.cli", *SIM, "--games", "9", "--seed", "2",
                             "--data-dir", str(data)], env=env, capture_output=True, timeout=300)
    assert killed.returncode == -9
    read_only(data)
    capsys.readouterr()
    assert main(["check", "--data-dir", str(data)]) == 2
    out = capsys.readouterr().out
    assert "is read-only" in out and "`riskcore check` with write access" in out
    assert main(["db", "--sql", "SELECT count(*) FROM events", "--data-dir", str(data)]) == 2
    assert "an interrupted write" in capsys.readouterr().err
    assert main(["replay", "--run", "c", "--data-dir", str(data)]) == 2
    assert "an interrupted write" in capsys.readouterr().err
    read_only(None)  # writable again: the next reader settles it
    assert query("SELECT count(DISTINCT game_id) AS n FROM events WHERE run = 'c'", data_dir=data).n[0] == 6
    assert not check(data).problems


def test_check_removes_what_killed_processes_were_writing(evaluated, tmp_path):
    data = _copy(evaluated, tmp_path / "data")
    dead = _dead_pid()
    stage = data / "traces" / f".tmp-run=c-{dead}-x1y2"
    (stage / "events").mkdir(parents=True)
    report = check(data)
    assert not stage.exists() and report.recovered == [f"removed {stage}, which a killed process was writing"]


def test_a_killed_writes_staging_stays_until_its_journal_is_settled(evaluated, tmp_path):
    from riskcore.storage import remove_leftovers

    data = _copy(evaluated, tmp_path / "data")
    env = {**os.environ, "RISKCORE_FAULT_AT": "journaled:KILL"}
    killed = subprocess.run([sys.executable, "-m", "riskcore.cli", "recognize", "--run", "c", "--recogniser",
                             "uniform", "--hypotheses", "deck14", "--quiet", "--data-dir", str(data)], env=env,
                            capture_output=True, timeout=300)
    assert killed.returncode == -9
    assert remove_leftovers(data) == []  # its undoing needs the staged files: not a leftover yet
    before = query("SELECT count(*) AS n FROM posteriors WHERE run = 'c'", data_dir=data).n[0]  # settles it
    assert before > 0 and not check(data).problems


def _dead_pid() -> int:
    """The id of a process that has ended."""
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid
