"""Nothing lost, nothing left behind: a locked database, signals, leftovers of killed runs, file modes."""

import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from riskcore.cli import main
from riskcore.db import query

RISKCORE = [sys.executable, "-m", "riskcore.cli"]
SIM = ["simulate", "--run", "c", "--games", "6", "--chunk", "3", "--workers", "1", "--quiet"]


def _hold(db: Path, seconds: float) -> subprocess.Popen:
    """Another process that opens the database and keeps it open (as a notebook might)."""
    code = (f"import duckdb, time, sys; con = duckdb.connect({str(db)!r}, read_only=True); "
            f"print('held', flush=True); time.sleep({seconds})")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


def _default_signals() -> None:
    """A child's signal handling as a fresh shell would give it: a test process may run with SIGINT ignored or
    blocked (pytest-xdist workers inherit what their launcher set), and a child inherits both."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})


def _processes_with(marker: str) -> list[int]:
    """Live processes whose command line mentions `marker` (this test's data directory)."""
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker in (entry / "cmdline").read_bytes().decode(errors="ignore"):
                    out.append(int(entry.name))
            except OSError:
                pass
    return out


def test_a_held_database_delays_registration_and_the_games_are_never_lost(tmp_path, capsys, monkeypatch):
    data = ["--data-dir", str(tmp_path)]
    assert main(SIM + data) == 0
    holder = _hold(tmp_path / "riskcore.duckdb", 30)
    try:
        monkeypatch.setenv("RISKCORE_LOCK_WAIT", "1")
        monkeypatch.setattr("riskcore.db.WRITE_WAIT", 1.0)
        assert main(SIM + data + ["--games", "9", "--seed", "5"]) == 2
        err = capsys.readouterr().err
        assert "waiting up to 1 s" in err and "`riskcore db --register c`" in err and err.count("error") == 1
        assert (tmp_path / "traces" / ".pending-run=c").is_dir()
    finally:
        holder.kill()
        holder.wait()
    assert query("SELECT count(*) AS n FROM games WHERE run = 'c'", data_dir=tmp_path).n[0] == 6  # the old run
    assert main(["db", "--register", "c"] + data) == 0
    assert query("SELECT count(*) AS n FROM games WHERE run = 'c'", data_dir=tmp_path).n[0] == 9
    assert not (tmp_path / "traces" / ".pending-run=c").exists()
    assert main(["replay", "--run", "c"] + data) == 0


def test_registration_waits_for_a_short_reader_and_then_succeeds(tmp_path, capsys):
    data = ["--data-dir", str(tmp_path)]
    assert main(SIM + data) == 0
    holder = _hold(tmp_path / "riskcore.duckdb", 2)
    try:
        assert main(SIM + data + ["--games", "4"]) == 0
    finally:
        holder.wait()
    assert "waiting up to" in capsys.readouterr().err
    assert query("SELECT count(*) AS n FROM games WHERE run = 'c'", data_dir=tmp_path).n[0] == 4


def test_a_failed_commit_reports_its_own_cause(tmp_path, monkeypatch):
    import duckdb

    from riskcore.db import DataError, transaction

    class Failing:
        def __init__(self, con):
            self.con = con

        def execute(self, sql, *args):
            if sql == "COMMIT":
                self.con.execute("ROLLBACK")
                raise duckdb.TransactionException("disk full (simulated)")
            return self.con.execute(sql, *args)

        def close(self):
            self.con.close()

    real = __import__("riskcore.db", fromlist=["connect"]).connect
    monkeypatch.setattr("riskcore.db.connect", lambda *a, **k: Failing(real(*a, **k)))
    with pytest.raises(DataError, match="disk full") as err:
        with transaction(tmp_path) as con:
            con.execute("CREATE TABLE t AS SELECT 1 AS x")
    assert "no transaction is active" not in str(err.value)


def _played_chunks(traces: Path) -> list[str]:
    done = traces / ".partial-run=big" / "done"
    return sorted(p.name for p in done.iterdir()) if done.is_dir() else []


def _start_big_run(data: Path, games: int = 4000, **kw) -> subprocess.Popen:
    return subprocess.Popen(RISKCORE + ["simulate", "--run", "big", "--games", str(games), "--chunk", "5",
                                        "--workers", "2", "--quiet", "--data-dir", str(data)], **kw)


def _wait_for_chunks(traces: Path, at_least: int) -> None:
    deadline = time.time() + 60
    while len(_played_chunks(traces)) < at_least and time.time() < deadline:
        time.sleep(0.1)
    assert len(_played_chunks(traces)) >= at_least, "the run never finished a chunk"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_the_workers_and_keeps_only_finished_chunks(tmp_path, sig):
    marker = str(tmp_path)
    proc = _start_big_run(tmp_path, stderr=subprocess.PIPE, text=True, preexec_fn=_default_signals)
    traces = tmp_path / "traces"
    _wait_for_chunks(traces, 1)
    proc.send_signal(sig)
    try:
        code = proc.wait(timeout=60)
    except subprocess.TimeoutExpired:  # say where it hangs: the command prints its threads' stacks on SIGUSR1
        proc.send_signal(signal.SIGUSR1)
        time.sleep(2)
        proc.kill()
        pytest.fail(f"no exit 60 s after {sig!r}; its stacks:\n{proc.stderr.read()[-8000:]}")
    assert code == 130
    assert "the same command plays the rest" in proc.stderr.read()
    time.sleep(1)
    assert _processes_with(marker) == []  # no worker left behind
    assert [p.name for p in traces.iterdir()] == [".partial-run=big"]  # no staging, no half run in place
    partial = traces / ".partial-run=big"
    for chunk in _played_chunks(traces):  # a chunk marked played has all its tables
        assert all((partial / t / f"part-{int(chunk):05d}.parquet").exists()
                   for t in ("games", "players", "events", "snapshots"))


def test_a_killed_run_resumes_where_it_stopped_and_writes_what_an_unbroken_run_writes(tmp_path):
    marker = str(tmp_path / "broken")
    proc = _start_big_run(tmp_path / "broken", games=400, stderr=subprocess.DEVNULL)
    traces = tmp_path / "broken" / "traces"
    _wait_for_chunks(traces, 3)
    proc.kill()
    proc.wait()
    deadline = time.time() + 20
    while _processes_with(marker) and time.time() < deadline:
        time.sleep(0.2)
    assert _processes_with(marker) == []  # its workers died with it
    kept = len(_played_chunks(traces))
    assert 3 <= kept < 80
    again = subprocess.run(RISKCORE + ["simulate", "--run", "big", "--games", "400", "--chunk", "5", "--workers",
                                       "2", "--data-dir", marker], capture_output=True, text=True, check=True)
    assert f"{kept} chunk(s) already played, {80 - kept} to play" in again.stderr
    assert [p.name for p in traces.iterdir()] == ["run=big"]
    assert main(["simulate", "--run", "big", "--games", "400", "--chunk", "5", "--workers", "2", "--quiet",
                 "--data-dir", str(tmp_path / "unbroken")]) == 0
    files = {str(p.relative_to(traces)): p.read_bytes() for p in sorted(traces.rglob("*.parquet"))}
    assert files == {str(p.relative_to(tmp_path / "unbroken" / "traces")): p.read_bytes()
                     for p in sorted((tmp_path / "unbroken" / "traces").rglob("*.parquet"))}


def test_a_run_another_process_is_playing_is_refused(tmp_path, capsys):
    partial = tmp_path / "traces" / ".partial-run=c"
    partial.mkdir(parents=True)
    (partial / "owner").write_text(str(os.getppid()))  # a live process
    assert main(SIM + ["--data-dir", str(tmp_path)]) == 2
    assert f"run 'c' is being simulated by process {os.getppid()}" in capsys.readouterr().err
    assert (partial / "owner").read_text() == str(os.getppid())


def test_a_partial_run_of_another_spec_is_played_afresh(tmp_path):
    data = ["--data-dir", str(tmp_path)]
    partial = tmp_path / "traces" / ".partial-run=c"
    (partial / "events").mkdir(parents=True)
    (partial / "events" / "part-00007.parquet").write_bytes(b"another run's chunk")
    (partial / "spec.json").write_text('{"spec": {"games": 40}}')
    assert main(SIM + data) == 0
    run = tmp_path / "traces" / "run=c"
    assert sorted(p.name for p in (run / "events").iterdir()) == ["part-00000.parquet", "part-00001.parquet"]
    assert not partial.exists()


def test_files_and_folders_follow_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        assert main(SIM + ["--data-dir", str(tmp_path)]) == 0
    finally:
        os.umask(old)
    run = tmp_path / "traces" / "run=c"
    assert stat.S_IMODE(run.stat().st_mode) == 0o755
    part = next(run.glob("events/*.parquet"))
    assert stat.S_IMODE(part.stat().st_mode) == 0o644


def test_a_corrupt_file_costs_only_its_own_run_when_the_database_is_rebuilt(tmp_path, capsys):
    data = ["--data-dir", str(tmp_path)]
    assert main(SIM + data) == 0
    assert main(SIM + data + ["--run", "d", "--seed", "3"]) == 0
    bad = sorted((tmp_path / "traces" / "run=c" / "events").glob("*.parquet"))[0]
    bad.write_bytes(b"not parquet at all")
    capsys.readouterr()
    assert main(["db", "--rebuild"] + data) == 2
    err = capsys.readouterr().err
    assert bad.name in err and err.count("\n") == 1
    assert query("SELECT count(*) AS n FROM games WHERE run = 'd'", data_dir=tmp_path).n[0] == 6  # the rest
    assert query("SELECT count(*) AS n FROM games WHERE run = 'c'", data_dir=tmp_path).n[0] == 0


def test_rerunning_a_run_name_does_not_grow_the_database(tmp_path):
    data = ["--data-dir", str(tmp_path)]
    sizes = []
    for seed in range(6):
        assert main(SIM + data + ["--seed", str(seed), "--games", "20"]) == 0
        sizes.append((tmp_path / "riskcore.duckdb").stat().st_size)
    assert max(sizes) <= 2.2 * sizes[0]  # a replaced run's old blocks are reused, not piled up


def test_several_frames_are_stored_in_one_transaction_all_or_nothing(tmp_path):
    import pandas as pd

    from riskcore import paths
    from riskcore.db import DataError, query, store_frames_many

    def item(setting, x):
        frame = pd.DataFrame({"run": ["a"], "setting": [setting], "x": [x]})
        return {"posteriors": frame}, {"run": "a", "setting": setting}, setting

    store_frames_many([item("s1", 1), item("s2", 2)], "posteriors", tmp_path)
    assert query("SELECT count(*) AS n FROM posteriors", data_dir=tmp_path).n[0] == 2
    with pytest.raises(DataError, match="posteriors"):
        store_frames_many([item("s3", 3), item("s4", "not a number")], "posteriors", tmp_path)
    assert query("SELECT setting FROM posteriors ORDER BY 1", data_dir=tmp_path).setting.tolist() == ["s1", "s2"]
    root = paths.parquet_dir("posteriors", "run", "a", tmp_path)
    files = sorted(str(p.relative_to(root)) for p in root.rglob("*.parquet"))
    assert files == ["generations_posteriors/s1.parquet", "generations_posteriors/s2.parquet",
                     "posteriors/s1.parquet", "posteriors/s2.parquet"]


def test_a_writer_keeps_to_its_memory_budget_and_still_registers_a_larger_run(tmp_path, monkeypatch):
    from riskcore import db

    monkeypatch.setattr(db, "WRITE_MEMORY", "8MB")
    with db.transaction(tmp_path) as con:
        assert con.execute("SELECT current_setting('memory_limit')").fetchone()[0] == "7.6 MiB"
    with db.connect(tmp_path, read_only=True) as reader:  # readers (notebooks, queries) keep DuckDB's default
        assert reader.execute("SELECT current_setting('memory_limit')").fetchone()[0] != "7.6 MiB"
    assert main(SIM + ["--data-dir", str(tmp_path), "--games", "60"]) == 0
    assert query("SELECT count(*) AS n FROM games WHERE run = 'c'", data_dir=tmp_path).n[0] == 60


def test_a_damaged_chunk_of_a_stopped_run_is_played_again_never_sealed(tmp_path, monkeypatch, capsys):
    from riskcore import simulate

    data = ["--data-dir", str(tmp_path / "broken")]
    real, kept = simulate._keep_chunk, []

    def stop_after_two(*args):  # the run is stopped once two chunks are kept
        real(*args)
        kept.append(args[2])
        if len(kept) == 2:
            raise KeyboardInterrupt("stopped")

    monkeypatch.setattr(simulate, "_keep_chunk", stop_after_two)
    assert main(SIM + data + ["--games", "12"]) == 130
    monkeypatch.setattr(simulate, "_keep_chunk", real)
    partial = tmp_path / "broken" / "traces" / ".partial-run=c"
    bad = partial / "events" / "part-00001.parquet"
    raw = bytearray(bad.read_bytes())
    raw[len(raw) // 2] ^= 0x5A
    bad.write_bytes(bytes(raw))
    capsys.readouterr()
    assert main(SIM + data + ["--games", "12"]) == 0
    assert f"chunk 1 is played again: {bad} differs from what was written" in capsys.readouterr().err
    assert main(["replay", "--run", "c"] + data) == 0
    assert main(SIM + ["--games", "12", "--data-dir", str(tmp_path / "unbroken")]) == 0
    run, unbroken = tmp_path / "broken" / "traces" / "run=c", tmp_path / "unbroken" / "traces" / "run=c"
    assert {str(p.relative_to(run)): p.read_bytes() for p in sorted(run.rglob("*.parquet"))} == \
        {str(p.relative_to(unbroken)): p.read_bytes() for p in sorted(unbroken.rglob("*.parquet"))}
