"""Execute the analysis notebooks with papermill and build `reports/report.html` (code hidden).

Notebooks live in `notebooks/` as jupytext percent files (diffable); executed copies go to
`reports/notebooks/NAME.ipynb`. Every report figure is listed in `FIGURES` with the notebook that makes it, so a
test can check the HTML shows each one.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from riskcore import paths
from riskcore.storage import write_text

NOTEBOOKS = ("01-traces", "02-convergence", "03-phatt-weights", "04-accuracy-tables", "05-agents", "06-search",
             "08-generalisation", "report")
TITLE = "Plan recognition and game AI in RISK"
FIGURES = {
    "traces-win-rates": "01-traces",
    "traces-game-length": "01-traces",
    "traces-board": "01-traces",
    "convergence-examples": "02-convergence",
    "convergence-top1": "02-convergence",
    "convergence-ptrue": "02-convergence",
    "phatt-weights-heatmap": "03-phatt-weights",
    "phatt-weights-sensitivity": "03-phatt-weights",
    "accuracy-by-focus": "04-accuracy-tables",
    "accuracy-winners-losers": "04-accuracy-tables",
    "agents-round-robin": "05-agents",
    "agents-belief-weight": "05-agents",
    "genetic-fitness": "05-agents",
    "mcrl-learning": "05-agents",
    "search-nodes": "06-search",
    "search-accuracy": "06-search",
    "search-tradeoff": "06-search",
    "search-estimate": "06-search",
    "search-scalability": "06-search",
    "generalisation-by-family": "08-generalisation",
    "generalisation-gain": "08-generalisation",
    "generalisation-calibration": "08-generalisation",
}


def notebook_path(name: str) -> Path:
    path = paths.notebooks_dir() / f"{name}.py"
    if not path.exists():
        raise FileNotFoundError(f"notebook {name!r} not found at {path}")
    return path


def run_notebook(name: str, parameters: dict[str, Any] | None = None, data_dir: Path | None = None) -> Path:
    """Execute one notebook; the executed copy is written atomically to reports/notebooks/NAME.ipynb."""
    import papermill

    from riskcore.experiments.sweep import notebook_as_ipynb
    from riskcore.kernels import IpcKernelManager

    out = paths.executed_notebooks_dir() / f"{name}.ipynb"
    out.parent.mkdir(parents=True, exist_ok=True)
    env = {"RISKCORE_DATA": str(paths.data_dir(data_dir)),
           "RISKCORE_REPORTS": str(paths.reports_dir())}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)  # the kernel inherits them
    try:
        with tempfile.TemporaryDirectory() as tmp:
            nb = notebook_as_ipynb(notebook_path(name), Path(tmp))
            staged = Path(tmp) / "executed.ipynb"
            papermill.execute_notebook(str(nb), str(staged), parameters=parameters or {}, kernel_name="python3",
                                       progress_bar=False, cwd=str(notebook_path(name).parent),
                                       kernel_manager_class=IpcKernelManager)
            staged.replace(out)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return out


def build_html(executed: Path) -> Path:
    """The executed report notebook as HTML with the code hidden."""
    import nbformat
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(exclude_input=True, exclude_input_prompt=True, exclude_output_prompt=True)
    nb = nbformat.read(executed, as_version=4)
    nb.metadata["title"] = TITLE
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{i:03d}"  # jupytext and papermill draw random ids; the HTML must be byte-reproducible
    body, _ = exporter.from_notebook_node(nb)
    path = paths.report_html()
    write_text(path, body)
    return path


def build_report(data_dir: Path | None = None, parameters: dict[str, dict] | None = None,
                 progress: bool = True, workers: int | None = None) -> Path:
    """Run the analysis notebooks (independent of each other: on `workers` local processes), then the report
    notebook that gathers their figures and tables, and write reports/report.html."""
    from riskcore.parallel import run_tasks

    parameters = parameters or {}
    analyses = [(name, parameters.get(name), data_dir) for name in NOTEBOOKS if name != "report"]
    for _ in run_tasks(run_notebook, analyses, workers=workers, desc="notebooks", progress=progress):
        pass
    return build_html(run_notebook("report", parameters.get("report"), data_dir))
