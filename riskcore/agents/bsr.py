"""`bsr`: the Border Security Ratio drafting heuristic (as in the minimax RISK agent this project reproduces).

For each border territory x of the player (one with an enemy neighbour):
    BST(x) = sum of enemy armies adjacent to x          (Border Security Threat)
    BSR(x) = BST(x) / armies(x)                          (Border Security Ratio)
BSRs are normalised over the borders, the top half (by descending BSR) is kept, and the reinforcements are
shared among those territories in proportion to their normalised BSR (largest remainders get the odd armies).
Attacks, occupation and fortification follow the `domination` heuristic.
"""

from __future__ import annotations

import numpy as np

from riskcore.actions import Action, Place, Trade
from riskcore.agents.base import PlayerView
from riskcore.agents.heuristic import DominationAgent
from riskcore.cards import find_sets


def border_security(board, owner: np.ndarray, armies: np.ndarray, player: int) -> tuple[np.ndarray, np.ndarray]:
    """(border territories, their BSR) for `player`; BST counts enemy armies on adjacent territories."""
    mine = owner == player
    enemy_armies = np.where(mine | (owner < 0), 0, armies)
    bst = board.adjacency.astype(np.int64) @ enemy_armies
    borders = np.flatnonzero(mine & (bst > 0))
    return borders, bst[borders] / armies[borders]


def bsr_allocation(board, owner: np.ndarray, armies: np.ndarray, player: int, reserve: int) -> dict[int, int]:
    """Armies per territory: proportional to normalised BSR over the top half of the borders."""
    borders, bsr = border_security(board, owner, armies, player)
    if len(borders) == 0 or reserve <= 0:
        mine = np.flatnonzero(owner == player)
        return {int(mine[np.argmax(armies[mine])]): reserve} if reserve > 0 else {}
    order = np.argsort(-bsr, kind="stable")
    keep = order[: max(1, (len(order) + 1) // 2)]
    share = bsr[keep] / bsr[keep].sum()
    exact = share * reserve
    alloc = np.floor(exact).astype(int)
    for i in np.argsort(-(exact - alloc), kind="stable")[: reserve - alloc.sum()]:
        alloc[i] += 1
    return {int(borders[k]): int(a) for k, a in zip(keep, alloc) if a > 0}


class BsrAgent(DominationAgent):
    name = "bsr"

    def __init__(self, player: int, rng: np.random.Generator, threshold: float = 0.6):
        super().__init__(player, rng, threshold=threshold)
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
        if view.phase == "reinforce":
            return self.reinforce(view)
        return super().act(view)
