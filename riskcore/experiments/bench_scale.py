"""`riskcore bench --scale`: the whole path from games to a query and to posteriors, as a user runs it, at growing
numbers of games.

Every measure is a fresh process tree in a scratch data folder, timed from outside (start-up included): `riskcore
simulate` (four-player mission games of `mission` agents, every core) with its games per second, its share of the
compiled kernel's speed on the same cores, its largest process's peak memory, the bytes per game of its Parquet
files and of the DuckDB file it grows, and the README's query over the run; the same simulation on a local Dask
cluster of one worker per core; and every recogniser's time and peak memory on the runs named for recognition.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

from riskcore import paths
from riskcore.experiments.bench_memory import RECOGNISERS, riskcore_command, run_with_peak
from riskcore.storage import write_text

SIZES = (1_000, 10_000, 100_000)
RECOGNISED = (10_000,)  # of the sizes measured, those every recogniser passes over
ON_DASK = (10_000,)  # and those simulated on a Dask cluster too
README_QUERY = ("SELECT agent, count(*) AS seats, avg(won::INT) AS win_rate FROM players WHERE run = '{run}' "
                "GROUP BY agent ORDER BY win_rate DESC")


def chunk_for(games: int) -> int:
    """Games per Parquet part: the default 25 for small runs, up to 1,000 so a large run keeps few files."""
    return min(1000, max(25, games // 100))


def _timed(argv: list[str], what: str) -> tuple[float, float]:
    """(wall seconds, peak MB of the largest process) of a command run in a fresh process tree."""
    start = time.perf_counter()
    _, peak = run_with_peak(argv, what)
    return time.perf_counter() - start, peak


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
    argv = riskcore_command("simulate", "--run", run, "--games", str(n), "--chunk", str(chunk_for(n)), "--quiet",
                     "--data-dir", str(data), *(["--dask", dask] if dask else []))
    seconds, peak = _timed(argv, f"simulate of {n:,} games")
    query_s, _ = _timed(riskcore_command("db", "--sql", README_QUERY.format(run=run), "--data-dir", str(data)),
                        "the README's query")
    rate = n / seconds
    return {"games": n, "where": "Dask, local cluster" if dask else "local processes", "seconds": round(seconds, 1),
            "games_per_s": round(rate, 1), "share_of_compiled": round(rate / (kernel_speed * cores), 3),
            "peak_MB": peak, "parquet_bytes_per_game": round(_bytes(paths.traces_dir(data) / f"run={run}") / n),
            "duckdb_bytes_per_game": round(db.stat().st_size / n), "readme_query_s": round(query_s, 2)}


def _recognise_rows(n: int, data: Path, recognisers: tuple[str, ...]) -> list[dict]:
    run = f"scale-{n}"
    players = 4 * n
    rows = []
    seconds, peak = _timed(riskcore_command("recognize", "--run", run, "--recogniser", "uniform", "--workers", "1",
                                     "--quiet", "--data-dir", str(data)), f"features of {n:,} games")
    rows.append({"games": n, "measure": "features (with the uniform prior)", "seconds": round(seconds, 1),
                 "players_per_s": round(players / seconds, 1), "peak_MB": peak})
    for spec in recognisers:
        seconds, peak = _timed(riskcore_command("recognize", "--run", run, "--recogniser", spec, "--workers", "1",
                                         "--quiet", "--data-dir", str(data)), f"recognize {spec} on {n:,} games")
        rows.append({"games": n, "measure": f"recognize {spec}", "seconds": round(seconds, 1),
                     "players_per_s": round(players / seconds, 1), "peak_MB": peak})
    return rows


# the classifier trains on another run: not a pass over the measured one
PASSES = tuple(spec for spec in RECOGNISERS if not spec.startswith("classifier"))


def bench_scale(sizes: tuple[int, ...] = SIZES, recognised: tuple[int, ...] = RECOGNISED,
                dask_sizes: tuple[int, ...] = ON_DASK, recognisers: tuple[str, ...] = PASSES,
                out_dir: Path | None = None, scratch: Path | None = None, dask_address: str | None = None,
                compiled_games: int = 2000) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The `recognised` and `dask_sizes` among `sizes` are measured too; on `dask_address`, or on a local cluster
    of one worker process per core started here."""
    recognised = tuple(n for n in recognised if n in sizes)
    dask_sizes = tuple(n for n in dask_sizes if n in sizes)
    from riskcore.experiments.bench import write_benchmark

    cores = os.cpu_count() or 1
    kernel_speed = compiled_speed(compiled_games)
    simulated, recognition = [], []
    with tempfile.TemporaryDirectory(prefix="riskcore-scale-", dir=scratch) as tmp:
        for n in sizes:
            simulated.append(_simulate_row(n, Path(tmp) / f"local-{n}", kernel_speed, cores, None))
            if n in recognised:
                recognition.extend(_recognise_rows(n, Path(tmp) / f"local-{n}", recognisers))
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
    sim, rec = pd.DataFrame(simulated), pd.DataFrame(recognition)
    out_dir = Path(out_dir or paths.benchmarks_dir())
    targets = ("10^6 games in 30 min, 8 GB on disk, 2 GB peak; simulate at 70% of the compiled speed at 10^4 games; "
               "the README query in 10 s; every recogniser on 10^5 games in 3 GB")
    write_benchmark("scale", "Scale benchmark", "The path from games to a query, as a user runs it: `riskcore "
                    f"simulate` of four-player mission games (`mission` agents) on {cores} cores, whole process "
                    "from start to exit; `share_of_compiled` is its games per second over the compiled kernel's "
                    f"speed on as many cores ({kernel_speed:.0f} games/s on one core, one warm process); "
                    "`peak_MB` is its largest process; bytes per game on disk of its Parquet files and of the "
                    "DuckDB file holding that run alone; the README's query (win rate by agent) in a fresh process "
                    "over that run.", sim, out_dir, {"targets": targets})
    if len(rec):  # the recognisers' passes, under the games
        md, js = out_dir / "scale.md", out_dir / "scale.json"
        write_text(md, md.read_text() + "\n## Recognition\n\nEvery recogniser on the run of "
                   + ", ".join(f"{n:,}" for n in recognised) + " games, one worker, a fresh process each (the "
                   "first row builds the run's features):\n\n" + rec.to_markdown(index=False) + "\n")
        write_text(js, json.dumps({**json.loads(js.read_text()), "recognition": rec.to_dict("records")}, indent=1))
    return sim, rec


def main() -> None:  # pragma: no cover - `python -m riskcore.experiments.bench_scale SIZES...`
    sizes = tuple(int(x) for x in sys.argv[1:]) or SIZES
    sim, rec = bench_scale(sizes)
    print(sim.to_string(index=False))
    print(rec.to_string(index=False))


if __name__ == "__main__":
    main()
