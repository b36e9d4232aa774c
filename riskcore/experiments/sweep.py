"""`riskcore sweep pipelines/NAME.yaml`: parameter sweeps as papermill executions of a notebook.

A spec (YAML):

    name: phatt_weights            # the sweep's name: outputs under reports/runs/NAME/, rows keyed by it
    notebook: notebooks/points/phatt_point.py   # jupytext percent file (or .ipynb) with a `parameters` cell
    fixed: {inconsistent: [0.9, 0.5]}   # the same for every point
    points: [{kind: all}, ...]     # an explicit list of points, and/or
    grid:                          # a cartesian product (crossed with `points` when both are given)
      scheme: [simple, proportional]
      focus: [0, 0.5, 0.8, 1]
    seeds: [0]                     # optional; each point runs once per seed, injected as `seed`

Every value must be a parameter the notebook declares, of the declared type (`int`, `float`, `str`, `bool`, `list`,
`list[float]`, `list[str]`, `dict`: values may be lists and mappings, never text to re-parse); a bad spec is
rejected before anything runs. Each point gets `sweep`, `point` and `output_dir` injected too: the notebook writes
result tables with `riskcore.notebook.emit`, and the runner registers them in DuckDB with `sweep_points(sweep,
point, params, status, seconds, error, trace_generations)`: the trace generations it was computed from, so `riskcore
check` names a point whose runs changed since. Points run in parallel on local processes or on Dask. Finished points
are skipped on a rerun; a failing point is recorded with its error while the others go on; a point's files and rows
appear together or not at all. The sweep's tables hold exactly the points of its current spec: a point dropped from
the spec (or a failed point of an old spec) is removed before the run, and `--force` starts from scratch.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from riskcore import ENGINE_VERSION, paths
from riskcore.db import query, store_frames, trace_generations
from riskcore.parallel import run_tasks
from riskcore.storage import atomic_path, check_name

SPEC_KEYS = {"name", "notebook", "description", "fixed", "grid", "points", "seeds"}
INJECTED = ("sweep", "point", "output_dir")
TYPES = {"int": (int,), "float": (int, float), "str": (str,), "bool": (bool,), "list": (list,), "dict": (dict,)}


def _type_ok(value: Any, declared: str) -> bool | None:
    """Whether `value` has the notebook's declared type (None: a type this check does not know)."""
    if declared.startswith("list[") and declared.endswith("]"):
        inner = declared[5:-1]
        return isinstance(value, list) and all(_type_ok(v, inner) for v in value) if inner in TYPES else None
    ok = TYPES.get(declared)
    if ok is None:
        return None
    return isinstance(value, ok) and (declared == "bool" or not isinstance(value, bool))


class SpecError(ValueError):
    """A sweep spec is malformed; the message names the offending item."""


@dataclass(frozen=True)
class SweepSpec:
    name: str
    notebook: Path
    points: tuple[dict[str, Any], ...]
    path: Path

    def point_id(self, params: dict[str, Any]) -> str:
        digest = hashlib.sha1(json.dumps(params, sort_keys=True).encode()).hexdigest()[:10]
        return f"p{digest}"


def notebook_as_ipynb(path: Path, dest_dir: Path) -> Path:
    """An .ipynb copy of a notebook (jupytext percent files are converted)."""
    if path.suffix == ".ipynb":
        return path
    import jupytext

    nb = jupytext.read(path)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    out = dest_dir / (path.stem + ".ipynb")
    jupytext.write(nb, out, fmt="ipynb")
    return out


def declared_parameters(notebook: Path) -> dict[str, dict]:
    """The notebook's `parameters` cell: name -> {type, default}, via papermill's inspector."""
    import papermill

    with tempfile.TemporaryDirectory() as tmp:
        nb = notebook_as_ipynb(notebook, Path(tmp))
        declared = papermill.inspect_notebook(str(nb))
    if not declared:
        raise SpecError(f"notebook {notebook} has no cell tagged 'parameters'")
    return {k: {"type": v["inferred_type_name"], "default": v["default"]} for k, v in declared.items()}


