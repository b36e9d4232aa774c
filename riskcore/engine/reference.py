"""The classic RISK rules as a state machine: `new_game`, `legal_actions`, `step`, with chance made explicit.

Phases of a turn: reinforce (trade cards, place armies) -> attack (attack, occupy after a conquest) -> fortify.
A battle is one whole-battle attack, or single rolls on one pair until a conquest, another action, or an explicit
retreat (`Retreat`, as recorded programs' players call battles off). Setup comes first: territories dealt at
random (or claimed in turn), then initial armies placed in turn, `setup_batch` at a time. Victory is checked after
every action of a player's turn (never during setup: a mission held when setup ends is won by the player's first
action): domination (all territories) or the acting player's secret mission (every player's after an elimination,
since a destroy mission may fall back to 24 territories); a conquest counts once its armies have moved in, so the
check follows the occupying move. With `win_test="mover"` (the program Domination's `RiskGame.checkPlayerWon`) only
the mover is tested, after each of its placements (the setup's last one included), occupations and fortifications:
all territories first, then its mission once the setup placements are over. Every state change is logged as an
event tuple (`EVENT_FIELDS`), outcomes of chance included, so that `riskcore.replay` can rebuild every state from
the log alone. The compiled copy is `kernel.py`.
"""

from __future__ import annotations

from collections import deque
from itertools import count
from typing import Iterator

import numpy as np

from riskcore.engine.actions import (Action, Attack, Claim, EndAttack, EndTurn, Fortify, IllegalAction, Occupy, Place,
                              Retreat, Trade)
from riskcore.engine.board import Board
from riskcore.engine.cards import TERRITORY_BONUS, escalating_value, find_sets, fixed_value, is_set
from riskcore.engine.chance import Chance
from riskcore.engine.config import ConfigError, GameConfig
from riskcore.engine.missions import Mission, compile_missions
from riskcore.engine.rules import ATTACKER_DICE, DEFENDER_DICE, END_REASONS, PHASES, WIN_TESTS

EVENT_FIELDS = ("seq", "turn", "player", "phase", "kind", "src", "dst", "armies", "attacker_dice",
                "defender_dice", "attacker_losses", "defender_losses", "conquered", "opponent", "cards", "stop_at")
SETUP, CLAIM, REINFORCE, ATTACK, OCCUPY, FORTIFY, OVER = PHASES
_, BY_DOMINATION, BY_MISSION, BY_TURN_CAP = END_REASONS
ANY_SEAT, MOVER = WIN_TESTS
# Ownership stamps are unique across all states of a process: two states with equal stamps hold the same owners,
# eliminations and living players (a clone shares its original's stamp until either changes hands), so facts that
# follow from ownership alone (missions done, agents' territory values) can be cached per stamp.
_STAMPS = count(1)


