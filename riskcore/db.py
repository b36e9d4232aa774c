"""The embedded DuckDB database: derived from the Parquet traces, rebuildable, replaced run by run in one
transaction so that readers never see half a run.

Notebooks open it read-only (`connect(read_only=True)`) and close it when done: DuckDB lets one process write.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator

import duckdb

from riskcore import paths

if TYPE_CHECKING:  # pandas is imported by the functions that return frames: `simulate` needs none of it
    import pandas as pd


# Parquet trees under the data directory, and the key their sub-directories are named by (key=value)
PARQUET_DIRS = {"traces": "run", "recognition": "run", "posteriors": "run", "metrics": "run", "sweeps": "sweep",
                "tournaments": "tournament"}


class DataError(RuntimeError):
    """Missing or corrupt data; the message names the run, table or file."""


class DatabaseLocked(DataError):
    """Another process held the database for longer than this one would wait."""


WRITE_WAIT = float(os.environ.get("RISKCORE_LOCK_WAIT", 600))  # seconds a writer waits for readers to let go
# DuckDB's buffer pool may otherwise take most of the machine's memory while a large run is inserted: a writer
# gets a fixed budget and spills beyond it, so a run's registration costs the same memory at any number of games
WRITE_MEMORY = os.environ.get("RISKCORE_DB_WRITE_MEMORY", "32MB")


def connect(data_dir: Path | None = None, read_only: bool = False, wait_seconds: float | None = None
            ) -> duckdb.DuckDBPyConnection:
    """Open the database. DuckDB lets one process write and no other open it meanwhile, so every connection of
    this project is short-lived (a query, a transaction). While another process holds the file, retry for up to
    `wait_seconds` (default: 60 to read, `RISKCORE_LOCK_WAIT` or 600 to write), saying once that it waits."""
    db = paths.db_path(data_dir)
    if read_only and not db.exists():
        raise DataError(f"no database at {db}: run `riskcore simulate` (or `make report`) first")
    db.parent.mkdir(parents=True, exist_ok=True)
    wait = wait_seconds if wait_seconds is not None else (60.0 if read_only else WRITE_WAIT)
    deadline, said = time.monotonic() + wait, False
    while True:
        try:
            con = duckdb.connect(str(db), read_only=read_only)
        except duckdb.IOException as exc:
            if "lock" not in str(exc).lower():
                raise DataError(f"cannot open the database {db}: {' '.join(str(exc).split())}") from None
            if time.monotonic() > deadline:
                raise DatabaseLocked(f"the database {db} was held by another process for {wait:.0f} s "
                                     "(a notebook or a query that keeps it open?)") from None
            if not said:
                print(f"riskcore: waiting up to {wait:.0f} s for another process to release {db} ...",
                      file=sys.stderr)
                said = True
            time.sleep(0.2)
            continue
        if not read_only:
            con.execute(f"SET memory_limit = '{WRITE_MEMORY}'")
        return con


def _sql_list(files: list[Path]) -> str:
    return "[" + ", ".join("'" + str(f).replace("'", "''") + "'" for f in files) + "]"


def _add_new_columns(con: duckdb.DuckDBPyConnection, name: str, src: str) -> None:
    """Schema evolution: columns the incoming files have and the table lacks are added (older rows get NULL)."""
    have = {r[0] for r in con.execute(f"DESCRIBE {name}").fetchall()}
    for col, dtype, *_ in con.execute(f"DESCRIBE SELECT * FROM {src}").fetchall():
        if col not in have:
            con.execute(f'ALTER TABLE {name} ADD COLUMN "{col}" {dtype}')


def register_tables(con: duckdb.DuckDBPyConnection, key_column: str | dict, key: str | None, run_dir: Path
                    ) -> dict[str, int]:
    """Replace, in every table found under `run_dir/<table>/*.parquet`, the rows matching the key.

    The key is one column and value (`"run", "default"`) or a dict of columns to values. Must run inside a
    transaction opened by the caller. Returns rows now held per table for that key.
    """
    keys = key_column if isinstance(key_column, dict) else {key_column: key}
    where = " AND ".join(f"{c} = ?" for c in keys)
    label = ", ".join(f"{c}={v!r}" for c, v in keys.items())
    counts = {}
    for table_dir in sorted(p for p in run_dir.iterdir() if p.is_dir()):
        files = sorted(table_dir.glob("*.parquet"))
        if not files:
            continue
        name, src = table_dir.name, f"read_parquet({_sql_list(files)}, hive_partitioning = false)"
        try:
            con.execute(f"CREATE TABLE IF NOT EXISTS {name} AS SELECT * FROM {src} LIMIT 0")
            _add_new_columns(con, name, src)
            con.execute(f"DELETE FROM {name} WHERE {where}", list(keys.values()))
            con.execute(f"INSERT INTO {name} BY NAME SELECT * FROM {src}")
        except duckdb.Error as exc:
            raise DataError(f"cannot register table {name!r} ({label}) from {table_dir}: {exc}") from None
        counts[name] = con.execute(f"SELECT count(*) FROM {name} WHERE {where}", list(keys.values())).fetchone()[0]
    return counts


@contextmanager
def transaction(data_dir: Path | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
    """A write connection inside one transaction: committed on success, rolled back on any error or interrupt."""
    con = connect(data_dir)
    try:
        con.execute("BEGIN TRANSACTION")
        yield con
        try:
            con.execute("COMMIT")
        except duckdb.Error as exc:
            raise DataError(f"cannot commit to {paths.db_path(data_dir)}: {_one_line(exc)}") from None
    except BaseException:
        try:
            con.execute("ROLLBACK")
        except duckdb.Error:
            pass  # the failed statement (a COMMIT, say) already ended the transaction: report its own error
        raise
    finally:
        con.close()


def register_dir(table_root: Path, keys: dict, data_dir: Path | None = None) -> dict[str, int]:
    """Atomically replace the rows matching `keys` in every table under `table_root` (one transaction)."""
    with transaction(data_dir) as con:
        return register_tables(con, keys, None, table_root)


def store_frames(frames: dict, directory: str, keys: dict, data_dir: Path | None = None,
                 part: str = "part-00000") -> dict[str, int]:
    """Write each table (DataFrame or Arrow) to data/DIRECTORY/KEY=VALUE/TABLE/PART.parquet and replace the rows
    matching `keys` in DuckDB, in one transaction. `directory` must be one of `PARQUET_DIRS` and its key must come
    first in `keys`; further keys (a setting, a sweep point) let several parts share one directory."""
    return store_frames_many([(frames, keys, part)], directory, data_dir)[0]


def store_frames_many(items: list[tuple[dict, dict, str]], directory: str, data_dir: Path | None = None
                      ) -> list[dict[str, int]]:
    """`store_frames` for several (frames, keys, part) items in one transaction: many small writes (a posterior
    table per recogniser setting) cost one database commit instead of one each."""
    import pyarrow as pa

    from riskcore.storage import remove_leftovers, staging_dir, write_parquet

    for _, keys, _ in items:
        if PARQUET_DIRS.get(directory) != next(iter(keys)):
            raise ValueError(f"{directory!r} is keyed by {PARQUET_DIRS.get(directory)!r}, not {next(iter(keys))!r}")
    root = paths.data_dir(data_dir)
    root.mkdir(parents=True, exist_ok=True)
    remove_leftovers(root)
    stage = staging_dir(root / directory)
    try:
        staged = []
        for k, (frames, keys, part) in enumerate(items):
            tmp = stage / str(k)
            tmp.mkdir()
            for name, frame in frames.items():
                table = frame if isinstance(frame, pa.Table) else pa.Table.from_pandas(frame, preserve_index=False)
                if table.num_columns:  # a frame with no columns at all (nothing was computed) is skipped
                    write_parquet(table, tmp / name / f"{part}.parquet")
            staged.append((tmp, keys))
        with transaction(data_dir) as con:
            counts = [register_tables(con, keys, None, tmp) for tmp, keys in staged]
        for tmp, keys in staged:
            final = paths.parquet_dir(directory, *map(str, next(iter(keys.items()))), data_dir)
            for f in tmp.rglob("*.parquet"):
                dest = final / f.relative_to(tmp)
                dest.parent.mkdir(parents=True, exist_ok=True)
                f.replace(dest)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return counts


def register_run(run_dir: Path, run: str, data_dir: Path | None = None) -> dict[str, int]:
    """Atomically replace run `run` in the database with the Parquet tables under `run_dir`."""
    return register_dir(run_dir, {"run": run}, data_dir)


def publish_run(final: Path, run: str, write: Callable[[Path], None], data_dir: Path | None = None
                ) -> dict[str, int]:
    """`write(stage)` a run's tables into a staging directory beside `final`, register them in DuckDB, then put
    the directory in place of `final`: whatever fails, neither files nor rows of a half-written run remain."""
    from riskcore.storage import replace_dir, staging_dir

    stage = staging_dir(final)
    try:
        write(stage)
        counts = register_run(stage, run, data_dir)
        replace_dir(stage, final)
    finally:
        if stage.exists():
            shutil.rmtree(stage, ignore_errors=True)
    return counts


def rebuild(data_dir: Path | None = None) -> list[str]:
    """Drop every table and re-register everything found under the data directory's Parquet trees, one run (or
    sweep, tournament) per transaction, so that a corrupt file costs only its own run: the rest is rebuilt, then
    a `DataError` names every file that could not be read. Leftovers of killed runs are removed first. Returns the
    runs of traces registered."""
    from riskcore.storage import remove_leftovers

    root = paths.data_dir(data_dir)
    with transaction(data_dir) as con:
        for (name,) in con.execute("SELECT table_name FROM information_schema.tables").fetchall():
            con.execute(f"DROP TABLE IF EXISTS {name}")
    found, failed = [], []
    for directory, key in PARQUET_DIRS.items():  # one sub-directory per run or sweep: key=value
        tree = root / directory
        if not tree.exists():
            continue
        remove_leftovers(tree)
        for sub in sorted(tree.glob(f"{key}=*")):
            try:
                with transaction(data_dir) as con:
                    register_tables(con, key, sub.name.split("=", 1)[1], sub)
            except DataError as exc:
                failed.append(str(exc))
                continue
            if directory == "traces":
                found.append(sub.name.split("=", 1)[1])
    if failed:
        raise DataError(f"rebuilt the database from {len(found)} run(s); these could not be read and are left "
                        "out: " + " | ".join(failed))
    return found


def run_config(run: str, data_dir: Path | None = None):
    """The `GameConfig` a registered run was played with."""
    import json

    from riskcore.config import GameConfig

    runs = query("SELECT config FROM runs WHERE run = ?", [run], data_dir)
    if runs.empty:
        raise DataError(f"no run {run!r} in the database: simulate it first")
    return GameConfig.from_dict(json.loads(runs.config[0])["config"])


def describe(data_dir: Path | None = None) -> pd.DataFrame:
    """Every table with its row count and columns."""
    con = connect(data_dir, read_only=True)
    try:
        rows = []
        for (name,) in con.execute("SELECT table_name FROM information_schema.tables ORDER BY 1").fetchall():
            n = con.execute(f"SELECT count(*) FROM {name}").fetchone()[0]
            cols = con.execute("SELECT column_name || ' ' || data_type FROM information_schema.columns "
                               "WHERE table_name = ? ORDER BY ordinal_position", [name]).fetchall()
            rows.append({"table": name, "rows": n, "columns": ", ".join(c for (c,) in cols)})
        import pandas as pd

        return pd.DataFrame(rows)
    finally:
        con.close()


def schema_text(data_dir: Path | None = None, width: int = 110) -> str:
    """Every table with its row count, and its columns with their types wrapped under it."""
    import textwrap

    blocks = []
    for row in describe(data_dir).itertuples():
        cols = textwrap.fill(row.columns, width, initial_indent="    ", subsequent_indent="    ")
        blocks.append(f"{row.table} ({row.rows:,} rows)\n{cols}")
    return "\n".join(blocks) if blocks else "the database has no tables yet"


READ_ONLY = ("SELECT", "EXPLAIN", "PRAGMA")  # statement types `read_only_query` runs


def read_only_query(sql: str, data_dir: Path | None = None) -> pd.DataFrame:
    """One read-only statement (SELECT, DESCRIBE, SHOW, EXPLAIN, ...); a write or a bad query raises `DataError`
    with DuckDB's message on one line."""
    con = connect(data_dir, read_only=True)
    try:
        try:
            statements = con.extract_statements(sql)
        except duckdb.Error as exc:
            raise DataError(_one_line(exc)) from None
        if len(statements) != 1:
            raise DataError(f"give one SQL statement, not {len(statements)}")
        kind = statements[0].type.name
        if kind not in READ_ONLY:
            raise DataError(f"{kind} statements are refused: the command line only reads the database")
        try:
            return con.execute(sql).df()
        except duckdb.Error as exc:
            raise DataError(_one_line(exc)) from None
    finally:
        con.close()


def _one_line(exc: Exception) -> str:
    return " ".join(str(exc).split())


def query(sql: str, params: list | None = None, data_dir: Path | None = None) -> pd.DataFrame:
    """Run one read-only query and close the connection (safe while another process writes later)."""
    con = connect(data_dir, read_only=True)
    try:
        return con.execute(sql, params or []).df()
    finally:
        con.close()
