"""`aware`: a `mission` agent that also blocks the opponents' most likely missions.

Once per turn it runs mission recognition on the public log (a `recognition.online.LogRecogniser`; by default
PHATT with the proportional scheme over the 12 continent-card explanations, the recogniser that needs no model of
the opponent) and gets each opponent's posterior P_o(e). A territory t held by opponent o then gains
    belief_weight * sum_e P_o(e) * progress_o(e) * 1[t in T_e],
with progress_o(e) the share of e's territories o already holds: it attacks the continents an opponent most
likely needs and is closest to completing. `belief_weight = 0` is the plain `mission` agent.
"""

from __future__ import annotations

import numpy as np

from riskcore.agents.base import PlayerView
from riskcore.agents.heuristic import MissionAgent
from riskcore.floatdot import dot
from riskcore.recognition.online import LogRecogniser, OnlinePhatt
from riskcore.recognition.phatt import PhattWeights


class AwareAgent(MissionAgent):
    name = "aware"

    def __init__(self, player: int, rng: np.random.Generator, belief_weight: float = 1.0, focus: float = 0.8,
                 lam: float = 0.9, threshold: float = 0.6, recogniser: LogRecogniser | None = None):
        super().__init__(player, rng, focus=focus, threshold=threshold)
        if belief_weight < 0:
            raise ValueError(f"aware: belief_weight must be non-negative, got {belief_weight}")
        self.belief_weight = float(belief_weight)
        self.recogniser = recogniser or OnlinePhatt(PhattWeights("proportional", lam=lam))
        self._turn = -1
        self._block = None

    def beliefs(self, view: PlayerView) -> dict[int, np.ndarray]:
        """Each opponent's posterior over the explanations, from the public log so far."""
        post = self.recogniser.posteriors(view.public_log(), view.n_players, view.board)
        return {p: probs for p, probs in post.items() if p != self.player}

    def _blocking_values(self, view: PlayerView) -> np.ndarray:
        member = self.recogniser.hypotheses(view.board).membership(np.asarray(view.owner))
        extra = np.zeros(view.board.n_territories)
        for opp, post in self.beliefs(view).items():
            if not view.alive[opp]:
                continue
            held = np.asarray(view.owner) == opp
            progress = (member & held).sum(axis=1) / member.sum(axis=1)
            extra += held * dot(post * progress, member)
        return self.belief_weight * extra

    def values(self, view: PlayerView) -> np.ndarray:
        base = super().values(view)
        if self.belief_weight == 0:
            return base
        if view.turn != self._turn:
            self._turn, self._block = view.turn, self._blocking_values(view)
        return base + self._block
