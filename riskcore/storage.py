"""Atomic file and directory writes: write beside the target, then rename, so nothing is ever half-written."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator

import pyarrow as pa
import pyarrow.parquet as pq

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _normal_mode(path: Path, directory: bool) -> None:
    """Give a file or directory made by `tempfile` (0600 / 0700) the mode any other tool would: 0666 / 0777
    less the umask."""
    os.chmod(path, (0o777 if directory else 0o666) & ~_umask())


def check_name(kind: str, name: str) -> str:
    """Run and sweep names become directory names: letters, digits, `_ . -` only."""
    if not NAME_RE.match(name or ""):
        raise ValueError(f"bad {kind} name {name!r}: use letters, digits, '_', '.', '-' (at most 100)")
    return name


PARQUET_OPTIONS = {"compression": "zstd", "use_dictionary": True, "write_statistics": True}


def write_parquet(table: pa.Table, path: Path, options: dict | None = None) -> None:
    """Deterministic Parquet (same table -> same bytes), written atomically; `options` in place of
    `PARQUET_OPTIONS` (a table written at volume, like the traces, chooses its own)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp, **(options or PARQUET_OPTIONS))


def parquet_bytes(table: pa.Table, options: dict | None = None) -> bytes:
    """The bytes `write_parquet` writes for `table`: a cluster's worker, which may not see the disk, compresses its
    tables itself and sends the file's bytes (`write_bytes` stores them), a small part of the tables' size."""
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, **(options or PARQUET_OPTIONS))
    return sink.getvalue().to_pybytes()


def write_bytes(data: bytes, path: Path) -> None:
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)


def write_parquet_parts(tables: Iterable[pa.Table], path: Path) -> int:
    """Tables of one schema into one Parquet file, a row group each, holding one table in memory at a time
    (deterministic, written atomically); returns the rows written. No tables at all is an error, and nothing is
    written."""
    rows, writer = 0, None
    with atomic_path(path) as tmp:
        try:
            for table in tables:
                if writer is None:
                    writer = pq.ParquetWriter(tmp, table.schema, compression="zstd", use_dictionary=True,
                                              write_statistics=True)
                writer.write_table(table)
                rows += table.num_rows
        finally:
            if writer is not None:
                writer.close()
        if writer is None:
            raise ValueError(f"{path}: no tables to write")
    return rows


@contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """Yield a temporary path in the same directory; on success rename it over `path`, else delete it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(name)
    _normal_mode(tmp, directory=False)
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def write_text(path: Path, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text)


def staging_dir(final: Path) -> Path:
    """A fresh hidden directory beside `final` to write into before it is published; its name carries this process's
    id, so that `remove_leftovers` can tell a live run's staging from a killed one's."""
    final.parent.mkdir(parents=True, exist_ok=True)
    path = Path(tempfile.mkdtemp(prefix=f".tmp-{final.name}-{os.getpid()}-", dir=final.parent))
    _normal_mode(path, directory=True)
    return path


def remove_leftovers(parent: Path) -> list[Path]:
    """Remove the staging and trash directories (and temporary files) that killed processes left in `parent`;
    those of a process still running are kept. Returns what was removed."""
    removed = []
    if not parent.is_dir():
        return removed
    journaled = _journaled(parent)
    for p in parent.iterdir():
        pid = _owner_pid(p.name)
        if pid is None or alive(pid) or any(p == j or p in j.parents for j in journaled):
            continue
        if p.is_dir():
            shutil.rmtree(p, ignore_errors=True)
        else:
            p.unlink(missing_ok=True)
        removed.append(p)
    return removed


def _journaled(parent: Path) -> list[Path]:
    """The paths that journals of interrupted publications (`riskcore.publish`, in `.journal/` of the data directory:
    `parent` or the folder above it) name: what undoing them needs, so never a leftover to remove before that."""
    import json

    named = []
    for folder in (parent / ".journal", parent.parent / ".journal"):
        for journal in folder.glob("*.json") if folder.is_dir() else []:
            try:
                named += [Path(p) for move in json.loads(journal.read_text())["moves"] for p in move]
            except (OSError, ValueError, KeyError, TypeError):
                continue
    return named


def _owner_pid(name: str) -> int | None:
    """The process id in a staging (`.tmp-NAME-PID-xxxx`) or trash (`.trash-NAME-PID`) name, else None."""
    match = re.match(r"^\.(?:tmp|trash)-.+-(\d+)(?:-[^-]*)?$", name)
    return int(match.group(1)) if match else None


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