class GameState:
    """Everything that changes during a game. The board and config are shared, immutable facts."""

    def __init__(self, board: Board, config: GameConfig, chance: Chance):
        self.board = board
        self.config = config
        self.chance = chance
        self.n_players = config.n_players
        n = board.n_territories
        self.owner = np.full(n, -1, dtype=np.int64)
        self.armies = np.zeros(n, dtype=np.int64)
        self.hands: list[list[int]] = [[] for _ in range(self.n_players)]
        self.deck: list[int] = list(range(board.n_cards))
        self.discard: list[int] = []
        self.trades = 0
        self.phase = SETUP
        self.current = 0
        self.turn = 0
        self.reserve = 0
        self.setup_left = [0] * self.n_players
        self.conquered = False
        self.trade_bonus_used = False
        self.alive = [True] * self.n_players
        self.eliminated_by = np.full(len(board.colours), -1, dtype=np.int64)
        self.occupy: tuple[int, int, int] | None = None  # (src, dst, minimum move)
        self.battle: tuple[int, int] | None = None  # (src, dst) of a battle of single rolls a retreat may end
        self.missions: list[Mission | None] = [None] * self.n_players
        self.winner = -1
        self.end_reason = ""
        self.log: list[tuple] = []
        self.snapshots: list[tuple[int, int, np.ndarray, np.ndarray]] = []  # (turn, player, owner, armies)
        self.owners_changed()

    def owners_changed(self) -> None:
        """Record a change of `owner`, `alive` or `eliminated_by` (whoever writes them must call this)."""
        self.stamp = next(_STAMPS)
        # per player, whether its mission is done; ("nobody", player): no one won when player last acted
        self.done_by_stamp: dict = {}  # a new dict: a clone may still share the old one
        self._counts: tuple[list[int], list[list[bool]], np.ndarray] | None = None

    def ownership(self) -> tuple[list[int], list[list[bool]]]:
        """Territories per player and, per player, whether it holds each continent whole; counted once per
        ownership change (victory is checked after every action, conquests are far rarer)."""
        return self._counted()[:2]

    def continent_counts(self) -> np.ndarray:
        """(players x continents) territories each player owns in each continent (read-only; per ownership change)."""
        return self._counted()[2]

    def _counted(self) -> tuple[list[int], list[list[bool]], np.ndarray]:
        if self._counts is None:
            board, nc = self.board, self.board.n_continents
            cells = np.bincount((self.owner + 1) * nc + board.continent_of, minlength=(self.n_players + 1) * nc)
            per_continent = cells.reshape(self.n_players + 1, nc)[1:]
            per_continent.flags.writeable = False
            self._counts = (per_continent.sum(axis=1).tolist(), (per_continent == board.continent_sizes).tolist(),
                            per_continent)
        return self._counts

    # ---- derived facts -------------------------------------------------------------------------------------------
    @property
    def is_terminal(self) -> bool:
        return self.phase == OVER

    def owned_mask(self, player: int) -> np.ndarray:
        return self.owner == player

    def held_continents(self, player: int) -> np.ndarray:
        """Bool mask over continents that `player` holds entirely."""
        return np.array(self.ownership()[1][player])

    def reinforcements(self, player: int) -> int:
        """`rules.base_reinforcement` + bonuses of the continents held (card trades come on top)."""
        territories, held = self.ownership()
        return self.board.reinforcements_for(territories[player], held[player])

    def trade_value(self, cards: tuple[int, ...]) -> int:
        if self.config.card_values == "fixed":
            return fixed_value([int(self.board.card_symbol[c]) for c in cards])
        return escalating_value(self.trades, self.config.card_cap)

    def returns(self) -> list[float]:
        """+1 for the winner, -1 for the others; all 0 for a draw or an unfinished game."""
        if self.winner < 0:
            return [0.0] * self.n_players
        return [1.0 if p == self.winner else -1.0 for p in range(self.n_players)]

    def clone(self) -> "GameState":
        """An independent copy (the log and snapshots are not copied; chance is shared)."""
        other = GameState.__new__(GameState)
        other.__dict__.update(self.__dict__)
        other.owner = self.owner.copy()
        other.armies = self.armies.copy()
        other.hands = [list(h) for h in self.hands]
        other.deck = list(self.deck)
        other.discard = list(self.discard)
        other.setup_left = list(self.setup_left)
        other.alive = list(self.alive)
        other.eliminated_by = self.eliminated_by.copy()
        other.missions = list(self.missions)
        other.done_by_stamp = {}  # a copy's missions may be resampled (determinised search)
        other.log = []
        other.snapshots = []
        return other

    # ---- logging -------------------------------------------------------------------------------------------------
    def _emit(self, kind: str, src=None, dst=None, armies=None, a_dice=None, d_dice=None, a_loss=None,
              d_loss=None, conquered=None, opponent=None, cards=None, stop_at=None, player: int | None = None
              ) -> None:
        self.log.append((len(self.log), self.turn, self.current if player is None else player, self.phase, kind,
                         src, dst, armies, a_dice, d_dice, a_loss, d_loss, conquered, opponent, cards, stop_at))


