"""Games of the heuristic agents on the compiled kernel (`heuristic_kernel.py`, `engine/kernel.py`), and the Python
forms they match.

- `play_on(state, rng, stop_turn)`: a playout: `domination` agents play on until the game ends or `stop_turn`
  begins, chance and every seat's tie-breaks drawn from `rng` (`mcs`); `play_on_reference` is its Python form.
- `play_out(state, agents, rngs, chance_rng, as_rows)`: the rest of a game whose seats are all plain `mission` or
  `domination` agents, events and snapshots recorded as the engine records them (`game.play_game`), or kept as
  trace rows (`riskcore simulate` writes them to Parquet with no Python object per value).

The kernel draws the same numbers from the same generators in the same order as the engine and the agents, so both
forms end in the same state, with the same log (tests/test_compiled_play.py).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from functools import lru_cache

import numpy as np

from riskcore.agents import heuristic_kernel as K
from riskcore.engine import kernel as R
from riskcore.agents.base import Agent, PlayerView
from riskcore.agents.heuristic import CONQUER_TABLE, DominationAgent, MissionAgent
from riskcore.agents.random_agent import border_edges
from riskcore.engine.actions import IllegalAction
from riskcore.engine.battle import roll_outcomes
from riskcore.engine.board import Board, load_board
from riskcore.engine.chance import RngChance
from riskcore.engine.config import GameConfig
from riskcore.engine import ATTACK, FORTIFY, OCCUPY, OVER, REINFORCE, SETUP, GameState, new_game, step
from riskcore.engine.rules import END_REASONS, MISSION_KINDS, PHASES, WIN_TESTS
from riskcore.trace import FIELD, EventRows

_PHASES = {name: PHASES.index(name) for name in (SETUP, REINFORCE, ATTACK, OCCUPY, FORTIFY, OVER)}  # the kernel's
# How the compiled game honours each rule option; a `GameConfig` field missing here is refused (and a test fails
# when `GameConfig` gains one), so a new option can never be ignored silently.
CONFIG_FIELDS = {
    "board": "the board's arrays", "n_players": "the seats", "mode": "rules", "card_values": "rules",
    "card_cap": "rules", "trade_bonus": "rules", "card_recycle": "rules", "turn_cap": "rules",
    "forced_trade_at": "rules", "elimination_trade_at": "rules", "setup_batch": "rules", "win_test": "rules",
    "deal": "random deals only: claims stay in Python", "starting_armies": "the deal (Python's new_game)",
    "setup_start": "the deal (Python's new_game)",
    "fortify": "the compiled agents fortify to a neighbour, legal under either option",
}
FIRST_EVENTS, FIRST_SNAPSHOTS = 1024, 128  # buffer rows to start with: a typical game fits; longer ones double them
_NO_LOG = (np.zeros((0, R.N_COLUMNS), np.int64), np.zeros(0, np.int64), np.zeros((0, 2), np.int64))


def play_on_reference(state: GameState, rng: np.random.Generator, stop_turn: int) -> None:
    """A playout in Python: the engine's `step` with a `DominationAgent` per seat."""
    agents = [DominationAgent(p, rng) for p in range(state.n_players)]
    views = [PlayerView(state, p) for p in range(state.n_players)]
    while not state.is_terminal and state.turn < stop_turn:
        step(state, agents[state.current].act(views[state.current]))


def play_on(state: GameState, rng: np.random.Generator, stop_turn: int) -> None:
    """A playout on the kernel; changes `state` as `play_on_reference` would (the log and snapshots excepted)."""
    seats = [DominationAgent(p, rng) for p in range(state.n_players)]
    _play(state, seats, [rng] * state.n_players, rng, stop_turn, record=False)


def play_out(state: GameState, agents: list[Agent], rngs: list[np.random.Generator],
             chance_rng: np.random.Generator, as_rows: bool = False
             ) -> tuple[int, tuple[EventRows, np.ndarray] | None]:
    """Play the game to its end on the kernel, logging as the engine does; returns the actions taken. With
    `as_rows` the kernel's events and snapshots are returned as trace rows (`trace.EventRows`, one snapshot per row)
    instead of joining the state's log as Python tuples."""
    return _play(state, agents, rngs, chance_rng, 1 << 62, record=True, as_rows=as_rows)


