"""One protocol for every write of a run, its derived data, a sweep point or a tournament: the new files and their
database rows become the current state together, at one instant (the database's commit), and a crash or signal at
any other instant leaves either the complete old state or the complete new one.

A publication is a set of moves (a staged file or directory -> its final place) and one database transaction
that registers the moved files and records their generation. The steps (`STEPS`), all under the database's write
lock (`hold`: no reader has the database open meanwhile):
1. `journaled`: a journal beside the data directory's trees names every move, its trash name, and the generation
   the transaction will record; interrupted publications that others left are finished or undone first (`recover`);
2. `old-moved`, `new-placed`: each final place that exists is renamed to its trash name, then each staged path is
   renamed to its final place; the new files and their directories are then flushed to disk (fsync);
3. `committed`: the transaction registers the new files and records the generation: the commit point, the only
   moment the publication becomes visible;
4. `trash-removed`, `done`: the trashes are removed, then the journal.
An error or signal puts everything back unless the database holds the new generation: whether it does is asked of
the database, never inferred from where the error struck (a signal may land just after the commit, before this
process hears of it). A process killed outright leaves its journal, and the next publication, reader,
`riskcore check` or `riskcore db --rebuild` rolls it forward if the database holds its generation, back if not
(`recover`), under the write lock. When the database already holds every generation of a publication (the same
files published again), its answer cannot tell, and an interrupted publication is undone: the old files, the same
bytes, come back.

A generation is a content hash of the published files, so the same games give the same generation. Every tree
records its publications' generations in a table `generations_<tree>` (keys, `generation`, the trace generation
they were derived from, `source`, and `sources`: the generations of everything they were computed from, JSON),
written as a Parquet file with the rest and registered with it, so `riskcore db --rebuild` restores it too. Each
file is recorded with its size, SHA-256, rows and a fast checksum (`xxh3`, 64-bit xxHash3): readers compare a file's
size and fast checksum before they read it (`riskcore.db.verify_parts`), `riskcore check` its SHA-256.

`RISKCORE_FAULT_AT=STEP[:SIGNAL]` sends this process SIGNAL (default KILL) when a publication reaches STEP (or
`db-committed`: just after the database's COMMIT returned, before the publication hears of it): the
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
JOURNALS = ".journal"  # the folder of the data directory that holds the journals of publications in progress


def fault(step: str) -> None:
    """The fault-injection hook: signal this process at `step` when `RISKCORE_FAULT_AT` names it."""
    spec = os.environ.get(FAULT_ENV, "")
    if not spec or spec.split(":")[0] != step:
        return
    name = spec.split(":")[1] if ":" in spec else "KILL"
    os.kill(os.getpid(), getattr(signal, f"SIG{name}"))
    time.sleep(10)  # a caught signal raises in here; an uncaught one ends the process


def file_sha256(path: Path) -> str:
    return file_digests(path)[0]


def file_digests(path: Path) -> tuple[str, str]:
    """(SHA-256, fast checksum) of a file, read once."""
    import xxhash

    sha, fast = hashlib.sha256(), xxhash.xxh3_64()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            sha.update(block)
            fast.update(block)
    return sha.hexdigest(), fast.hexdigest()


def fast_checksum(path: Path) -> str:
    """A file's fast checksum (64-bit xxHash3, hex): what a reader compares before it reads a recorded file, at
    several GB/s where SHA-256 takes about half a GB/s."""
    import xxhash

    h = xxhash.xxh3_64()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def bytes_checksum(data: bytes) -> str:
    """`fast_checksum` of bytes held in memory."""
    import xxhash

    return xxhash.xxh3_64(data).hexdigest()


def content_hash(digests: dict[str, str]) -> str:
    """The generation: a hash of the files' paths and contents."""
    h = hashlib.sha256()
    for rel in sorted(digests):
        h.update(rel.encode())
        h.update(digests[rel].encode())
    return h.hexdigest()[:20]


def seal(stage: Path, tree: str, keys: dict, source: str | None = None, part: str = "part-00000",
         sources: dict | None = None) -> str:
    """Hash the staged files into their generation and write its `generations_<tree>` row beside them: the keys,
    the generation, the `source` trace generation, `sources` (the generations of everything the files were
    computed from, JSON) and `files`, every staged file with its size, SHA-256, fast checksum and rows (the manifest
    `riskcore check` and readers verify). Returns the generation."""
    import pyarrow.parquet as pq

    table = f"generations_{tree}"
    files = {str(f.relative_to(stage)): f for f in sorted(stage.rglob("*.parquet"))
             if table not in f.relative_to(stage).parts}
    entries = {}
    for rel, f in files.items():
        sha, fast = file_digests(f)
        entries[rel] = {"bytes": f.stat().st_size, "sha256": sha, "xxh3": fast,
                        "rows": pq.ParquetFile(f).metadata.num_rows}
    generation = content_hash({rel: e["sha256"] for rel, e in entries.items()})
    if source is None and sources:
        source = sources.get("traces")
    row = pa.table({**{k: [str(v)] for k, v in keys.items()}, "generation": [generation],
                    "source": pa.array([source], pa.string()),
                    "sources": pa.array([json.dumps(sources, sort_keys=True) if sources else None], pa.string()),
                    "files": [json.dumps(entries, sort_keys=True)]})
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