def new_game(board: Board, config: GameConfig, chance: Chance) -> GameState:
    """Deal territories (or open the claim phase) and the secret missions; the first player is seat 0."""
    s = GameState(board, config, chance)
    n, p = board.n_territories, config.n_players
    if p > n:
        raise ConfigError(f"board {board.name!r} has {n} territories for {p} players: every player needs one")
    if config.armies_per_player * p < n:
        raise IllegalAction(f"{p} players x {config.armies_per_player} armies cannot cover {n} territories")
    if config.mode == "mission":
        if len(board.missions) < p:
            raise IllegalAction(f"board {board.name!r} has {len(board.missions)} mission cards for {p} players")
        compiled = compile_missions(board)
        s.missions = [compiled[m] for m in chance.missions(len(compiled), p)]
    s.setup_left = [config.armies_per_player] * p
    if config.deal == "random":
        for i, t in enumerate(chance.deal(n, p)):
            player = i % p
            s.owner[t] = player
            s.armies[t] = 1
            s.setup_left[player] -= 1
            s._emit("deal", dst=t, armies=1, player=player)
        s.owners_changed()
        _next_setup_player(s, first=True)
    else:
        s.phase = CLAIM
    return s


# ---- legality ------------------------------------------------------------------------------------------------------
def _fail(rule: str, action: Action, state: GameState) -> None:
    raise IllegalAction(f"illegal {action} by player {state.current} in phase {state.phase!r}: {rule}")


def _reachable(state: GameState, src: int) -> set[int]:
    """Territories reachable from src through the current player's own territories."""
    me, seen, queue = state.current, {src}, deque([src])
    while queue:
        u = queue.popleft()
        for v in state.board.neighbours[u]:
            if v not in seen and state.owner[v] == me:
                seen.add(v)
                queue.append(v)
    return seen


def _territory_ok(t, n: int) -> bool:
    return isinstance(t, (int, np.integer)) and 0 <= t < n


def _check_claim(state: GameState, action: Claim) -> None:
    if state.phase != CLAIM:
        _fail("claiming only happens in the claim phase", action, state)
    if not _territory_ok(action.territory, state.board.n_territories) or state.owner[action.territory] != -1:
        _fail("can only claim an unowned territory", action, state)


def _check_place(state: GameState, action: Place) -> None:
    me, phase = state.current, state.phase
    if phase not in (SETUP, REINFORCE):
        _fail("armies are placed only in setup or reinforcement", action, state)
    if not _territory_ok(action.territory, state.board.n_territories) or state.owner[action.territory] != me:
        _fail("armies can only be placed on your own territory", action, state)
    if phase == REINFORCE and len(state.hands[me]) >= state.config.forced_trade_at:
        _fail(f"holding {len(state.hands[me])} cards: must trade before placing", action, state)
    if not 1 <= action.armies <= state.reserve:
        _fail(f"must place between 1 and {state.reserve} armies", action, state)


def _check_trade(state: GameState, action: Trade) -> None:
    me = state.current
    if state.phase != REINFORCE:
        _fail("cards are traded only in the reinforcement phase", action, state)
    cards = tuple(action.cards)
    if len(cards) != 3 or len(set(cards)) != 3 or any(c not in state.hands[me] for c in cards):
        _fail("must trade three distinct cards from your own hand", action, state)
    if not is_set([int(state.board.card_symbol[c]) for c in cards]):
        _fail("cards must be three alike, one of each, or include a wild", action, state)


