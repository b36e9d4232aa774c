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
- `snapshots(game_id, turn, player, owners, army_counts)`: the board at the start of every turn, one row a turn:
  `owners[t]` and `army_counts[t]` are territory t's owner and armies (lists indexed by territory id; one row per
  territory before engine 0.4.0)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from riskcore import ENGINE_VERSION
from riskcore.engine import EVENT_FIELDS, GameState
from riskcore.engine.rules import EVENT_KINDS, PHASES
from riskcore.storage import PARQUET_OPTIONS

# A game's events as integers, one row per event and a column per `EVENT_FIELDS` field: the phase and the kind by
# their place in PHASES and EVENT_KINDS, `conquered` as 0/1, -1 for None; the cards column is unused (cards go
# beside it as text). The compiled kernel's buffers convert to it with numpy alone, so a trace is written without a
# Python object per value.
FIELD = {name: i for i, name in enumerate(EVENT_FIELDS)}
_PHASE_CODE, _KIND_CODE = ({name: i for i, name in enumerate(names)} for names in (PHASES, EVENT_KINDS))
_NONE = -(2**62)  # a missing field while a log is converted: any negative value left after it is an error


@dataclass
class EventRows:
    rows: np.ndarray  # (events, len(EVENT_FIELDS)) int64
    cards: dict[int, str] = field(default_factory=dict)  # row -> the row's cards, space-separated

    @staticmethod
    def from_log(log: list[tuple]) -> "EventRows":
        """The engine's event tuples as rows (one Python list per event and a single numpy conversion: a game's
        deal alone is some forty events, and a numpy call per field cost more than the conversion)."""
        if not log:
            return EventRows(np.full((0, len(EVENT_FIELDS)), -1, dtype=np.int64), {})
        phase, kind, cards = FIELD["phase"], FIELD["kind"], FIELD["cards"]
        texts = {r: event[cards] for r, event in enumerate(log) if event[cards] is not None}
        plain = [[_NONE if v is None else v for v in event] for event in log]
        for row, event in zip(plain, log):
            row[phase], row[kind], row[cards] = _PHASE_CODE[event[phase]], _KIND_CODE[event[kind]], _NONE
        rows = np.array(plain, dtype=np.int64)
        bad = (rows < 0) & (rows != _NONE)
        if bad.any():  # -1 stands for None here: a negative value would turn into a null
            r, i = (int(x[0]) for x in np.nonzero(bad))
            raise ValueError(f"event {log[r][0]} has {EVENT_FIELDS[i]} {rows[r, i]}: fields are never negative")
        rows[rows == _NONE] = -1
        return EventRows(rows, texts)

    def to_log(self) -> list[tuple]:
        """The rows as the engine's event tuples (`from_log`'s inverse)."""
        columns = []
        for i, name in enumerate(EVENT_FIELDS):
            col = self.rows[:, i].tolist()
            if name == "phase":
                columns.append([PHASES[v] for v in col])
            elif name == "kind":
                columns.append([EVENT_KINDS[v] for v in col])
            elif name == "cards":
                columns.append([self.cards.get(r) for r in range(len(col))])
            elif name == "conquered":
                columns.append([None if v < 0 else bool(v) for v in col])
            else:
                columns.append([None if v < 0 else v for v in col])
        return list(zip(*columns))


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
    # events and snapshots after those in `state` (the kernel's, when the game asked for them as arrays): event rows,
    # and one snapshot per row as (turn, player, owners..., armies...)
    more_events: EventRows | None = None
    more_snapshots: np.ndarray | None = None

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
    "snapshots": pa.schema([("run", STR), ("game_id", I32), ("turn", I32), ("player", I8),
                            ("owners", pa.list_(I8)), ("army_counts", pa.list_(I32)), ("engine_version", STR)]),
}
TABLES = tuple(SCHEMAS)
# what readers select trace rows by: the catalogue ranges each file's games from its footer, and queries by run, game
# and turn skip row groups on these statistics
STATISTICS = ("run", "game_id", "turn", "player")


def parquet_options(table: pa.Table) -> dict:
    """How a trace table is written: dictionary encoding for its text columns only, since the numbers compress
    as small without it and faster, and statistics only for the columns readers select by (a fifth of the time
    `simulate` spends writing Parquet)."""
    text = [f.name for f in table.schema if pa.types.is_string(f.type)]
    return {**PARQUET_OPTIONS, "use_dictionary": text,
            "write_statistics": [c for c in STATISTICS if c in table.schema.names]}


def text_column(text: str, n: int) -> pa.Array:
    """A string column of one value, made in Arrow (a Python list of n strings costs more than the rest of a
    table)."""
    return pa.repeat(pa.scalar(text, STR), n)


def _const(n: int, run: str) -> dict[str, pa.Array]:
    return {"run": text_column(run, n), "engine_version": text_column(ENGINE_VERSION, n)}


