"""The simplified model of RISK that the minimax agent searches (after the reference minimax agent):

- attacks only from a territory with more armies than its target;
- a battle has one deterministic outcome, its expectation under the exact distribution: the attacker conquers
  when the conquest probability is at least 1/2, keeping the expected survivors given a conquest (all but one
  move in); otherwise the defender keeps its expected survivors given a failed attack and the attacker keeps 1;
- each player makes 0-3 attacks a turn; opponents are modelled the same way.

Leaf value for player p (weights w, features in [0, 1]):
    w1 territory share + w2 army share + w3 mean defensive ratio on p's borders
    + w4 (1 - mean share of enemy neighbours over p's territories)
with defensive ratio(x) = armies(x) / (armies(x) + enemy armies adjacent to x).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from riskcore.battle import battle_distribution

MAX_ATTACKS = 3


@lru_cache(maxsize=None)
def expected_battle(attackers: int, defenders: int) -> tuple[bool, int, int]:
    """(conquered, attacker rolling armies left, defender armies left) of a whole battle, deterministically."""
    attackers, defenders = min(attackers, 40), min(defenders, 40)  # beyond 40 the rounding no longer changes
    dist = battle_distribution(attackers, defenders, 0)
    p_win = sum(float(p) for (a, d), p in dist.items() if d == 0)
    if p_win >= 0.5:
        left = sum(float(p) * a for (a, d), p in dist.items() if d == 0) / p_win
        return True, max(1, int(round(left))), 0
    lose = 1 - p_win
    left = sum(float(p) * d for (a, d), p in dist.items() if d > 0) / lose
    return False, 0, max(1, int(round(left)))


def features(board, owner: np.ndarray, armies: np.ndarray, player: int) -> np.ndarray:
    """The four leaf features in [0, 1] (see module docstring)."""
    mine = owner == player
    n_mine = mine.sum()
    if n_mine == 0:
        return np.zeros(4)
    adj = board.adjacency
    enemy_armies = np.where(mine, 0, armies)
    threat = adj.astype(np.int64) @ enemy_armies
    borders = mine & (threat > 0)
    defensive = (armies[borders] / (armies[borders] + threat[borders])).mean() if borders.any() else 1.0
    degree = adj.sum(axis=1)
    enemy_share = ((adj.astype(np.int64) @ (~mine).astype(np.int64))[mine] / degree[mine]).mean()
    return np.array([n_mine / len(owner), armies[mine].sum() / armies.sum(), defensive, 1.0 - enemy_share])


def attacks(board, owner: np.ndarray, armies: np.ndarray, player: int) -> list[tuple[int, int]]:
    """Allowed attacks: own src with more armies than an adjacent enemy dst, ordered by army advantage."""
    src, dst = np.nonzero(board.adjacency)
    ok = (owner[src] == player) & (owner[dst] != player) & (armies[src] > armies[dst]) & (armies[src] >= 2)
    s, d = src[ok], dst[ok]
    order = np.argsort(-(armies[s] - armies[d]), kind="stable")
    return [(int(s[i]), int(d[i])) for i in order]


def apply_attack(owner: np.ndarray, armies: np.ndarray, src: int, dst: int) -> tuple[np.ndarray, np.ndarray]:
    owner, armies = owner.copy(), armies.copy()
    conquered, att_left, def_left = expected_battle(int(armies[src]) - 1, int(armies[dst]))
    if conquered:
        owner[dst] = owner[src]
        armies[dst] = att_left
        armies[src] = 1
    else:
        armies[dst] = def_left
        armies[src] = 1
    return owner, armies
