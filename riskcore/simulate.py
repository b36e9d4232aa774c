"""Simulate a run of seeded games and land it as Parquet traces registered in DuckDB.

Game `g` of run seed `S` gets the integer seed drawn from `SeedSequence(S).spawn(n)[g]` (computed on its own as
`SeedSequence(S, spawn_key=(g,))`, the same sequence), and seat `s` plays agent `agents[(s + g) mod n_players]`
(the agent list cycled to the player count), so every agent sits in every seat equally often. Games are simulated
in fixed chunks (one Parquet file per chunk and table); the chunking does not depend on the worker count, so the
same seed and config give byte-identical files however the work is spread.

A run resumes: each finished chunk is kept in a hidden directory beside the run's place (`.partial-run=NAME`, with
the run's spec), so the same command after a kill plays only the chunks that were missing. A chunk is marked
played with the size and fast checksum of each of its files, and a resumed run compares them before it keeps the
chunk: a damaged or missing file is played again, never sealed into the run. A different spec or engine version
starts afresh.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from riskcore import ENGINE_VERSION, paths
from riskcore.agents import validate_spec
from riskcore.engine.board import load_board
from riskcore.engine.config import GameConfig
from riskcore.db import DatabaseLocked, publish_dir
from riskcore.game import play_game
from riskcore.parallel import run_tasks
from riskcore.publish import bytes_checksum, fast_checksum, seal
from riskcore.storage import alive, check_name, parquet_bytes, remove_leftovers, write_bytes, write_parquet, write_text
from riskcore.trace import parquet_options, records_to_tables


MAX_GAMES = 2**31 - 1
# Runs this small play in the Python step loop: loading numba and the compiled kernel (about 0.8 s a process) costs
# more than their games would there, and the traces are the same either way (tests/test_compiled_play.py).
PYTHON_LOOP_GAMES = 20


def default_chunk(games: int) -> int:
    """Games per Parquet part when the user names none: 25 for a run of up to 2,500 games (enough tasks for every
    core), then a hundredth of the run up to 1,000, so that a large run keeps few files (each file costs its writer
    and the catalogue a fixed price) and still has a hundred tasks to spread."""
    return min(1000, max(25, games // 100))


@dataclass(frozen=True)
class RunSpec:
    run: str
    games: int
    config: GameConfig
    agents: tuple[str, ...]
    seed: int
    chunk: int = 25

    def __post_init__(self) -> None:
        check_name("run", self.run)
        if not 1 <= self.games <= MAX_GAMES:
            raise ValueError(f"--games must be 1 to {MAX_GAMES:,} (a game's id is a 32-bit number), got {self.games}")
        if self.chunk < 1:
            raise ValueError(f"chunk must be at least 1, got {self.chunk}")
        if not self.agents:
            raise ValueError("at least one agent is needed")
        if len(self.agents) > self.config.n_players:
            raise ValueError(f"{len(self.agents)} agents given for {self.config.n_players} players")
        for spec in self.agents:
            validate_spec(spec)
        if not 0 <= self.seed < 2**63:
            raise ValueError(f"seed must be in 0..2**63-1, got {self.seed}")
        board = load_board(self.config.board)
        if self.config.n_players > board.n_territories:
            raise ValueError(f"board {board.name!r} has {board.n_territories} territories for "
                             f"{self.config.n_players} players: every player needs one")

    def to_json(self) -> str:
        d = asdict(self)
        d["config"] = self.config.to_dict()
        return json.dumps(d, sort_keys=True)


def game_seed(seed: int, game_id: int) -> int:
    """Game `game_id`'s independent 63-bit seed derived from the run seed (`SeedSequence(seed).spawn(n)[game_id]`
    for any n above the id, without making the n sequences)."""
    child = np.random.SeedSequence(seed, spawn_key=(game_id,))
    return int(child.generate_state(1, np.uint64)[0] >> np.uint64(1))


def game_seeds(seed: int, n: int) -> list[int]:
    """The seeds of games 0..n-1."""
    return [game_seed(seed, g) for g in range(n)]


def seat_agents(agents: tuple[str, ...], n_players: int, game_id: int) -> list[str]:
    base = [agents[i % len(agents)] for i in range(n_players)]
    return [base[(s + game_id) % n_players] for s in range(n_players)]


def simulate_chunk(spec: RunSpec, game_ids: list[int], seeds: list[int]) -> dict[str, pa.Table]:
    board = load_board(spec.config.board)
    compiled = spec.games > PYTHON_LOOP_GAMES
    records = [play_game(spec.config, seat_agents(spec.agents, spec.config.n_players, g), s, board,
                         compiled=compiled, as_rows=True) for g, s in zip(game_ids, seeds)]
    return records_to_tables(spec.run, game_ids, records)


def play_chunk(spec: RunSpec, lo: int, hi: int) -> dict[str, pa.Table]:
    """Games lo..hi-1 of the run (a task: its seeds are derived where it runs)."""
    ids = list(range(lo, hi))
    return simulate_chunk(spec, ids, [game_seed(spec.seed, g) for g in ids])


def play_chunk_files(spec: RunSpec, lo: int, hi: int) -> dict[str, bytes]:
    """`simulate`'s task: games lo..hi-1 as the bytes of their tables' Parquet files, compressed where the games
    are played. The bytes are a tenth of the tables' for the pool's pipes or the cluster's network to carry, and
    the process that keeps them only writes them."""
    return {name: parquet_bytes(table, parquet_options(table)) for name, table in play_chunk(spec, lo, hi).items()}


def runs_table(spec: RunSpec) -> pa.Table:
    return pa.table({"run": [spec.run], "seed": pa.array([spec.seed], pa.int64()),
                     "engine_version": [ENGINE_VERSION], "config": [spec.to_json()],
                     "games": pa.array([spec.games], pa.int32()), "agents": [",".join(spec.agents)],
                     "mode": [spec.config.mode], "n_players": pa.array([spec.config.n_players], pa.int8())})


def partial_dir(final: Path) -> Path:
    """Where a run's finished chunks wait until the whole run is played: beside its final place, hidden."""
    return final.with_name(f".partial-{final.name}")