def _check_attack(state: GameState, action: Attack) -> None:
    me, owner, armies, n = state.current, state.owner, state.armies, state.board.n_territories
    if state.phase != ATTACK:
        _fail("attacks happen only in the attack phase", action, state)
    src, dst = action.src, action.dst
    if not (_territory_ok(src, n) and _territory_ok(dst, n)) or owner[src] != me:
        _fail("must attack from your own territory", action, state)
    if owner[dst] == me or not state.board.adjacency[src, dst]:
        _fail("must attack an adjacent enemy territory", action, state)
    if armies[src] < 2:
        _fail("attacking territory needs at least 2 armies", action, state)
    if action.dice is not None and not 1 <= action.dice <= min(ATTACKER_DICE, armies[src] - 1):
        _fail(f"attacker may roll 1..{min(ATTACKER_DICE, armies[src] - 1)} dice", action, state)
    # stop_at = the rolling armies (armies - 1): a battle called off before its first roll (a recorded
    # program's players may declare an attack and withdraw)
    if action.stop_at is not None and not 0 <= action.stop_at <= armies[src] - 1:
        _fail(f"stop_at must be in 0..{armies[src] - 1}", action, state)


def _check_occupy(state: GameState, action: Occupy) -> None:
    if state.phase != OCCUPY:
        _fail("occupying follows a conquest", action, state)
    src, _, low = state.occupy
    if not low <= action.armies <= state.armies[src] - 1:
        _fail(f"must move between {low} and {state.armies[src] - 1} armies", action, state)


def _check_retreat(state: GameState, action: Retreat) -> None:
    if state.phase != ATTACK or state.battle is None:
        _fail("a retreat ends a battle of single rolls that the last action began or went on with", action, state)


def _check_end_attack(state: GameState, action: EndAttack) -> None:
    if state.phase != ATTACK:
        _fail("only the attack phase can be ended", action, state)


def _check_fortify(state: GameState, action: Fortify) -> None:
    me, owner, armies, n = state.current, state.owner, state.armies, state.board.n_territories
    if state.phase != FORTIFY:
        _fail("fortifying happens only in the fortify phase", action, state)
    src, dst = action.src, action.dst
    if not (_territory_ok(src, n) and _territory_ok(dst, n)) or owner[src] != me or owner[dst] != me or src == dst:
        _fail("must fortify between two different territories of your own", action, state)
    if state.config.fortify == "adjacent" and not state.board.adjacency[src, dst]:
        _fail("fortify moves only between adjacent territories", action, state)
    if state.config.fortify == "connected" and dst not in _reachable(state, src):
        _fail("fortify moves only along a path of your own territories", action, state)
    if not 1 <= action.armies <= armies[src] - 1:
        _fail(f"must move 1..{armies[src] - 1} armies, leaving at least one", action, state)


def _check_end_turn(state: GameState, action: EndTurn) -> None:
    if state.phase != FORTIFY:
        _fail("the turn ends from the fortify phase", action, state)


# one rule-checker per action type: a dictionary look-up instead of a chain of isinstance tests on every action
_CHECKS = {Claim: _check_claim, Place: _check_place, Trade: _check_trade, Attack: _check_attack,
           Retreat: _check_retreat, Occupy: _check_occupy, EndAttack: _check_end_attack, Fortify: _check_fortify,
           EndTurn: _check_end_turn}


def check_action(state: GameState, action: Action) -> None:
    """Raise `IllegalAction` naming the broken rule, or return if `action` is legal now."""
    if state.phase == OVER:
        _fail("the game is over", action, state)
    check = _CHECKS.get(type(action))
    if check is None:
        check = next((c for kind, c in _CHECKS.items() if isinstance(action, kind)), None)
        if check is None:
            raise IllegalAction(f"unknown action {action!r}")
    check(state, action)


def legal_actions(state: GameState) -> list[Action]:
    """Every legal action now, in a fixed order (single rolls with each dice count, and the full battle)."""
    return list(iter_legal_actions(state))


