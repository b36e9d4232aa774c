"""`riskcore check`: is every file of the data directory the one its publication recorded, does the database hold
what the files hold, and is any derived data older than the games it was derived from?

Every publication (`riskcore.publish`) records its files with their sizes, SHA-256 and rows, and its generation;
derived data records the trace generation it was computed from. A check finishes or undoes interrupted writes
first, then names every missing, damaged or unrecorded file, every run whose database rows differ from its files,
and every stale derived table with the command that rebuilds it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from riskcore import paths
from riskcore.db import PARQUET_DIRS, DataError, committed, connect, query, stale_sources, trace_generations
from riskcore.publish import recover, verify

REBUILD = {"recognition": "riskcore recognize --run {run} --rebuild-features",
           "posteriors": "riskcore recognize --run {run} --recogniser SETTING",
           "metrics": "riskcore evaluate --run {run}"}


@dataclass
class Report:
    recovered: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    checked: int = 0  # directories checked


def check(data_dir: Path | None = None, run: str | None = None, checksums: bool = True) -> Report:
    """Check the data directory (or one run's directories in every tree)."""
    report = Report(recovered=recover(data_dir, committed))
    root = paths.data_dir(data_dir)
    try:  # one read-only connection for the whole check: opening one per query cost most of its time
        con = connect(data_dir, read_only=True)
    except DataError:  # no database: every publication is reported missing from it
        con = None
    try:
        _check_trees(report, root, run, checksums, con, data_dir)
    finally:
        if con is not None:
            con.close()
    if run is not None and not report.checked:
        raise DataError(f"no run {run!r} in {root}")
    if run is None:
        report.stale += _stale_sweep_points(data_dir)
    return report


def _check_trees(report: Report, root: Path, run: str | None, checksums: bool, con, data_dir: Path | None) -> None:
    for tree, key in PARQUET_DIRS.items():
        if not (root / tree).is_dir():
            continue
        for sub in sorted((root / tree).glob(f"{key}=*")):
            if run is not None and (key != "run" or sub.name != f"run={run}"):
                continue
            report.checked += 1
            report.problems += verify(sub, checksums)
            report.problems += _database_matches(sub, tree, con)
            if key == "run" and tree in REBUILD:
                name = sub.name.split("=", 1)[1]
                for row in stale_sources(tree, name, data_dir).to_dict("records"):
                    what = f" ({row['setting']})" if "setting" in row and row.get("setting") else ""
                    report.stale.append(f"{tree} of run {name!r}{what} were derived from an earlier version of its "
                                        f"games: {REBUILD[tree].format(run=name)}")


def _stale_sweep_points(data_dir: Path | None) -> list[str]:
    """Sweep points computed while a run they may have read held other games (rewritten or removed since)."""
    try:
        points = query("SELECT sweep, point, trace_generations FROM sweep_points ORDER BY sweep, point",
                       data_dir=data_dir)
    except Exception:  # noqa: BLE001 - no sweep yet, or one stored before points recorded what they read
        return []
    current = trace_generations(data_dir)
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
    rows for its keys as its files hold."""
    import pyarrow.parquet as pq

    out = []
    for record in sorted(directory.glob(f"generations_{tree}/*.parquet")):
        try:
            rows = pq.read_table(record).to_pylist()
        except Exception:  # a damaged record: `verify` names it
            continue
        for row in rows:
            keys = {k: v for k, v in row.items() if k not in ("generation", "source", "files")}
            where, values = " AND ".join(f"{k} = ?" for k in keys), list(keys.values())
            label = ", ".join(f"{k}={v}" for k, v in keys.items())
            try:
                if con is None:
                    raise DataError("no database")
                held = [r[0] for r in con.execute(f"SELECT generation FROM generations_{tree} WHERE {where}",
                                                  values).fetchall()]
            except Exception as exc:  # no database, or no such table: the database lacks it
                out.append(f"{record}: the database does not hold {label} ({' '.join(str(exc).split())[:100]}); "
                           "`riskcore db --rebuild` registers it")
                continue
            if held != [row["generation"]]:
                out.append(f"{record}: the database holds generation {held or 'none'} of {label}, the files "
                           f"{row['generation']}: `riskcore db --rebuild` registers the files")
                continue
            counts: dict[str, int] = {}
            for rel, entry in json.loads(row["files"]).items():
                counts[rel.split("/")[0]] = counts.get(rel.split("/")[0], 0) + int(entry["rows"])
            for table, n in sorted(counts.items()):
                got = int(con.execute(f"SELECT count(*) FROM {table} WHERE {where}", values).fetchone()[0])
                if got != n:
                    out.append(f"{directory / table} ({label}): {n:,} rows in the files, {got:,} in the database")
    return out


def summary(report: Report) -> str:
    lines = [f"riskcore check: {line}" for line in report.recovered]
    lines += report.problems + [f"stale: {line}" for line in report.stale]
    verdict = ("every file is as recorded and the database holds it" if not report.problems else
               f"{len(report.problems)} problem(s)")
    return "\n".join(lines + [f"checked {report.checked} director{'y' if report.checked == 1 else 'ies'}: "
                              f"{verdict}" + (f"; {len(report.stale)} stale derived table(s)" if report.stale
                                              else "")])


__all__ = ["Report", "check", "summary"]
