"""The embedded DuckDB database: derived from the Parquet traces, rebuildable, replaced run by run in one
transaction so that readers never see half a run.

Notebooks open it read-only (`connect(read_only=True)`) and close it when done: DuckDB lets one process write.
A reader that finds the journal of an interrupted write first has it finished or undone (`settle`), so it never
reads files the database does not name; it compares every Parquet file it reads through the database with the
size and fast checksum recorded when the file was published (`verify_parts`), and a query of derived data that is
stale (computed from games, features or posteriors since replaced) warns (`StaleWarning`).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import threading
import time
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator

import duckdb

from riskcore import paths

if TYPE_CHECKING:  # pandas is imported by the functions that return frames: `simulate` needs none of it
    import numpy as np
    import pandas as pd


# Parquet trees under the data directory, and the key their sub-directories are named by (key=value)
PARQUET_DIRS = {"traces": "run", "recognition": "run", "posteriors": "run", "metrics": "run", "sweeps": "sweep",
                "tournaments": "tournament"}


# tables the database reads from their Parquet files through a view instead of holding a copy, with the tree that
# holds them: a run's events and snapshots are most of its bytes (a copy took three times the Parquet's space) and
# its recognition features the next most (twelve pending rows per observation), and their queries scan anyway
# (a posterior table at a million games holds a billion rows)
VIEWED = {"events": "traces", "snapshots": "traces", "rec_observations": "recognition", "rec_pending": "recognition",
          "rec_candidates": "recognition", "posteriors": "posteriors"}
# the keys a viewed table's files are listed under where they are finer than its tree's: a run's posteriors are a
# file per recogniser setting, each replaced alone (default: the tree's key)
VIEW_KEYS = {"posteriors": ("run", "setting")}
VIEWED_FILES = "viewed_files"  # the files behind each view, per run, by path relative to the data directory


class DataError(RuntimeError):
    """Missing or corrupt data; the message names the run, table or file."""


class DatabaseLocked(DataError):
    """Another process held the database for longer than this one would wait."""


class DamagedFile(DataError):
    """A file differs from the record made when it was published (or is missing): nothing is read from it. Never
    taken for "no rows here": a reader that skips a part it cannot find must not skip this."""


class StaleData(DataError):
    """Derived data computed from games, features or posteriors that have been replaced since."""


class StaleWarning(UserWarning):
    """A query read derived data computed from games, features or posteriors that have been replaced since."""


REBUILD_HINT = "`riskcore db --rebuild` rebuilds it from the Parquet files"


WRITE_WAIT = float(os.environ.get("RISKCORE_LOCK_WAIT", 600))  # seconds a writer waits for readers to let go
# DuckDB's buffer pool may otherwise take most of the machine's memory while a large run is inserted: a writer
# gets a fixed budget and spills beyond it, so a run's registration costs the same memory at any number of games
# (32MB, once the default, ran out now and then while two threads inserted 12 million posterior rows)
WRITE_MEMORY = os.environ.get("RISKCORE_DB_WRITE_MEMORY", "256MB")


class NoDatabase(DataError):
    """The data directory has no database file yet."""


def connect(data_dir: Path | None = None, read_only: bool = False, wait_seconds: float | None = None,
            settle_first: bool = True) -> duckdb.DuckDBPyConnection:
    """Open the database. DuckDB lets one process write and no other open it meanwhile, so every connection of
    this project is short-lived (a query, a transaction). While another process holds the file, retry for up to
    `wait_seconds` (default: 60 to read, `RISKCORE_LOCK_WAIT` or 600 to write), saying once that it waits. A reader
    that finds an interrupted write's journal has it finished or undone first (`settle`; unless not
    `settle_first`): only then are the files those the database names."""
    db = paths.db_path(data_dir)
    if read_only and not db.exists():
        raise NoDatabase(f"no database at {db}: run `riskcore simulate` (or `make report`) first")
    db.parent.mkdir(parents=True, exist_ok=True)
    wait = wait_seconds if wait_seconds is not None else (60.0 if read_only else WRITE_WAIT)
    deadline, said = time.monotonic() + wait, False
    while True:
        try:
            con = duckdb.connect(str(db), read_only=read_only)
        except duckdb.Error as exc:
            if not _is_lock(exc):
                raise DataError(f"cannot open the database {db}: {' '.join(str(exc).split())[:300]}; "
                                f"{REBUILD_HINT}") from None
            if time.monotonic() > deadline:
                raise DatabaseLocked(f"the database {db} was held by another process for {wait:.0f} s "
                                     "(a notebook or a query that keeps it open?)") from None
            if not said:
                print(f"riskcore: waiting up to {wait:.0f} s for another process to release {db} ...",
                      file=sys.stderr)
                said = True
            time.sleep(0.2)
            continue
        if read_only and settle_first and _journals_left(data_dir):
            # looked for while the read lock is held: no write is in progress, so every journal is a killed one's
            con.close()
            settle(data_dir)  # refuses what it cannot decide
            settle_first = False
            continue
        con.execute("SET enable_progress_bar = false")  # in a notebook its bar is left behind above the output
        # the views name their files relative to the data directory, so that the directory can move
        con.execute(f"SET file_search_path = {sql_text(db.parent)}")
        if not read_only:
            con.execute(f"SET memory_limit = '{WRITE_MEMORY}'")
        return con


def _is_lock(exc: Exception) -> bool:
    """Whether DuckDB refused a connection because another process holds the file (not because it is damaged)."""
    return re.search(r"\block\b", str(exc), re.IGNORECASE) is not None


def _journals_left(data_dir: Path | None) -> bool:
    from riskcore.publish import pending_journals

    return bool(pending_journals(data_dir))


def settle(data_dir: Path | None = None) -> list[str]:
    """Finish or undo the publications that killed processes left (their journals), deciding by the database alone,
    under its write lock (`publish.recover`); returns what was done. A journal that cannot be settled (a read-only
    data directory, a database that cannot say) is a `DataError` naming it and the command that settles it."""
    from riskcore.publish import pending_journals, recover

    left = pending_journals(data_dir)
    if not left:
        return []
    root = paths.data_dir(data_dir)
    if not os.access(root, os.W_OK | os.X_OK) or not os.access(left[0].parent, os.W_OK | os.X_OK):
        raise DataError(f"an interrupted write ({left[0]}) was neither finished nor undone and {root} is read-only, "
                        "so the files may not be those the database names: run `riskcore check` with write access "
                        "to the data directory (it finishes or undoes it)")
    con = connect(data_dir)
    try:
        done = recover(data_dir, lambda table, keys, generation: holds(con, table, keys, generation))
    finally:
        con.close()
    left = pending_journals(data_dir)
    if left:
        raise DataError(f"an interrupted write ({left[0]}) could not be finished or undone: "
                        + "; ".join(line for line in done if line.startswith("kept")))
    return done


def holds(con: duckdb.DuckDBPyConnection, table: str, keys: dict, generation: str) -> bool:
    """Whether the database (on `con`) holds a publication's generation. A database that cannot be read is an
    error, never a "no": rolling back a committed publication would lose it."""
    where = " AND ".join(f"{k} = ?" for k in keys)
    try:
        columns = {r[0] for r in con.execute(f"DESCRIBE {table}").fetchall()}
    except duckdb.CatalogException:  # the table does not exist: nothing of this tree was ever committed
        return False
    if not set(keys) <= columns:  # a key no publication of the tree has used yet (metrics by clock after by run)
        return False
    rows = con.execute(f"SELECT generation FROM {table} WHERE {where}", [str(v) for v in keys.values()]).fetchall()
    return generation in {r[0] for r in rows}


def sql_text(value: object) -> str:
    """A value as an SQL string literal."""
    return "'" + str(value).replace("'", "''") + "'"


def sql_list(files: list[Path]) -> str:
    return "[" + ", ".join(sql_text(f) for f in files) + "]"


EVOLVE_MEMORY = "2GB"  # adding a column to a large table needs more than a writer's budget: a rare upgrade


def _add_new_columns(con: duckdb.DuckDBPyConnection, name: str, src: str) -> None:
    """Schema evolution: columns the incoming files have and the table lacks are added (older rows get NULL)."""
    have = {r[0] for r in con.execute(f"DESCRIBE {name}").fetchall()}
    new = [(col, dtype) for col, dtype, *_ in con.execute(f"DESCRIBE SELECT * FROM {src}").fetchall()
           if col not in have]
    if not new:
        return
    # for the rest of this (short-lived) connection: the rewritten table holds its memory until the commit
    con.execute(f"SET memory_limit = '{EVOLVE_MEMORY}'")
    for col, dtype in new:
        con.execute(f'ALTER TABLE {name} ADD COLUMN "{col}" {dtype}')


def register_tables(con: duckdb.DuckDBPyConnection, key_column: str | dict, key: str | None, run_dir: Path
                    ) -> dict[str, int]:
    """Replace, in every table found under `run_dir/<table>/*.parquet`, the rows matching the key.

    The key is one column and value (`"run", "default"`) or a dict of columns to values. Must run inside a
    transaction opened by the caller. Returns rows now held per table for that key.
    """
    tables = {d.name: sorted(d.glob("*.parquet")) for d in sorted(p for p in run_dir.iterdir() if p.is_dir())}
    return register_files(con, key_column if isinstance(key_column, dict) else {key_column: key}, tables, run_dir)


def register_files(con: duckdb.DuckDBPyConnection, keys: dict, tables: dict[str, list[Path]], where_from: Path
                   ) -> dict[str, int]:
    """`register_tables` from given files per table (a part of a directory that other parts share)."""
    where = " AND ".join(f"{c} = ?" for c in keys)
    label = key_label(keys)
    counts = {}
    records = _records(tables, where_from)
    for name, files in tables.items():
        if not files:
            continue
        src = f"read_parquet({sql_list(files)}, hive_partitioning = false)"
        if name in VIEWED:
            try:
                counts[name] = _register_viewed(con, name, _file_labels(name, keys, files),
                                                where_from.parent.parent.resolve(), records)
            except duckdb.Error as exc:
                raise DataError(f"cannot register the files of {name!r} ({label}) from {where_from}: "
                                f"{_one_line(exc)}") from None
            continue
        try:
            con.execute(f"CREATE TABLE IF NOT EXISTS {name} AS SELECT * FROM {src} LIMIT 0")
            _add_new_columns(con, name, src)
            _add_key_columns(con, name, keys)
            con.execute(f"DELETE FROM {name} WHERE {where}", list(keys.values()))
            con.execute(f"INSERT INTO {name} BY NAME SELECT * FROM {src}")
        except duckdb.Error as exc:
            raise DataError(f"cannot register table {name!r} ({label}) from {where_from}: {_one_line(exc)}") from None
        if not name.startswith("generations_"):  # a publication's own record is not what the caller counts
            counts[name] = con.execute(f"SELECT count(*) FROM {name} WHERE {where}",
                                       list(keys.values())).fetchone()[0]
    return counts


def _records(tables: dict[str, list[Path]], where_from: Path) -> dict[str, dict]:
    """What the publications' records among `tables` (`generations_<tree>`) say of each file, by its path (size,
    checksums, rows): the database keeps a viewed file's size and fast checksum, which readers compare."""
    import pyarrow.parquet as pq

    out = {}
    for name, files in tables.items():
        if name.startswith("generations_"):
            for f in files:
                for entry in pq.ParquetFile(f).read(columns=["files"]).column("files").to_pylist():
                    out.update({str((where_from / rel).resolve()): e for rel, e in json.loads(entry).items()})
    return out


