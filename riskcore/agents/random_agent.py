"""`random`: a legal-action baseline that picks each decision uniformly among its options.

It picks a phase's options directly (not by enumerating `legal_actions`) so that long random games stay cheap:
end the attack phase with probability `p_end`, else a uniformly random attack pair and dice count (single rolls);
place a uniformly random number of armies on a random territory; fortify with probability one half.

`tilt` > 0 makes it follow its mission a little, with the same decision code: each placement, with probability
`tilt`, goes to a random owned territory in or next to its mission's targets, and each attack, with probability
`tilt`, picks among the attacks on a target. It is the recognition study's mission-following play from code that
shares nothing with the heuristic agents' staging and attack choice (a lineage of its own). `tilt=0` draws exactly
what the plain agent draws.
"""

from __future__ import annotations

import numpy as np

from riskcore.engine.actions import Action, Attack, Claim, EndAttack, EndTurn, Fortify, Occupy, Place, Trade
from riskcore.agents.base import Agent, PlayerView
from riskcore.engine.cards import find_sets


class RandomAgent(Agent):
    name = "random"

    def __init__(self, player: int, rng: np.random.Generator, p_end: float = 0.15, tilt: float = 0.0):
        super().__init__(player, rng)
        if not 0 < p_end <= 1:
            raise ValueError(f"random agent: p_end must be in (0, 1], got {p_end}")
        if not 0 <= tilt <= 1:
            raise ValueError(f"random agent: tilt must be in [0, 1], got {tilt}")
        self.p_end, self.tilt = p_end, tilt

    def _pick(self, items):
        return items[int(self.rng.integers(len(items)))]

    def _tilted(self, options: np.ndarray, serves: np.ndarray) -> np.ndarray:
        """`options` narrowed, with probability `tilt`, to those that serve the mission (when any does)."""
        if not self.tilt or not serves.any() or self.rng.random() >= self.tilt:
            return options
        return options[serves]

    def _targets(self, view: PlayerView) -> np.ndarray:
        """The territories the mission names: its continents (a third of its choice: the one it holds most of),
        or the colour it must destroy; none for a territory-count mission."""
        m, board = view.mission, view.board
        none = np.zeros(board.n_territories, dtype=bool)
        if m is None:
            return none
        if m.kind == "continents":
            held = board.continent_mask @ (view.owner == self.player) / board.continent_mask.sum(axis=1)
            extra = [c for c in np.argsort(-held, kind="stable") if c not in m.continents][:m.extra_continents]
            return board.continent_mask[list(m.continents) + [int(c) for c in extra]].any(axis=0)
        if m.kind == "destroy" and not m.destroy_fallback(self.player, view.n_players, view.eliminated_by):
            return view.owner == m.colour
        return none

    def act(self, view: PlayerView) -> Action:
        me, owner, armies, phase = self.player, view.owner, view.armies, view.phase
        if phase == "claim":
            return Claim(int(self._pick(np.flatnonzero(owner == -1))))
        if phase in ("setup", "reinforce"):
            if phase == "reinforce":
                sets = find_sets(view.hand, view.board.card_symbol)
                if sets and (view.forced_trade or self.rng.random() < 0.5):
                    return Trade(self._pick(sets))
            mine = np.flatnonzero(owner == me)
            if self.tilt:
                targets = self._targets(view)
                near = targets | (view.board.adjacency[:, targets].any(axis=1))
                mine = self._tilted(mine, near[mine])
            t = int(self._pick(mine))
            return Place(t, int(self.rng.integers(1, view.reserve + 1)))
        if phase == "occupy":
            src, _, low = view.occupy
            return Occupy(int(self.rng.integers(low, armies[src])))
        edges = border_edges(view.board)
        if phase == "attack":
            ok = (owner[edges[0]] == me) & (owner[edges[1]] != me) & (armies[edges[0]] >= 2)
            if not ok.any() or self.rng.random() < self.p_end:
                return EndAttack()
            pairs = np.flatnonzero(ok)
            if self.tilt:
                pairs = self._tilted(pairs, self._targets(view)[edges[1][pairs]])
            i = int(self._pick(pairs))
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
