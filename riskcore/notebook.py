"""Helpers the notebooks share: plotting style, figure saving, and result tables for sweeps.

Notebooks keep logic in the package; these helpers only handle presentation and output.
"""

from __future__ import annotations

from pathlib import Path

import sys

import matplotlib

if "ipykernel" not in sys.modules:  # in a notebook the kernel's inline backend shows the figures
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
    if paths.notebook_output_dir() != paths.reports_dir():
        print(f"Run by hand: figures and tables go to {paths.notebook_output_dir()} "
              "(`make report` writes the committed ones under reports/).")


def save_figure(fig, name: str) -> Path:
    """Save as figures/NAME.png in `paths.notebook_output_dir()` (the reports when `make report` runs the notebook;
    names are explicit, never typed by hand elsewhere)."""
    path = paths.notebook_output_dir() / "figures" / f"{check_name('figure', name)}.png"
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=110, bbox_inches="tight")
    return path


def markdown_table(df: pd.DataFrame, digits: int = 3) -> str:
    """A table as markdown: whole numbers printed as whole numbers (a float column holding only whole numbers
    too), other numbers with `digits` decimals, and a missing value as an empty cell, never `nan`."""
    formats = []
    for c in df.columns:
        col = df[c]
        numeric = pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col)
        whole = numeric and (pd.api.types.is_integer_dtype(col) or
                             bool(((col.dropna() % 1) == 0).all() and col.notna().any() and col.abs().max() >= 2))
        formats.append(".0f" if whole else f".{digits}f")
    cells = df.astype(object).where(df.notna(), None)  # tabulate leaves None empty, prints a float NaN as nan
    return cells.to_markdown(index=False, floatfmt=formats, missingval="")


def save_table(df: pd.DataFrame, name: str) -> Path:
    """Save a table as markdown, tables/NAME.md in `paths.notebook_output_dir()` (`markdown_table`)."""
    from riskcore.storage import write_text

    path = paths.notebook_output_dir() / "tables" / f"{check_name('table', name)}.md"
    write_text(path, markdown_table(df) + "\n")
    return path


def load_table(name: str) -> pd.DataFrame:
    """A table saved by `save_table`, read back (numbers as numbers): the report takes the numbers its text
    quotes from the tables it shows, so text and table cannot disagree. By hand, a table a notebook wrote to
    scratch comes first (`paths.notebook_output`)."""
    path = paths.notebook_output("tables", f"{check_name('table', name)}.md")
    lines = [line for line in path.read_text().splitlines() if line.startswith("|")]
    if len(lines) < 2:
        raise ValueError(f"{path}: not a markdown table")

    def cells(line: str) -> list[str]:
        return [c.strip() for c in line.strip().strip("|").split("|")]

    df = pd.DataFrame([cells(line) for line in lines[2:]], columns=cells(lines[0]))
    for c in df.columns:
        numbers = pd.to_numeric(df[c].replace("", None), errors="coerce")
        if set(df[c]) <= {"True", "False"} and len(df):
            df[c] = df[c] == "True"
        elif numbers.notna().sum() == (df[c] != "").sum():
            df[c] = numbers
    return df


def emit(df: pd.DataFrame, table: str, output_dir: str) -> None:
    """Hand a sweep point's result rows to the runner (no-op when the notebook runs on its own)."""
    if not output_dir:
        return
    path = Path(output_dir) / f"{check_name('table', table)}.parquet"
    write_parquet(pa.Table.from_pandas(df, preserve_index=False), path)
