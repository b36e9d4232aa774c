"""`minimax`: BSR drafting plus paranoid alpha-beta over attack sequences in the simplified battle model,
with a leaf value of 4 weighted features (`agents.minimax_search`). The weights are what the genetic algorithm
tunes: `minimax:w1=...:w2=...:w3=...:w4=...`, with `depth` (plies) and `width` (attacks considered per ply).
The chosen attack is then fought for real (a whole battle); at most 3 attacks a turn, as in the model.
"""

from __future__ import annotations

import numpy as np

from riskcore.engine.actions import Action, Attack, EndAttack
from riskcore.agents.base import PlayerView
from riskcore.agents.bsr import BsrAgent
from riskcore.agents.heuristic import mission_targets
from riskcore.agents.minimax_search import END, MAX_ATTACKS, Search, SearchNode


class MinimaxAgent(BsrAgent):
    name = "minimax"

    def __init__(self, player: int, rng: np.random.Generator, w1: float = 1.0, w2: float = 1.0, w3: float = 1.0,
                 w4: float = 1.0, depth: int = 3, width: int = 6, mission_weight: float = 0.0):
        super().__init__(player, rng, mission_weight=mission_weight)
        if depth < 1 or width < 1:
            raise ValueError(f"minimax: depth and width must be at least 1, got {depth}, {width}")
        self.weights = np.array([w1, w2, w3, w4], dtype=float)
        if (self.weights < 0).any():
            raise ValueError(f"minimax: weights must be non-negative, got {self.weights.tolist()}")
        self.depth, self.width = int(depth), int(width)
        self._turn, self._attacks = -1, 0

    def act(self, view: PlayerView) -> Action:
        if view.phase != "attack":
            return super().act(view)
        if view.turn != self._turn:
            self._turn, self._attacks = view.turn, 0
        if self._attacks >= MAX_ATTACKS:
            return EndAttack()
        targets = mission_targets(view) if self.mission_bias else None
        search = Search(view.board, self.player, self.weights, view.n_players, self.depth, self.width, targets,
                        self.mission_bias)
        node = SearchNode(np.array(view.owner), np.array(view.armies), self.player, self._attacks)
        move, _ = search.best_move(node)
        if move is END:
            return EndAttack()
        self._attacks += 1
        return Attack(move[0], move[1], None, 0)
