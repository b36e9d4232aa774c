"""Game records, and game records as Arrow tables with a fixed schema: the trace contract that notebooks and later
stages read.

Tables (every row carries `run` and `engine_version`):
- `games(game_id, seed, n_players, first_seat, winner, end_reason, turns, actions)`: `first_seat` is the seat that
  began the deal in the game's own numbering (0 for games played here; an imported game's seats are renumbered so
  that the first dealt-to seat is seat 0)
- `players(game_id, player, agent, name, mission, mission_index, won)`: the ground truth, apart from the events
- `events(game_id, seq, turn, player, phase, kind, src, dst, armies, attacker_dice, defender_dice,
  attacker_losses, defender_losses, conquered, opponent, cards, stop_at)`: one row per action or automatic
  event (`stop_at` is null for a single roll, else the whole battle's stopping point)
- `snapshots(game_id, turn, player, territory, owner, armies)`: every territory at the start of every turn
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from riskcore import ENGINE_VERSION
from riskcore.engine import EVENT_FIELDS, GameState


@dataclass
class GameRecord:
    """One played game: its seed, the agent spec per seat, and the final state (with its event log)."""

    seed: int
    agents: list[str]
    state: GameState
    actions: int = 0
    missions: list[int] = field(default_factory=list)
    names: list[str] | None = None  # seat names (imported games); None: the seat number
    first_seat: int = 0
    compiled: bool = False  # played on the compiled kernel (`agents/compiled.py`), not the Python step loop

    @property
    def winner(self) -> int:
        return self.state.winner


I8, I16, I32, I64, STR, BOOL = pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.string(), pa.bool_()

SCHEMAS: dict[str, pa.Schema] = {
    "games": pa.schema([("run", STR), ("game_id", I32), ("seed", I64), ("n_players", I8), ("first_seat", I8),
                        ("winner", I8), ("end_reason", STR), ("turns", I32), ("actions", I32),
                        ("engine_version", STR)]),
    "players": pa.schema([("run", STR), ("game_id", I32), ("player", I8), ("agent", STR), ("name", STR),
                          ("mission", STR), ("mission_index", I8), ("won", BOOL), ("engine_version", STR)]),
    "events": pa.schema([("run", STR), ("game_id", I32), ("seq", I32), ("turn", I32), ("player", I8),
                         ("phase", STR), ("kind", STR), ("src", I16), ("dst", I16), ("armies", I32),
                         ("attacker_dice", I8), ("defender_dice", I8), ("attacker_losses", I16),
                         ("defender_losses", I16), ("conquered", BOOL), ("opponent", I8), ("cards", STR),
                         ("stop_at", I16), ("engine_version", STR)]),
    "snapshots": pa.schema([("run", STR), ("game_id", I32), ("turn", I32), ("player", I8), ("territory", I16),
                            ("owner", I8), ("armies", I32), ("engine_version", STR)]),
}
TABLES = tuple(SCHEMAS)


def _const(schema: pa.Schema, n: int, run: str) -> dict[str, pa.Array]:
    return {"run": pa.array([run] * n, STR), "engine_version": pa.array([ENGINE_VERSION] * n, STR)}


def records_to_tables(run: str, game_ids: list[int], records: list[GameRecord]) -> dict[str, pa.Table]:
    """Column-wise Arrow tables for a chunk of games (ordered by game id, so output bytes are deterministic)."""
    games = {k: [] for k in ("game_id", "seed", "n_players", "first_seat", "winner", "end_reason", "turns", "actions")}
    players = {k: [] for k in ("game_id", "player", "agent", "name", "mission", "mission_index", "won")}
    events = {k: [] for k in ("game_id",) + EVENT_FIELDS}
    snaps = {k: [] for k in ("game_id", "turn", "player", "territory", "owner", "armies")}
    for gid, rec in zip(game_ids, records):
        st = rec.state
        for k, v in (("game_id", gid), ("seed", rec.seed), ("n_players", st.n_players),
                     ("first_seat", rec.first_seat), ("winner", st.winner), ("end_reason", st.end_reason),
                     ("turns", st.turn), ("actions", rec.actions)):
            games[k].append(v)
        for p in range(st.n_players):
            m = st.missions[p]
            for k, v in (("game_id", gid), ("player", p), ("agent", rec.agents[p]),
                         ("name", rec.names[p] if rec.names else f"player {p}"),
                         ("mission", m.name if m else None), ("mission_index", m.index if m else None),
                         ("won", st.winner == p)):
                players[k].append(v)
        events["game_id"].extend([gid] * len(st.log))
        for i, name in enumerate(EVENT_FIELDS):
            events[name].extend(row[i] for row in st.log)
        n = st.board.n_territories
        for turn, player, owner, armies in st.snapshots:
            snaps["game_id"].append(np.full(n, gid))
            snaps["turn"].append(np.full(n, turn))
            snaps["player"].append(np.full(n, player))
            snaps["territory"].append(np.arange(n))
            snaps["owner"].append(owner)
            snaps["armies"].append(armies)
    for key in ("game_id", "turn", "player", "territory", "owner", "armies"):
        snaps[key] = np.concatenate(snaps[key]) if snaps[key] else np.zeros(0, dtype=np.int64)
    out = {}
    for name, cols in (("games", games), ("players", players), ("events", events), ("snapshots", snaps)):
        schema = SCHEMAS[name]
        n = len(cols["game_id"])
        arrays = _const(schema, n, run)
        for column in schema:
            if column.name not in arrays:
                arrays[column.name] = pa.array(cols[column.name], type=column.type)
        out[name] = pa.Table.from_arrays([arrays[f.name] for f in schema], schema=schema)
    return out

