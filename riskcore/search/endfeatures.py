"""Features of the end of a turn, for a learned choice among the ends a `strike` can reach (`search.endscore`).

The mover p has just ended its turn in state z. Every feature is a share in [0, 1] (of all territories, armies
or bonus) or a change of p's value: value terms (p's value, its territory, army and held-bonus shares), exposure
(own territories an adjacent enemy stack conquers by expected battle, their armies, the held bonus they put at
risk), opportunities (enemy territories an own stack conquers next turn, their armies, bonus of continents one
territory short), borders (own territories on a border, mean and least armies / (armies + adjacent enemy
armies) over them, the largest border stack),
the rivals (bonus of continents an opponent holds, the next player's reinforcements, the best opponent value),
and two short look-ahead probes, as changes of p's value: the next player's worst reply with one stack (its whole
reserve on a stack next to p, then up to two chained attacks on p's territories) and p's best strike next turn
(its reserve on one border stack, up to two chained attacks). Battles are the model's expected battles. The
probes' states count in `Model.generated`, like the goals' probes.
"""

from __future__ import annotations

import numpy as np

from riskcore.search import kernels
from riskcore.search.abstract import AState, Model, PlainModel
from riskcore.engine.battle import expected_attack, expected_battle

FEATURES = ("value", "territory_share", "army_share", "held_bonus", "exposed_territories", "exposed_armies",
            "exposed_held_bonus", "open_territories", "open_armies", "bonus_one_short", "border_share",
            "border_ratio_mean", "border_ratio_min", "largest_border_stack", "rival_held_bonus", "next_reserve",
            "best_rival_value", "reply_drop", "strike_gain", "value_after_reply", "value_after_reply_and_strike")


def _conquerable(m: Model, z: AState, victims: np.ndarray, attackers: np.ndarray) -> np.ndarray:
    """Bool mask of the `victims` territories some adjacent `attackers` stack conquers by expected battle."""
    adj, arm = m.board.adjacency, z.armies
    out = np.zeros(len(arm), dtype=bool)
    for t in np.flatnonzero(victims):
        for y in np.flatnonzero(adj[t] & attackers):
            if arm[y] >= 2 and expected_battle(int(arm[y]) - 1, int(arm[t]))[0]:
                out[t] = True
                break
    return out


def _static(m: Model, z: AState, p: int) -> list[float]:
    b, own, arm = m.board, z.owner == p, z.armies
    adj, bonus, tot = b.adjacency, b.continent_bonus, arm.sum()
    total_bonus = bonus.sum()
    held = b.held_continents(own)
    value = m.evaluate(z)
    lost = _conquerable(m, z, own, ~own)
    at_risk = bonus[held & (b.continent_mask & lost[None, :]).any(axis=1)].sum() / total_bonus
    opened = _conquerable(m, z, ~own, own)
    border = own & (adj & ~own[None, :]).any(axis=1)
    enemy_adjacent = adj.astype(np.int64) @ np.where(own, 0, arm)
    ratio = arm[border] / (arm[border] + enemy_adjacent[border]) if border.any() else np.ones(1)
    one_short = (b.continent_mask & own[None, :]).sum(axis=1) == b.continent_mask.sum(axis=1) - 1
    rival_held = np.zeros(len(bonus), dtype=bool)
    for q in range(m.n_players):
        if q != p:
            oq = z.owner == q
            rival_held |= b.held_continents(oq) & oq.any()
    return [value[p], own.mean(), arm[own].sum() / tot, bonus[held].sum() / total_bonus,
            lost.mean(), arm[lost].sum() / tot, at_risk,
            opened.mean(), arm[opened].sum() / tot, bonus[one_short & ~held].sum() / total_bonus,
            border.mean(), ratio.mean(), ratio.min(), arm[border].max() / tot if border.any() else 0.0,
            bonus[rival_held].sum() / total_bonus, m.reserve(z, _next_mover(m, z, p)) / tot,
            max((value[q] for q in range(m.n_players) if q != p), default=0.0)]


def _next_mover(m: Model, z: AState, p: int) -> int:
    return m.next_player(z, z.owner) if z.to_move == p else z.to_move


def _value(m: Model, owner: np.ndarray, armies: np.ndarray, p: int) -> float:
    return m.evaluate(AState(owner, armies, p))[p]


def _chain(m: Model, owner: np.ndarray, armies: np.ndarray, src: int, q: int, victim: int | None, p: int,
           depth: int, sign: float, before: float) -> float:
    """The largest change of p's value (times `sign`, at least 0) that up to `depth` chained attacks of q's stack
    on `src` make, each from the territory the last one conquered (only on `victim`'s land unless None); `before`
    is p's value in the position given."""
    best = 0.0
    if depth == 0 or armies[src] < 2:
        return best
    for dst in np.flatnonzero(m.board.adjacency[src] & (owner != q)):
        if victim is not None and owner[dst] != victim:
            continue
        owner2, armies2 = expected_attack(owner, armies, src, int(dst))
        m.generated += 1
        after = _value(m, owner2, armies2, p)
        change = sign * (after - before)
        if owner2[dst] == q:
            change += _chain(m, owner2, armies2, int(dst), q, victim, p, depth - 1, sign, after)
        best = max(best, change)
    return best


def _probes(m: Model, z: AState, p: int) -> tuple[float, float]:
    """(the next player's worst one-stack reply, p's best one-stack strike next turn), as value changes for p."""
    q, adj, own = _next_mover(m, z, p), m.board.adjacency, z.owner == p
    drop = 0.0
    if q != p:
        reserve = m.reserve(z, q)
        for y in np.flatnonzero((z.owner == q) & (adj & own[None, :]).any(axis=1)):
            armies = z.armies.copy()
            armies[y] += reserve
            drop = max(drop, _chain(m, z.owner, armies, int(y), q, p, p, 2, -1.0, _value(m, z.owner, armies, p)))
    gain, reserve = 0.0, m.reserve(z, p)
    for x in np.flatnonzero(own & (adj & ~own[None, :]).any(axis=1)):
        armies = z.armies.copy()
        armies[x] += reserve
        gain = max(gain, _chain(m, z.owner, armies, int(x), p, None, p, 2, 1.0, _value(m, z.owner, armies, p)))
    return drop, gain


def end_features(m: Model, z: AState, p: int) -> np.ndarray:
    """The `FEATURES` of the end of p's turn `z` (p need not be the player to move in `z`): compiled
    (`kernels.end_features`) on a `Model`, this module's plain code on a `PlainModel` (the reference)."""
    if not isinstance(m, PlainModel):
        counter = np.zeros(1, dtype=np.int64)
        f = kernels.end_features(z.owner, z.armies, z.to_move, p, m.tables, counter)
        m.generated += int(counter[0])
        return f
    f = _static(m, z, p)
    drop, gain = _probes(m, z, p)
    return np.array([*f, drop, gain, f[0] - drop, f[0] - drop + gain])