CHECKSUMS = ("sha256", "fast", "size")  # how `verify` compares a file with its record


def verify(directory: Path, checksums: bool | str = True) -> list[str]:
    """Every problem of a tree's key directory against what its publications recorded, each naming the file:
    missing, another size or checksum, not recorded, no record at all. `checksums`: `sha256` (or True), `fast`
    (the fast checksum where the record has one, a reader's check) or `size` (or False)."""
    how = "sha256" if checksums is True else "size" if checksums is False else checksums
    if how not in CHECKSUMS:
        raise ValueError(f"unknown checksum {checksums!r}; known: {CHECKSUMS}")
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
        elif how == "fast" and "xxh3" in want:
            if fast_checksum(f) != want["xxh3"]:
                problems.append(f"{f}: damaged (its checksum differs from its record)")
        elif how != "size" and file_sha256(f) != want["sha256"]:
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


def journal_dir(data_dir: Path | None) -> Path:
    return paths.data_dir(data_dir) / JOURNALS


def pending_journals(data_dir: Path | None) -> list[Path]:
    """The journals of publications that were neither finished nor undone (a directory listing: cheap enough for
    every opening of the database)."""
    try:
        with os.scandir(journal_dir(data_dir)) as entries:
            return sorted(Path(e.path) for e in entries if e.name.endswith(".json"))
    except (FileNotFoundError, NotADirectoryError):
        return []


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


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def flush(moves: list["Move"]) -> None:
    """Every placed file and directory on disk, and the directories that hold them and the trashes (renames are
    writes of the directory): what the commit makes visible must survive a power cut that follows it."""
    folders = set()
    for m in moves:
        if m.final.is_dir():
            for root, dirs, names in os.walk(m.final):
                for name in names:
                    _fsync_file(Path(root) / name)
                folders.add(Path(root))
        elif m.final.exists():
            _fsync_file(m.final)
        folders.add(m.final.parent)
    for folder in sorted(folders, key=lambda p: len(p.parts), reverse=True):
        _fsync_dir(folder)


class Interrupted(KeyboardInterrupt):
    """A signal ended a command after its publication was complete: the new state is in place."""


class Undecided(RuntimeError):
    """A publication failed and the database could not say whether it had committed: its journal is kept for the
    next reader, write or `riskcore check` to decide."""


Committed = Callable[[str, dict, str], bool]  # (table, keys, generation) -> does the database hold it?


def publish(moves: list[Move], commit: Callable[[], object], journal_name: str,
            check: tuple[str, dict, str] | list[tuple[str, dict, str]], data_dir: Path | None = None,
            keep_staged: bool = False, committed: Committed | None = None,
            hold: Callable[[], ContextManager] = nullcontext):
    """Carry out one publication (see the module's docstring). `commit()` runs the database transaction that
    registers the moved files and records `check` = (table, keys, generation), or a list of them (a publication of
    several runs); it returns what the caller wants back. `committed(table, keys, generation)` asks the database
    held by `hold()` whether it holds a generation: it decides what an error or signal leaves (the new state if so,
    else the old one) and what the journals of killed processes become (`recover`, run first). `hold()` is entered
    before anything moves and left at the end (the database's write connection: no reader sees files the database
    does not yet name). On an error the staged paths are removed unless `keep_staged` (the caller keeps them, e.g.
    for a database that was locked)."""
    stack = ExitStack()
    try:
        stack.enter_context(hold())
    except BaseException:  # e.g. the database stayed locked: nothing has moved yet
        _drop_staged(moves, keep_staged)
        raise
    try:
        if committed is not None:
            recover(data_dir, committed)
        result = _carry_out(moves, commit, journal_name, check, data_dir, keep_staged, committed)
    except BaseException:
        try:
            stack.close()
        except KeyboardInterrupt:  # a second signal: the first exception says what state it left
            pass
        raise
    try:
        stack.close()
    except KeyboardInterrupt as exc:  # while the database closed (its checkpoint syncs the file): all was done
        raise Interrupted(f"{exc or 'stopped'} after its write had completed; the new state is in place") from None
    return result