def _resume(partial: Path, spec: RunSpec) -> set[int]:
    """The chunks of `spec` already played into `partial` whose files are as they were written (`_intact`); a
    partial run of another spec is removed. Refuses a partial run that a live process is still playing."""
    recorded = {"spec": json.loads(spec.to_json()), "engine_version": ENGINE_VERSION}
    owner, spec_file = partial / "owner", partial / "spec.json"
    if owner.exists():
        pid = int(owner.read_text() or 0)
        if pid != os.getpid() and alive(pid):
            raise RuntimeError(f"run {spec.run!r} is being simulated by process {pid} ({partial})")
    if partial.exists() and not (spec_file.exists() and json.loads(spec_file.read_text()) == recorded):
        shutil.rmtree(partial)  # another run's games, or a run stopped while it was being published
    partial.mkdir(parents=True, exist_ok=True)
    write_text(spec_file, json.dumps(recorded, sort_keys=True))
    write_text(owner, str(os.getpid()))
    done = partial / "done"
    kept = set()
    for marker in sorted(done.iterdir(), key=lambda f: int(f.name)) if done.is_dir() else []:
        problem = _intact(partial, marker)
        if problem is None:
            kept.add(int(marker.name))
            continue
        marker.unlink()  # first: a chunk no longer marked is played again whatever else is left of it
        print(f"simulate {spec.run}: chunk {marker.name} is played again: {problem}", file=sys.stderr)
    return kept


def _intact(partial: Path, marker: Path) -> str | None:
    """What is wrong with a played chunk's files against its marker (each file's size and fast checksum), or None.
    A marker without them (written before markers held them) cannot vouch for its chunk."""
    try:
        files = json.loads(marker.read_text() or "null")
    except (OSError, ValueError):
        files = None
    if not isinstance(files, dict) or not files:
        return "its marker records no checksums"
    for rel, want in sorted(files.items()):
        f = partial / rel
        if not f.is_file():
            return f"{f} is missing"
        if f.stat().st_size != want["bytes"] or fast_checksum(f) != want["xxh3"]:
            return f"{f} differs from what was written (damaged)"
    return None