def key_label(keys: dict) -> str:
    """A publication's keys as messages name them and `viewed_files` keys its files: `run='x', setting='y'`."""
    return ", ".join(f"{c}={v!r}" for c, v in keys.items())


def _register_viewed(con: duckdb.DuckDBPyConnection, name: str, labelled: dict[str, list[Path]], root: Path,
                     records: dict[str, dict] | None = None) -> int:
    """Put the files of each label in the place of the files that label had behind the view `name` and redefine the
    view over every registered file in registration order (a database that held a copy of the table is moved to the
    view first). `records`: each file's record by resolved path (its size and fast checksum are listed with it).
    Returns the rows of the new files."""
    con.execute(f"CREATE TABLE IF NOT EXISTS {VIEWED_FILES} (table_name VARCHAR, key VARCHAR, seq BIGINT, "
                "file VARCHAR, first_game BIGINT, last_game BIGINT, bytes BIGINT, checksum VARCHAR)")
    # a database from before files had game ranges or checksums: NULL reads every file, unverified
    for col, dtype in (("first_game", "BIGINT"), ("last_game", "BIGINT"), ("bytes", "BIGINT"),
                       ("checksum", "VARCHAR")):
        con.execute(f"ALTER TABLE {VIEWED_FILES} ADD COLUMN IF NOT EXISTS {col} {dtype}")
    if _kind(con, name) == "BASE TABLE":
        _copy_to_view(con, name, root)
    # the types the view reads the other publications' files in: a replaced publication's old files are already
    # gone (a run played again with fewer games has fewer parts), so the view itself cannot be described now
    others = [Path(f) for (f,) in con.execute(
        f"SELECT file FROM {VIEWED_FILES} WHERE table_name = ? AND key NOT IN (SELECT unnest(?::VARCHAR[])) "
        "ORDER BY seq", [name, list(labelled)]).fetchall()]
    before = _column_types(con, f"read_parquet({sql_list(others)}, hive_partitioning = false, "
                                "union_by_name = true)") if others else {}
    for label, files in labelled.items():
        _list_files(con, name, label, files, root, records or {})
    _define_view(con, name)
    # the view reads a column in a type every file fits: new files must not change it for every run (a number
    # column read as text from then on), where a table refused their rows
    for col, dtype in _column_types(con, name).items():
        if before.get(col, dtype) != dtype:
            raise DataError(f"column {col!r} of the new files would turn {name!r}'s {before[col]} into {dtype}")
    files = [f for group in labelled.values() for f in group]
    return con.execute(f"SELECT count(*) FROM read_parquet({sql_list(files)})").fetchone()[0]


