"""`riskcore check`: is every file of the data directory the one its publication recorded, does the database hold
what the files hold, and is any derived data older than what it was derived from?

Every publication (`riskcore.publish`) records its files with their sizes, checksums and rows, and its generation;
derived data records the generations of what it was computed from (games, features, posteriors). A check finishes
or undoes interrupted writes first (when it may write to the data directory), then names every missing, damaged or
unrecorded file, every publication whose database rows differ from its files, a database that cannot be read, and
every stale derived table, each on a line with the command that repairs it. It never stops at the first problem:
whatever it cannot read is one of its lines.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from riskcore import paths
from riskcore.db import (PARQUET_DIRS, VIEWED, VIEWED_FILES, DataError, NoDatabase, REBUILD_HINT, connect, settle,
                         stale_derivations, trace_generations)
from riskcore.publish import pending_journals, verify

# what writes a tree's files again, by tree (the run or other key filled in)
REPAIR = {"traces": "play or import run {name} again (the same command replaces it)",
          "recognition": "`riskcore recognize --run {name} --rebuild-features`",
          "posteriors": "`riskcore recognize --run {name} --recogniser SETTING` for the setting it names",
          "metrics": "`riskcore evaluate --run {name}` (or the experiment that wrote it)",
          "sweeps": "`riskcore sweep SPEC --force` for sweep {name}",
          "tournaments": "`riskcore tournament --name {name} ...` again"}


@dataclass
class Report:
    recovered: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    checked: int = 0  # directories checked


def check(data_dir: Path | None = None, run: str | None = None, checksums: bool = True) -> Report:
    """Check the data directory (or one run's directories in every tree)."""
    report = Report()
    root = paths.data_dir(data_dir)
    _settle(report, data_dir)
    db = paths.db_path(data_dir)
    try:  # one read-only connection for the whole check: opening one per query cost most of its time
        con = connect(data_dir, read_only=True, settle_first=False)
    except NoDatabase:  # no database: every publication is reported missing from it
        con = None
    except DataError as exc:
        report.problems.append(f"{db}: the database cannot be read ({_short(exc)}); {REBUILD_HINT}")
        con = None
    try:
        _check_trees(report, root, run, checksums, con)
        if con is not None:
            _check_stale(report, con, run)
    finally:
        if con is not None:
            con.close()
    if run is not None and not report.checked:
        raise DataError(f"no run {run!r} in {root}")
    if run is None and con is not None:
        report.stale += _stale_sweep_points(data_dir)
    return report


def _short(exc: BaseException, n: int = 300) -> str:
    return " ".join(str(exc).split())[:n]


def _settle(report: Report, data_dir: Path | None) -> None:
    """Finish or undo interrupted writes, or say why not (a read-only data directory, a database that cannot
    answer): each journal left is a problem. Then, in a writable data directory, the staging folders and files of
    killed processes go (a write of the same tree would remove them too)."""
    if pending_journals(data_dir):
        try:
            report.recovered = settle(data_dir)
        except DataError as exc:
            report.problems.append(_short(exc, 1000))
    if not pending_journals(data_dir):  # a journal left names staged paths its undoing needs
        _remove_leftovers(report, paths.data_dir(data_dir))
    for journal in pending_journals(data_dir):
        if not any(str(journal) in line for line in report.problems):
            report.problems.append(f"{journal}: an interrupted write, neither finished nor undone: `riskcore "
                                   f"check` with write access to {paths.data_dir(data_dir)} finishes or undoes it")


def _remove_leftovers(report: Report, root: Path) -> None:
    from riskcore.storage import remove_leftovers

    if not os.access(root, os.W_OK | os.X_OK):
        return
    for folder in [root] + [root / tree for tree in PARQUET_DIRS]:
        report.recovered += [f"removed {p}, which a killed process was writing" for p in remove_leftovers(folder)]


def _check_trees(report: Report, root: Path, run: str | None, checksums: bool, con) -> None:
    for tree, key in PARQUET_DIRS.items():
        if not (root / tree).is_dir():
            continue
        for sub in sorted((root / tree).glob(f"{key}=*")):
            if run is not None and (key != "run" or sub.name != f"run={run}"):
                continue
            report.checked += 1
            repair = REPAIR[tree].format(name=sub.name.split("=", 1)[1])
            try:
                report.problems += [f"{line}: {repair}" for line in verify(sub, checksums)]
            except OSError as exc:  # a file that cannot be read at all
                report.problems.append(f"{sub}: cannot be read ({_short(exc)}): {repair}")
            report.problems += _database_matches(sub, tree, con)


def _check_stale(report: Report, con, run: str | None) -> None:
    try:
        report.stale += [x.line() for x in stale_derivations(con, run)]
    except duckdb.Error as exc:
        report.problems.append(f"the database's records of derived data cannot be read ({_short(exc)}); "
                               f"{REBUILD_HINT}")


def _stale_sweep_points(data_dir: Path | None) -> list[str]:
    """Sweep points computed while a run they may have read held other games (rewritten or removed since)."""
    from riskcore.db import query

    try:
        points = query("SELECT sweep, point, trace_generations FROM sweep_points ORDER BY sweep, point",
                       data_dir=data_dir)
        current = trace_generations(data_dir)
    except Exception:  # noqa: BLE001 - no sweep yet, or one stored before points recorded what they read
        return []
    out = []
    for p in points.itertuples():
        read = json.loads(p.trace_generations) if isinstance(p.trace_generations, str) else {}
        changed = sorted(r for r, g in read.items() if current.get(r) != g)
        if changed:
            runs = ", ".join(changed[:3]) + (f" and {len(changed) - 3} more" if len(changed) > 3 else "")
            out.append(f"sweep {p.sweep!r} point {p.point} ran before run(s) {runs} were rewritten or removed: "
                       "rerun it with `riskcore sweep SPEC --force`")
    return out


def _database_matches(directory: Path, tree: str, con) -> list[str]:
    """The database holds every publication recorded under the directory: its generation, and per table as many
    rows for its keys as its files hold (a copied table), or the files themselves with their checksums (a view:
    its rows are the files' rows)."""
    import pyarrow.parquet as pq

    out = []
    for record in sorted(directory.glob(f"generations_{tree}/*.parquet")):
        try:
            rows = pq.read_table(record).to_pylist()
        except Exception:  # a damaged record: `verify` names it
            continue
        for row in rows:
            keys = {k: v for k, v in row.items() if k not in ("generation", "source", "sources", "files")}
            label = ", ".join(f"{k}={v}" for k, v in keys.items())
            if con is None:
                out.append(f"{record}: the database does not hold {label}; `riskcore db --rebuild` registers it")
                continue
            try:
                out += _publication_matches(con, directory, tree, record, row, keys, label)
            except duckdb.Error as exc:
                out.append(f"{record}: the database cannot say whether it holds {label} ({_short(exc, 200)}); "
                           f"{REBUILD_HINT}")
    return out


def _publication_matches(con, directory: Path, tree: str, record: Path, row: dict, keys: dict, label: str
                         ) -> list[str]:
    where, values = " AND ".join(f"{k} = ?" for k in keys), list(keys.values())
    try:
        copies = con.execute(f"SELECT * FROM generations_{tree} WHERE {where}", values).df().to_dict("records")
    except duckdb.CatalogException as exc:  # no such table: the database lacks it
        return [f"{record}: the database does not hold {label} ({_short(exc, 100)}); `riskcore db --rebuild` "
                "registers it"]
    held = [c["generation"] for c in copies]
    if held != [row["generation"]]:
        return [f"{record}: the database holds generation {held or 'none'} of {label}, the files "
                f"{row['generation']}: `riskcore db --rebuild` registers the files"]
    differ = sorted(k for k in ("source", "sources", "files") if _text(copies[0].get(k)) != _text(row.get(k)))
    if differ:  # the record was changed after it was registered: what the database holds is what was published
        return [f"{record}: damaged ({', '.join(differ)} differ from the database's copy of the record): "
                + REPAIR[tree].format(name=directory.name.split("=", 1)[1])]
    files = json.loads(row["files"])
    out, counts = [], {}
    for rel, entry in files.items():
        counts[rel.split("/")[0]] = counts.get(rel.split("/")[0], 0) + int(entry["rows"])
    for table, n in sorted(counts.items()):
        if table in VIEWED:
            out += _view_matches(con, directory, table, keys, files, label)
            continue
        got = int(con.execute(f"SELECT count(*) FROM {table} WHERE {where}", values).fetchone()[0])
        if got != n:
            out.append(f"{directory / table} ({label}): {n:,} rows in the files, {got:,} in the database: "
                       "`riskcore db --rebuild` registers the files")
    return out


def _text(value) -> str | None:
    """A record's text field as both sides hold it (NULL, NaN and None alike)."""
    return value if isinstance(value, str) else None


def _view_matches(con, directory: Path, table: str, keys: dict, files: dict, label: str) -> list[str]:
    """A view's rows are its listed files': the database must list exactly the publication's files of `table`,
    with the checksums they were recorded with (no file is opened: a missing one is `verify`'s line)."""
    from riskcore.db import VIEW_KEYS, key_label

    wanted = {k: keys[k] for k in VIEW_KEYS.get(table, tuple(keys)) if k in keys}
    root = directory.parent.parent
    want = {(directory / rel).relative_to(root).as_posix(): e.get("xxh3") for rel, e in files.items()
            if rel.split("/")[0] == table}
    listed = con.execute(f"SELECT * FROM {VIEWED_FILES} WHERE table_name = ? AND key = ?",
                         [table, key_label(wanted)]).df()
    have = dict(zip(listed.file, listed.checksum if "checksum" in listed else [None] * len(listed)))
    if set(have) != set(want):
        return [f"{directory / table} ({label}): the database lists {len(have)} file(s), the record "
                f"{len(want)}: `riskcore db --rebuild` registers the files"]
    differ = sorted(f for f, c in have.items() if isinstance(c, str) and c != want[f])
    return [f"{root / f}: the database lists it with another checksum than its record: `riskcore db --rebuild` "
            "registers the files" for f in differ]


def summary(report: Report) -> str:
    lines = [f"riskcore check: {line}" for line in report.recovered]
    lines += report.problems + [f"stale: {line}" for line in report.stale]
    verdict = ("every file is as recorded and the database holds it" if not report.problems else
               f"{len(report.problems)} problem(s)")
    return "\n".join(lines + [f"checked {report.checked} director{'y' if report.checked == 1 else 'ies'}: "
                              f"{verdict}" + (f"; {len(report.stale)} stale derived table(s)" if report.stale
                                              else "")])


__all__ = ["Report", "check", "summary"]
