"""The abstract RISK turn model searched by goal-based (GB) and exhaustive (AB) max^n search.

A turn of the player to move: one placement of all its reinforcements on one territory (placements bucketed: only
territories with an enemy neighbour are choices), then up to `max_attacks` attacks, each a whole battle with its
deterministic expected outcome (`riskcore.engine.battle.expected_battle`; a conquest moves all but one army in),
then the end of the turn. Atomic actions: ("place", t), ("attack", src, dst), ("end",). Players move in a fixed
order.

Values are per player (max^n, Luckhardt & Irani 1986): v_p = 1 for a player holding every territory, else
(territory share + army share + held continent bonus share) / 3; a player given target territories (its mission)
values them too: (3 v_p + w share of its targets held) / (3 + w).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from riskcore.engine.battle import expected_attack, expected_battle_table
from riskcore.search import kernels

END = ("end",)


def turn_sequences(model: "Model", s: "AState") -> tuple[list[tuple[tuple, "AState"]], int]:
    """Every action sequence of the mover's turn from `s` with the state it ends in, depth first in the model's
    order (so ties keep the earlier, as in AB), and the number of states the walk made (each counts in
    `Model.generated`)."""
    if isinstance(model, PlainModel):
        before = model.generated
        out = list(_plain_sequences(model, s))
        return out, model.generated - before
    n = len(s.owner)
    owners, armies, info, codes, made = kernels.turn_walk(s.owner, s.armies, s.to_move, int(s.phase != "place"),
                                                          s.attacks, model.tables)
    model.generated += int(made)
    decode = {}

    def action(code: int) -> tuple:
        if code not in decode:
            decode[code] = kernel_action(code, n, model.tables)
        return decode[code]

    out = [(tuple(action(c) for c in codes[k, :info[k, 3]]), kernel_state(owners[k], armies[k], *info[k, :3]))
           for k in range(len(info))]
    return out, int(made)


def kernel_action(code: int, n: int, tables) -> tuple:
    """An action from the kernels' code: -1 ends the turn, t < n places on territory t, n + e attacks along
    border e."""
    if code < 0:
        return END
    if code < n:
        return ("place", int(code))
    return ("attack", int(tables[kernels.EDGE_SRC][code - n]), int(tables[kernels.EDGE_DST][code - n]))


def kernel_state(owner: np.ndarray, armies: np.ndarray, mover, phase, attacks) -> "AState":
    """A state from the kernels' arrays and codes (phase 0 places, 1 attacks)."""
    return AState(owner, armies, int(mover), "place" if phase == 0 else "attack", int(attacks))


def _plain_sequences(model: "Model", s: "AState", actions: tuple = ()):
    for a in model.actions(s):
        y = model.apply(s, a)
        if a == END or model.terminal(y):
            yield actions + (a,), y
        else:
            yield from _plain_sequences(model, y, actions + (a,))


def maxn_better(v: np.ndarray, best: np.ndarray | None, player: int) -> bool:
    """The max^n backup rule: the mover keeps the child best for itself; ties keep the earlier child."""
    return best is None or v[player] > best[player] + 1e-12


def first_best(values: dict) -> object:
    """The key a max^n search picks from scalar values: the first of the best (ties keep the earlier child)."""
    pick = None
    for k, v in values.items():
        if pick is None or v > values[pick] + 1e-12:
            pick = k
    return pick


def maxn_search(model: "Model", s: "AState", turns: int, children, count) -> np.ndarray:
    """Max^n value of `s`: `children(s, turns)` yields (child, turns left); `count()` is called once per node."""
    count()
    if turns == 0 or model.terminal(s):
        return model.evaluate(s)
    best = None
    for child, left in children(s, turns):
        v = maxn_search(model, child, left, children, count)
        if maxn_better(v, best, s.to_move):
            best = v
    return best


@dataclass
class AState:
    owner: np.ndarray
    armies: np.ndarray
    to_move: int
    phase: str = "place"  # "place" | "attack"
    attacks: int = 0

    def key(self) -> tuple:
        return (self.owner.tobytes(), self.armies.tobytes(), self.to_move, self.phase, self.attacks)


