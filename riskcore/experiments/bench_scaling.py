"""`riskcore bench --dask-scaling`: the search experiment's work on a local Dask cluster of 1, 2 and 4 worker
processes, the wall time of each and whether they all return the same rows.

It runs the tasks `make search-full` sends to a cluster (`--dask ADDRESS`), at a size that fits a benchmark, with
no cache (every search runs). Scaling beyond the machine's cores is not expected: the table says how many there
were.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pandas as pd


def bench_dask_scaling(n_positions: int = 8, lookahead: int = 4, worker_counts: tuple[int, ...] = (1, 2, 4),
                       out_dir: Path | None = None) -> pd.DataFrame:
    from distributed import LocalCluster

    from riskcore.experiments.bench import write_benchmark
    from riskcore.experiments.search import run_saving, search_tasks

    tasks = search_tasks(n_positions, lookahead, 0, 2, 2009, {})
    rows, first = [], None
    for k in worker_counts:
        with LocalCluster(n_workers=k, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
            start = time.perf_counter()
            parts = run_saving(tasks, {}, None, None, cluster.scheduler_address, False)
            seconds = time.perf_counter() - start
        result = pd.DataFrame([r for i in sorted(parts) for r in parts[i]])
        first = result if first is None else first
        rows.append({"workers": k, "tasks": len(tasks), "seconds": round(seconds, 2),
                     "same_rows_as_1_worker": bool(result.equals(first))})
    df = pd.DataFrame(rows)
    df["speedup"] = (df.seconds.iloc[0] / df.seconds).round(2)
    write_benchmark("dask-scaling", "Search experiment on a local Dask cluster",
           f"The search experiment's tasks ({n_positions} positions per player count, look-ahead {lookahead}, no "
           f"cache) on a LocalCluster of 1, 2 and 4 single-threaded worker processes; the machine has "
           f"{os.cpu_count()} cores.", df, out_dir, {})
    return df