def iter_legal_actions(state: GameState) -> Iterator[Action]:
    me, phase, owner, armies, board = state.current, state.phase, state.owner, state.armies, state.board
    mine = [int(t) for t in np.flatnonzero(owner == me)]
    if phase == CLAIM:
        yield from (Claim(int(t)) for t in np.flatnonzero(owner == -1))
    elif phase in (SETUP, REINFORCE):
        if phase == REINFORCE:
            yield from (Trade(s) for s in find_sets(state.hands[me], board.card_symbol))
            if len(state.hands[me]) >= state.config.forced_trade_at:
                return
        for t in mine:
            for k in range(1, state.reserve + 1):
                yield Place(t, k)
    elif phase == ATTACK:
        for src in mine:
            if armies[src] < 2:
                continue
            for dst in board.neighbours[src]:
                if owner[dst] != me:
                    for dice in range(1, min(ATTACKER_DICE, int(armies[src]) - 1) + 1):
                        yield Attack(src, dst, dice)
                    yield Attack(src, dst, None, 0)
        if state.battle is not None:
            yield Retreat()
        yield EndAttack()
    elif phase == OCCUPY:
        src, _, low = state.occupy
        yield from (Occupy(k) for k in range(low, int(armies[src])))
    elif phase == FORTIFY:
        for src in mine:
            if armies[src] < 2:
                continue
            targets = board.neighbours[src] if state.config.fortify == "adjacent" else sorted(_reachable(state, src))
            for dst in targets:
                if dst != src and owner[dst] == me:
                    for k in range(1, int(armies[src])):
                        yield Fortify(src, dst, k)
        yield EndTurn()


# ---- transitions ---------------------------------------------------------------------------------------------------
def step(state: GameState, action: Action, defender_dice: int | None = None) -> None:
    """Apply a legal action (checked first), drawing any chance outcome from `state.chance`.

    `defender_dice` is the defender's choice for a single roll (default: the most allowed).
    """
    check_action(state, action)
    me = state.current
    battle, state.battle = state.battle, None  # only a single roll that leaves its battle open sets it again
    if isinstance(action, Retreat):
        src, dst = battle
        state._emit("retreat", src=src, dst=dst, opponent=int(state.owner[dst]))
        return
    if isinstance(action, Claim):
        state.owner[action.territory] = me
        state.owners_changed()
        state.armies[action.territory] = 1
        state.setup_left[me] -= 1
        state._emit("claim", dst=action.territory, armies=1)
        if (state.owner >= 0).all():
            _next_setup_player(state, first=True)
        else:
            state.current = (me + 1) % state.n_players
    elif isinstance(action, Place):
        state.armies[action.territory] += action.armies
        state.reserve -= action.armies
        if state.phase == SETUP:
            state.setup_left[me] -= action.armies
            state._emit("place", dst=action.territory, armies=action.armies)
            _check_victory(state, moved=True)
            if state.phase != OVER and state.reserve == 0:
                _next_setup_player(state)
            return
        state._emit("reinforce", dst=action.territory, armies=action.armies)
        if state.reserve == 0 and len(state.hands[me]) < state.config.forced_trade_at:
            state.phase = ATTACK
    elif isinstance(action, Trade):
        _trade(state, tuple(action.cards) if state.config.trade_bonus == "every_trade" else tuple(sorted(action.cards)))
    elif isinstance(action, Attack):
        _attack(state, action, defender_dice)
    elif isinstance(action, Occupy):
        src, dst, _ = state.occupy
        state.armies[src] -= action.armies
        state.armies[dst] += action.armies
        state._emit("occupy", src=src, dst=dst, armies=action.armies)
        state.occupy = None
        if len(state.hands[me]) >= state.config.elimination_trade_at:
            state.phase = REINFORCE  # trade down at once after taking a victim's cards, then place
        else:
            state.phase = ATTACK
    elif isinstance(action, EndAttack):
        state._emit("end_attack")
        state.phase = FORTIFY
    elif isinstance(action, Fortify):
        state.armies[action.src] -= action.armies
        state.armies[action.dst] += action.armies
        state._emit("fortify", src=action.src, dst=action.dst, armies=action.armies)
        _check_victory(state, moved=True)
        if state.phase != OVER:
            _end_turn(state)
        return
    elif isinstance(action, EndTurn):
        state._emit("end_turn")
        _end_turn(state)
        return
    if state.phase != OCCUPY:  # a conquest is complete only once the armies have moved in
        _check_victory(state, moved=isinstance(action, (Place, Occupy)))


