"""Simulate a run of seeded games and land it as Parquet traces registered in DuckDB.

Game `g` of run seed `S` gets the integer seed drawn from `SeedSequence(S).spawn(n)[g]`, and seat `s` plays
agent `agents[(s + g) mod n_players]` (the agent list cycled to the player count), so every agent sits in every
seat equally often. Games are simulated in fixed chunks (one Parquet file per chunk and table); the chunking does
not depend on the worker count, so the same seed and config give byte-identical files however the work is spread.
"""

from __future__ import annotations

import json
import os
import shutil
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
from riskcore.publish import seal
from riskcore.storage import check_name, remove_leftovers, staging_dir, write_parquet
from riskcore.trace import records_to_tables


MAX_GAMES = 2**31 - 1
# Runs this small play in the Python step loop: loading numba and the compiled kernel (about 0.8 s a process) costs
# more than their games would there, and the traces are the same either way (tests/test_compiled_play.py).
PYTHON_LOOP_GAMES = 20


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
        d["config"] = asdict(self.config)
        return json.dumps(d, sort_keys=True)


def game_seeds(seed: int, n: int) -> list[int]:
    """Independent 63-bit game seeds derived from the run seed."""
    return [int(ss.generate_state(1, np.uint64)[0] >> np.uint64(1)) for ss in np.random.SeedSequence(seed).spawn(n)]


def seat_agents(agents: tuple[str, ...], n_players: int, game_id: int) -> list[str]:
    base = [agents[i % len(agents)] for i in range(n_players)]
    return [base[(s + game_id) % n_players] for s in range(n_players)]


def simulate_chunk(spec: RunSpec, game_ids: list[int], seeds: list[int]) -> dict[str, pa.Table]:
    board = load_board(spec.config.board)
    compiled = spec.games > PYTHON_LOOP_GAMES
    records = [play_game(spec.config, seat_agents(spec.agents, spec.config.n_players, g), s, board,
                         compiled=compiled, as_rows=True) for g, s in zip(game_ids, seeds)]
    return records_to_tables(spec.run, game_ids, records)


def runs_table(spec: RunSpec) -> pa.Table:
    return pa.table({"run": [spec.run], "seed": pa.array([spec.seed], pa.int64()),
                     "engine_version": [ENGINE_VERSION], "config": [spec.to_json()],
                     "games": pa.array([spec.games], pa.int32()), "agents": [",".join(spec.agents)],
                     "mode": [spec.config.mode], "n_players": pa.array([spec.config.n_players], pa.int8())})


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
    interruption at any instant leaves the previous run or the new one, complete.
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
    stages = [staging_dir(f) for f in finals]
    counts = {}
    try:
        tasks, owner = [], []
        for k, spec in enumerate(specs):
            seeds = game_seeds(spec.seed, spec.games)
            for i, lo in enumerate(range(0, spec.games, spec.chunk)):
                ids = list(range(lo, min(lo + spec.chunk, spec.games)))
                tasks.append((spec, ids, [seeds[g] for g in ids]))
                owner.append((k, i))
        for t, tables in run_tasks(simulate_chunk, tasks, workers, dask_address, desc=desc, progress=progress):
            k, i = owner[t]
            for name, table in tables.items():
                write_parquet(table, stages[k] / name / f"part-{i:05d}.parquet")
        for spec, stage, final in zip(specs, stages, finals):
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
        for stage in stages:
            if stage.exists():
                shutil.rmtree(stage, ignore_errors=True)
    return counts