def _column_types(con: duckdb.DuckDBPyConnection, name: str) -> dict[str, str]:
    """The columns and types of a table, view or table function (`read_parquet(...)`)."""
    what = name if name.isidentifier() else f"SELECT * FROM {name}"
    return {col: dtype for col, dtype, *_ in con.execute(f"DESCRIBE {what}").fetchall()}


def _file_labels(name: str, keys: dict, files: list[Path]) -> dict[str, list[Path]]:
    """A viewed table's files by the label of the publication each belongs to: that of `keys`, or, where the table
    is keyed finer than them (a rebuild registers a run's directory whole), each file's own keys, from its footer."""
    wanted = VIEW_KEYS.get(name, tuple(keys))
    if set(wanted) <= set(keys):
        return {key_label({k: keys[k] for k in wanted}): files}
    labelled: dict[str, list[Path]] = {}
    for f in files:
        labelled.setdefault(key_label(_constant_columns(f, wanted)), []).append(f)
    return labelled


def _constant_columns(file: Path, columns: tuple[str, ...]) -> dict[str, str]:
    """The one value each of `columns` holds in a Parquet file: from its row groups' statistics where they have
    them, else from the column. A file holding several values of a key is an error that names it."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    meta = pq.read_metadata(file)
    out = {}
    for col in columns:
        if col not in meta.schema.names:
            raise DataError(f"{file}: no column {col!r}, which its table is keyed by")
        stats = _footer_stats(meta, col)
        values = ({s.min for s in stats} | {s.max for s in stats} if stats is not None
                  else set(pc.unique(pq.read_table(file, columns=[col]).column(col)).to_pylist()))
        if len(values) != 1:
            raise DataError(f"{file}: {len(values)} values of {col!r}, which its table is keyed by; expected one")
        out[col] = str(values.pop())
    return out


def _list_files(con: duckdb.DuckDBPyConnection, name: str, label: str, files: list[Path], root: Path,
                records: dict[str, dict]) -> None:
    """`files` behind the view `name` for `label`, in place of those it had, after every file listed before, each
    with the size and fast checksum its record gives (NULL where none does: read unverified)."""
    seq = con.execute(f"SELECT coalesce(max(seq), -1) + 1 FROM {VIEWED_FILES}").fetchone()[0]
    con.execute(f"DELETE FROM {VIEWED_FILES} WHERE table_name = ? AND key = ?", [name, label])
    ranges = _game_ranges(files)
    games = [ranges.get(str(f), (None, None)) for f in files]
    entries = [records.get(str(f.resolve()), {}) for f in files]
    # one statement for every file (a row at a time cost half a millisecond each)
    con.execute(f"INSERT INTO {VIEWED_FILES} (table_name, key, seq, file, first_game, last_game, bytes, checksum) "
                "SELECT ?, ?, ? + unnest(range(?)), unnest(?::VARCHAR[]), unnest(?::BIGINT[]), unnest(?::BIGINT[]), "
                "unnest(?::BIGINT[]), unnest(?::VARCHAR[])",
                [name, label, seq, len(files), [f.resolve().relative_to(root).as_posix() for f in files],
                 [g[0] for g in games], [g[1] for g in games], [e.get("bytes") for e in entries],
                 [e.get("xxh3") for e in entries]])


def _game_ranges(files: list[Path]) -> dict[str, tuple[int, int]]:
    """Each file's first and last game id, from its Parquet footer (no data read): a read of a few games then
    opens only the files that hold them, so a chunk's read costs the same at any number of files. The footers are
    read with pyarrow, outside DuckDB: a writer's small memory budget cannot hold DuckDB's metadata scan."""
    import pyarrow.parquet as pq

    ranges = {}
    for f in files:
        stats = _footer_stats(pq.read_metadata(f), "game_id")
        if stats:
            ranges[str(f)] = (int(min(s.min for s in stats)), int(max(s.max for s in stats)))
    return ranges


def _footer_stats(meta, column: str) -> list | None:
    """A column's statistics in each row group of a Parquet footer (`pyarrow.parquet.FileMetaData`); None when
    the file has no such column or a row group has no min and max for it."""
    names = [meta.schema.column(i).path for i in range(meta.num_columns)]
    if column not in names:
        return None
    stats = [meta.row_group(g).column(names.index(column)).statistics for g in range(meta.num_row_groups)]
    return stats if all(s is not None and s.has_min_max for s in stats) else None


def _define_view(con: duckdb.DuckDBPyConnection, name: str) -> None:
    files = [Path(f) for (f,) in con.execute(f"SELECT file FROM {VIEWED_FILES} WHERE table_name = ? ORDER BY seq",
                                             [name]).fetchall()]
    # union_by_name: runs written by older engines may lack a newer column, which reads as NULL
    con.execute(f"CREATE OR REPLACE VIEW {name} AS SELECT * FROM read_parquet({sql_list(files)}, "
                "hive_partitioning = false, union_by_name = true)")


def _kind(con: duckdb.DuckDBPyConnection, name: str) -> str | None:
    row = con.execute("SELECT table_type FROM information_schema.tables WHERE table_name = ?", [name]).fetchone()
    return row[0] if row else None


def _copy_to_view(con: duckdb.DuckDBPyConnection, name: str, root: Path) -> None:
    """A database written before `name` became a view holds a copy of it: every run's files take its place."""
    runs = [r for (r,) in con.execute(f"SELECT DISTINCT run FROM {name} ORDER BY run").fetchall()]
    con.execute(f"DROP TABLE {name}")
    from riskcore.publish import recorded_files

    for run in runs:
        directory = paths.parquet_dir(VIEWED[name], "run", run, root)
        files = sorted(directory.glob(f"{name}/*.parquet"))
        records = {str((directory / rel).resolve()): e for rel, e in recorded_files(directory)[0].items()}
        for label, group in _file_labels(name, {"run": run}, files).items():
            _list_files(con, name, label, group, root, records)