def _trade(state: GameState, cards: tuple[int, int, int]) -> None:
    me = state.current
    value = state.trade_value(cards)
    bonus_at = None
    if not state.trade_bonus_used or state.config.trade_bonus == "every_trade":
        # classic: at most 2 bonus armies a turn, on the first owned card's territory
        for c in cards:
            if c < state.board.n_territories and state.owner[c] == me:
                bonus_at = c
                break
    for c in cards:
        state.hands[me].remove(c)
        (state.deck if state.config.card_recycle == "at_once" else state.discard).append(c)
    state.trades += 1
    state.reserve += value
    if bonus_at is not None:
        state.trade_bonus_used = True
        state.armies[bonus_at] += TERRITORY_BONUS
    state._emit("trade", dst=bonus_at, armies=value, cards=" ".join(map(str, cards)))


def _attack(state: GameState, action: Attack, defender_dice: int | None) -> None:
    me, src, dst = state.current, action.src, action.dst
    defender = int(state.owner[dst])
    rolling, defending = int(state.armies[src]) - 1, int(state.armies[dst])
    if action.stop_at is None:
        a_dice = action.dice or min(ATTACKER_DICE, rolling)
        d_dice = min(DEFENDER_DICE, defending) if defender_dice is None else defender_dice
        if not 1 <= d_dice <= min(DEFENDER_DICE, defending):
            most = min(DEFENDER_DICE, defending)
            raise IllegalAction(f"defender player {defender} may roll 1..{most} dice, not {d_dice}")
        a_loss, d_loss = state.chance.roll(a_dice, d_dice)
        last_dice = a_dice
        possible = min(a_loss, d_loss) >= 0 and a_loss + d_loss == min(a_dice, d_dice)
    else:
        a_dice, d_dice = min(ATTACKER_DICE, rolling), min(DEFENDER_DICE, defending)
        a_loss, d_loss, last_dice = state.chance.battle(rolling, defending, action.stop_at)
        left = rolling - a_loss  # a last roll may lose two, so the attacker can end one below stop_at
        possible = (max(0, action.stop_at - 1) <= left <= rolling and 0 <= d_loss <= defending
                    and (d_loss == defending or left <= action.stop_at)
                    and (action.stop_at < rolling or a_loss == d_loss == 0))
    if not possible:  # guards replays of corrupt traces
        raise IllegalAction(f"outcome ({a_loss}, {d_loss}) is impossible for {action} "
                            f"with {rolling + 1} vs {defending} armies")
    state.armies[src] -= a_loss
    state.armies[dst] -= d_loss
    conquered = bool(state.armies[dst] == 0)
    state._emit("attack", src=src, dst=dst, a_dice=a_dice, d_dice=d_dice, a_loss=a_loss, d_loss=d_loss,
                conquered=conquered, opponent=defender, stop_at=action.stop_at)
    if not conquered:
        if action.stop_at is None and state.armies[src] >= 2:
            state.battle = (src, dst)
        return
    state.owner[dst] = me
    state.owners_changed()
    state.conquered = True
    state.occupy = (src, dst, min(last_dice, int(state.armies[src]) - 1))
    state.phase = OCCUPY
    if state.ownership()[0][defender] == 0:
        _eliminate(state, defender)
        state.owners_changed()


def _eliminate(state: GameState, victim: int) -> None:
    me = state.current
    state.alive[victim] = False
    state.eliminated_by[victim] = me
    taken = state.hands[victim]
    state.hands[me].extend(taken)
    state.hands[victim] = []
    state._emit("eliminate", opponent=victim, cards=" ".join(map(str, taken)) or None)