@dataclass
class Model:
    """The abstract turn model on compiled kernels (`search.kernels`); `PlainModel` is the same model in plain
    numpy, the reference the kernels are tested against."""

    board: object
    n_players: int
    max_attacks: int = 3
    generated: int = field(default=0, compare=False)  # states made by `apply`: the work a search does
    targets: dict[int, np.ndarray] = field(default_factory=dict)  # player -> territories it also values
    target_weight: float = 1.0

    def __post_init__(self) -> None:
        self.tables = model_tables(self)  # the board and the model's settings as the kernels take them

    def reserve(self, s: AState, p: int) -> int:
        return kernels.reserve(s.owner, p, self.tables[kernels.CONT_MASK], self.tables[kernels.BONUS])

    def terminal(self, s: AState) -> bool:
        return kernels.terminal(s.owner)

    def placements(self, s: AState) -> list[tuple]:
        return [("place", int(t)) for t in kernels.placements(s.owner, s.to_move, self.tables)]

    def attacks(self, s: AState) -> list[tuple]:
        src, dst = self.tables[kernels.EDGE_SRC], self.tables[kernels.EDGE_DST]
        return [("attack", int(src[e]), int(dst[e]))
                for e in kernels.attack_edges(s.owner, s.armies, s.to_move, s.attacks, self.tables)]

    def actions(self, s: AState) -> list[tuple]:
        if s.phase == "place":
            return self.placements(s)
        return self.attacks(s) + [END]

    def next_player(self, s: AState, owner: np.ndarray) -> int:
        return kernels.next_player(owner, s.to_move, self.n_players)

    def apply(self, s: AState, a: tuple) -> AState:
        self.generated += 1
        if a[0] == "place":
            armies = s.armies.copy()
            armies[a[1]] += self.reserve(s, s.to_move)
            return AState(s.owner, armies, s.to_move, "attack", 0)
        if a[0] == "attack":
            owner, armies = self.attack_outcome(s.owner, s.armies, a[1], a[2])
            return AState(owner, armies, s.to_move, "attack", s.attacks + 1)
        return AState(s.owner, s.armies, self.next_player(s, s.owner), "place", 0)

    def attack_outcome(self, owner: np.ndarray, armies: np.ndarray, src: int, dst: int
                       ) -> tuple[np.ndarray, np.ndarray]:
        """Owners and armies after the expected outcome of the battle src -> dst."""
        return kernels.attack(owner, armies, src, dst, self.tables)

    def evaluate(self, s: AState) -> np.ndarray:
        return kernels.evaluate(s.owner, s.armies, self.tables)

    def greedy_attack(self, s: AState, p: int, allowed: np.ndarray) -> tuple:
        """p's attack on an `allowed` territory that raises p's value most (by more than 1e-12, the first in the
        model's order on ties), or END when none does; every attack tried is a state made."""
        counter = np.zeros(1, dtype=np.int64)
        e = kernels.greedy_attack(s.owner, s.armies, p, allowed, self.tables, counter)
        self.generated += int(counter[0])
        if e < 0:
            return END
        return ("attack", int(self.tables[kernels.EDGE_SRC][e]), int(self.tables[kernels.EDGE_DST][e]))


def model_tables(m: Model) -> tuple:
    """`kernels`' tuple of arrays for a model (see the indices there)."""
    board = m.board
    src, dst = np.nonzero(board.adjacency)
    degree = board.adjacency.sum(axis=1)
    nbr_start = np.concatenate([[0], np.cumsum(degree)]).astype(np.int64)
    nbr = np.concatenate([np.flatnonzero(board.adjacency[t]) for t in range(board.n_territories)]).astype(np.int64)
    has_target = np.zeros(m.n_players, dtype=np.bool_)
    target = np.zeros((m.n_players, board.n_territories), dtype=np.bool_)
    for p, t in m.targets.items():
        has_target[p], target[p] = True, t
    conq, att, dfn = expected_battle_table(kernels.EB_CAP)
    return (src.astype(np.int64), dst.astype(np.int64), nbr_start, nbr, board.continent_mask.astype(np.bool_),
            board.continent_bonus.astype(np.int64), int(m.n_players), int(m.max_attacks), has_target, target,
            float(m.target_weight), conq, att, dfn)


class PlainModel(Model):
    """The abstract turn model in plain numpy: the readable reference of the compiled kernels."""

    def reserve(self, s: AState, p: int) -> int:
        return self.board.reinforcements(s.owner == p)  # as the engine's, without card trades

    def terminal(self, s: AState) -> bool:
        return len(np.unique(s.owner)) == 1

    def placements(self, s: AState) -> list[tuple]:
        p = s.to_move
        mine = s.owner == p
        front = mine & (self.board.adjacency & ~mine[None, :]).any(axis=1)
        choices = np.flatnonzero(front) if front.any() else np.flatnonzero(mine)
        return [("place", int(t)) for t in choices]

    def attacks(self, s: AState) -> list[tuple]:
        if s.attacks >= self.max_attacks:
            return []
        src, dst = np.nonzero(self.board.adjacency)
        ok = (s.owner[src] == s.to_move) & (s.owner[dst] != s.to_move) & (s.armies[src] >= 2)
        return [("attack", int(a), int(b)) for a, b in zip(src[ok], dst[ok])]

    def next_player(self, s: AState, owner: np.ndarray) -> int:
        p = s.to_move
        for _ in range(self.n_players):
            p = (p + 1) % self.n_players
            if (owner == p).any():
                return p
        return s.to_move

    def attack_outcome(self, owner: np.ndarray, armies: np.ndarray, src: int, dst: int
                       ) -> tuple[np.ndarray, np.ndarray]:
        return expected_attack(owner, armies, src, dst)

    def greedy_attack(self, s: AState, p: int, allowed: np.ndarray) -> tuple:
        here = self.evaluate(s)[p]
        best, best_v = END, here
        mine = s.owner == p
        for src, dst in zip(*np.nonzero(self.board.adjacency)):
            if mine[src] and allowed[dst] and not mine[dst] and s.armies[src] >= 2:
                a = ("attack", int(src), int(dst))
                v = self.evaluate(self.apply(s, a))[p]
                if v > best_v + 1e-12:
                    best, best_v = a, v
        return best

    def evaluate(self, s: AState) -> np.ndarray:
        v = np.zeros(self.n_players)
        total_bonus = self.board.continent_bonus.sum()
        for p in range(self.n_players):
            owned = s.owner == p
            if owned.all():
                v[p] = 1.0
                continue
            held = self.board.held_continents(owned)
            v[p] = (owned.mean() + s.armies[owned].sum() / s.armies.sum()
                    + self.board.continent_bonus[held].sum() / total_bonus) / 3
            if p in self.targets:  # e.g. a player's own mission, which only that player's search knows
                t = self.targets[p]
                v[p] = (3 * v[p] + self.target_weight * (owned & t).sum() / t.sum()) / (3 + self.target_weight)
        return v