def run_source(name: str, run: str, data_dir: Path | None = None, games: tuple[int, int] | None = None,
               settings: list[str] | None = None) -> str:
    """What a query of one run reads `name` from: the run's own files of a viewed table (the view would open every
    run's files to find them), else the table itself. With `games` (first, last), only the files that may hold
    those games; with `settings`, only those settings' files (posteriors): the caller still filters by both. Every
    file is first compared with its record (`verify_parts`)."""
    if name not in VIEWED:
        return name
    where, params = "table_name = ? AND ", [name]
    if settings:
        where += f"key IN ({', '.join('?' for _ in settings)})"
        params += [key_label({"run": run, "setting": s}) for s in settings]
    elif len(VIEW_KEYS.get(name, ("run",))) > 1:  # every file of the run, whatever its finer keys
        where, params = where + "starts_with(key, ?)", params + [key_label({"run": run}) + ", "]
    else:
        where, params = where + "key = ?", params + [key_label({"run": run})]
    try:
        listed = _listed(where, params, data_dir)
    except duckdb.CatalogException:  # nothing viewed yet
        return name
    if games is not None:
        first, last = int(games[0]), int(games[1])
        keep = listed.first_game.isna() | ((listed.first_game <= last) & (listed.last_game >= first))
        if keep.any():  # else no file holds those games, and all of them read as no rows
            listed = listed[keep]
    if listed.empty:  # not registered (or still a copy): the table says what it has
        return name
    verify_parts(listed, data_dir)
    return f"read_parquet({sql_list(listed.file.tolist())}, hive_partitioning = false, union_by_name = true)"


LISTED = ("file", "first_game", "last_game", "bytes", "checksum")  # what `viewed_files` says of a file


def _listed(where: str, params: list, data_dir: Path | None) -> pd.DataFrame:
    """The listed files matching `where` in order, with their game ranges, sizes and checksums (None where a list
    written before them lacks a column: a reader cannot add it). Inside a `reading` block the list is read once:
    the catalogue cannot change while the block's connection is open (a writer waits for it), and each chunk of a
    big run searched 10^4-10^5 listed files again."""
    lists = _HELD.file_lists.get(paths.db_path(data_dir))
    key = (where, tuple(params))
    listed = lists.get(key) if lists is not None else None
    if listed is None:
        listed = query(f"SELECT * FROM {VIEWED_FILES} WHERE {where} ORDER BY seq", params, data_dir)
        listed = listed.reindex(columns=list(LISTED)).astype({"checksum": object})
        if lists is not None:
            lists[key] = listed
    return listed


_VERIFIED: dict[tuple, str] = {}  # (path, size, mtime, inode) -> the fast checksum it was found to have


def verify_parts(listed: pd.DataFrame, data_dir: Path | None = None) -> None:
    """Compare each listed file (columns `file`, relative to the data directory, `bytes` and `checksum`) with the
    size and fast checksum recorded when it was published, before anything reads it: a file that differs is a
    `DataError` naming it, never rows read from it. Each file is hashed once a process while it stays the same file
    (path, size, modification time, inode); a file listed without a record (a catalogue from before records) is
    read unverified."""
    from riskcore.publish import fast_checksum

    root = paths.data_dir(data_dir)
    for file, size, checksum in zip(listed.file, listed.bytes, listed.checksum):
        if checksum is None or not isinstance(checksum, str):
            continue
        path = root / file
        try:
            st = path.stat()
        except FileNotFoundError:
            raise DamagedFile(f"{path}: missing, though the database lists it: `riskcore check` names every "
                              "problem of the data directory and the command that repairs it") from None
        key = (str(path), st.st_size, st.st_mtime_ns, st.st_ino)
        if _VERIFIED.get(key) == checksum:
            continue
        if st.st_size != int(size) or fast_checksum(path) != checksum:
            raise DamagedFile(f"{path}: damaged (its size or checksum differs from the record made when it was "
                              "published); nothing was read from it: `riskcore check` names every problem of the "
                              "data directory and the command that repairs it")
        _VERIFIED[key] = checksum