def _check_victory(state: GameState, moved: bool) -> None:
    """After an action of the player to move; `moved`: a placement, an occupation or a fortification."""
    if state.config.win_test == MOVER:
        if moved:
            _check_mover_victory(state)
        return
    if state.turn == 0:  # claims and setup placements: a game is won on a player's own turn, after setup
        return
    me = state.current
    if state.config.mode == "domination":
        if state.ownership()[0][me] == state.board.n_territories:
            _finish(state, me, BY_DOMINATION)
        return
    # nobody won at the last check with these owners and this player to act, and no mission counts armies
    nobody = ("nobody", me)
    if nobody in state.done_by_stamp:
        return
    # the acting player first; after an elimination a destroy mission elsewhere may have fallen back to 24
    order = [me] + ([p for p in range(state.n_players) if p != me] if (state.eliminated_by >= 0).any() else [])
    for p in order:
        if state.alive[p] and _mission_done(state, p):
            _finish(state, p, BY_MISSION)
            return
    if sum(state.alive) == 1:  # the last player standing wins even in mission mode
        _finish(state, me, BY_DOMINATION)
        return
    if not any(_counts_armies(state.missions[p]) for p in order):
        state.done_by_stamp[nobody] = True


def _check_mover_victory(state: GameState) -> None:
    """Domination's test (`RiskGame.checkPlayerWon`): the mover alone, all territories first, then (in mission
    mode, once the setup placements are over) its own mission; a destroy mission whose target someone else
    eliminated is its territory count (`Mission.complete`)."""
    me = state.current
    if state.ownership()[0][me] == state.board.n_territories:
        _finish(state, me, BY_DOMINATION)
    elif state.config.mode == "mission" and not any(state.setup_left) and _mission_done(state, me):
        _finish(state, me, BY_MISSION)


def _counts_armies(m: Mission) -> bool:
    return m.kind == "territories" and m.min_armies > 1


def _mission_done(state: GameState, p: int) -> bool:
    """Whether p's mission is fulfilled; cached while ownership stays as it is, unless the mission counts armies."""
    m = state.missions[p]
    by_armies = _counts_armies(m)
    cached = None if by_armies else state.done_by_stamp.get(p)
    if cached is None:
        territories, held = state.ownership()
        cached = m.complete(p, state.owner == p if by_armies else None, state.armies, held[p], state.n_players,
                            state.eliminated_by, n_owned=territories[p])
        if not by_armies:
            state.done_by_stamp[p] = cached
    return cached


def _finish(state: GameState, winner: int, reason: str) -> None:
    state._emit("win", opponent=winner, armies=None, player=state.current)
    state.winner = winner
    state.end_reason = reason
    state.phase = OVER


def _next_setup_player(state: GameState, first: bool = False) -> None:
    """Pass initial placement to the next player with armies left; start the first turn when none remain."""
    p = state.n_players
    if first:
        start = 0 if state.config.setup_start == "seat0" else state.board.n_territories % p
    else:
        start = (state.current + 1) % p
    for k in range(p):
        cand = (start + k) % p
        if state.setup_left[cand] > 0:
            state.current = cand
            state.phase = SETUP
            state.reserve = min(state.config.setup_batch, state.setup_left[cand])
            return
    _begin_turn(state, 0)


def _end_turn(state: GameState) -> None:
    me = state.current
    if state.conquered:
        pool = state.deck
        if not pool:  # the deck recycles: traded cards are shuffled back
            state.deck, state.discard = sorted(state.discard), []
            pool = state.deck
        if pool:
            card = state.chance.draw(pool)
            state.deck.remove(card)
            state.hands[me].append(card)
            state._emit("draw_card", cards=str(card))
    nxt = (me + 1) % state.n_players
    while not state.alive[nxt]:
        nxt = (nxt + 1) % state.n_players
    _begin_turn(state, nxt)


def _begin_turn(state: GameState, player: int) -> None:
    if state.turn >= state.config.turn_cap:
        state.phase = OVER
        state.end_reason = BY_TURN_CAP
        state._emit("draw")
        return
    state.turn += 1
    state.current = player
    state.conquered = False
    state.trade_bonus_used = False
    state.phase = REINFORCE
    state.reserve = state.reinforcements(player)
    state.snapshots.append((state.turn, player, state.owner.copy(), state.armies.copy()))
