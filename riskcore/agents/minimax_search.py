"""The minimax agent's own model of RISK and its search (after the reference minimax agent).

Model (simplified):
- attacks only from a territory with more armies than its target;
- a battle has one deterministic outcome, `riskcore.engine.battle.expected_battle`; a conquest moves every survivor in;
- each player makes 0-3 attacks a turn; opponents are modelled the same way; when a turn ends, the next player
  drafts its reinforcements with the BSR heuristic (`agents.drafting`).

Leaf value for player p (weights w, features in [0, 1]):
    w1 territory share + w2 army share + w3 mean defensive ratio on p's borders
    + w4 (1 - mean share of enemy neighbours over p's territories)
    [+ mission_weight x share of the mission's target territories p owns: the mission-following variant]
with defensive ratio(x) = armies(x) / (armies(x) + enemy armies adjacent to x).

Search: depth-limited paranoid alpha-beta (Sturtevant & Korf 2000): the root player maximises its leaf value;
every other player is assumed to minimise it, which turns an n-player game into a two-sided one so alpha-beta
pruning applies. A ply is one decision of the player to move: one of its best `width` allowed attacks (by army
advantage), or ending its turn (forced after 3 attacks). `plain_minimax` searches the same tree without pruning;
both count the nodes they visit.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from riskcore.agents.drafting import bsr_allocation
from riskcore.engine.battle import expected_attack
from riskcore.floatdot import dot

MAX_ATTACKS = 3
END = None  # the "end my turn" move


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



@dataclass
class SearchNode:
    owner: np.ndarray
    armies: np.ndarray
    to_move: int
    attacks_made: int = 0


@dataclass
class Search:
    board: object
    root: int
    weights: np.ndarray
    n_players: int
    depth: int = 3
    width: int = 6
    targets: np.ndarray | None = None  # the root player's mission targets (bool mask), valued at mission_weight
    mission_weight: float = 0.0
    nodes: int = field(default=0, init=False)

    def value(self, node: SearchNode) -> float:
        value = float(dot(self.weights, features(self.board, node.owner, node.armies, self.root)))
        if self.mission_weight and self.targets is not None:
            value += self.mission_weight * float((node.owner[self.targets] == self.root).mean())
        return value

    def moves(self, node: SearchNode) -> list:
        if node.attacks_made >= MAX_ATTACKS:
            return [END]
        return attacks(self.board, node.owner, node.armies, node.to_move)[: self.width] + [END]

    def child(self, node: SearchNode, move) -> SearchNode:
        if move is not END:
            owner, armies = expected_attack(node.owner, node.armies, *move)
            return SearchNode(owner, armies, node.to_move, node.attacks_made + 1)
        nxt = node.to_move
        for _ in range(self.n_players):
            nxt = (nxt + 1) % self.n_players
            if (node.owner == nxt).any():
                break
        armies = node.armies.copy()
        reserve = self.board.reinforcements(node.owner == nxt)
        for t, a in bsr_allocation(self.board, node.owner, armies, nxt, reserve).items():
            armies[t] += a
        return SearchNode(node.owner, armies, nxt, 0)

    def terminal(self, node: SearchNode) -> bool:
        return (node.owner == self.root).all() or not (node.owner == self.root).any()

    def alphabeta(self, node: SearchNode, depth: int, alpha: float, beta: float) -> float:
        self.nodes += 1
        if depth == 0 or self.terminal(node):
            return self.value(node)
        maximising = node.to_move == self.root
        best = -np.inf if maximising else np.inf
        for move in self.moves(node):
            v = self.alphabeta(self.child(node, move), depth - 1, alpha, beta)
            if maximising:
                best = max(best, v)
                alpha = max(alpha, v)
            else:
                best = min(best, v)
                beta = min(beta, v)
            if alpha >= beta:
                break
        return best

    def plain_minimax(self, node: SearchNode, depth: int) -> float:
        self.nodes += 1
        if depth == 0 or self.terminal(node):
            return self.value(node)
        values = [self.plain_minimax(self.child(node, m), depth - 1) for m in self.moves(node)]
        return max(values) if node.to_move == self.root else min(values)

    def best_move(self, node: SearchNode):
        """The root player's best first move (an attack (src, dst) or END) and its value."""
        best_move, best_value, alpha = END, -np.inf, -np.inf
        for move in self.moves(node):
            v = self.alphabeta(self.child(node, move), self.depth - 1, alpha, np.inf)
            if v > best_value:
                best_move, best_value = move, v
            alpha = max(alpha, v)
        return best_move, best_value