def load_spec(path: str | Path) -> SweepSpec:
    """Read and validate a sweep spec; every problem names the key, value or parameter at fault."""
    path = Path(path)
    if not path.exists():
        raise SpecError(f"sweep spec {path} not found")
    try:
        raw = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise SpecError(f"sweep spec {path}: invalid YAML: {exc}") from None
    where = f"sweep spec {path}"
    if not isinstance(raw, dict):
        raise SpecError(f"{where}: must be a mapping")
    unknown = set(raw) - SPEC_KEYS
    if unknown:
        raise SpecError(f"{where}: unknown key(s) {sorted(unknown)}; allowed: {sorted(SPEC_KEYS)}")
    for key in ("name", "notebook"):
        if key not in raw:
            raise SpecError(f"{where}: missing key {key!r}")
    try:
        check_name("sweep", str(raw["name"]))
    except ValueError as exc:
        raise SpecError(f"{where}: {exc}") from None
    notebook = Path(raw["notebook"])
    if not notebook.is_absolute():
        notebook = paths.project_root() / notebook
    if not notebook.exists():
        raise SpecError(f"{where}: notebook {raw['notebook']!r} not found")
    if "grid" not in raw and "points" not in raw:
        raise SpecError(f"{where}: give a 'grid', a list of 'points', or both (their product)")
    fixed = raw.get("fixed") or {}
    if not isinstance(fixed, dict):
        raise SpecError(f"{where}: fixed must be a mapping")
    grid = raw.get("grid", {})
    if "grid" in raw:
        if not isinstance(grid, dict) or not grid:
            raise SpecError(f"{where}: grid is empty")
        for k, values in grid.items():
            if not isinstance(values, list) or not values:
                raise SpecError(f"{where}: grid parameter {k!r} needs a non-empty list of values")
    listed = raw.get("points", [{}])
    if not isinstance(listed, list) or not listed or not all(isinstance(p, dict) for p in listed):
        raise SpecError(f"{where}: points must be a non-empty list of mappings")
    points = [{**p, **dict(zip(grid, combo))} for p in listed for combo in itertools.product(*grid.values())]
    seeds = raw.get("seeds")
    if seeds is not None:
        if not isinstance(seeds, list) or not seeds or not all(isinstance(s, int) for s in seeds):
            raise SpecError(f"{where}: seeds must be a non-empty list of integers")
        points = [{**p, "seed": s} for p in points for s in seeds]
    points = [{**fixed, **p} for p in points]
    declared = declared_parameters(notebook)
    for p in points:
        for k, v in p.items():
            if k in INJECTED:
                raise SpecError(f"{where}: parameter {k!r} is set by the runner, not the spec")
            if k not in declared:
                raise SpecError(f"{where}: parameter {k!r} is not declared in the parameters cell of "
                                f"{raw['notebook']} (declared: {sorted(declared)})")
            want = declared[k]["type"]
            if _type_ok(v, want) is False:
                raise SpecError(f"{where}: parameter {k!r} = {v!r} should be of type {want}")
    missing = [k for k in INJECTED if k not in declared]
    if missing:
        raise SpecError(f"{where}: notebook {raw['notebook']} must declare {missing} in its parameters cell")
    spec = SweepSpec(str(raw["name"]), notebook, tuple(points), path)
    seen: dict[str, dict] = {}
    for p in points:
        pid = spec.point_id(p)
        if pid in seen:
            raise SpecError(f"{where}: point {p} is listed twice")
        seen[pid] = p
    return spec


def execute_point(notebook: str, params: dict[str, Any], executed_path: str, data_dir: str | None
                  ) -> dict[str, Any]:
    """Run one point with papermill in a scratch directory; return status, timing and the emitted tables."""
    import os

    import papermill

    from riskcore.experiments.jupyter_kernels import IpcKernelManager

    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        out_dir = Path(tmp) / "out"
        out_dir.mkdir()
        nb = notebook_as_ipynb(Path(notebook), Path(tmp))
        executed = Path(tmp) / "executed.ipynb"
        env_data = os.environ.get("RISKCORE_DATA")
        if data_dir:
            os.environ["RISKCORE_DATA"] = data_dir  # the kernel inherits it
        status, error = "ok", None
        try:
            papermill.execute_notebook(str(nb), str(executed), parameters={**params, "output_dir": str(out_dir)},
                                       kernel_name="python3", progress_bar=False, cwd=str(Path(notebook).parent),
                                       kernel_manager_class=IpcKernelManager)
        except Exception as exc:  # a failing point is recorded, not fatal
            status, error = "failed", f"{type(exc).__name__}: {exc}"[:4000]
        finally:
            if data_dir:
                if env_data is None:
                    os.environ.pop("RISKCORE_DATA", None)
                else:
                    os.environ["RISKCORE_DATA"] = env_data
        tables = {}
        if status == "ok":
            for f in sorted(out_dir.glob("*.parquet")):
                tables[f.stem] = pq.read_table(f)
        notebook_bytes = executed.read_bytes() if executed.exists() else b""
    return {"status": status, "error": error, "seconds": time.perf_counter() - start, "tables": tables,
            "notebook": notebook_bytes, "executed_path": executed_path}


