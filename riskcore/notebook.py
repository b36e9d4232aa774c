"""Helpers the notebooks share: plotting style, figure saving, and result tables for sweeps.

Notebooks keep logic in the package; these helpers only handle presentation and output.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import pyarrow as pa  # noqa: E402
import seaborn as sns  # noqa: E402

from riskcore import paths  # noqa: E402
from riskcore.storage import atomic_path, check_name, write_parquet  # noqa: E402


def setup() -> None:
    sns.set_theme(style="whitegrid", context="notebook")
    plt.rcParams["figure.dpi"] = 100


def save_figure(fig, name: str) -> Path:
    """Save under reports/figures/NAME.png (names are explicit, never typed by hand elsewhere)."""
    path = paths.figures_dir() / f"{check_name('figure', name)}.png"
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=110, bbox_inches="tight")
    return path


def save_table(df: pd.DataFrame, name: str) -> Path:
    """Save a table as markdown under reports/tables/NAME.md."""
    from riskcore.storage import write_text

    path = paths.reports_dir() / "tables" / f"{check_name('table', name)}.md"
    # per column: a table whose columns are all numbers reaches tabulate as floats, integers too
    formats = [".0f" if pd.api.types.is_integer_dtype(df[c]) else ".3f" for c in df.columns]
    write_text(path, df.to_markdown(index=False, floatfmt=formats) + "\n")
    return path


def emit(df: pd.DataFrame, table: str, output_dir: str) -> None:
    """Hand a sweep point's result rows to the runner (no-op when the notebook runs on its own)."""
    if not output_dir:
        return
    path = Path(output_dir) / f"{check_name('table', table)}.parquet"
    write_parquet(pa.Table.from_pandas(df, preserve_index=False), path)