def _add_key_columns(con: duckdb.DuckDBPyConnection, name: str, keys: dict) -> None:
    """A key the table has no column for (a generations table first written with fewer keys) is added."""
    have = {r[0] for r in con.execute(f"DESCRIBE {name}").fetchall()}
    for col in keys:
        if col not in have:
            con.execute(f'ALTER TABLE {name} ADD COLUMN "{col}" VARCHAR')


@contextmanager
def transaction(data_dir: Path | None = None, con: duckdb.DuckDBPyConnection | None = None
                ) -> Iterator[duckdb.DuckDBPyConnection]:
    """A write connection inside one transaction: committed on success, rolled back on any error or interrupt.
    `con`: a write connection the caller holds (and closes) instead of a new one."""
    from riskcore.publish import fault

    own = con is None
    con = connect(data_dir) if own else con
    try:
        con.execute("BEGIN TRANSACTION")
        yield con
        try:
            con.execute("COMMIT")
        except duckdb.Error as exc:
            raise DataError(f"cannot commit to {paths.db_path(data_dir)}: {_one_line(exc)}") from None
        fault("db-committed")  # a signal here lands after the commit, before the caller hears of it
    except BaseException:
        try:
            con.execute("ROLLBACK")
        except duckdb.Error:
            pass  # the failed statement (a COMMIT, say) already ended the transaction: report its own error
        raise
    finally:
        if own:
            con.close()


class Registration:
    """A publication's database side (`riskcore.publish`): `hold()` opens the write connection before the first
    file moves and keeps it to the end, so that no reader has the database open while a view's files are being
    replaced; `commit()` registers the moved files in one transaction on it, after checking that what they were
    computed from (`sources`: the generations read before computing them, per run) is still current;
    `committed()` asks it whether it holds a generation."""

    def __init__(self, data_dir: Path | None, register: Callable[[duckdb.DuckDBPyConnection], object],
                 sources: dict[str, dict] | None = None):
        self.data_dir, self.register, self.sources, self.con = data_dir, register, sources or {}, None

    @contextmanager
    def hold(self) -> Iterator[None]:
        self.con = connect(self.data_dir)
        try:
            yield
        finally:
            self.con.close()
            self.con = None

    def commit(self) -> object:
        with transaction(self.data_dir, self.con) as con:
            for run, sources in self.sources.items():
                require_current(con, run, sources)
            return self.register(con)

    def committed(self, table: str, keys: dict, generation: str) -> bool:
        try:
            return holds(self.con, table, keys, generation)
        except duckdb.Error:  # the connection an interrupted statement left may not answer: a fresh one
            self.con.close()
            self.con = connect(self.data_dir)
            return holds(self.con, table, keys, generation)


def store_frames(frames: dict, directory: str, keys: dict, data_dir: Path | None = None,
                 part: str = "part-00000", source: str | dict | None = None) -> dict[str, int]:
    """Write each table (DataFrame, Arrow, or an iterator of Arrow tables of one schema, written as they come so
    that only one is held) to data/DIRECTORY/KEY=VALUE/TABLE/PART.parquet and replace the rows
    matching `keys` in DuckDB, in one publication. `directory` must be one of `PARQUET_DIRS` and its key must come
    first in `keys`; further keys (a setting, a sweep point) let several parts share one directory. `source`: what
    the frames were derived from (`store_frames_many`)."""
    return store_frames_many([(frames, keys, part)], directory, data_dir, source)[0]


def store_frames_many(items: list[tuple[dict, dict, str]], directory: str, data_dir: Path | None = None,
                      source: str | dict | None = None) -> list[dict[str, int]]:
    """`store_frames` for several (frames, keys, part) items in one publication (`riskcore.publish`): many small
    writes (a posterior table per recogniser setting) cost one database commit instead of one each. `source`: what
    the frames were derived from, read before computing them (`sources_of`): a dict of generations (`traces`,
    `recognition`, `posteriors` by setting), or the trace generation alone. It is recorded in
    `generations_<directory>`, and the publication is refused, nothing stored, when it is no longer current at the
    commit (the run was played again, its features or posteriors recomputed, while these were computed)."""
    import pyarrow as pa

    from riskcore.publish import Move, publish, seal
    from riskcore.storage import remove_leftovers, staging_dir, write_parquet, write_parquet_parts

    sources = {"traces": source} if isinstance(source, str) else source
    for _, keys, _ in items:
        if PARQUET_DIRS.get(directory) != next(iter(keys)):
            raise ValueError(f"{directory!r} is keyed by {PARQUET_DIRS.get(directory)!r}, not {next(iter(keys))!r}")
    root = paths.data_dir(data_dir)
    root.mkdir(parents=True, exist_ok=True)
    remove_leftovers(root)
    stage = staging_dir(root / directory)
    try:
        moves, parts, checks = [], [], []
        for k, (frames, keys, part) in enumerate(items):
            tmp = stage / str(k)
            tmp.mkdir()
            for name, frame in frames.items():
                if isinstance(frame, Iterator):  # tables as they are computed
                    write_parquet_parts(frame, tmp / name / f"{part}.parquet")
                    continue
                table = frame if isinstance(frame, pa.Table) else pa.Table.from_pandas(frame, preserve_index=False)
                if table.num_columns:  # a frame with no columns at all (nothing was computed) is skipped
                    write_parquet(table, tmp / name / f"{part}.parquet")
            generation = seal(tmp, directory, keys, part=part, sources=sources)
            checks.append((f"generations_{directory}", keys, generation))
            final = paths.parquet_dir(directory, *map(str, next(iter(keys.items()))), data_dir)
            files: dict[str, list[Path]] = {}
            for f in sorted(tmp.rglob("*.parquet")):
                rel = f.relative_to(tmp)
                moves.append(Move(f, final / rel))
                files.setdefault(rel.parts[0], []).append(final / rel)
            parts.append((keys, files, final))

        runs = {str(keys["run"]) for _, keys, _ in items if "run" in keys}
        registration = Registration(data_dir, lambda con: [register_files(con, keys, files, final)
                                                           for keys, files, final in parts],
                                    {run: sources for run in runs} if sources else None)
        return publish(moves, registration.commit, checks[0][2], checks, data_dir, committed=registration.committed,
                       hold=registration.hold)
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def publish_run(final: Path, run: str, write: Callable[[Path], None], data_dir: Path | None = None,
                source: str | dict | None = None) -> dict[str, int]:
    """`write(stage)` a run's tables into a staging directory beside `final`, seal it (its generation and the record
    of its files) and publish it in place of `final` with its rows (`riskcore.publish`): whatever fails or whenever
    the process is stopped, the run is the complete old one or the complete new one. `source`: as for
    `store_frames_many`."""
    return publish_runs([(final, run, write)], data_dir, source)[run]


