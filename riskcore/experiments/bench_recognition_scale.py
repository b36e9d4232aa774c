"""`riskcore bench --recognition-scale`: every recogniser over a run of growing size, as a user runs it.

For each size, one run of four-player mission games (`mission` agents) is simulated in a scratch data folder
(not timed), then `riskcore recognize` builds its features (with the uniform prior) and computes every
recogniser's posteriors, each in a fresh process tree on every core, timed from outside with the peak memory of
its largest process. Recognition reads and writes a bounded chunk of games at a time, so the peak should not grow
with the run: the sizes show whether it does. The report is written after every measure: a run stopped part way
keeps what it measured and says how far it got. The rows of sizes a run does not measure are kept from the report
as it stood, each with the date it was measured: a million games (hours) is measured alone, beside the smaller
sizes measured before.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

import pandas as pd

from riskcore import paths
from riskcore.experiments.bench_memory import RECOGNISERS, riskcore_command
from riskcore.experiments.bench_scale import timed

SIZES = (10_000, 100_000)
# the classifier trains on another run: not a pass over the measured one
PASSES = tuple(spec for spec in RECOGNISERS if not spec.startswith("classifier"))
TARGET = "every recogniser over 10^5 games in at most 3 GB (3,072 MB) peak memory"


def _measures(recognisers: tuple[str, ...]) -> list[tuple[str, str]]:
    return [("features (with the uniform prior)", "uniform")] + [(f"recognize {s}", s) for s in recognisers]


def bench_recognition_scale(sizes: tuple[int, ...] = SIZES, recognisers: tuple[str, ...] = PASSES,
                            workers: int | None = None, out_dir: Path | None = None, scratch: Path | None = None,
                            dask_address: str | None = None, dask_only: bool = False) -> pd.DataFrame:
    """The report is written again after every measure, so a long run stopped part way keeps what it measured
    (and says how far it got). With `dask_address`, every size is measured twice, with the same code: locally
    (unless `dask_only`) and with the run simulated and recognised on that cluster, whose measures' peak is the
    larger of the command's largest process and the cluster's largest worker; the report is then
    `recognition-scale-dask.md`. Returns this run's rows."""
    workers = workers or os.cpu_count() or 1
    measures = _measures(recognisers)
    places = [] if dask_address and dask_only else [("local", [])]
    if dask_address:
        places.append(("Dask", ["--dask", dask_address]))
    out_dir = Path(out_dir or paths.benchmarks_dir())
    kept = _kept_rows(out_dir / f"{_report_name(dask_address)}.json", {(n, w) for n in sizes for w, _ in places})
    rows: list[dict] = []
    with worker_peaks(dask_address) as worker_peak:
        for n in sizes:
            for where, cluster in places:
                with tempfile.TemporaryDirectory(prefix="riskcore-recognition-scale-", dir=scratch) as tmp:
                    run, data = f"scale-{n}", Path(tmp)
                    timed(riskcore_command("simulate", "--run", run, "--games", str(n), "--quiet", *cluster,
                                           "--data-dir", str(data)), f"simulate of {n:,} games")
                    for measure, spec in measures:
                        worker_peak()  # from now on
                        seconds, peak = timed(riskcore_command("recognize", "--run", run, "--recogniser", spec,
                                                               *(cluster or ["--workers", str(workers)]),
                                                               "--quiet", "--data-dir", str(data)),
                                              f"{measure} on {n:,} games ({where})")
                        row = {"games": n, "where": where} if dask_address else {"games": n}
                        rows.append({**row, "measure": measure, "seconds": round(seconds, 1),
                                     "players_per_s": round(4 * n / seconds, 1),
                                     "peak_MB": max(peak, worker_peak() if cluster else 0.0),
                                     "measured": _today()})
                        _write(kept, rows, sizes, len(measures) * len(places), workers, out_dir, dask_address)
    return pd.DataFrame(rows)


def _report_name(dask_address: str | None) -> str:
    return "recognition-scale-dask" if dask_address else "recognition-scale"


def _today() -> str:
    from riskcore.experiments.bench import machine

    return machine()["date"]


def _kept_rows(report: Path, measuring: set[tuple[int, str]]) -> list[dict]:
    """The report's rows that this run does not measure again (by size and place), each with the date it was
    measured (a row written before rows carried one: the report's date)."""
    if not report.exists():
        return []
    old = json.loads(report.read_text())
    return [{**r, "measured": r.get("measured", old["meta"]["date"])} for r in old["rows"]
            if (r["games"], r.get("where", "local")) not in measuring]


@contextmanager
def worker_peaks(address: str | None) -> Iterator[Callable[[], float]]:
    """A function that returns the largest memory (MB) any worker of the cluster at `address` reported since its
    last call (the scheduler's own figure, read every `SAMPLE_SECONDS`); without a cluster, always 0."""
    if not address:
        yield lambda: 0.0
        return
    from distributed import Client

    peak, stop = [0.0], threading.Event()

    def sample(client) -> None:
        while not stop.is_set():
            info = client.scheduler_info()["workers"].values()
            peak[0] = max([peak[0], *(w["metrics"]["memory"] / 2**20 for w in info)])
            stop.wait(SAMPLE_SECONDS)

    def since_last() -> float:
        value, peak[0] = peak[0], 0.0
        return round(value, 1)

    with Client(address, timeout="30s") as client:
        thread = threading.Thread(target=sample, args=(client,), daemon=True)
        thread.start()
        try:
            yield since_last
        finally:
            stop.set()
            thread.join()


SAMPLE_SECONDS = 1.0


def _write(kept: list[dict], rows: list[dict], sizes: tuple[int, ...], per_size: int, workers: int, out_dir: Path,
           dask_address: str | None = None) -> None:
    from riskcore.experiments.bench import write_benchmark

    done = len(rows) == per_size * len(sizes)
    progress = "every measure of every size" if done else (
        f"{len(rows)} of the {per_size * len(sizes)} measures ({', '.join(f'{n:,}' for n in sizes)} games); the "
        "run stopped before the rest")
    if kept:
        places = sorted({(r["games"], r.get("where", "")) for r in kept})
        progress += "; " + ", ".join(f"{n:,} games {w}".strip() for n, w in places) + (
            ": kept from an earlier run (`measured`)")
    where = (f"{workers} worker processes, each measure a fresh process tree timed from start to exit; `peak_MB` is "
             "its largest process") if not dask_address else (
        f"{workers} local worker processes and on a Dask cluster (the run simulated there too), each measure a "
        "fresh process tree timed from start to exit; `peak_MB` is its largest process, and on the cluster the "
        "larger of that and the largest memory a worker reported")
    title = "Recognition scale benchmark" + (", local and on Dask" if dask_address else "")
    table = pd.DataFrame(sorted(kept + rows, key=lambda r: r["games"]))
    write_benchmark(_report_name(dask_address), title,
                    "`riskcore recognize` over one run of four-player "
                    f"mission games (`mission` agents) per size, on {where}. The first row of a size builds the "
                    "run's features (and computes the uniform prior's posteriors); every later row computes one "
                    "recogniser's posteriors at the checkpoints the evaluation reads. Measured: "
                    f"{progress}.", table, out_dir, {"target": TARGET})


def main() -> None:  # pragma: no cover - `python -m riskcore.experiments.bench_recognition_scale SIZES [SPEC...]`
    import sys

    sizes = tuple(int(x) for x in sys.argv[1].split(",")) if len(sys.argv) > 1 else SIZES
    print(bench_recognition_scale(sizes, tuple(sys.argv[2:]) or PASSES).to_string(index=False))


if __name__ == "__main__":
    main()
