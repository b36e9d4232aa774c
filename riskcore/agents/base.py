"""What an agent sees and how it is asked to act.

An agent gets a `PlayerView`: the public board (owners, armies, card counts, trades so far) plus its own hand and its
own mission, never another player's, and a private `numpy.random.Generator` of its own.
"""

from __future__ import annotations

from operator import attrgetter

import numpy as np

from riskcore.engine.actions import Action
from riskcore.engine import EVENT_FIELDS, GameState


def _readonly(arr: np.ndarray) -> np.ndarray:
    view = arr.view()
    view.flags.writeable = False
    return view


def _public(name: str, doc: str) -> property:
    """A read-only pass-through to a public field of the game state."""
    return property(attrgetter(f"_s.{name}"), doc=doc)


class PlayerView:
    """The part of a game state that `player` may see. Arrays are read-only views that follow the game."""

    __slots__ = ("_s", "player", "board", "config", "owner", "armies")

    def __init__(self, state: GameState, player: int):
        self._s = state
        self.player = player
        self.board = state.board
        self.config = state.config
        self.owner = _readonly(state.owner)
        self.armies = _readonly(state.armies)

    @property
    def mission(self):
        return self._s.missions[self.player]

    @property
    def hand(self) -> tuple[int, ...]:
        return tuple(self._s.hands[self.player])

    @property
    def card_counts(self) -> tuple[int, ...]:
        return tuple(len(h) for h in self._s.hands)

    phase = _public("phase", "current phase")
    reserve = _public("reserve", "armies the player to move still has to place")
    occupy = _public("occupy", "(src, dst, minimum move) after a conquest, else None")
    turn = _public("turn", "player turns so far")
    trades = _public("trades", "card sets traded so far (sets the next escalating value)")
    n_players = _public("n_players", "seats in the game")
    conquered_this_turn = _public("conquered", "whether the player to move has conquered this turn")

    @property
    def alive(self) -> tuple[bool, ...]:
        return tuple(self._s.alive)

    @property
    def eliminated_by(self) -> np.ndarray:
        return self._s.eliminated_by.copy()

    @property
    def forced_trade(self) -> bool:
        return len(self._s.hands[self.player]) >= self.config.forced_trade_at

    def next_trade_value(self, cards: tuple[int, int, int]) -> int:
        return self._s.trade_value(cards)

    def held_continents(self, player: int | None = None) -> np.ndarray:
        return self._s.held_continents(self.player if player is None else player)

    def continents_held(self) -> list[list[bool]]:
        """Per player, whether it holds each continent whole (public; lists, shared: do not change them)."""
        return self._s.ownership()[1]

    def continent_counts(self) -> np.ndarray:
        """(players x continents) territories each player owns in each continent (public)."""
        return self._s.continent_counts()

    def public_log(self, start: int = 0) -> list[tuple]:
        """Events from `start` on as an observer at this seat sees them: other players' drawn cards are hidden."""
        log = self._s.log[start:]
        kind_at, player_at, cards_at = EVENT_FIELDS.index("kind"), EVENT_FIELDS.index("player"), \
            EVENT_FIELDS.index("cards")
        out = []
        for row in log:
            if row[kind_at] == "draw_card" and row[player_at] != self.player:
                row = row[:cards_at] + (None,) + row[cards_at + 1:]
            out.append(row)
        return out

    def legal_actions(self) -> list[Action]:
        from riskcore.engine import legal_actions

        return legal_actions(self._s)


class Agent:
    """Base class: subclasses implement `act`; `defend_dice` defaults to rolling the most dice allowed."""

    name = "agent"

    def __init__(self, player: int, rng: np.random.Generator, **params):
        if params:
            raise ValueError(f"agent {self.name!r} has no parameter(s) {sorted(params)}")
        self.player = player
        self.rng = rng

    def act(self, view: PlayerView) -> Action:
        raise NotImplementedError

    def defend_dice(self, view: PlayerView, src: int, dst: int, attacker_dice: int) -> int:
        return int(min(2, view.armies[dst]))