def publish_runs(items: list[tuple[Path, str, Callable[[Path], None]]], data_dir: Path | None = None,
                 source: str | dict | None = None) -> dict[str, dict[str, int]]:
    """`publish_run` for several runs of one tree at once: one publication, so that every run is new or every run
    is old whenever the process is stopped (an import whose games go to a run per setting). Returns each run's
    counts."""
    from riskcore.publish import Move, publish, seal
    from riskcore.storage import remove_leftovers, staging_dir

    sources = {"traces": source} if isinstance(source, str) else source
    stages: list[Path] = []
    try:
        moves, checks = [], []
        for final, run, write in items:
            remove_leftovers(final.parent)  # what a killed write of this tree left behind
            stages.append(staging_dir(final))
            write(stages[-1])
            generation = seal(stages[-1], final.parent.name, {"run": run}, sources=sources)
            moves.append(Move(stages[-1], final))
            checks.append((f"generations_{final.parent.name}", {"run": run}, generation))
    except BaseException:
        for stage in stages:
            shutil.rmtree(stage, ignore_errors=True)
        raise
    return _publish_moves(moves, [run for _, run, _ in items], checks, data_dir,
                          {run: sources for _, run, _ in items} if sources else None)


def publish_dir(stage: Path, final: Path, run: str, tree: str, generation: str, data_dir: Path | None,
                keep_staged: bool = False) -> dict[str, int]:
    """Publish a sealed run directory in place of `final` with its rows (`riskcore.publish`)."""
    from riskcore.publish import Move

    return _publish_moves([Move(stage, final)], [run], [(f"generations_{tree}", {"run": run}, generation)],
                          data_dir, keep_staged=keep_staged)[run]


def _publish_moves(moves: list, runs: list[str], checks: list[tuple[str, dict, str]], data_dir: Path | None,
                   sources: dict[str, dict] | None = None, keep_staged: bool = False) -> dict[str, dict[str, int]]:
    """Run directories (one move each, in the order of `runs`) published together, their rows registered in one
    transaction."""
    from riskcore.publish import publish

    registration = Registration(data_dir, lambda con: {run: register_tables(con, "run", run, m.final)
                                                       for run, m in zip(runs, moves)}, sources)
    return publish(moves, registration.commit, checks[0][2], checks, data_dir, keep_staged,
                   committed=registration.committed, hold=registration.hold)


def generation(tree: str, run: str, data_dir: Path | None = None) -> str | None:
    """The generation of a run's directory in `tree` (`traces`, `recognition`) as the database holds it."""
    try:
        rows = query(f"SELECT generation FROM generations_{tree} WHERE run = ?", [run], data_dir)
    except (duckdb.CatalogException, NoDatabase):  # nothing of that tree yet, or no database
        return None
    return rows.generation.iloc[0] if len(rows) else None


def trace_generations(data_dir: Path | None = None) -> dict[str, str]:
    """Every run's current trace generation ({} before the first run): what a sweep point records it read."""
    try:
        rows = query("SELECT run, generation FROM generations_traces", data_dir=data_dir)
    except (duckdb.CatalogException, NoDatabase):
        return {}
    return dict(zip(rows.run, rows.generation))


# the derived trees of a run: what each is computed from (`sources_of`), its tables, and the command that computes
# it again
DERIVED = {"recognition": ("traces",), "posteriors": ("traces", "recognition"), "metrics": ("traces", "posteriors")}
DERIVED_TABLES = {"recognition": ("rec_observations", "rec_pending", "rec_candidates"), "posteriors": ("posteriors",),
                  "metrics": ("recognition_metrics", "recognition_paired")}
REDERIVE = {"recognition": "riskcore recognize --run {run} --rebuild-features",
            "posteriors": "riskcore recognize --run {run} --recogniser {key}",
            "metrics": "riskcore evaluate --run {run}{checkpoints}"}


def _current(con: duckdb.DuckDBPyConnection, tree: str, run: str | None = None) -> dict:
    """The generations a tree's publications hold now, by run (posteriors: by (run, setting))."""
    keys = "run, setting" if tree == "posteriors" else "run"
    try:
        rows = con.execute(f"SELECT {keys}, generation FROM generations_{tree}"
                           + (" WHERE run = ?" if run is not None else ""), [run] if run is not None else []
                           ).fetchall()
    except duckdb.CatalogException:
        return {}
    return {(r[0], r[1]) if tree == "posteriors" else r[0]: r[-1] for r in rows}


def sources_of(run: str, tree: str, data_dir: Path | None = None, settings: list[str] | None = None) -> dict:
    """The current generations of what `tree` is derived from for `run` (`DERIVED`: the traces, features or the
    posteriors of each setting, or of `settings` alone), read at once: a derivation reads these before it computes,
    and records them."""
    with reading(data_dir):
        con = _HELD.connections[paths.db_path(data_dir)]
        out: dict = {}
        for source in DERIVED[tree]:
            current = _current(con, source, run)
            if source == "posteriors":
                out[source] = {s: g for (_, s), g in current.items() if settings is None or s in settings}
            else:
                out[source] = current.get(run)
        return out