def _part_name(spec: RunSpec, chunk: int) -> str:
    width = max(5, len(str((spec.games - 1) // spec.chunk)))  # file names sort in game order
    return f"part-{chunk:0{width}d}.parquet"


def _keep_chunk(partial: Path, spec: RunSpec, chunk: int, files: dict[str, bytes]) -> None:
    record = {}
    for name, data in files.items():
        rel = f"{name}/{_part_name(spec, chunk)}"
        write_bytes(data, partial / rel)
        record[rel] = {"bytes": len(data), "xxh3": bytes_checksum(data)}
    # last: a chunk marked done has all its tables, and says what they hold
    write_text(partial / "done" / str(chunk), json.dumps(record, sort_keys=True))


def pending_dir(final: Path) -> Path:
    """Where a played run waits when the database could not take it: beside its final place, hidden."""
    return final.with_name(f".pending-{final.name}")


def register_pending(run: str, data_dir: Path | None = None) -> dict[str, int]:
    """Register a run kept by `simulate` when the database was locked, and put it in place."""
    final = paths.traces_dir(data_dir) / f"run={check_name('run', run)}"
    pending = pending_dir(final)
    if not pending.is_dir():
        raise FileNotFoundError(f"no pending run {run!r} (looked for {pending})")
    return _publish(run, pending, final, data_dir)


def _publish(run: str, stage: Path, final: Path, data_dir: Path | None, keep_staged: bool = False
             ) -> dict[str, int]:
    from riskcore.publish import recorded_generation

    return publish_dir(stage, final, run, "traces", recorded_generation(stage, "traces"), data_dir, keep_staged)


def simulate(spec: RunSpec, data_dir: Path | None = None, workers: int | None = None,
             dask_address: str | None = None, progress: bool = True) -> dict[str, int]:
    """Run the games, write `traces/run=NAME/<table>/part-*.parquet`, register in DuckDB; return row counts.

    All files are staged in a hidden directory, then published with their rows (`riskcore.publish`): an
    interruption at any instant leaves the previous run or the new one, complete, and the same call again plays
    only the chunks the interrupted one had not finished.
    """
    return simulate_many([spec], data_dir, workers, dask_address, progress, desc=f"simulate {spec.run}")[spec.run]


def simulate_many(specs: list[RunSpec], data_dir: Path | None = None, workers: int | None = None,
                  dask_address: str | None = None, progress: bool = True, desc: str = "simulate"
                  ) -> dict[str, dict[str, int]]:
    """Several runs with their games in one pool (tournaments); each run lands as `simulate` lands one."""
    names = [s.run for s in specs]
    if len(set(names)) != len(names):
        raise ValueError(f"run names repeat: {names}")
    data_dir = paths.data_dir(data_dir)
    remove_leftovers(paths.traces_dir(data_dir))  # staging a killed run left behind
    finals = [paths.traces_dir(data_dir) / f"run={s.run}" for s in specs]
    partials = [partial_dir(f) for f in finals]
    counts = {}
    tasks, owner, played = [], [], 0
    for k, (spec, partial) in enumerate(zip(specs, partials)):
        done = _resume(partial, spec)
        played += len(done)
        for i, lo in enumerate(range(0, spec.games, spec.chunk)):
            if i not in done:
                tasks.append((spec, lo, min(lo + spec.chunk, spec.games)))
                owner.append((k, i))
    if played and progress:
        print(f"{desc}: {played} chunk(s) already played, {len(tasks)} to play", file=sys.stderr)
    for t, files in run_tasks(play_chunk_files, tasks, workers, dask_address, desc=desc, progress=progress):
        k, i = owner[t]
        _keep_chunk(partials[k], specs[k], i, files)
    for spec, stage, final in zip(specs, partials, finals):
        for name in ("spec.json", "owner"):  # the spec first: a run stopped from here on is not resumed
            (stage / name).unlink()
        shutil.rmtree(stage / "done", ignore_errors=True)
        for unfinished in stage.rglob("*.tmp"):  # a file a killed run was writing
            unfinished.unlink()
        write_parquet(runs_table(spec), stage / "runs" / "part-00000.parquet")
        seal(stage, "traces", {"run": spec.run})
        try:
            counts[spec.run] = _publish(spec.run, stage, final, data_dir, keep_staged=True)
        except DatabaseLocked as exc:  # the games are played: keep them for `riskcore db --register`
            kept = pending_dir(final)
            if kept.exists():
                shutil.rmtree(kept)
            os.replace(stage, kept)
            raise DatabaseLocked(f"{exc}; the games of run {spec.run!r} are kept in {kept}: register them with "
                                 f"`riskcore db --register {spec.run}`") from None
        finally:
            shutil.rmtree(stage, ignore_errors=True)  # published (moved away) or kept as pending
    return counts
