"""The publish protocol under faults: a signal at every step of every write path (simulate, features, posteriors,
metrics, an import to several runs), and just after the database's commit, leaves the complete old state or the
complete new one, never neither, whatever reads it before or after recovery; `riskcore check` finds nothing wrong
afterwards and says what it finished or undid; damaged and missing files are named; derived data whose inputs
changed while it was computed is refused."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from riskcore import paths
from riskcore.cli import main
from riskcore.db import query
from riskcore.integrity import check
from riskcore.publish import STEPS, verify

SIM = ["simulate", "--run", "r", "--players", "4", "--agents", "mission,random", "--quiet"]
BEFORE_COMMIT = STEPS[:STEPS.index("committed")]
LOGS = paths.datasets_dir() / "domination" / "logs"
FIXED = sorted(LOGS.glob("dom-mission-fixed-*.log"))
INCREASING = sorted(LOGS.glob("dom-mission-increasing-*.log"))
DOM_RUNS = ("dom-escalating", "dom-fixed")  # an import of both settings' logs: a run per setting


def _riskcore(args: list[str], data: Path, fault: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "RISKCORE_FAULT_AT": fault} if fault else {**os.environ}
    env.pop("RISKCORE_FAULT_AT", None) if not fault else None
    return subprocess.run([sys.executable, "-m", "riskcore.cli", *args, "--data-dir", str(data)],
                          capture_output=True, text=True, env=env, timeout=300)


def _state(data: Path, run: str = "r") -> tuple[int, str]:
    """(games of a run, its generation) as the database holds them."""
    games = int(query("SELECT count(*) AS n FROM games WHERE run = ?", [run], data_dir=data).n[0])
    generation = query("SELECT generation FROM generations_traces WHERE run = ?", [run], data_dir=data).generation[0]
    return games, generation


def _events_games(data: Path, run: str = "r") -> int:
    """The games the events view shows of a run: its files, which must be the ones the database names."""
    return int(query("SELECT count(DISTINCT game_id) AS n FROM events WHERE run = ?", [run], data_dir=data).n[0])


@pytest.fixture(scope="module")
def old_run(tmp_path_factory):
    """A data directory holding run r (3 games) with features, posteriors and metrics, and an import of one log of
    each card setting (runs dom-escalating and dom-fixed), copied for each case."""
    data = tmp_path_factory.mktemp("old")
    assert main(SIM + ["--games", "3", "--seed", "1", "--data-dir", str(data)]) == 0
    assert main(["recognize", "--run", "r", "--recogniser", "uniform", "--quiet", "--data-dir", str(data)]) == 0
    assert main(["evaluate", "--run", "r", "--bootstrap", "10", "--data-dir", str(data)]) == 0
    assert main(["import", "domination", str(FIXED[0]), str(INCREASING[0]), "--run", "dom",
                 "--data-dir", str(data)]) == 0
    return data


def _copy(src: Path, dst: Path) -> Path:
    import shutil

    shutil.copytree(src, dst)
    return dst


WRITES = {  # a write path: the command, and the runs whose games it replaces (none: derived data)
    "simulate": (SIM + ["--games", "5", "--seed", "2"], ("r",)),
    "features": (["recognize", "--run", "r", "--recogniser", "uniform", "--rebuild-features", "--quiet"], ()),
    "posteriors": (["recognize", "--run", "r", "--recogniser", "goal", "--quiet"], ()),
    "metrics": (["evaluate", "--run", "r", "--bootstrap", "10", "--checkpoints", "game"], ()),
    "import": (["import", "domination", str(FIXED[1]), str(INCREASING[1]), str(FIXED[2]), "--run", "dom"],
               DOM_RUNS),
}


# KILL at every step of every write path; TERM (caught: the command cleans up and says what it left) either side
# of the commit, and just after the database's COMMIT returned, before the publication hears of it. CI runs a
# third of the cases, on diagonals that put every step and every write path of each signal in it (a test below
# checks that); `make test-slow` runs them all
TERM_STEPS = ("new-placed", "db-committed", "committed")
IN_CI = 3  # the case (write i, step j) runs in CI when (i + j) % IN_CI == 0
CASES = [pytest.param(w, step, name, marks=() if (i + j) % IN_CI == 0 else pytest.mark.slow)
         for name, steps in (("KILL", STEPS), ("TERM", TERM_STEPS))
         for i, w in enumerate(sorted(WRITES)) for j, step in enumerate(steps)]


def _states(data: Path) -> dict[str, tuple[int, str]]:
    return {run: _state(data, run) for run in ("r", *DOM_RUNS)}


def test_the_ci_cases_hold_every_step_and_every_write_path_of_each_signal():
    quick = [c.values for c in CASES if not c.marks]
    for name, steps in (("KILL", STEPS), ("TERM", TERM_STEPS)):
        assert {w for w, _, n in quick if n == name} == set(WRITES), name
        assert {s for _, s, n in quick if n == name} == set(steps), name


@pytest.mark.parametrize("write,step,signal_name", CASES)
def test_a_signal_at_any_step_leaves_the_old_state_or_the_new_one(old_run, tmp_path, write, step, signal_name):
    data = _copy(old_run, tmp_path / "data")
    before = _states(data)
    args, replaced = WRITES[write]
    done = _riskcore(args, data, f"{step}:{signal_name}")
    committed = step == "db-committed" or STEPS.index(step) >= STEPS.index("committed")
    if signal_name == "TERM":
        assert done.returncode == 130, done.stderr
        if committed and write != "features":
            assert "stopped by signal 15 after its write had completed; the new state is in place" in done.stderr
        elif committed:  # the same games give the same features: undone or kept, the state is the same bytes
            assert "the new state is in place" in done.stderr or "nothing half-written was kept" in done.stderr
        else:
            assert "nothing half-written was kept" in done.stderr
    else:
        assert done.returncode == -9
    # a reader before any recovery sees the database's state in the files too (it settles the journal first)
    assert [_events_games(data, run) for run in before] == [_state(data, run)[0] for run in before]
    report = check(data)  # finishes or undoes what is left, then checks everything
    assert not report.problems, report.problems
    after = _states(data)
    for run in before:  # every run the write replaces is new after the commit and old before it, all together
        assert (after[run] != before[run]) == (committed and run in replaced), (run, before[run], after[run])
    if committed and "r" in replaced:
        assert after["r"][0] == 5
    assert not [p for p in data.rglob(".trash-*")] and not list((data / ".journal").glob("*.json"))
    assert _riskcore(["replay", "--run", replaced[0] if replaced else "r"], data).returncode == 0


def test_a_kill_while_the_same_games_are_published_again_keeps_them(old_run, tmp_path):
    """Playing run r again with its seed gives the same files, so the database held their generation before the
    commit: a process killed with the old files moved aside is undone, never taken as committed (the old files'
    trash was removed and the run's files were gone)."""
    data = _copy(old_run, tmp_path / "data")
    before = _state(data)
    assert _riskcore(SIM + ["--games", "3", "--seed", "1"], data, "old-moved:KILL").returncode == -9
    assert _state(data) == before and _events_games(data) == before[0]
    report = check(data)
    assert report.recovered == [] and not report.problems, report.problems
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
    assert "derived from an earlier version of its games" in err and "riskcore recognize --run r" in err
    report = check(data)
    assert not report.problems and len(report.stale) == 3  # features, posteriors, metrics
    assert main(["recognize", "--run", "r", "--recogniser", "uniform", "--quiet", "--data-dir", str(data)]) == 0
    assert "rebuilding them" in capsys.readouterr().err
    rows = query("SELECT count(DISTINCT game_id) AS n FROM rec_observations WHERE run = 'r'", data_dir=data).n[0]
    assert rows == 4
    assert main(["evaluate", "--run", "r", "--bootstrap", "10", "--data-dir", str(data)]) == 0
    assert not check(data).stale


def test_a_term_just_after_the_databases_commit_keeps_the_files_it_committed(old_run, tmp_path, monkeypatch, capsys):
    data = _copy(old_run, tmp_path / "data")
    monkeypatch.setenv("RISKCORE_FAULT_AT", "db-committed:TERM")
    assert main(SIM + ["--games", "5", "--seed", "2", "--data-dir", str(data)]) == 130
    assert "the new state is in place" in capsys.readouterr().err
    monkeypatch.delenv("RISKCORE_FAULT_AT")
    assert _state(data)[0] == 5 and _events_games(data) == 5
    assert not check(data).problems


@pytest.mark.skipif(shutil.which("strace") is None, reason="strace is not installed")
def test_a_term_at_the_databases_own_sync_keeps_the_files_it_committed(old_run, tmp_path):
    """The signal lands inside DuckDB's commit (its first fdatasync, the WAL's), from outside the process."""
    data = _copy(old_run, tmp_path / "data")
    done = subprocess.run(["strace", "-f", "-o", "/dev/null", "-e", "trace=fdatasync", "-e",
                           "inject=fdatasync:signal=TERM:when=1", sys.executable, "-m", "riskcore.cli", *SIM,
                           "--games", "5", "--seed", "2", "--data-dir", str(data)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 130, done.stderr
    seed = int(query("SELECT seed FROM runs WHERE run = 'r'", data_dir=data).seed[0])
    games = _state(data)[0]
    assert (seed, games, _events_games(data)) in ((1, 3, 3), (2, 5, 5))  # what the database says, the files hold
    assert ("the new state is in place" in done.stderr) == (seed == 2)
    assert not check(data).problems


def test_an_import_to_several_runs_publishes_them_together(old_run, tmp_path):
    data = _copy(old_run, tmp_path / "data")
    before = {run: _state(data, run) for run in DOM_RUNS}
    args = WRITES["import"][0]
    assert _riskcore(args, data, "new-placed:KILL").returncode == -9  # every run's files placed, none committed
    assert {run: _state(data, run) for run in DOM_RUNS} == before
    assert _riskcore(args, data, "committed:KILL").returncode == -9  # one commit: every run is new
    after = {run: _state(data, run) for run in DOM_RUNS}
    assert all(after[run] != before[run] for run in DOM_RUNS)
    assert not check(data).problems


def test_a_read_before_recovery_sees_the_old_run_whole(old_run, tmp_path):
    data = _copy(old_run, tmp_path / "data")
    assert _riskcore(SIM + ["--games", "5", "--seed", "2"], data, "new-placed:KILL").returncode == -9
    assert list((data / ".journal").glob("*.json"))  # the killed write's journal, its new files in place
    assert query("SELECT count(*) AS n FROM games WHERE run = 'r'", data_dir=data).n[0] == 3
    assert _events_games(data) == 3  # the events the database names: the old run's
    assert not list((data / ".journal").glob("*.json"))  # the reader had it undone first
    assert _riskcore(["replay", "--run", "r"], data).returncode == 0


def test_replay_before_recovery_replays_the_published_run(old_run, tmp_path):
    data = _copy(old_run, tmp_path / "data")
    assert _riskcore(SIM + ["--games", "5", "--seed", "2"], data, "new-placed:KILL").returncode == -9
    done = _riskcore(["replay", "--run", "r"], data)
    assert done.returncode == 0 and "replayed 3 game(s)" in done.stdout


def test_published_files_and_their_folders_reach_the_disk_before_the_commit(old_run, tmp_path, monkeypatch):
    from riskcore import db

    data = _copy(old_run, tmp_path / "data")
    synced, at_commit = [], []
    real_fsync, real_commit = os.fsync, db.Registration.commit

    def fsync(fd):
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        return real_fsync(fd)

    def commit(self):
        at_commit.append(set(synced))
        return real_commit(self)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(db.Registration, "commit", commit)
    assert main(SIM + ["--games", "5", "--seed", "2", "--data-dir", str(data)]) == 0
    run = data / "traces" / "run=r"
    wanted = {str(f) for f in run.rglob("*.parquet")} | {str(d) for d in run.rglob("*") if d.is_dir()}
    wanted |= {str(run), str(run.parent)}
    assert wanted <= at_commit[0], sorted(wanted - at_commit[0])[:5]


def test_metrics_computed_while_their_run_is_played_again_are_refused(old_run, tmp_path, monkeypatch, capsys):
    from riskcore.recognition import pipeline

    data = _copy(old_run, tmp_path / "data")
    stored = query("SELECT generation FROM generations_metrics", data_dir=data).generation.tolist()
    real = pipeline._evaluate_clock

    def racing(*args, **kwargs):  # the run is played again while its metrics are computed from the old games
        out = real(*args, **kwargs)
        assert main(SIM + ["--games", "5", "--seed", "2", "--agents", "random", "--data-dir", str(data)]) == 0
        return out

    monkeypatch.setattr(pipeline, "_evaluate_clock", racing)
    capsys.readouterr()
    assert main(["evaluate", "--run", "r", "--bootstrap", "10", "--data-dir", str(data)]) == 2
    assert "its games of run 'r' were replaced while this command read them" in capsys.readouterr().err
    assert query("SELECT generation FROM generations_metrics", data_dir=data).generation.tolist() == stored
    stale = check(data).stale  # the old metrics are flagged, never shown as current
    assert any(line.startswith("the metrics of run 'r' (window) were derived from an earlier version") for line in stale)


def test_metrics_of_posteriors_computed_again_are_flagged_stale_everywhere(old_run, tmp_path, capsys):
    import warnings

    from riskcore.db import StaleWarning

    data = _copy(old_run, tmp_path / "data")
    assert main(["recognize", "--run", "r", "--recogniser", "uniform", "--hypotheses", "deck14", "--quiet",
                 "--data-dir", str(data)]) == 0
    report = check(data)
    assert not report.problems
    assert report.stale == ["the metrics of run 'r' (window) were computed from the posteriors of uniform, since "
                            "recomputed or removed: `riskcore evaluate --run r`"]
    with pytest.warns(StaleWarning, match="the metrics of run 'r'"):
        query("SELECT * FROM recognition_metrics WHERE run = 'r'", data_dir=data)
    capsys.readouterr()
    assert main(["db", "--sql", "SELECT count(*) FROM recognition_metrics", "--data-dir", str(data)]) == 0
    assert "riskcore db: warning: stale derived data: the metrics of run 'r'" in capsys.readouterr().err
    assert main(["evaluate", "--run", "r", "--bootstrap", "10", "--data-dir", str(data)]) == 0
    assert not check(data).stale
    with warnings.catch_warnings():
        warnings.simplefilter("error", StaleWarning)
        query("SELECT * FROM recognition_metrics WHERE run = 'r'", data_dir=data)