def compile_kernel() -> None:
    """Compile the kernel into numba's on-disk cache (run once at install: `make venv`) with one short game."""
    config = GameConfig(n_players=3, turn_cap=3)
    rngs = [np.random.default_rng(seed) for seed in range(4)]
    state = new_game(load_board(config.board), config, RngChance(rngs[0]))
    play_out(state, [MissionAgent(0, rngs[1]), DominationAgent(1, rngs[2]), MissionAgent(2, rngs[3])], rngs[1:],
             rngs[0])


@dataclass
class KernelGame:
    """A `GameState` on the kernel's arrays (`pack`; `unpack` writes it back): the scalars `sc`, the rule settings,
    the state's arrays, the missions' and the board's arrays, and the event buffers `log`."""

    sc: np.ndarray
    rules: np.ndarray
    owner: np.ndarray
    armies: np.ndarray
    hands: np.ndarray
    hand_len: np.ndarray
    deck: np.ndarray
    discard: np.ndarray
    setup_left: np.ndarray
    alive: np.ndarray
    eliminated_by: np.ndarray
    missions: np.ndarray
    board: tuple[np.ndarray, ...]
    log: tuple[np.ndarray, ...]

    def grow_log(self) -> None:
        self.log = tuple(np.concatenate([buffer, np.empty_like(buffer)]) for buffer in self.log)


def pack(state: GameState, record: bool) -> KernelGame:
    """The state on the kernel's arrays; `record`: with event buffers (else empty ones: nothing is logged)."""
    if state.phase not in _PHASES:
        raise ValueError(f"the compiled game starts after the deal, not in phase {state.phase!r}")
    p, n = state.n_players, state.board.n_territories
    sc = np.zeros(R.N_SCALARS, dtype=np.int64)
    sc[R.PHASE], sc[R.CURRENT], sc[R.TURN], sc[R.RESERVE] = _PHASES[state.phase], state.current, state.turn, \
        state.reserve
    sc[R.CONQUERED], sc[R.BONUS_USED], sc[R.TRADES], sc[R.WINNER] = state.conquered, state.trade_bonus_used, \
        state.trades, state.winner
    if state.occupy is not None:
        sc[R.OCC_SRC], sc[R.OCC_DST], sc[R.OCC_LOW] = state.occupy
    width = state.board.n_cards + 1
    hands = np.zeros((p, width), dtype=np.int64)
    for seat, hand in enumerate(state.hands):
        hands[seat, :len(hand)] = hand
    log = (np.empty((FIRST_EVENTS, R.N_COLUMNS), np.int64), np.empty(FIRST_EVENTS, np.int64),
           np.empty((FIRST_SNAPSHOTS, 2 + 2 * n), np.int64)) if record else _NO_LOG
    return KernelGame(sc, _rules(state.config), state.owner.copy(), state.armies.copy(), hands,
                      np.array([len(h) for h in state.hands], dtype=np.int64), _pile(state.deck, width),
                      _pile(state.discard, width), np.array(state.setup_left, dtype=np.int64),
                      np.array(state.alive, dtype=np.bool_), state.eliminated_by.copy(), _missions(state),
                      _board_arrays(state.board), log)


def unpack(game: KernelGame, state: GameState, as_rows: bool = False) -> tuple[EventRows, np.ndarray] | None:
    """Write the kernel's game back into `state`: its log too when it was recorded, or, `as_rows`, returned as
    trace rows instead."""
    sc, p = game.sc, state.n_players
    rows = None
    if as_rows:
        rows = _trace_rows(len(state.log), sc, game.log)
    elif len(game.log[0]):
        _write_log(state, sc, game.log)
    state.owner[:], state.armies[:], state.eliminated_by[:] = game.owner, game.armies, game.eliminated_by
    state.alive, state.setup_left = game.alive.tolist(), game.setup_left.tolist()
    state.owners_changed()
    state.hands = [game.hands[seat, :game.hand_len[seat]].tolist() for seat in range(p)]
    state.deck, state.discard = game.deck[1:game.deck[0] + 1].tolist(), game.discard[1:game.discard[0] + 1].tolist()
    state.phase, state.current, state.turn = PHASES[int(sc[R.PHASE])], int(sc[R.CURRENT]), int(sc[R.TURN])
    state.reserve, state.conquered, state.trade_bonus_used = int(sc[R.RESERVE]), bool(sc[R.CONQUERED]), \
        bool(sc[R.BONUS_USED])
    state.trades = int(sc[R.TRADES])
    state.occupy = (int(sc[R.OCC_SRC]), int(sc[R.OCC_DST]), int(sc[R.OCC_LOW])) if state.phase == OCCUPY else None
    state.winner = int(sc[R.WINNER])
    state.end_reason = END_REASONS[int(sc[R.REASON])] or state.end_reason
    return rows


