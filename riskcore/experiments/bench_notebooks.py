"""`riskcore bench --notebooks`: every notebook executed on the database, each in a fresh process, with its
kernel's peak memory and its slowest cell, written to reports/benchmarks/notebooks.md.

A notebook's kernel is where a query's result lands (DuckDB runs inside it too), so its peak is the number that
says whether Run All fits beside other work: a query that loads a whole table into pandas shows here first. The
peak is the kernel's own high-water mark of resident memory (`getrusage`, read by one cell appended after the
notebook's last), and the times are papermill's per cell. The notebooks run as `make report` runs them, with
their default parameters, writing their figures and tables to a scratch copy of the reports, never over them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd

from riskcore import paths
from riskcore.experiments.report import NOTEBOOKS

# the analysis notebooks, the explorer among them, then the report that gathers their figures and tables
BENCHED = tuple(sorted({*NOTEBOOKS, "07-explore"} - {"report"})) + ("report",)
PEAK_LIMIT_MB = 2048  # a notebook's kernel at most 2 GB on the full `make report` data
CELL_LIMIT_SECONDS = 60
PEAK_MARK = "riskcore-kernel-peak-kB"

# appended to the notebook: the kernel's high-water mark of resident memory, and that of any process it started
_PEAK_CELL = ("import resource\n"
              "print('" + PEAK_MARK + "', max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,\n"
              "      resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))")

# run in a fresh process: execute one notebook with the peak cell appended; print its measures as JSON
_RUN = """
import json, sys, tempfile, time
from pathlib import Path
import nbformat, papermill
from riskcore.experiments.bench_notebooks import measures
from riskcore.experiments.jupyter_kernels import IpcKernelManager
from riskcore.experiments.report import notebook_path
from riskcore.experiments.sweep import notebook_as_ipynb
name, cell = sys.argv[1], sys.argv[2]
with tempfile.TemporaryDirectory() as tmp:
    nb = notebook_as_ipynb(notebook_path(name), Path(tmp))
    book = nbformat.read(nb, as_version=4)
    book.cells.append(nbformat.v4.new_code_cell(cell))
    nbformat.write(book, nb)
    out, start, error = Path(tmp) / "executed.ipynb", time.perf_counter(), ""
    try:
        papermill.execute_notebook(str(nb), str(out), kernel_name="python3", progress_bar=False,
                                   cwd=str(notebook_path(name).parent), kernel_manager_class=IpcKernelManager)
    except Exception as exc:  # a failing cell: the notebook's error is the result
        error = " ".join(str(exc).split())[-400:]
    seconds = time.perf_counter() - start
    print(json.dumps({**measures(nbformat.read(out, as_version=4)), "seconds": round(seconds, 1), "error": error}))
"""


def measures(executed) -> dict:
    """From an executed notebook (papermill's record): its cells, slowest cell and the kernel's peak."""
    durations = [(c.metadata.get("papermill", {}).get("duration") or 0.0, k) for k, c in enumerate(executed.cells)
                 if c.cell_type == "code"]
    peak = None
    for out in executed.cells[-1].get("outputs", []):
        for line in out.get("text", "").splitlines():
            if line.startswith(PEAK_MARK):
                peak = round(int(line.split()[1]) / 1024, 1)
    slowest, where = max(durations[:-1] or [(0.0, -1)])
    return {"code_cells": len(durations) - 1, "slowest_cell_seconds": round(slowest, 1), "slowest_cell": where,
            "kernel_peak_MB": peak}


def database_size(data_dir: Path | None = None) -> str:
    """What the notebooks ran on: runs, events and posterior rows."""
    from riskcore.db import query
    from riskcore.explore.beliefs import has_table

    count = {t: int(query(f"SELECT count(*) AS n FROM {t}", data_dir=data_dir).n[0]) if has_table(t, data_dir) else 0
             for t in ("runs", "events", "posteriors")}
    return f"{count['runs']} runs, {count['events']:,} events, {count['posteriors']:,} posterior rows"


def run_notebook_measured(name: str, data_dir: Path | None, reports: Path) -> dict:
    """Execute notebook `name` in a fresh process on `data_dir`, its outputs under `reports`: its measures."""
    env = {**os.environ, "RISKCORE_DATA": str(paths.data_dir(data_dir)), "RISKCORE_REPORTS": str(reports)}
    done = subprocess.run([sys.executable, "-c", _RUN, name, _PEAK_CELL], capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"notebook benchmark: {name} could not be run: {done.stderr.strip()[-500:]}")
    return {"notebook": name, **json.loads(done.stdout.strip().splitlines()[-1])}


def bench_notebooks(names: tuple[str, ...] = BENCHED, data_dir: Path | None = None, out_dir: Path | None = None
                    ) -> pd.DataFrame:
    """Every notebook in `names`, in order, each in a fresh process: kernel peak memory, total and slowest-cell
    seconds, against `PEAK_LIMIT_MB` and `CELL_LIMIT_SECONDS`. Raises after writing the table if a notebook
    failed or missed a limit."""
    from riskcore.experiments.bench import write_benchmark

    unknown = [n for n in names if n not in BENCHED]
    if unknown:
        raise ValueError(f"unknown notebook(s) {unknown}; known: {list(BENCHED)}")
    size = database_size(data_dir)
    rows = []
    with tempfile.TemporaryDirectory(prefix="riskcore-notebooks-") as tmp:
        reports = Path(tmp)
        for kind in ("figures", "tables"):  # the report notebook reads what the experiments wrote there too
            if (paths.reports_dir() / kind).is_dir():
                shutil.copytree(paths.reports_dir() / kind, reports / kind)
        for name in names:
            rows.append(run_notebook_measured(name, data_dir, reports))
    df = pd.DataFrame(rows)
    df["within_limits"] = (df.error == "") & (df.kernel_peak_MB <= PEAK_LIMIT_MB) & \
        (df.slowest_cell_seconds < CELL_LIMIT_SECONDS)
    write_benchmark("notebooks", "Notebook benchmark", "Each notebook executed as `make report` runs it (default "
                    "parameters) on the database below, in a fresh process: the kernel's peak resident memory "
                    "(DuckDB's included: it runs in the kernel), the whole run and its slowest code cell (papermill's "
                    "timing; cells numbered from 0, markdown included).", df, out_dir,
                    {"database": size,
                     "targets": f"every notebook's kernel at most {PEAK_LIMIT_MB} MB, no error, every cell under "
                                f"{CELL_LIMIT_SECONDS} s"})
    failed = df[~df.within_limits]
    if len(failed):
        raise RuntimeError("notebook benchmark: " + "; ".join(
            f"{r.notebook}: " + (r.error or f"peak {r.kernel_peak_MB} MB, slowest cell {r.slowest_cell_seconds} s")
            for r in failed.itertuples()) + f" (written to {paths.benchmarks_dir() if out_dir is None else out_dir})")
    return df
