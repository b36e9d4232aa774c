"""The embedded DuckDB database: derived from the Parquet traces, rebuildable, replaced run by run in one
transaction so that readers never see half a run.

Notebooks open it read-only (`connect(read_only=True)`) and close it when done: DuckDB lets one process write.
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
import time
from contextlib import contextmanager
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


WRITE_WAIT = float(os.environ.get("RISKCORE_LOCK_WAIT", 600))  # seconds a writer waits for readers to let go
# DuckDB's buffer pool may otherwise take most of the machine's memory while a large run is inserted: a writer
# gets a fixed budget and spills beyond it, so a run's registration costs the same memory at any number of games
# (32MB, once the default, ran out now and then while two threads inserted 12 million posterior rows)
WRITE_MEMORY = os.environ.get("RISKCORE_DB_WRITE_MEMORY", "256MB")


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
        con.execute("SET enable_progress_bar = false")  # in a notebook its bar is left behind above the output
        # the views name their files relative to the data directory, so that the directory can move
        con.execute(f"SET file_search_path = {sql_text(db.parent)}")
        if not read_only:
            con.execute(f"SET memory_limit = '{WRITE_MEMORY}'")
        return con


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
    label = _label(keys)
    counts = {}
    for name, files in tables.items():
        if not files:
            continue
        src = f"read_parquet({sql_list(files)}, hive_partitioning = false)"
        if name in VIEWED:
            try:
                counts[name] = _register_viewed(con, name, _file_labels(name, keys, files),
                                                where_from.parent.parent.resolve())
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


def _label(keys: dict) -> str:
    """A publication's keys as messages name them and `viewed_files` keys its files: `run='x', setting='y'`."""
    return ", ".join(f"{c}={v!r}" for c, v in keys.items())


def _register_viewed(con: duckdb.DuckDBPyConnection, name: str, labelled: dict[str, list[Path]], root: Path) -> int:
    """Put the files of each label in the place of the files that label had behind the view `name` and redefine the
    view over every registered file in registration order (a database that held a copy of the table is moved to the
    view first). Returns the rows of the new files."""
    con.execute(f"CREATE TABLE IF NOT EXISTS {VIEWED_FILES} (table_name VARCHAR, key VARCHAR, seq BIGINT, "
                "file VARCHAR, first_game BIGINT, last_game BIGINT)")
    for col in ("first_game", "last_game"):  # a database from before files had game ranges: NULL reads every file
        con.execute(f"ALTER TABLE {VIEWED_FILES} ADD COLUMN IF NOT EXISTS {col} BIGINT")
    if _kind(con, name) == "BASE TABLE":
        _copy_to_view(con, name, root)
    before = _column_types(con, name) if _kind(con, name) == "VIEW" else {}
    for label, files in labelled.items():
        _list_files(con, name, label, files, root)
    _define_view(con, name)
    # the view reads a column in a type every file fits: new files must not change it for every run (a number
    # column read as text from then on), where a table refused their rows
    for col, dtype in _column_types(con, name).items():
        if before.get(col, dtype) != dtype:
            raise DataError(f"column {col!r} of the new files would turn {name!r}'s {before[col]} into {dtype}")
    files = [f for group in labelled.values() for f in group]
    return con.execute(f"SELECT count(*) FROM read_parquet({sql_list(files)})").fetchone()[0]


def _column_types(con: duckdb.DuckDBPyConnection, name: str) -> dict[str, str]:
    return {col: dtype for col, dtype, *_ in con.execute(f"DESCRIBE {name}").fetchall()}


def _file_labels(name: str, keys: dict, files: list[Path]) -> dict[str, list[Path]]:
    """A viewed table's files by the label of the publication each belongs to: that of `keys`, or, where the table
    is keyed finer than them (a rebuild registers a run's directory whole), each file's own keys, from its footer."""
    wanted = VIEW_KEYS.get(name, tuple(keys))
    if set(wanted) <= set(keys):
        return {_label({k: keys[k] for k in wanted}): files}
    labelled: dict[str, list[Path]] = {}
    for f in files:
        labelled.setdefault(_label(_constant_columns(f, wanted)), []).append(f)
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


def _list_files(con: duckdb.DuckDBPyConnection, name: str, label: str, files: list[Path], root: Path) -> None:
    """`files` behind the view `name` for `label`, in place of those it had, after every file listed before."""
    seq = con.execute(f"SELECT coalesce(max(seq), -1) + 1 FROM {VIEWED_FILES}").fetchone()[0]
    con.execute(f"DELETE FROM {VIEWED_FILES} WHERE table_name = ? AND key = ?", [name, label])
    ranges = _game_ranges(files)
    games = [ranges.get(str(f), (None, None)) for f in files]
    # one statement for every file (a row at a time cost half a millisecond each)
    con.execute(f"INSERT INTO {VIEWED_FILES} (table_name, key, seq, file, first_game, last_game) "
                "SELECT ?, ?, ? + unnest(range(?)), unnest(?::VARCHAR[]), unnest(?::BIGINT[]), unnest(?::BIGINT[])",
                [name, label, seq, len(files), [f.resolve().relative_to(root).as_posix() for f in files],
                 [g[0] for g in games], [g[1] for g in games]])


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
    for run in runs:
        files = sorted(paths.parquet_dir(VIEWED[name], "run", run, root).glob(f"{name}/*.parquet"))
        for label, group in _file_labels(name, {"run": run}, files).items():
            _list_files(con, name, label, group, root)


