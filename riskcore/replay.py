"""Rebuild games from their traces alone, with no RNG: the recorded outcomes stand in for chance.

Each recorded action is turned back into a typed action and applied by the engine; the automatic events the engine
emits (card draws, eliminations, the win) must equal the recorded ones, and so must every field of every event, so
a corrupt or tampered trace fails with the game and event named.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Iterator

import numpy as np
import pandas as pd

from riskcore.engine.actions import (Action, Attack, Claim, EndAttack, EndTurn, Fortify, IllegalAction, Occupy, Place,
                              Retreat, Trade)
from riskcore.engine.board import load_board
from riskcore.engine.chance import TraceChance, TraceError
from riskcore.engine.config import GameConfig
from riskcore import paths
from riskcore.db import DataError, query, reading, run_config, run_source, settle, sql_list
from riskcore.engine import EVENT_FIELDS, GameState, new_game, step
from riskcore.publish import verify

AUTOMATIC = {"deal", "draw_card", "eliminate", "win", "draw"}


def _none(v):
    if v is None or (isinstance(v, float) and np.isnan(v)) or v is pd.NA:
        return None
    return v.item() if hasattr(v, "item") else v


def _action(row: dict) -> Action:
    kind = row["kind"]
    if kind == "claim":
        return Claim(row["dst"])
    if kind in ("place", "reinforce"):
        return Place(row["dst"], row["armies"])
    if kind == "trade":
        return Trade(tuple(int(c) for c in row["cards"].split()))
    if kind == "attack":
        if row["stop_at"] is None:
            return Attack(row["src"], row["dst"], row["attacker_dice"])
        return Attack(row["src"], row["dst"], None, row["stop_at"])
    if kind == "retreat":
        return Retreat()
    if kind == "occupy":
        return Occupy(row["armies"])
    if kind == "end_attack":
        return EndAttack()
    if kind == "fortify":
        return Fortify(row["src"], row["dst"], row["armies"])
    if kind == "end_turn":
        return EndTurn()
    raise TraceError(f"unknown event kind {kind!r}")


def iter_replay(events: pd.DataFrame, missions: list[int], config: GameConfig, label: str = "game"
                ) -> Iterator[tuple[int, GameState]]:
    """Yield `(last seq applied, state)` after the deal and after every recorded action.

    `events` holds one game's rows ordered by `seq`; `missions` the mission index per player (mission mode).
    """
    rows = [{k: _none(v) for k, v in r.items()} for r in events.to_dict("records")]
    for i, r in enumerate(rows):
        if r["seq"] != i:
            raise TraceError(f"{label}: event sequence broken at position {i} (seq {r['seq']})")
    board = load_board(config.board)
    deal = [r["dst"] for r in rows if r["kind"] == "deal"]
    battles = [(r["attacker_losses"], r["defender_losses"]) for r in rows if r["kind"] == "attack"]
    draws = [int(r["cards"]) for r in rows if r["kind"] == "draw_card"]
    chance = TraceChance(deal, missions, battles, draws)
    try:
        state = new_game(board, config, chance)
    except (IllegalAction, TraceError) as exc:
        raise TraceError(f"{label}: cannot set up the game: {exc}") from None
    _compare(state, rows, 0, label)
    yield len(state.log) - 1, state
    while len(state.log) < len(rows):
        row = rows[len(state.log)]
        start = len(state.log)
        if row["kind"] in AUTOMATIC:
            raise TraceError(f"{label}: event {row['seq']} ({row['kind']}) was not produced by the rules here")
        try:
            action = _action(row)
            d_dice = row["defender_dice"] if row["kind"] == "attack" and row["stop_at"] is None else None
            step(state, action, d_dice)
        except (IllegalAction, TraceError, KeyError, AttributeError, TypeError, ValueError) as exc:
            raise TraceError(f"{label}: event {row['seq']} ({row['kind']}) cannot be replayed: {exc}") from None
        _compare(state, rows, start, label)
        yield len(state.log) - 1, state
    if not state.is_terminal:
        raise TraceError(f"{label}: trace ends before the game does (truncated?)")


def _compare(state: GameState, rows: list[dict], start: int, label: str) -> None:
    for i in range(start, len(state.log)):
        if i >= len(rows):
            raise TraceError(f"{label}: replay produced event {i} ({state.log[i][4]}) missing from the trace")
        got = dict(zip(EVENT_FIELDS, state.log[i]))
        want = {k: rows[i][k] for k in EVENT_FIELDS}
        if got != want:
            diff = {k: (want[k], got[k]) for k in EVENT_FIELDS if got[k] != want[k]}
            raise TraceError(f"{label}: event {i} differs from the rules' replay (recorded, replayed): {diff}")


def replay(events: pd.DataFrame, missions: list[int], config: GameConfig, until_seq: int | None = None,
           label: str = "game") -> GameState:
    """The state after event `until_seq` (default: the end of the game)."""
    state = None
    for seq, state in iter_replay(events, missions, config, label):
        if until_seq is not None and seq >= until_seq:
            break
    return state


def load_game(run: str, game_id: int, data_dir: Path | None = None
              ) -> tuple[pd.DataFrame, list[int], GameConfig, pd.DataFrame]:
    """(events, missions, config, snapshots) of one recorded game from DuckDB (the config with the game's own
    player count: an imported run may mix them; the snapshots as the run's engine stored them, `docs/data.md`),
    read on one connection from the files that hold the game, each verified first (`db.run_source`)."""
    with reading(data_dir):
        config = run_config(run, data_dir)
        games = (game_id, game_id)
        events = query(f"SELECT * FROM {run_source('events', run, data_dir, games)} WHERE run = ? AND game_id = ? "
                       "ORDER BY seq", [run, game_id], data_dir)
        if events.empty:
            raise DataError(f"run {run!r} has no events for game {game_id}")
        seats = query("SELECT n_players FROM games WHERE run = ? AND game_id = ?", [run, game_id], data_dir).n_players
        config = replace(config, n_players=int(seats.iloc[0])) if len(seats) else config
        players = query("SELECT player, mission_index FROM players WHERE run = ? AND game_id = ? ORDER BY player",
                        [run, game_id], data_dir)
        missions = [int(m) for m in players.mission_index] if config.mode == "mission" else []
        snaps = query(f"SELECT * FROM {run_source('snapshots', run, data_dir, games)} WHERE run = ? AND game_id = ? "
                      "ORDER BY turn", [run, game_id], data_dir)
    return events, missions, config, snaps


class RunTraces:
    """A run's Parquet traces, read directly (the source of truth; the database is derived from them). An
    interrupted write is finished or undone first (the files are then the published ones, never a killed
    process's uncommitted ones); every file is compared with its record (size and fast checksum) before it is read.
    A corrupt or missing file is a `TraceError` naming it."""

    TABLES = ("runs", "games", "players", "events", "snapshots")

    def __init__(self, run: str, data_dir: Path | None = None):
        import duckdb

        self.run = run
        self.root = paths.traces_dir(data_dir) / f"run={run}"
        if paths.db_path(data_dir).exists():
            settle(data_dir)  # decided by the database; refused, with the command, where it cannot be
        if not self.root.is_dir():
            raise DataError(f"no traces of run {run!r} at {self.root}")
        problems = [p for p in verify(self.root, "fast") if not p.endswith("(written before records were kept?)")]
        if problems:
            raise TraceError(f"run {run!r}: {len(problems)} file(s) differ from their record: " + "; ".join(problems))
        self.con = duckdb.connect()  # in memory: reads the files, never the database
        for table in self.TABLES:
            files = sorted((self.root / table).glob("*.parquet"))
            if not files:
                raise TraceError(f"run {run!r}: no {table} files under {self.root / table}")
            for f in files:  # name the broken file, not just the table
                try:
                    self.con.execute("SELECT count(*) FROM read_parquet(?)", [str(f)]).fetchone()
                except duckdb.Error as exc:
                    raise TraceError(f"corrupt trace file {f}: {' '.join(str(exc).split())}") from None
            self.con.execute(f"CREATE TABLE {table} AS SELECT * FROM read_parquet({sql_list(files)})")
        self.config = GameConfig.from_dict(json.loads(self.df("SELECT config FROM runs").config[0])["config"])
        self.snapshots_sql = self._snapshots_sql()  # the run's files have one layout: found once, not per game

    def df(self, sql: str, params: list | None = None) -> pd.DataFrame:
        import duckdb

        try:
            return self.con.execute(sql, params or []).df()
        except duckdb.Error as exc:  # a file damaged after it was verified: named, never a traceback
            raise TraceError(f"run {self.run!r}: its traces cannot be read ({' '.join(str(exc).split())[:300]}): "
                             "`riskcore check` names the damaged file") from None

    def game_ids(self) -> list[int]:
        return [int(g) for g in self.df("SELECT game_id FROM games ORDER BY game_id").game_id]

    def game(self, game_id: int) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame]:
        """(events, players, the games row, snapshots) of one game."""
        events = self.df("SELECT * FROM events WHERE game_id = ? ORDER BY seq", [game_id])
        if events.empty:
            raise DataError(f"run {self.run!r} has no events for game {game_id}")
        players = self.df("SELECT * FROM players WHERE game_id = ? ORDER BY player", [game_id])
        games = self.df("SELECT * FROM games WHERE game_id = ?", [game_id])
        return events, players, games, self.df(self.snapshots_sql, [game_id])

    def _snapshots_sql(self) -> str:
        """A game's snapshots a row a turn, lists by territory: as stored, or gathered from the row per territory
        that engines before 0.4.0 wrote."""
        columns = {r[0] for r in self.con.execute("DESCRIBE snapshots").fetchall()}
        if "owners" in columns:
            return "SELECT turn, owners, army_counts FROM snapshots WHERE game_id = ? ORDER BY turn"
        return ("SELECT turn, list(owner ORDER BY territory) AS owners, list(armies ORDER BY territory) AS army_counts "
                "FROM snapshots WHERE game_id = ? GROUP BY turn ORDER BY turn")


def verify_game(traces: RunTraces, game_id: int) -> int:
    """Replay a recorded game from its Parquet traces and check every event, every turn snapshot, its `games` row
    (winner, end reason, turns, actions, players) and its `players` rows (mission, won); return the events
    checked."""
    events, players, games, snaps = traces.game(game_id)
    label = f"run {traces.run!r} game {game_id}"
    if len(games) != 1:
        raise TraceError(f"{label}: {len(games)} rows in the games table")
    config = replace(traces.config, n_players=int(games.n_players.iloc[0]))  # a run may mix player counts
    missions = [int(m) for m in players.mission_index] if config.mode == "mission" else []
    state = replay(events, missions, config, label=label)
    n = state.board.n_territories
    replayed = {turn: (owner, armies) for turn, _, owner, armies in state.snapshots}
    for turn, owners, army_counts in snaps[["turn", "owners", "army_counts"]].itertuples(index=False):
        if turn not in replayed or len(owners) != n or len(army_counts) != n:
            raise TraceError(f"{label}: snapshot of turn {turn} does not match the replay")
        owner, armies = replayed[turn]
        if not (np.array_equal(np.asarray(owners), owner) and np.array_equal(np.asarray(army_counts), armies)):
            raise TraceError(f"{label}: snapshot of turn {turn} differs from the replayed state")
    if len(replayed) != snaps.turn.nunique() or snaps.turn.duplicated().any():
        raise TraceError(f"{label}: {len(replayed)} turns replayed, {len(snaps)} snapshots recorded")
    row = games.iloc[0]
    actions = int((~events.kind.isin(list(AUTOMATIC))).sum())
    want = {"winner": state.winner, "end_reason": state.end_reason, "turns": state.turn, "actions": actions,
            "n_players": state.n_players}
    got = {k: (row[k].item() if hasattr(row[k], "item") else row[k]) for k in want}
    if got != want:
        diff = {k: (got[k], want[k]) for k in want if got[k] != want[k]}
        raise TraceError(f"{label}: the games row differs from the replay (recorded, replayed): {diff}")
    if len(players) != state.n_players or list(players.player) != list(range(state.n_players)):
        raise TraceError(f"{label}: {len(players)} players rows for {state.n_players} seats")
    for p, r in zip(range(state.n_players), players.itertuples()):
        mission = state.missions[p]
        expect = (mission.name if mission else None, mission.index if mission else None, state.winner == p)
        recorded = (r.mission if isinstance(r.mission, str) else None, None if pd.isna(r.mission_index)
                    else int(r.mission_index), bool(r.won))
        if recorded != expect:
            raise TraceError(f"{label}: the players row of player {p} (mission, mission index, won) is {recorded}, "
                             f"the replay gives {expect}")
    return len(events)
