"""Every path the project reads or writes, in one place; the roots are overridable by environment variables.

`RISKCORE_ROOT` moves the project root, `RISKCORE_DATA` the data directory, `RISKCORE_REPORTS` the reports
directory and `RISKCORE_MODELS` the folder of fitted weights. The DuckDB database always lives in the data
directory, so notebooks and the command line agree on it. Functions that take `data` accept a data directory
(None: the default one).
"""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
BOARDS_DIR = PACKAGE_DIR / "boards"


def project_root() -> Path:
    """The repository root (the parent of the package), or `$RISKCORE_ROOT`."""
    return Path(os.environ.get("RISKCORE_ROOT", PACKAGE_DIR.parent)).resolve()


def data_dir(data: Path | str | None = None) -> Path:
    """Where traces and the DuckDB database live: `data` if given, else `$RISKCORE_DATA` or `<root>/data`."""
    if data is not None:
        return Path(data).resolve()
    return Path(os.environ.get("RISKCORE_DATA", project_root() / "data")).resolve()


def reports_dir() -> Path:
    """Where figures, tables, benchmarks and the report go: `$RISKCORE_REPORTS` or `<root>/reports`."""
    return Path(os.environ.get("RISKCORE_REPORTS", project_root() / "reports")).resolve()


def notebook_output_dir() -> Path:
    """Where a notebook's figures, tables and headlines go. `make report` (and every test) runs notebooks with
    `$RISKCORE_REPORTS` set: the reports directory. A notebook run by hand in Jupyter writes to
    `<root>/scratch/reports` (git-ignored), so changing a parameter never overwrites the committed report."""
    if "RISKCORE_REPORTS" in os.environ or not _inside_a_jupyter_kernel():
        return reports_dir()
    return project_root() / "scratch" / "reports"


def _inside_a_jupyter_kernel() -> bool:
    # importing ipywidgets loads ipykernel even in a plain script, so ask the running shell instead
    import sys

    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return getattr(shell, "kernel", None) is not None


def models_dir() -> Path:
    """Fitted weights (the search's learned end scorer): `$RISKCORE_MODELS` or `<root>/models`."""
    return Path(os.environ.get("RISKCORE_MODELS", project_root() / "models")).resolve()


def datasets_dir() -> Path:
    """Committed input data recorded elsewhere (e.g. Domination's game logs): `<root>/datasets`."""
    return project_root() / "datasets"


def notebooks_dir() -> Path:
    return project_root() / "notebooks"


# ---- the data directory -------------------------------------------------------------------------------------------
def db_path(data: Path | str | None = None) -> Path:
    """The embedded DuckDB database of a data directory."""
    return data_dir(data) / "riskcore.duckdb"


def traces_dir(data: Path | str | None = None) -> Path:
    """The immutable Parquet traces of a data directory, one sub-directory per run."""
    return data_dir(data) / "traces"


def parquet_dir(tree: str, key: str, value: str, data: Path | str | None = None) -> Path:
    """The Parquet files of one run (or sweep, tournament) in one of the data directory's trees:
    `<data>/<tree>/<key>=<value>`."""
    return data_dir(data) / tree / f"{key}={value}"


def cache_dir(data: Path | str | None = None) -> Path:
    """Caches that a rerun may reuse (deleting them is safe)."""
    return data_dir(data) / "cache"


def tuning_dir(data: Path | str | None = None) -> Path:
    """Checkpoints of genetic tuning runs."""
    return data_dir(data) / "tuning"


# ---- the reports directory ----------------------------------------------------------------------------------------
def notebook_output(kind: str, file: str) -> Path:
    """A figure or table (`kind`: figures, tables) as the notebook reading it should see it: the one a notebook
    run by hand wrote in this place (`notebook_output_dir`), else the report's. Under `make report` both are the
    report's."""
    own = notebook_output_dir() / kind / file
    return own if own.exists() else reports_dir() / kind / file


def figures_dir() -> Path:
    return reports_dir() / "figures"


def tables_dir() -> Path:
    return reports_dir() / "tables"


def benchmarks_dir() -> Path:
    return reports_dir() / "benchmarks"


def executed_notebooks_dir() -> Path:
    """Executed copies of the analysis notebooks (regenerated, not committed)."""
    return reports_dir() / "notebooks"


def sweep_notebooks_dir(sweep: str) -> Path:
    """Executed notebooks of a sweep's points (regenerated, not committed)."""
    return reports_dir() / "runs" / sweep


def report_html() -> Path:
    return reports_dir() / "report.html"