def _play(state: GameState, agents: list[Agent], seat_rngs: list, chance_rng: np.random.Generator, stop_turn: int,
          record: bool, as_rows: bool = False) -> tuple[int, tuple[EventRows, np.ndarray] | None]:
    game = pack(state, record)
    args = (game.rules, game.owner, game.armies, game.hands, game.hand_len, game.deck, game.discard,
            game.setup_left, game.alive, game.eliminated_by, game.missions, _agents(agents), game.board,
            battle_rolls(), CONQUER_TABLE, stop_turn)
    # one tuple length for every player count: the kernel is compiled once, not per count
    rngs = tuple(seat_rngs) + (chance_rng,) * (K.MOST_SEATS + 1 - state.n_players)
    while (status := K.play(rngs, state.n_players, game.sc, *args, game.log)) == K.ROOM:
        game.grow_log()
    if status != K.DONE:
        raise IllegalAction(f"compiled game: seat {int(game.sc[R.CURRENT])} has no legal move in phase "
                            f"{PHASES[int(game.sc[R.PHASE])]!r} at turn {int(game.sc[R.TURN])}")
    return int(game.sc[R.ACTIONS]), unpack(game, state, as_rows)


# the trace's event fields and the kernel's columns that hold them
_FIELD_COLUMNS = [(FIELD[name], col) for name, col in (
    ("turn", R.E_TURN), ("player", R.E_PLAYER), ("phase", R.E_PHASE), ("kind", R.E_KIND), ("src", R.E_SRC),
    ("dst", R.E_DST), ("armies", R.E_ARMIES), ("attacker_dice", R.E_A_DICE), ("defender_dice", R.E_D_DICE),
    ("attacker_losses", R.E_A_LOSS), ("defender_losses", R.E_D_LOSS), ("conquered", R.E_CONQUERED),
    ("opponent", R.E_OPPONENT), ("stop_at", R.E_STOP_AT))]


def _trace_rows(first_seq: int, sc: np.ndarray, log: tuple[np.ndarray, ...]) -> tuple[EventRows, np.ndarray]:
    """The kernel's buffers as trace rows: events numbered on from `first_seq`, and the snapshots."""
    events, cards, shots = log
    kernel = events[:sc[R.N_EVENTS]]
    rows = np.full((len(kernel), len(FIELD)), -1, dtype=np.int64)
    rows[:, FIELD["seq"]] = np.arange(first_seq, first_seq + len(kernel))
    for field, col in _FIELD_COLUMNS:
        rows[:, field] = kernel[:, col]
    card_ids = cards[:sc[R.N_CARDS]].tolist()
    with_cards = np.flatnonzero(kernel[:, R.E_CARDS_LEN] > 0)
    spans = kernel[with_cards][:, [R.E_CARDS_START, R.E_CARDS_LEN]].tolist()
    texts = {int(r): " ".join(map(str, card_ids[start:start + n])) for r, (start, n) in zip(with_cards, spans)}
    return EventRows(rows, texts), shots[:sc[R.N_SNAPSHOTS]].copy()


def _write_log(state: GameState, sc: np.ndarray, log: tuple[np.ndarray, ...]) -> None:
    """Append the kernel's events and snapshots to the state's, as the engine's tuples and arrays."""
    events, shots = _trace_rows(len(state.log), sc, log)
    state.log.extend(events.to_log())
    n = state.board.n_territories
    for row in shots:
        state.snapshots.append((int(row[0]), int(row[1]), row[2:2 + n].copy(), row[2 + n:].copy()))


