"""Hand-made positions for rule tests: a chance source with scripted outcomes and a state builder."""

from __future__ import annotations

from collections import deque

import numpy as np

from riskcore.engine.config import GameConfig
from riskcore.engine import GameState, new_game


class ScriptedChance:
    """Deal in board order, missions 0..p-1, battles and draws from scripted queues."""

    def __init__(self, battles=(), draws=()):
        self.battles = deque(battles)
        self.draws = deque(draws)

    def deal(self, n, p):
        return list(range(n))

    def missions(self, n_missions, p):
        return list(range(p))

    def battle(self, attackers, defenders, stop_at):
        al, dl = self.battles.popleft()
        return al, dl, min(3, max(attackers - al, 1))

    def roll(self, a, d):
        return self.battles.popleft()

    def draw(self, pool):
        return self.draws.popleft() if self.draws else pool[0]


def position(board, owner, armies, phase="attack", current=0, n_players=None, chance=None, **config) -> GameState:
    """A state on `board` with the given owners and armies, `current` to act in `phase`."""
    n_players = n_players or int(max(owner)) + 1
    cfg = GameConfig(board=board.name, n_players=n_players, **config)
    state = new_game(board, cfg, chance or ScriptedChance())
    state.owner[:] = np.asarray(owner)
    state.owners_changed()
    state.armies[:] = np.asarray(armies)
    state.phase = phase
    state.current = current
    state.turn = 1
    state.reserve = 0
    state.setup_left = [0] * n_players
    state.log.clear()
    return state
