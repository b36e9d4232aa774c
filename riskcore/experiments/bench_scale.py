"""`riskcore bench --scale`: the whole path from games to a query and to posteriors, as a user runs it, at growing
numbers of games.

Every measure is a fresh process tree in a scratch data folder, timed from outside (start-up included): `riskcore
simulate` (four-player mission games of `mission` agents, every core) with its games per second, its share of the
compiled kernel's speed on the same cores, its largest process's peak memory, the bytes per game of its Parquet
files and of the DuckDB file it grows, and the README's query over the run; the same simulation on a local Dask
cluster of one worker per core. Recognition over such runs: `bench_recognition_scale`.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

from riskcore import paths
from riskcore.experiments.bench_memory import riskcore_command, run_with_peak

SIZES = (1_000, 10_000, 100_000)
ON_DASK = (10_000,)  # of the sizes measured, those simulated on a Dask cluster too
README_QUERY = ("SELECT agent, count(*) AS seats, avg(won::INT) AS win_rate FROM players WHERE run = '{run}' "
                "GROUP BY agent ORDER BY win_rate DESC")


def timed(argv: list[str], what: str) -> tuple[float, float]:
    """(wall seconds, peak MB of the largest process) of a command run in a fresh process tree."""
    start = time.perf_counter()
    _, peak = run_with_peak(argv, what)
    return time.perf_counter() - start, peak


def trace_digest(run_dir: Path) -> str:
    """A short digest of a run's Parquet traces (paths and bytes, as a publication's generation hashes them): a run
    played locally and one played on Dask from the same spec must show the same one."""
    from riskcore.publish import content_hash, file_sha256

    return content_hash({f.relative_to(run_dir).as_posix(): file_sha256(f) for f in run_dir.rglob("*.parquet")})[:12]


def _bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) if path.exists() else 0


def compiled_speed(games: int = 2000) -> float:
    """Four-player mission games per second on one core, the compiled kernel in one warm process (`riskcore
    bench`'s first case)."""
    from riskcore.engine.config import GameConfig
    from riskcore.experiments.bench import bench_case

    return bench_case(GameConfig(), ["mission"] * 4, games)["games_per_s"]


def _simulate_row(n: int, data: Path, kernel_speed: float, cores: int, dask: str | None) -> dict:
    """One run in its own data folder, so the DuckDB file holds it alone."""
    run = f"scale-{n}"
    db = paths.db_path(data)
    argv = riskcore_command("simulate", "--run", run, "--games", str(n), "--quiet",
                     "--data-dir", str(data), *(["--dask", dask] if dask else []))
    seconds, peak = timed(argv, f"simulate of {n:,} games")
    query_s, _ = timed(riskcore_command("db", "--sql", README_QUERY.format(run=run), "--data-dir", str(data)),
                        "the README's query")
    rate = n / seconds
    run_dir = paths.traces_dir(data) / f"run={run}"
    return {"games": n, "where": "Dask, local cluster" if dask else "local processes", "seconds": round(seconds, 1),
            "games_per_s": round(rate, 1), "share_of_compiled": round(rate / (kernel_speed * cores), 3),
            "peak_MB": peak, "parquet_bytes_per_game": round(_bytes(run_dir) / n),
            "duckdb_bytes_per_game": round(db.stat().st_size / n), "readme_query_s": round(query_s, 2),
            "traces_digest": trace_digest(run_dir)}


def bench_scale(sizes: tuple[int, ...] = SIZES, dask_sizes: tuple[int, ...] = ON_DASK,
                out_dir: Path | None = None, scratch: Path | None = None, dask_address: str | None = None,
                compiled_games: int = 2000) -> pd.DataFrame:
    """The `dask_sizes` among `sizes` are measured on Dask too: on `dask_address`, or on a local cluster of one
    worker process per core started here."""
    dask_sizes = tuple(n for n in dask_sizes if n in sizes)
    from riskcore.experiments.bench import write_benchmark

    cores = os.cpu_count() or 1
    kernel_speed = compiled_speed(compiled_games)
    simulated = []
    with tempfile.TemporaryDirectory(prefix="riskcore-scale-", dir=scratch) as tmp:
        for n in sizes:
            simulated.append(_simulate_row(n, Path(tmp) / f"local-{n}", kernel_speed, cores, None))
        if dask_sizes and dask_address:
            for n in dask_sizes:
                simulated.append(_simulate_row(n, Path(tmp) / f"dask-{n}", kernel_speed, cores, dask_address))
        elif dask_sizes:
            from dask.distributed import LocalCluster

            with LocalCluster(n_workers=cores, threads_per_worker=1, processes=True, dashboard_address=None,
                              local_directory=tmp) as cluster:
                for n in dask_sizes:
                    simulated.append(_simulate_row(n, Path(tmp) / f"dask-{n}", kernel_speed, cores,
                                                   cluster.scheduler_address))
    sim = pd.DataFrame(simulated)
    out_dir = Path(out_dir or paths.benchmarks_dir())
    targets = ("10^6 games in 30 min, 8 GB on disk, 2 GB peak; simulate at 70% of the compiled speed at 10^4 games; "
               "the README query in 10 s")
    write_benchmark("scale", "Scale benchmark", "The path from games to a query, as a user runs it: `riskcore "
                    f"simulate` of four-player mission games (`mission` agents) on {cores} cores, whole process "
                    "from start to exit; `share_of_compiled` is its games per second over the compiled kernel's "
                    f"speed on as many cores ({kernel_speed:.0f} games/s on one core, one warm process); "
                    "`peak_MB` is its largest process; bytes per game on disk of its Parquet files and of the "
                    "DuckDB file holding that run alone; the README's query (win rate by agent) in a fresh process "
                    "over that run; `traces_digest` is a digest of the run's Parquet files (the same digest, the "
                    "same bytes).", sim, out_dir, {"targets": targets})
    return sim


def main() -> None:  # pragma: no cover - `python -m riskcore.experiments.bench_scale SIZES...`
    sizes = tuple(int(x) for x in sys.argv[1:]) or SIZES
    print(bench_scale(sizes).to_string(index=False))


if __name__ == "__main__":
    main()