def finished_points(sweep: str, data_dir: Path | None) -> set[str]:
    try:
        df = query("SELECT point FROM sweep_points WHERE sweep = ? AND status = 'ok'", [sweep], data_dir)
    except Exception:  # no table yet
        return set()
    return set(df.point)


def run_sweep(spec: SweepSpec, data_dir: Path | None = None, workers: int | None = None,
              dask_address: str | None = None, force: bool = False, progress: bool = True) -> pd.DataFrame:
    """Execute every unfinished point of the spec (every point with `force`: from scratch); return the sweep's
    `sweep_points` rows. Points of the sweep that are not in the spec any more (or, with `force`, every point)
    are removed first, files and rows, so the sweep's tables hold exactly the spec's points."""
    data = paths.data_dir(data_dir)
    data.mkdir(parents=True, exist_ok=True)
    runs_dir = paths.sweep_notebooks_dir(spec.name)
    prune(spec.name, set() if force else {spec.point_id(p) for p in spec.points}, data_dir)
    done = finished_points(spec.name, data_dir)
    todo = [(spec.point_id(p), p) for p in spec.points if spec.point_id(p) not in done]
    tasks = [(str(spec.notebook), {**p, "sweep": spec.name, "point": pid}, str(runs_dir / f"{pid}.ipynb"),
              str(data)) for pid, p in todo]
    read = json.dumps(trace_generations(data_dir), sort_keys=True)  # the games every point of this pass can read
    for i, result in run_tasks(execute_point, tasks, workers, dask_address, desc=f"sweep {spec.name}",
                               progress=progress):
        pid, params = todo[i]
        _store_point(spec.name, pid, params, result, data, data_dir, read)
    return query("SELECT * FROM sweep_points WHERE sweep = ? ORDER BY point", [spec.name], data_dir)


def _store_point(sweep: str, pid: str, params: dict, result: dict, data: Path, data_dir: Path | None,
                 read: str = "{}") -> None:
    """Write a point's executed notebook, its tables and its sweep_points row, registered in one transaction.
    `read`: the trace generation of every run when the point ran (JSON), so `riskcore check` can tell when a run
    it may have read was rewritten since."""
    row = pa.table({"sweep": [sweep], "point": [pid], "params": [json.dumps(params, sort_keys=True)],
                    "status": [result["status"]], "seconds": [round(result["seconds"], 3)],
                    "error": pa.array([result["error"]], pa.string()), "engine_version": [ENGINE_VERSION],
                    "trace_generations": [read]})
    frames = {"sweep_points": row}
    for name, table in result["tables"].items():
        check_name("table", name)
        clash = {"sweep", "point"} & set(table.column_names)
        if clash:
            raise SpecError(f"sweep {sweep!r} point {pid}: table {name!r} has column(s) {sorted(clash)}, "
                            f"which the runner adds itself; rename them in the notebook")
        n = table.num_rows
        frames[name] = table.append_column("sweep", pa.array([sweep] * n)).append_column("point",
                                                                                          pa.array([pid] * n))
    store_frames(frames, "sweeps", {"sweep": sweep, "point": pid}, data_dir, part=pid)
    if result["notebook"]:
        with atomic_path(Path(result["executed_path"])) as tmp:
            tmp.write_bytes(result["notebook"])


def prune(sweep: str, keep: set[str], data_dir: Path | None = None) -> list[str]:
    """Remove every point of `sweep` not in `keep` (its Parquet files and its rows in every table of the sweep,
    in one transaction; its executed notebook too). Returns the points removed."""
    from riskcore.db import transaction

    root = paths.parquet_dir("sweeps", "sweep", sweep, data_dir)
    if not root.is_dir():
        return []
    files = {f: f.stem for table in root.iterdir() if table.is_dir() for f in table.glob("*.parquet")}
    stale = sorted({pid for pid in files.values() if pid not in keep})
    if not stale:
        return []
    tables = sorted({f.parent.name for f, pid in files.items() if pid in stale})
    with transaction(data_dir) as con:
        present = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        marks = ", ".join("?" for _ in stale)
        for table in tables:
            if table in present:
                con.execute(f"DELETE FROM {table} WHERE sweep = ? AND point IN ({marks})", [sweep, *stale])
    for f, pid in files.items():
        if pid in stale:
            f.unlink()
    for pid in stale:
        (paths.sweep_notebooks_dir(sweep) / f"{pid}.ipynb").unlink(missing_ok=True)
    return stale


def clean_sweep(sweep: str, data_dir: Path | None = None) -> None:
    """Forget a sweep's points (files and rows), e.g. before a clean rerun."""
    prune(sweep, set(), data_dir)
