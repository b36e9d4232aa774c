"""One protocol for every write of a run, its derived data, a sweep point or a tournament: the new files and their
database rows become the current state together, and a crash or signal at any instant leaves either the complete
old state or the complete new one.

A publication is a set of moves (a staged file or directory -> its final place) and one database transaction
that registers the moved files and records their generation. The steps (`STEPS`):
1. `journaled`: a journal beside the data directory's trees names every move, its trash name, and the generation
   the transaction will record;
2. `old-moved`, `new-placed`: each final place that exists is renamed to its trash name, then each staged path is
   renamed to its final place;
3. `committed`: the transaction registers the new files and records the generation (the commit point);
4. `trash-removed`, `done`: the trashes are removed, then the journal.
An error or signal before the commit puts everything back (the new files return to their staging place, the
trashes to their final place); after it, the clean-up finishes. A process killed outright leaves its journal, and
the next publication, `riskcore check` or `riskcore db --rebuild` rolls it forward if the database holds its
generation, back if not (`recover`).

A generation is a content hash of the published files, so the same games give the same generation. Every tree
records its publications' generations in a table `generations_<tree>` (keys, `generation`, and the trace
generation they were derived from, `source`), written as a Parquet file with the rest and registered with it, so
`riskcore db --rebuild` restores it too.

`RISKCORE_FAULT_AT=STEP[:SIGNAL]` sends this process SIGNAL (default KILL) when a publication reaches STEP: the
fault-injection hook the tests drive.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import time
from contextlib import ExitStack, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, ContextManager

import pyarrow as pa

from riskcore import paths
from riskcore.storage import write_parquet

STEPS = ("journaled", "old-moved", "new-placed", "committed", "trash-removed", "done")
FAULT_ENV = "RISKCORE_FAULT_AT"


def fault(step: str) -> None:
    """The fault-injection hook: signal this process at `step` when `RISKCORE_FAULT_AT` names it."""
    spec = os.environ.get(FAULT_ENV, "")
    if not spec or spec.split(":")[0] != step:
        return
    name = spec.split(":")[1] if ":" in spec else "KILL"
    os.kill(os.getpid(), getattr(signal, f"SIG{name}"))
    time.sleep(10)  # a caught signal raises in here; an uncaught one ends the process


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def content_hash(digests: dict[str, str]) -> str:
    """The generation: a hash of the files' paths and contents."""
    h = hashlib.sha256()
    for rel in sorted(digests):
        h.update(rel.encode())
        h.update(digests[rel].encode())
    return h.hexdigest()[:20]


def seal(stage: Path, tree: str, keys: dict, source: str | None = None, part: str = "part-00000") -> str:
    """Hash the staged files into their generation and write its `generations_<tree>` row beside them: the keys,
    the generation, the `source` generation and `files`, every staged file with its size, SHA-256 and rows (the
    manifest `riskcore check` verifies). Returns the generation."""
    import pyarrow.parquet as pq

    table = f"generations_{tree}"
    files = {str(f.relative_to(stage)): f for f in sorted(stage.rglob("*.parquet"))
             if table not in f.relative_to(stage).parts}
    entries = {rel: {"bytes": f.stat().st_size, "sha256": file_sha256(f), "rows": pq.ParquetFile(f).metadata.num_rows}
               for rel, f in files.items()}
    generation = content_hash({rel: e["sha256"] for rel, e in entries.items()})
    row = pa.table({**{k: [str(v)] for k, v in keys.items()}, "generation": [generation],
                    "source": pa.array([source], pa.string()), "files": [json.dumps(entries, sort_keys=True)]})
    write_parquet(row, stage / table / f"{part}.parquet")
    return generation


def recorded_generation(directory: Path, tree: str) -> str:
    """The generation a sealed directory's record holds."""
    import pyarrow.parquet as pq

    files = sorted((directory / f"generations_{tree}").glob("*.parquet"))
    if not files:
        raise FileNotFoundError(f"{directory}: no record of its generation (generations_{tree})")
    return pq.ParquetFile(files[0]).read().column("generation")[0].as_py()


def recorded_files(directory: Path) -> tuple[dict[str, dict], list[str]]:
    """The files the publications under a tree's key directory (`traces/run=NAME`, ...) recorded, relative to
    it, and the problems of reading those records."""
    import pyarrow.parquet as pq

    files, problems = {}, []
    for f in sorted(directory.glob("generations_*/*.parquet")):
        try:
            for entry in pq.ParquetFile(f).read().column("files").to_pylist():
                files.update(json.loads(entry))
        except Exception as exc:  # a damaged record: name it
            problems.append(f"{f}: unreadable ({' '.join(str(exc).split())[:200]})")
    return files, problems


def verify(directory: Path, checksums: bool = True) -> list[str]:
    """Every problem of a tree's key directory against what its publications recorded, each naming the file:
    missing, another size or checksum, not recorded, no record at all."""
    files, problems = recorded_files(directory)
    if not files and not problems:
        return [f"{directory}: no record of its files (written before records were kept?)"]
    present = {str(p.relative_to(directory)) for p in directory.rglob("*.parquet")
               if not p.relative_to(directory).parts[0].startswith("generations_")}
    for rel, want in sorted(files.items()):
        f = directory / rel
        if rel not in present:
            problems.append(f"{f}: missing")
        elif f.stat().st_size != want["bytes"]:
            problems.append(f"{f}: {f.stat().st_size} bytes, its record says {want['bytes']}")
        elif checksums and file_sha256(f) != want["sha256"]:
            problems.append(f"{f}: damaged (its checksum differs from its record)")
    problems += [f"{directory / rel}: not recorded by any publication" for rel in sorted(present - set(files))]
    return problems