def _pile(cards: list[int], width: int) -> np.ndarray:
    """A card list as an array whose first entry is its length."""
    out = np.zeros(width, dtype=np.int64)
    out[0] = len(cards)
    out[1:len(cards) + 1] = cards
    return out


def _agents(agents: list[Agent]) -> tuple[np.ndarray, ...]:
    """Per seat: agent kind, attack threshold, mission focus, mission weight."""
    kind = np.array([K.MISSION_AGENT if type(a) is MissionAgent else K.DOMINATION_AGENT for a in agents], np.int64)
    threshold = np.array([a.threshold for a in agents], dtype=np.float64)
    focus = np.array([getattr(a, "focus", 0.0) for a in agents], dtype=np.float64)
    weight = np.array([a.mission_bias for a in agents], dtype=np.float64)
    return kind, threshold, focus, weight


@lru_cache(maxsize=16)
def _rules(config: GameConfig) -> np.ndarray:
    unknown = [f.name for f in fields(config) if f.name not in CONFIG_FIELDS]
    if unknown:
        raise ValueError(f"the compiled game does not implement the rule option(s) {unknown}: play this config "
                         "in Python (riskcore.engine.reference) or teach riskcore/engine/kernel.py the option")
    if config.deal != "random":
        raise ValueError("the compiled game plays dealt games (claims stay in Python)")
    rules = np.zeros(R.N_RULES, dtype=np.int64)
    rules[R.DOMINATION] = config.mode == "domination"
    rules[R.FIXED_VALUES] = config.card_values == "fixed"
    rules[R.CARD_CAP] = -1 if config.card_cap is None else config.card_cap
    rules[R.EVERY_TRADE] = config.trade_bonus == "every_trade"
    rules[R.AT_ONCE] = config.card_recycle == "at_once"
    rules[R.TURN_CAP], rules[R.FORCED_AT], rules[R.ELIMINATION_AT] = config.turn_cap, config.forced_trade_at, \
        config.elimination_trade_at
    rules[R.SETUP_BATCH] = config.setup_batch
    rules[R.WIN_TEST] = WIN_TESTS.index(config.win_test)
    return rules


def _missions(state: GameState) -> np.ndarray:
    """A row per seat (`kernel.M_*`): kind (-1: none), extra continents, territory target, least armies, colour,
    and a 0/1 column per continent the mission names."""
    missions = np.zeros((state.n_players, R.M_LISTED + state.board.n_continents), np.int64)
    missions[:, R.M_KIND], missions[:, R.M_MIN_ARMIES], missions[:, R.M_COLOUR] = -1, 1, -1
    for seat, m in enumerate(state.missions):
        if m is None:
            continue
        missions[seat, [R.M_KIND, R.M_EXTRA, R.M_TARGET, R.M_MIN_ARMIES, R.M_COLOUR]] = \
            MISSION_KINDS.index(m.kind), m.extra_continents, m.territories, m.min_armies, m.colour
        missions[seat, [R.M_LISTED + c for c in m.continents]] = 1
    return missions


@lru_cache(maxsize=16)  # boards compare by identity
def _board_arrays(board: Board) -> tuple[np.ndarray, ...]:
    src, dst = border_edges(board)  # the agents' border order
    starts = np.cumsum([0] + [len(n) for n in board.neighbours]).astype(np.int64)
    nbr = np.array([t for n in board.neighbours for t in n], dtype=np.int64)
    return (src.astype(np.int64), dst.astype(np.int64), starts, nbr, board.continent_of.astype(np.int64),
            board.continent_sizes.astype(np.int64), board.continent_bonus.astype(np.int64),
            board.card_symbol.astype(np.int64))


@lru_cache(maxsize=1)
def battle_rolls() -> tuple[np.ndarray, ...]:
    """Every roll's outcomes as `battle._absorbing` meets them: (attacker losses, defender losses, probability),
    rolls ordered by (attacker dice, defender dice), `starts` where each roll's outcomes begin."""
    al, dl, prob, starts = [], [], [], [0]
    for a in (1, 2, 3):
        for d in (1, 2):
            for (x, y), q in roll_outcomes(a, d).items():
                al.append(x), dl.append(y), prob.append(float(q))
            starts.append(len(al))
    return np.array(al, np.int64), np.array(dl, np.int64), np.array(prob), np.array(starts, np.int64)
