"""`make ... QUICK=1` writes into its own folder and never over the committed reports or data."""

import subprocess
from pathlib import Path

ROOT = Path(__file__).parents[1]


def _tracked_changes() -> str:
    return subprocess.run(["git", "status", "--porcelain", "--", "reports", "data"], cwd=ROOT, capture_output=True,
                          text=True, check=True).stdout


def test_the_quick_path_writes_only_into_its_own_folder(tmp_path):
    before = _tracked_changes()
    quick = tmp_path / "quick"
    done = subprocess.run(["make", "-s", "timing", "data", "summary", "QUICK=1", "GAMES=4", f"QUICK_DIR={quick}"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    subprocess.run([str(ROOT / ".venv" / "bin" / "python"), "-m", "riskcore.experiments.steps", "write"], cwd=ROOT,
                   env={"RISKCORE_REPORTS": str(quick / "reports"), "RISKCORE_DATA": str(quick / "data"),
                        "PATH": "/usr/bin:/bin"}, check=True, capture_output=True)
    assert _tracked_changes() == before
    assert (quick / "data" / "riskcore.duckdb").exists()
    written = {p.relative_to(quick / "reports").as_posix() for p in (quick / "reports").rglob("*") if p.is_file()}
    assert "benchmarks/make-report.md" in written and any(p.startswith("figures/") for p in written)