def _event_arrays(game_ids: list[int], records: list[GameRecord]) -> dict[str, pa.Array]:
    blocks, texts, at = [], {}, 0
    for rec in records:
        for part in (EventRows.from_log(rec.state.log), rec.more_events):
            if part is None:
                continue
            blocks.append(part.rows)
            texts.update((at + r, text) for r, text in part.cards.items())
            at += len(part.rows)
    rows = np.concatenate(blocks) if blocks else np.zeros((0, len(EVENT_FIELDS)), np.int64)
    lengths = [len(r.state.log) + (len(r.more_events.rows) if r.more_events else 0) for r in records]
    schema = SCHEMAS["events"]
    out = {"game_id": pa.array(np.repeat(np.asarray(game_ids, np.int64), lengths), I32)}
    columns = np.ascontiguousarray(rows.T)  # a field's values side by side
    for name in EVENT_FIELDS:
        col = columns[FIELD[name]]
        kind = schema.field(name).type
        if name in ("phase", "kind"):  # names looked up by their code: no Python string per event
            out[name] = _names(PHASES if name == "phase" else EVENT_KINDS, col, name)
        elif name == "cards":
            cards = [None] * len(rows)
            for r, text in texts.items():
                cards[r] = text
            out[name] = pa.array(cards, kind)
        elif name == "conquered":
            out[name] = pa.array(col == 1, kind, mask=col < 0)
        else:
            out[name] = _int_array(name, col, kind)
    return out


# below this many events a column of names is gathered in numpy: Arrow's `take` is faster per row, but loading
# pyarrow.compute for it costs a one-game command a fifteenth of its start-up
GATHER_ROWS = 5_000


def _names(names: tuple[str, ...], codes: np.ndarray, field: str) -> pa.Array:
    """`names[codes]` as a string column (the same array either way)."""
    if len(codes) and (codes.min() < 0 or codes.max() >= len(names)):
        raise ValueError(f"event field {field} holds a code outside 0..{len(names) - 1}")
    if len(codes) >= GATHER_ROWS:
        return pa.array(names, pa.string()).take(pa.array(codes))
    encoded = [n.encode() for n in names]
    sizes = np.array([len(e) for e in encoded], np.int64)
    lengths = sizes[codes]
    offsets = np.zeros(len(codes) + 1, np.int32)
    np.cumsum(lengths, out=offsets[1:])
    first_byte = (np.cumsum(sizes) - sizes)[codes]  # where each row's name starts among the names' bytes
    at = np.repeat(first_byte - offsets[:-1], lengths) + np.arange(offsets[-1])
    data = np.frombuffer(b"".join(encoded), np.uint8)[at]
    return pa.Array.from_buffers(pa.string(), len(codes), [None, pa.py_buffer(offsets), pa.py_buffer(data)])


def _int_array(name: str, col: np.ndarray, kind: pa.DataType) -> pa.Array:
    """`col` (-1 for null) as an Arrow column of `kind`. Cast in numpy first: Arrow's own cast of a masked int64
    column went value by value, sixteen times slower."""
    dtype = np.dtype(kind.to_pandas_dtype())
    if len(col) and col.max() > np.iinfo(dtype).max:
        raise ValueError(f"event field {name} holds {col.max()}, beyond {kind}")
    return pa.array(col.astype(dtype), kind, mask=col < 0)


def _snapshot_arrays(game_ids: list[int], records: list[GameRecord]) -> dict[str, np.ndarray | pa.Array]:
    """A row per snapshot, its owners and armies as lists by territory, straight from the (turn, player, owners...,
    armies...) rows the engine and the kernel record."""
    ids, blocks = [], []
    for gid, rec in zip(game_ids, records):
        n = rec.state.board.n_territories
        shots = [np.concatenate([[turn, player], owner, armies]) for turn, player, owner, armies in rec.state.snapshots]
        for part in (np.array(shots, np.int64).reshape(-1, 2 + 2 * n), rec.more_snapshots):
            if part is not None and len(part):
                ids.append(np.full(len(part), gid))
                blocks.append(part)
    if not blocks:
        empty = np.zeros(0, np.int64)
        return {"game_id": empty, "turn": empty, "player": empty, "owners": pa.array([], pa.list_(I8)),
                "army_counts": pa.array([], pa.list_(I32))}
    n = [(b.shape[1] - 2) // 2 for b in blocks]
    offsets = pa.array(np.concatenate([[0], np.cumsum(np.repeat(n, [len(b) for b in blocks]))]), I32)
    owners = np.concatenate([b[:, 2:2 + k].ravel() for b, k in zip(blocks, n)])
    armies = np.concatenate([b[:, 2 + k:].ravel() for b, k in zip(blocks, n)])
    return {"game_id": np.concatenate(ids), "turn": np.concatenate([b[:, 0] for b in blocks]),
            "player": np.concatenate([b[:, 1] for b in blocks]),
            "owners": pa.ListArray.from_arrays(offsets, pa.array(owners, I8)),
            "army_counts": pa.ListArray.from_arrays(offsets, pa.array(armies, I32))}


def records_to_tables(run: str, game_ids: list[int], records: list[GameRecord]) -> dict[str, pa.Table]:
    """Column-wise Arrow tables for a chunk of games (ordered by game id, so output bytes are deterministic)."""
    games = {k: [] for k in ("game_id", "seed", "n_players", "first_seat", "winner", "end_reason", "turns", "actions")}
    players = {k: [] for k in ("game_id", "player", "agent", "name", "mission", "mission_index", "won")}
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
    out = {}
    for name, cols in (("games", games), ("players", players), ("events", _event_arrays(game_ids, records)),
                       ("snapshots", _snapshot_arrays(game_ids, records))):
        schema = SCHEMAS[name]
        arrays = _const(len(cols["game_id"]), run)
        for column in schema:
            if column.name not in arrays:
                values = cols[column.name]
                arrays[column.name] = values if isinstance(values, pa.Array) else pa.array(values, type=column.type)
        out[name] = pa.Table.from_arrays([arrays[f.name] for f in schema], schema=schema)
    return out
