"""`bsr`: the Border Security Ratio drafting heuristic (as in the minimax RISK agent this project reproduces; the
allocation is `agents.drafting.bsr_allocation`). Setup armies are drafted the same way, one at a time, so a setup
placement says what a reinforcement would. Attacks, occupation and fortification follow the `domination`
heuristic.
"""

from __future__ import annotations

import numpy as np

from riskcore.engine.actions import Action, Place, Trade
from riskcore.agents.base import PlayerView
from riskcore.agents.heuristic import DominationAgent
from riskcore.engine.cards import find_sets
from riskcore.agents.drafting import bsr_allocation


class BsrAgent(DominationAgent):
    name = "bsr"

    def __init__(self, player: int, rng: np.random.Generator, threshold: float = 0.6, mission_weight: float = 0.0):
        super().__init__(player, rng, threshold=threshold, mission_weight=mission_weight)
        self._plan: list[tuple[int, int]] = []

    def reinforce(self, view: PlayerView) -> Action:
        sets = find_sets(view.hand, view.board.card_symbol)
        if sets:
            return Trade(sets[0])
        if not self._plan or sum(a for _, a in self._plan) != view.reserve:
            alloc = bsr_allocation(view.board, view.owner, view.armies, self.player, view.reserve)
            self._plan = sorted(alloc.items())
        t, a = self._plan.pop(0)
        return Place(t, a)

    def act(self, view: PlayerView) -> Action:
        if view.phase in ("reinforce", "setup"):
            return self.reinforce(view)
        return super().act(view)