def run_source(name: str, run: str, data_dir: Path | None = None, games: tuple[int, int] | None = None,
               settings: list[str] | None = None) -> str:
    """What a query of one run reads `name` from: the run's own files of a viewed table (the view would open every
    run's files to find them), else the table itself. With `games` (first, last), only the files that may hold
    those games; with `settings`, only those settings' files (posteriors): the caller still filters by both."""
    if name not in VIEWED:
        return name
    where, params = "table_name = ? AND ", [name]
    if settings:
        where += f"key IN ({', '.join('?' for _ in settings)})"
        params += [_label({"run": run, "setting": s}) for s in settings]
    elif len(VIEW_KEYS.get(name, ("run",))) > 1:  # every file of the run, whatever its finer keys
        where, params = where + "starts_with(key, ?)", params + [_label({"run": run}) + ", "]
    else:
        where, params = where + "key = ?", params + [_label({"run": run})]
    try:
        files = _files_with(games, where, params, data_dir) if games is not None else None
        if not files:  # every file; or no file holds those games, and all of them read as no rows
            files = query(f"SELECT file FROM {VIEWED_FILES} WHERE {where} ORDER BY seq", params, data_dir).file.tolist()
    except duckdb.CatalogException:  # nothing viewed yet
        return name
    if not files:  # not registered (or still a copy): the table says what it has
        return name
    return f"read_parquet({sql_list(files)}, hive_partitioning = false, union_by_name = true)"


def _files_with(games: tuple[int, int], where: str, params: list, data_dir: Path | None) -> list[str]:
    """The listed files that may hold games `games` (a file without a range may hold any). Inside a `reading`
    block the list with its ranges is read once: the catalogue cannot change while the block's connection is open
    (a writer waits for it), and each chunk of a big run searched 10^4-10^5 listed files again."""
    lists = _HELD.file_lists.get(paths.db_path(data_dir))
    key = (where, tuple(params))
    ranges = lists.get(key) if lists is not None else None
    if ranges is None:
        try:
            ranges = query(f"SELECT file, first_game, last_game FROM {VIEWED_FILES} WHERE {where} ORDER BY seq",
                           params, data_dir)
        except duckdb.BinderException:  # a list written before files had game ranges (a reader cannot add them)
            return []
        if lists is not None:
            lists[key] = ranges
    first, last = int(games[0]), int(games[1])
    keep = ranges.first_game.isna() | ((ranges.first_game <= last) & (ranges.last_game >= first))
    return ranges.file[keep].tolist()


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
    own = con is None
    con = connect(data_dir) if own else con
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
        if own:
            con.close()


class Registration:
    """A publication's database side (`riskcore.publish`): `hold()` opens the write connection before the first
    file moves and keeps it to the end, so that no reader has the database open while a view's files are being
    replaced; `commit()` registers the moved files in one transaction on it."""

    def __init__(self, data_dir: Path | None, register: Callable[[duckdb.DuckDBPyConnection], object]):
        self.data_dir, self.register, self.con = data_dir, register, None

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
            return self.register(con)


def store_frames(frames: dict, directory: str, keys: dict, data_dir: Path | None = None,
                 part: str = "part-00000", source: str | None = None) -> dict[str, int]:
    """Write each table (DataFrame, Arrow, or an iterator of Arrow tables of one schema, written as they come so
    that only one is held) to data/DIRECTORY/KEY=VALUE/TABLE/PART.parquet and replace the rows
    matching `keys` in DuckDB, in one publication. `directory` must be one of `PARQUET_DIRS` and its key must come
    first in `keys`; further keys (a setting, a sweep point) let several parts share one directory. `source`: the
    trace generation the frames were derived from."""
    return store_frames_many([(frames, keys, part)], directory, data_dir, source)[0]


