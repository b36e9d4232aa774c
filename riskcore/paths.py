"""Project paths in one place; each is overridable by an environment variable.

`RISKCORE_ROOT` moves the project root, `RISKCORE_DATA` the data directory and `RISKCORE_REPORTS` the reports
directory. The DuckDB database always lives in the data directory, so notebooks and the CLI agree on it.
"""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
BOARDS_DIR = PACKAGE_DIR / "boards"


def project_root() -> Path:
    """The repository root (the parent of the package), or `$RISKCORE_ROOT`."""
    return Path(os.environ.get("RISKCORE_ROOT", PACKAGE_DIR.parent)).resolve()


def data_dir() -> Path:
    """Where traces and the DuckDB database live: `$RISKCORE_DATA` or `<root>/data`."""
    return Path(os.environ.get("RISKCORE_DATA", project_root() / "data")).resolve()


def reports_dir() -> Path:
    """Where figures, tables, benchmarks and the report go: `$RISKCORE_REPORTS` or `<root>/reports`."""
    return Path(os.environ.get("RISKCORE_REPORTS", project_root() / "reports")).resolve()


def db_path(data: Path | None = None) -> Path:
    """The embedded DuckDB database of a data directory."""
    return Path(data or data_dir()) / "riskcore.duckdb"


def traces_dir(data: Path | None = None) -> Path:
    """The immutable Parquet traces of a data directory, one sub-directory per run."""
    return Path(data or data_dir()) / "traces"


def figures_dir() -> Path:
    return reports_dir() / "figures"