def require_current(con: duckdb.DuckDBPyConnection, run: str, sources: dict) -> None:
    """Refuse (a `DataError`) a derivation whose sources are no longer those it read before computing: another
    process replaced them meanwhile, and what was computed may mix old and new."""
    changed = []
    for tree, want in sources.items():
        now = _current(con, tree, run)
        if tree == "posteriors":
            changed += [f"the posteriors of {s}" for s, g in sorted(want.items()) if now.get((run, s)) != g]
        elif now.get(run) != want:
            changed.append({"traces": "its games", "recognition": "its recognition features"}.get(tree, tree))
    if changed:
        raise DataError(f"{' and '.join(changed)} of run {run!r} were replaced while this command read them "
                        "(another process wrote them): nothing was stored; run it again")


@dataclass(frozen=True)
class Stale:
    """A derived publication computed from sources that have been replaced since."""

    tree: str
    run: str
    key: str  # the setting (posteriors) or clock (metrics), or ""
    why: str

    def line(self) -> str:
        what = {"recognition": "the recognition features", "posteriors": "the posteriors",
                "metrics": "the metrics"}[self.tree]
        key = f" ({self.key})" if self.key else ""
        checkpoints = " --checkpoints game" if self.tree == "metrics" and self.key == "game" else ""
        command = REDERIVE[self.tree].format(run=self.run, key=self.key or "SETTING", checkpoints=checkpoints)
        return f"{what} of run {self.run!r}{key} {self.why}: `{command}`"


def stale_derivations(con: duckdb.DuckDBPyConnection, run: str | None = None,
                      trees: tuple[str, ...] = tuple(DERIVED)) -> list[Stale]:
    """Every derived publication (of `run`, or of every run) whose sources are not current: computed from games,
    features or posteriors that were replaced (or removed) since."""
    traces, recognition = _current(con, "traces"), _current(con, "recognition")
    posteriors = _current(con, "posteriors")
    out = []
    for tree in trees:
        try:
            frame = con.execute(f"SELECT * FROM generations_{tree}" + (" WHERE run = ?" if run is not None else "")
                                + " ORDER BY ALL", [run] if run is not None else []).df()
        except duckdb.CatalogException:
            continue
        for row in frame.to_dict("records"):
            name = str(row["run"])
            key = next((str(row[k]) for k in ("setting", "clock") if isinstance(row.get(k), str)), "")
            sources = json.loads(row["sources"]) if isinstance(row.get("sources"), str) else {}
            source = row["source"] if isinstance(row.get("source"), str) else None
            why = None
            if (source or "") != (traces.get(name) or ""):
                why = "were derived from an earlier version of its games"
            elif "recognition" in sources and sources["recognition"] != recognition.get(name):
                why = "were computed from recognition features since rebuilt"
            else:
                gone = sorted(s for s, g in sources.get("posteriors", {}).items() if posteriors.get((name, s)) != g)
                if gone:
                    why = f"were computed from the posteriors of {', '.join(gone)}, since recomputed or removed"
            if why:
                out.append(Stale(tree, name, key, why))
    return out


def stale_sources(tree: str, run: str, data_dir: Path | None = None) -> "pd.DataFrame":
    """The rows of `generations_<tree>` for `run` that are stale (`stale_derivations`), with the reason (`why`)
    and its line (`line`)."""
    import pandas as pd

    try:
        stale = _on_connection(data_dir, lambda con: stale_derivations(con, run, (tree,)))
    except NoDatabase:
        return pd.DataFrame()
    rows = [{"run": x.run, "setting" if tree == "posteriors" else "clock": x.key, "why": x.why, "line": x.line()}
            for x in stale]
    return pd.DataFrame(rows)


def rebuild(data_dir: Path | None = None) -> list[str]:
    """Re-derive the database from the data directory's Parquet trees, one run (or sweep, tournament) per
    transaction. Interrupted writes are finished or undone first (`publish.recover`); a database file that cannot
    be opened is moved aside (`riskcore.duckdb.damaged-<time>`) and a new one built. A directory whose files differ
    from their record (missing, damaged, unrecorded) is left out: the rest is rebuilt, then a `DataError` names
    every such file. Returns the runs of traces registered."""
    from riskcore.publish import recover, verify
    from riskcore.storage import remove_leftovers

    root = paths.data_dir(data_dir)
    moved = _move_aside_if_damaged(data_dir)
    if moved is not None or not paths.db_path(data_dir).exists():
        recover(data_dir, trust_files=True)  # no database to ask: forward where every new file was placed
    else:
        settle(data_dir)
    with transaction(data_dir) as con:
        for name, kind in con.execute("SELECT table_name, table_type FROM information_schema.tables").fetchall():
            con.execute(f"DROP {'VIEW' if kind == 'VIEW' else 'TABLE'} IF EXISTS {name}")
    found, failed = [], []
    for directory, key in PARQUET_DIRS.items():  # one sub-directory per run or sweep: key=value
        tree = root / directory
        if not tree.exists():
            continue
        remove_leftovers(tree)
        for sub in sorted(tree.glob(f"{key}=*")):
            problems = verify(sub)
            if problems and not problems[0].endswith("(written before records were kept?)"):
                failed.append("; ".join(problems))
                continue
            try:
                with transaction(data_dir) as con:
                    register_tables(con, key, sub.name.split("=", 1)[1], sub)
            except DataError as exc:
                failed.append(str(exc))
                continue
            if directory == "traces":
                found.append(sub.name.split("=", 1)[1])
    note = f" (the damaged database was moved to {moved})" if moved else ""
    if failed:
        raise DataError(f"rebuilt the database from {len(found)} run(s){note}; these could not be read and are "
                        "left out: " + " | ".join(failed))
    return found


