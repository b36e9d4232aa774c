"""`random`: a legal-action baseline that picks each decision uniformly among its options.

It picks a phase's options directly (not by enumerating `legal_actions`) so that long random games stay cheap:
end the attack phase with probability `p_end`, else a uniformly random attack pair and dice count (single rolls);
place a uniformly random number of armies on a random territory; fortify with probability one half.
"""

from __future__ import annotations

import numpy as np

from riskcore.engine.actions import Action, Attack, Claim, EndAttack, EndTurn, Fortify, Occupy, Place, Trade
from riskcore.agents.base import Agent, PlayerView
from riskcore.engine.cards import find_sets


class RandomAgent(Agent):
    name = "random"

    def __init__(self, player: int, rng: np.random.Generator, p_end: float = 0.15):
        super().__init__(player, rng)
        if not 0 < p_end <= 1:
            raise ValueError(f"random agent: p_end must be in (0, 1], got {p_end}")
        self.p_end = p_end

    def _pick(self, items):
        return items[int(self.rng.integers(len(items)))]

    def act(self, view: PlayerView) -> Action:
        me, owner, armies, phase = self.player, view.owner, view.armies, view.phase
        if phase == "claim":
            return Claim(int(self._pick(np.flatnonzero(owner == -1))))
        if phase in ("setup", "reinforce"):
            if phase == "reinforce":
                sets = find_sets(view.hand, view.board.card_symbol)
                if sets and (view.forced_trade or self.rng.random() < 0.5):
                    return Trade(self._pick(sets))
            t = int(self._pick(np.flatnonzero(owner == me)))
            return Place(t, int(self.rng.integers(1, view.reserve + 1)))
        if phase == "occupy":
            src, _, low = view.occupy
            return Occupy(int(self.rng.integers(low, armies[src])))
        edges = border_edges(view.board)
        if phase == "attack":
            ok = (owner[edges[0]] == me) & (owner[edges[1]] != me) & (armies[edges[0]] >= 2)
            if not ok.any() or self.rng.random() < self.p_end:
                return EndAttack()
            i = int(self._pick(np.flatnonzero(ok)))
            src, dst = int(edges[0][i]), int(edges[1][i])
            return Attack(src, dst, int(self.rng.integers(1, min(3, armies[src] - 1) + 1)))
        ok = (owner[edges[0]] == me) & (owner[edges[1]] == me) & (armies[edges[0]] >= 2)
        if not ok.any() or self.rng.random() < 0.5:
            return EndTurn()
        i = int(self._pick(np.flatnonzero(ok)))
        src, dst = int(edges[0][i]), int(edges[1][i])
        return Fortify(src, dst, int(self.rng.integers(1, armies[src])))


_EDGE_CACHE: dict[int, tuple[np.ndarray, np.ndarray]] = {}


def border_edges(board) -> tuple[np.ndarray, np.ndarray]:
    """Directed borders (src, dst) of a board as two index arrays, cached per board."""
    key = id(board)
    if key not in _EDGE_CACHE:
        src, dst = np.nonzero(board.adjacency)
        _EDGE_CACHE[key] = (src, dst)
    return _EDGE_CACHE[key]
