"""`gb`: plays RISK with goal-based search (`riskcore.search.gbsearch`) in the abstract turn model.

At the start of its reinforcement it searches `lookahead` turns and takes the best goal's plan: all
reinforcements on the planned territory, then the planned attacks as whole battles (at most `max_attacks`).
Its own value also counts its mission's territories (`riskcore.agents.heuristic.mission_targets`) with weight
`mission_weight` (0: blind to the mission); opponents' missions are unknown and not modelled. `mode=lazy`
follows the plan for the whole turn; `mode=eager` searches again before every attack, from the real position.
Occupation and fortification follow the `domination` heuristic; card sets are traded as soon as they are held.
"""

from __future__ import annotations

import numpy as np

from riskcore.engine.actions import Action, Attack, EndAttack, Place, Trade
from riskcore.agents.base import PlayerView
from riskcore.agents.heuristic import DominationAgent, mission_targets
from riskcore.engine.cards import find_sets
from riskcore.search.abstract import AState, Model
from riskcore.search.gbsearch import GBSearch
from riskcore.search.policy import GoalPolicy


class GBAgent(DominationAgent):
    name = "gb"

    def __init__(self, player: int, rng: np.random.Generator, lookahead: int = 2, mode: str = "lazy",
                 opponents: str = "restricted", max_attacks: int = 8, mission_weight: float = 3.0):
        super().__init__(player, rng)
        if mode not in ("lazy", "eager"):
            raise ValueError(f"gb: mode must be lazy or eager, got {mode!r}")
        if lookahead < 1:
            raise ValueError(f"gb: lookahead must be at least 1, got {lookahead}")
        if max_attacks < 1 or mission_weight < 0:
            raise ValueError(f"gb: max_attacks must be >= 1 and mission_weight >= 0, got {max_attacks}, "
                             f"{mission_weight}")
        self.lookahead, self.mode = int(lookahead), mode
        self.policy = GoalPolicy(opponents=opponents)
        self.max_attacks = int(max_attacks)
        self.mission_weight = float(mission_weight)
        self._plan: list[tuple] = []
        self._turn = -1
        self._attacks = 0

    def _search(self, view: PlayerView, phase: str, attacks_done: int) -> list[tuple]:
        targets = mission_targets(view)
        model = Model(view.board, view.n_players, self.max_attacks,
                      targets={} if targets is None or not targets.any() else {self.player: targets},
                      target_weight=self.mission_weight)
        state = AState(np.array(view.owner), np.array(view.armies), self.player, phase, attacks_done)
        _, actions, _ = GBSearch(model, self.player, self.policy).decide(state, self.lookahead)
        return actions

    def act(self, view: PlayerView) -> Action:
        if view.phase == "reinforce":
            sets = find_sets(view.hand, view.board.card_symbol)
            if sets:
                return Trade(sets[0])
            if view.turn != self._turn:
                self._turn, self._attacks = view.turn, 0
                self._plan = self._search(view, "place", 0)
            place = next((a for a in self._plan if a[0] == "place"), None)
            t = place[1] if place is not None and view.owner[place[1]] == self.player else self._staging(view, 1)
            return Place(int(t), view.reserve)
        if view.phase == "attack":
            if self.mode == "eager":
                self._plan = self._search(view, "attack", self._attacks)
            planned = [a for a in self._plan if a[0] == "attack"]
            for a in planned:
                src, dst = a[1], a[2]
                if view.owner[src] == self.player and view.owner[dst] != self.player and view.armies[src] >= 2:
                    self._plan.remove(a)
                    self._attacks += 1
                    return Attack(src, dst, None, 0)
            self._plan = []
            return EndAttack()
        return super().act(view)