def store_frames_many(items: list[tuple[dict, dict, str]], directory: str, data_dir: Path | None = None,
                      source: str | None = None) -> list[dict[str, int]]:
    """`store_frames` for several (frames, keys, part) items in one publication (`riskcore.publish`): many small
    writes (a posterior table per recogniser setting) cost one database commit instead of one each. `source`: the
    trace generation the frames were derived from (recorded in `generations_<directory>`)."""
    import pyarrow as pa

    from riskcore.publish import Move, publish, seal
    from riskcore.storage import remove_leftovers, staging_dir, write_parquet, write_parquet_parts

    for _, keys, _ in items:
        if PARQUET_DIRS.get(directory) != next(iter(keys)):
            raise ValueError(f"{directory!r} is keyed by {PARQUET_DIRS.get(directory)!r}, not {next(iter(keys))!r}")
    root = paths.data_dir(data_dir)
    root.mkdir(parents=True, exist_ok=True)
    remove_leftovers(root)
    stage = staging_dir(root / directory)
    try:
        moves, parts, check = [], [], None
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
            generation = seal(tmp, directory, keys, source, part)
            check = check or (f"generations_{directory}", keys, generation)
            final = paths.parquet_dir(directory, *map(str, next(iter(keys.items()))), data_dir)
            files: dict[str, list[Path]] = {}
            for f in sorted(tmp.rglob("*.parquet")):
                rel = f.relative_to(tmp)
                moves.append(Move(f, final / rel))
                files.setdefault(rel.parts[0], []).append(final / rel)
            parts.append((keys, files, final))

        registration = Registration(data_dir, lambda con: [register_files(con, keys, files, final)
                                                           for keys, files, final in parts])
        return publish(moves, registration.commit, check[2], check, data_dir, committed=committed,
                       hold=registration.hold)
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def publish_run(final: Path, run: str, write: Callable[[Path], None], data_dir: Path | None = None,
                source: str | None = None) -> dict[str, int]:
    """`write(stage)` a run's tables into a staging directory beside `final`, seal it (its generation and the record
    of its files) and publish it in place of `final` with its rows (`riskcore.publish`): whatever fails or whenever
    the process is stopped, the run is the complete old one or the complete new one."""
    from riskcore.publish import seal
    from riskcore.storage import remove_leftovers, staging_dir

    tree = final.parent.name
    remove_leftovers(final.parent)  # what a killed write of this tree left behind
    stage = staging_dir(final)
    try:
        write(stage)
        generation = seal(stage, tree, {"run": run}, source)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    return publish_dir(stage, final, run, tree, generation, data_dir)


def publish_dir(stage: Path, final: Path, run: str, tree: str, generation: str, data_dir: Path | None,
                keep_staged: bool = False) -> dict[str, int]:
    """Publish a sealed run directory in place of `final` with its rows (`riskcore.publish`)."""
    from riskcore.publish import Move, publish

    registration = Registration(data_dir, lambda con: register_tables(con, "run", run, final))
    return publish([Move(stage, final)], registration.commit, generation,
                   (f"generations_{tree}", {"run": run}, generation), data_dir, keep_staged, committed=committed,
                   hold=registration.hold)


def committed(table: str, keys: dict, generation: str, data_dir: Path | None) -> bool:
    """Whether the database holds a publication's generation. A database that cannot be read (locked, damaged) is
    an error, never a "no": rolling back a committed publication would lose it."""
    if not paths.db_path(data_dir).exists():
        return False
    con = connect(data_dir, read_only=True)
    try:
        where = " AND ".join(f"{k} = ?" for k in keys)
        rows = con.execute(f"SELECT generation FROM {table} WHERE {where}", [str(v) for v in keys.values()]).fetchall()
    except duckdb.CatalogException:  # the table does not exist: nothing of this tree was ever committed
        return False
    finally:
        con.close()
    return generation in {r[0] for r in rows}


def generation(tree: str, run: str, data_dir: Path | None = None) -> str | None:
    """The generation of a run's directory in `tree` (`traces`, `recognition`) as the database holds it."""
    try:
        rows = query(f"SELECT generation FROM generations_{tree} WHERE run = ?", [run], data_dir)
    except (duckdb.CatalogException, DataError):  # nothing of that tree yet, or no database
        return None
    return rows.generation.iloc[0] if len(rows) else None


def trace_generations(data_dir: Path | None = None) -> dict[str, str]:
    """Every run's current trace generation ({} before the first run): what a sweep point records it read."""
    try:
        rows = query("SELECT run, generation FROM generations_traces", data_dir=data_dir)
    except (duckdb.CatalogException, DataError):
        return {}
    return dict(zip(rows.run, rows.generation))


def stale_sources(tree: str, run: str, data_dir: Path | None = None) -> "pd.DataFrame":
    """The rows of `generations_<tree>` for `run` whose source is not the run's current trace generation."""
    import pandas as pd

    current = generation("traces", run, data_dir)
    try:
        rows = query(f"SELECT * FROM generations_{tree} WHERE run = ?", [run], data_dir)
    except (duckdb.CatalogException, DataError):
        return pd.DataFrame()
    return rows[rows.source.fillna("") != (current or "")]


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
    recover(data_dir, committed, trust_files=moved is not None)
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
        self.file_lists: dict[Path, dict] = {}  # what `_files_with` read during the block


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
    shared = _HELD.connections.get(paths.db_path(data_dir))
    if shared is not None:
        return how(shared.execute(sql, params or []))
    con = connect(data_dir, read_only=True)
    try:
        return how(con.execute(sql, params or []))
    finally:
        con.close()
