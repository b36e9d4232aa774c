"""The record of `make report`'s steps says whether the run reused an earlier run's caches."""

import sys

from riskcore.experiments import steps


def _record(tmp_path, monkeypatch) -> str:
    monkeypatch.setenv("RISKCORE_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("RISKCORE_REPORTS", str(tmp_path / "reports"))
    steps.start()
    assert steps.run("nothing", [sys.executable, "-c", "pass"]) == 0
    steps.write()
    return (tmp_path / "reports" / "benchmarks" / "make-report.md").read_text()


def test_a_first_run_says_so(tmp_path, monkeypatch):
    text = _record(tmp_path, monkeypatch)
    assert "Started with: no caches in the data directory (a first run)." in text
    assert "| nothing" in text


def test_a_rerun_names_the_caches_it_reused(tmp_path, monkeypatch):
    (tmp_path / "data" / "cache").mkdir(parents=True)
    (tmp_path / "data" / "cache" / "search.parquet").write_bytes(b"")
    (tmp_path / "data" / "tuning" / "genetic").mkdir(parents=True)
    text = _record(tmp_path, monkeypatch)
    assert "caches of an earlier run reused: `cache/search.parquet`, `tuning/genetic`." in text
