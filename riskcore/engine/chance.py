"""Chance as an explicit source of outcomes.

The engine never touches an RNG itself: it asks a `Chance` for each outcome (the deal, the mission cards, a battle,
a card draw). `RngChance` samples them from a `numpy.random.Generator`; `TraceChance` hands back the outcomes a
trace recorded, so a game replays with no RNG at all (OpenSpiel's explicit chance nodes).
"""

from __future__ import annotations

from collections import deque
from typing import Iterable, Protocol, Sequence

import numpy as np

from riskcore.engine.battle import sample_battle, sample_roll
from riskcore.engine.rules import ATTACKER_DICE


class Chance(Protocol):
    def deal(self, n_territories: int, n_players: int) -> list[int]:
        """Territory order of the random deal: the i-th territory goes to player i mod n_players."""

    def missions(self, n_missions: int, n_players: int) -> list[int]:
        """One distinct mission card index per player."""

    def battle(self, attackers: int, defenders: int, stop_at: int) -> tuple[int, int, int]:
        """A whole battle: (attacker losses, defender losses, attacker dice of the last roll)."""

    def roll(self, attacker_dice: int, defender_dice: int) -> tuple[int, int]:
        """One roll: (attacker losses, defender losses)."""

    def draw(self, pool: Sequence[int]) -> int:
        """A card drawn uniformly from the pool (equivalent to the top of a shuffled deck)."""


class RngChance:
    """Outcomes sampled from the exact distributions with a dedicated generator."""

    def __init__(self, rng: np.random.Generator):
        self.rng = rng

    def deal(self, n_territories: int, n_players: int) -> list[int]:
        return [int(t) for t in self.rng.permutation(n_territories)]

    def missions(self, n_missions: int, n_players: int) -> list[int]:
        return [int(m) for m in self.rng.choice(n_missions, size=n_players, replace=False)]

    def battle(self, attackers: int, defenders: int, stop_at: int) -> tuple[int, int, int]:
        return sample_battle(self.rng, attackers, defenders, stop_at)

    def roll(self, attacker_dice: int, defender_dice: int) -> tuple[int, int]:
        return sample_roll(self.rng, attacker_dice, defender_dice)

    def draw(self, pool: Sequence[int]) -> int:
        return int(pool[int(self.rng.integers(len(pool)))])


class TraceError(ValueError):
    """A trace is corrupt or does not match the rules; the message names the game and event."""


class TraceChance:
    """Outcomes read back from a recorded game, in the order the engine asks for them."""

    def __init__(self, deal: Sequence[int], missions: Sequence[int], battles: Iterable[tuple[int, int]],
                 draws: Iterable[int]):
        self._deal = list(deal)
        self._missions = list(missions)
        self._battles = deque(battles)
        self._draws = deque(draws)

    def deal(self, n_territories: int, n_players: int) -> list[int]:
        if sorted(self._deal) != list(range(n_territories)):
            raise TraceError(f"recorded deal covers {len(set(self._deal))} of {n_territories} territories")
        return self._deal

    def missions(self, n_missions: int, n_players: int) -> list[int]:
        return self._missions

    def _next_battle(self) -> tuple[int, int]:
        if not self._battles:
            raise TraceError("trace has fewer battle outcomes than the game needs")
        return self._battles.popleft()

    def battle(self, attackers: int, defenders: int, stop_at: int) -> tuple[int, int, int]:
        al, dl = self._next_battle()
        return al, dl, min(ATTACKER_DICE, max(attackers - al, 1))

    def roll(self, attacker_dice: int, defender_dice: int) -> tuple[int, int]:
        return self._next_battle()

    def draw(self, pool: Sequence[int]) -> int:
        if not self._draws:
            raise TraceError("trace has fewer card draws than the game needs")
        card = self._draws.popleft()
        if card not in pool:
            raise TraceError(f"recorded card draw {card} is not in the deck at that point")
        return card

    def exhausted(self) -> bool:
        return not self._battles and not self._draws