def _move_aside_if_damaged(data_dir: Path | None) -> Path | None:
    """Move a database file DuckDB cannot open (not a lock: damage) aside; returns where it went."""
    db = paths.db_path(data_dir)
    if not db.exists():
        return None
    try:
        con = duckdb.connect(str(db), read_only=True)
        con.execute("SELECT count(*) FROM information_schema.tables").fetchone()
        con.close()
        return None
    except duckdb.Error as exc:
        if "lock" in str(exc).lower():
            raise DatabaseLocked(f"the database {db} is held by another process: {_one_line(exc)}") from None
    aside = db.with_name(f"{db.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
    os.replace(db, aside)
    for wal in (db.with_name(db.name + ".wal"),):
        if wal.exists():
            os.replace(wal, aside.with_name(aside.name + ".wal"))
    return aside


def run_config(run: str, data_dir: Path | None = None):
    """The `GameConfig` a registered run was played with."""
    import json

    from riskcore.engine.config import GameConfig

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
    with DuckDB's message on one line. Like `query`, it verifies the files of the views it names and warns
    (`StaleWarning`) when it reads stale derived data."""
    con = connect(data_dir, read_only=True)
    try:
        _before_reading(con, sql, data_dir)
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
            return _interruptible(con, sql)
        except duckdb.Error as exc:
            raise DataError(_one_line(exc)) from None
    finally:
        con.close()


def _interruptible(con: duckdb.DuckDBPyConnection, sql: str) -> pd.DataFrame:
    """Run a query in a thread while this one waits, so that Ctrl-C or SIGTERM (whose handlers run here, never
    inside DuckDB's C code) stops the query instead of waiting for it."""
    out: dict = {}
    done = threading.Event()  # waited on, never `join`ed: an interrupted join leaves the thread's state wrong

    def work() -> None:
        try:
            out["df"] = con.execute(sql).df()
        except BaseException as exc:  # handed to the waiting thread
            out["exc"] = exc
        finally:
            done.set()

    threading.Thread(target=work, name="riskcore-query", daemon=True).start()
    try:
        while not done.wait(0.1):
            pass
    except KeyboardInterrupt:
        con.interrupt()
        done.wait(10)
        raise
    if "exc" in out:
        raise out["exc"]
    return out["df"]


def _one_line(exc: Exception) -> str:
    return " ".join(str(exc).split())


class _Held(threading.local):
    """The connection of each open `reading` block, per database, in the thread that opened it (a DuckDB connection
    serves one thread at a time)."""

    def __init__(self) -> None:
        self.connections: dict[Path, duckdb.DuckDBPyConnection] = {}
        self.file_lists: dict[Path, dict] = {}  # what `_listed` read during the block


_HELD = _Held()


@contextmanager
def reading(data_dir: Path | None = None) -> Iterator[None]:
    """Every `query` of the block shares one read-only connection, closed at its end: a few queries in a row (a
    chunk of a run) open the database once instead of once each. No connection outlives the block, and the block
    must not write (DuckDB refuses a writing connection beside a reading one in the same process)."""
    db, held = paths.db_path(data_dir), _HELD.connections
    if db in held:  # an enclosing block's connection serves
        yield
        return
    held[db] = connect(data_dir, read_only=True)
    _HELD.file_lists[db] = {}
    try:
        yield
    finally:
        _HELD.file_lists.pop(db, None)
        held.pop(db).close()


def query(sql: str, params: list | None = None, data_dir: Path | None = None) -> pd.DataFrame:
    """Run one read-only query and close the connection (safe while another process writes later); inside a
    `reading` block, on the block's connection."""
    return _fetch(sql, params, data_dir, lambda result: result.df())


def query_arrays(sql: str, params: list | None = None, data_dir: Path | None = None) -> dict[str, np.ndarray]:
    """`query` as a numpy array per column: no DataFrame is built for a result read as arrays (a chunk of
    recognition features), which took a fifth of the read."""
    return _fetch(sql, params, data_dir, lambda result: result.fetchnumpy())


def _fetch(sql: str, params: list | None, data_dir: Path | None, how: Callable):
    def run(con: duckdb.DuckDBPyConnection):
        _before_reading(con, sql, data_dir)
        return how(con.execute(sql, params or []))

    return _on_connection(data_dir, run)


def _on_connection(data_dir: Path | None, work: Callable[[duckdb.DuckDBPyConnection], object]):
    """`work(con)` on the enclosing `reading` block's connection, or on one of its own, closed after."""
    shared = _HELD.connections.get(paths.db_path(data_dir))
    if shared is not None:
        return work(shared)
    con = connect(data_dir, read_only=True)
    try:
        return work(con)
    finally:
        con.close()


# the tables a statement reads by name (after FROM or JOIN; string literals, such as file lists, left out)
_READS = re.compile(r"\b(?:FROM|JOIN)\s+([A-Za-z_][A-Za-z0-9_]*)\b", re.IGNORECASE)
_LITERAL = re.compile(r"'(?:[^']|'')*'")
_STALE_TREES = {table: tree for tree, tables in DERIVED_TABLES.items() for table in tables}


def _before_reading(con: duckdb.DuckDBPyConnection, sql: str, data_dir: Path | None) -> None:
    """What a query of tables by name checks first: the files of every view it names against their records
    (`verify_parts`), and whether a derived table it names holds stale publications (a `StaleWarning` naming each
    with the command that computes it again)."""
    if "FROM" not in sql.upper():
        return
    named = {n.lower() for n in _READS.findall(_LITERAL.sub("''", sql))}
    views = sorted(named & set(VIEWED))
    if views:
        try:
            listed = con.execute(f"SELECT * FROM {VIEWED_FILES} WHERE table_name IN "
                                 f"({', '.join('?' for _ in views)})", views).df()
        except duckdb.CatalogException:  # nothing viewed yet
            listed = None
        if listed is not None:
            verify_parts(listed.reindex(columns=list(LISTED)).astype({"checksum": object}), data_dir)
    trees = tuple(sorted({_STALE_TREES[n] for n in named if n in _STALE_TREES}))
    if trees:
        stale = stale_derivations(con, trees=trees)
        if stale:
            warnings.warn("stale derived data: " + "; ".join(x.line() for x in stale), StaleWarning, stacklevel=4)
