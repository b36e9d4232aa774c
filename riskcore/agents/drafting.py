"""Border Security Ratio (BSR) drafting: where a player's reinforcements go, as in the minimax RISK agent this
project reproduces. Shared by the `bsr` agent and the minimax agent's search (`agents.minimax_search`).

For each border territory x of the player (one with an enemy neighbour):
    BST(x) = sum of enemy armies adjacent to x          (Border Security Threat)
    BSR(x) = BST(x) / armies(x)                          (Border Security Ratio)
BSRs are normalised over the borders, the top half (by descending BSR) is kept, and the reinforcements are
shared among those territories in proportion to their normalised BSR (largest remainders get the odd armies).
"""

from __future__ import annotations

import numpy as np


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