@dataclass
class Move:
    staged: Path
    final: Path

    @property
    def trash(self) -> Path:
        return self.final.with_name(f".trash-{self.final.name}-{os.getpid()}")


def _journal_dir(data_dir: Path | None) -> Path:
    path = paths.data_dir(data_dir) / ".journal"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class Interrupted(KeyboardInterrupt):
    """A signal ended a command after its publication was complete: the new state is in place."""


def publish(moves: list[Move], commit: Callable[[], object], journal_name: str, check: tuple[str, dict, str],
            data_dir: Path | None = None, keep_staged: bool = False, committed: Callable | None = None,
            hold: Callable[[], ContextManager] = nullcontext):
    """Carry out one publication (see the module's docstring). `commit()` runs the database transaction that
    registers the moved files and records `check` = (table, keys, generation); it returns what the caller wants
    back. On an error before the commit every move is undone; the staged paths are removed unless `keep_staged`
    (the caller keeps them, e.g. for a database that was locked). `committed(table, keys, generation)` answers for
    the journals of killed processes that `recover` finds first. `hold()` is entered before the first move and left
    at the end (the database's write connection: no reader sees files the database does not yet name)."""
    if committed is not None:
        recover(data_dir, committed)
    with ExitStack() as stack:
        try:
            stack.enter_context(hold())
        except BaseException:  # e.g. the database stayed locked: nothing has moved yet
            _drop_staged(moves, keep_staged)
            raise
        return _carry_out(moves, commit, journal_name, check, data_dir, keep_staged)


def _carry_out(moves: list[Move], commit: Callable[[], object], journal_name: str, check: tuple[str, dict, str],
               data_dir: Path | None, keep_staged: bool):
    journal = _journal_dir(data_dir) / f"{journal_name}-{os.getpid()}.json"
    moved_old, placed, done_commit = [], [], False
    try:
        _write_journal(journal, moves, check)
        fault("journaled")
        for m in moves:
            if m.final.exists():
                os.replace(m.final, m.trash)
                moved_old.append(m)
        fault("old-moved")
        for m in moves:
            m.final.parent.mkdir(parents=True, exist_ok=True)
            os.replace(m.staged, m.final)
            placed.append(m)
        fault("new-placed")
        result = commit()
        done_commit = True
        fault("committed")
        for m in moved_old:
            _remove(m.trash)
        fault("trash-removed")
        journal.unlink()
        fault("done")
        return result
    except BaseException as exc:
        if done_commit:  # the new state is complete: finish the clean-up and say so
            for m in moved_old:
                _remove(m.trash)
            journal.unlink(missing_ok=True)
            if isinstance(exc, KeyboardInterrupt) and not isinstance(exc, Interrupted):
                raise Interrupted(f"{exc or 'stopped'} after its write had completed; the new state is in place") \
                    from None
            raise
        for m in reversed(placed):
            if m.final.exists():
                os.replace(m.final, m.staged)
        for m in reversed(moved_old):
            if m.trash.exists():
                os.replace(m.trash, m.final)
        _drop_staged(moves, keep_staged)
        journal.unlink(missing_ok=True)
        raise


def _drop_staged(moves: list[Move], keep_staged: bool) -> None:
    """An abandoned publication's staged paths go, unless the caller keeps them."""
    if not keep_staged:
        for m in moves:
            _remove(m.staged)


def _write_journal(journal: Path, moves: list[Move], check: tuple[str, dict, str]) -> None:
    text = json.dumps({"pid": os.getpid(), "table": check[0], "keys": check[1], "generation": check[2],
                       "moves": [[str(m.staged), str(m.final), str(m.trash)] for m in moves]})
    tmp = journal.with_suffix(".tmp")
    with open(tmp, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, journal)
    _fsync_dir(journal.parent)


def recover(data_dir: Path | None = None, committed: Callable | None = None, trust_files: bool = False) -> list[str]:
    """Finish or undo the publications of processes that were killed: forward when the database holds the
    journal's generation (`committed(table, keys, generation)`: the trashes go), back when it does not (the new
    files return to their staging place and are removed, the trashes to their final place). `trust_files` (the
    database was lost, so it cannot say): forward when every new file was placed. Returns what was done, one line
    a journal."""
    from riskcore.storage import alive

    root = paths.data_dir(data_dir) / ".journal"
    done = []
    if not root.is_dir():
        return done
    for journal in sorted(root.glob("*.json")):
        try:
            entry = json.loads(journal.read_text())
        except (OSError, ValueError):
            journal.unlink(missing_ok=True)
            continue
        if alive(int(entry.get("pid", -1))) and int(entry["pid"]) != os.getpid():
            continue
        moves = [(Path(s), Path(f), Path(t)) for s, f, t in entry["moves"]]
        placed = all(not staged.exists() and final.exists() for staged, final, _ in moves)
        if (placed if trust_files or committed is None else
                committed(entry["table"], entry["keys"], entry["generation"], data_dir)):
            for _, _, trash in moves:
                _remove(trash)
            done.append(f"completed the interrupted write of generation {entry['generation']}")
        else:
            for staged, final, trash in moves:
                if not staged.exists():  # it was placed: the final place holds the new files
                    _remove(final)
                _remove(staged)
                if trash.exists():
                    os.replace(trash, final)
            done.append(f"undid the interrupted write of generation {entry['generation']}")
        journal.unlink(missing_ok=True)
    return done