def _carry_out(moves: list[Move], commit: Callable[[], object], journal_name: str,
               check: tuple[str, dict, str] | list[tuple[str, dict, str]], data_dir: Path | None, keep_staged: bool,
               committed: Committed | None):
    folder = journal_dir(data_dir)
    folder.mkdir(parents=True, exist_ok=True)
    journal = folder / f"{journal_name}-{os.getpid()}.json"
    checks = [check] if isinstance(check, tuple) else list(check)
    moved_old, placed, attempted, done_commit, decisive = [], [], False, False, checks[0]
    try:
        decisive = _decisive(committed, checks)
        _write_journal(journal, moves, decisive or checks[0], again=decisive is None)
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
        flush(moves)
        fault("new-placed")
        attempted = True
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
        asked = attempted and not done_commit
        if asked:  # the signal may have come after the commit (or turned into the commit's error): the database says
            # the same files published again (every generation already held): the old ones, byte for byte the same,
            # come back, whichever way the commit went
            done_commit = False if decisive is None else _ask(committed, decisive)
            if done_commit is None:
                raise Undecided(f"{_one_line(exc) or type(exc).__name__}; the database cannot say whether the write "
                                f"of generation {decisive[2]} was committed: its journal {journal} is kept, and "
                                "`riskcore check` finishes or undoes it") from None
        if done_commit:  # the new state is complete: finish the clean-up and say so
            for m in moved_old:
                _remove(m.trash)
            journal.unlink(missing_ok=True)
            if asked or (isinstance(exc, KeyboardInterrupt) and not isinstance(exc, Interrupted)):
                what = str(exc) if isinstance(exc, KeyboardInterrupt) else f"stopped ({_one_line(exc)[:200]})"
                raise Interrupted(f"{what or 'stopped'} after its write had completed; the new state is in place") \
                    from None
            raise
        for m in reversed(placed):
            if m.final.exists():
                os.replace(m.final, m.staged)
        for m in reversed(moved_old):
            if m.trash.exists():
                os.replace(m.trash, m.final)
        journal.unlink(missing_ok=True)  # before the staged paths go: a staged path gone means it was placed
        _drop_staged(moves, keep_staged)
        raise


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


def _decisive(committed: Committed | None, checks: list[tuple[str, dict, str]]) -> tuple[str, dict, str] | None:
    """The check whose answer after the commit says whether it happened: one whose generation the database does not
    hold yet (asked under the write lock, so it cannot change but by this commit). None when it holds every one:
    the same files are published again, and a generation held after the commit says nothing."""
    if committed is None:
        return checks[0]
    return next((c for c in checks if not committed(*c)), None)


def _ask(committed: Committed | None, check: tuple[str, dict, str]) -> bool | None:
    """Whether the database holds the publication's generation; None when it cannot say."""
    if committed is None:
        return None
    try:
        return bool(committed(*check))
    except BaseException:  # noqa: BLE001 - a database that cannot answer (or a second signal): undecided
        return None


def _drop_staged(moves: list[Move], keep_staged: bool) -> None:
    """An abandoned publication's staged paths go, unless the caller keeps them."""
    if not keep_staged:
        for m in moves:
            _remove(m.staged)


def _write_journal(journal: Path, moves: list[Move], check: tuple[str, dict, str], again: bool = False) -> None:
    """`again`: the database already holds the generation (the same files published again), so recovery undoes."""
    text = json.dumps({"pid": os.getpid(), "table": check[0], "keys": check[1], "generation": check[2], "again": again,
                       "moves": [[str(m.staged), str(m.final), str(m.trash)] for m in moves]})
    tmp = journal.with_suffix(".tmp")
    with open(tmp, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, journal)
    _fsync_dir(journal.parent)


def recover(data_dir: Path | None = None, committed: Committed | None = None, trust_files: bool = False
            ) -> list[str]:
    """Finish or undo the publications of processes that were killed: forward when the database holds the
    journal's generation (`committed(table, keys, generation)`: the trashes go), back when it does not (the new
    files return to their staging place and are removed, the trashes to their final place). The caller holds the
    database's write lock, so no journal found belongs to a publication in progress. `trust_files` (the database
    was lost, so it cannot say): forward when every new file was placed. A journal the database cannot answer for
    is kept. Returns what was done, one line a journal."""
    done = []
    for journal in pending_journals(data_dir):
        try:
            entry = json.loads(journal.read_text())
        except (OSError, ValueError):  # written to a temporary name and renamed: a partial one is not a journal
            journal.unlink(missing_ok=True)
            continue
        moves = [(Path(s), Path(f), Path(t)) for s, f, t in entry["moves"]]
        placed = all(not staged.exists() and final.exists() for staged, final, _ in moves)
        try:
            if trust_files or committed is None:
                forward = placed
            else:  # the same files published again: the old ones, the same bytes, come back whether it committed or not
                forward = not entry.get("again") and committed(entry["table"], entry["keys"], entry["generation"])
        except Exception as exc:  # noqa: BLE001 - the database cannot say: the journal waits for one that can
            done.append(f"kept the journal {journal}: the database cannot say whether generation "
                        f"{entry['generation']} was committed ({' '.join(str(exc).split())[:200]}); "
                        "`riskcore db --rebuild` decides by the files")
            continue
        if forward:
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
        _fsync_dir(journal.parent)
        journal.unlink(missing_ok=True)
    return done
