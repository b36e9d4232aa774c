"""Compiled goal algorithms (`goals.Goal`) for the rule-following goals `conquer`, `break`, `eliminate` and
`secure`: the targets, the initiation condition and the whole turn a goal plays, on the kernels' flat state.

They compute exactly what `Goal.targets`, `Goal.applicable`, `Goal.next_action` and `GBSearch.simulate` compute
with the plain model, in the same order, so decisions, states and probe counts are identical (a test compares them
on seeded positions). Actions come back as codes: a territory for a placement, the number of territories plus a
border index for an attack, -1 for the end of the turn.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from riskcore.search.kernels import (CONT_MASK, EB_CAP, EB_CONQ, EDGE_DST, EDGE_SRC, MAX_ATTACKS, N_PLAYERS, NBR,
                                     NBR_START, BONUS, attack, greedy_attack, held, next_player, placements, reserve,
                                     terminal)

CONQUER, BREAK, ELIMINATE, SECURE = range(4)
KIND_CODES = {"conquer": CONQUER, "break": BREAK, "eliminate": ELIMINATE, "secure": SECURE}


@njit(cache=True)
def goal_targets(kind, target, owner, p, tables):
    """Bool mask of the enemy territories the goal attacks (`Goal.targets`)."""
    cont_mask = tables[CONT_MASK]
    n = owner.shape[0]
    out = np.zeros(n, dtype=np.bool_)
    if kind == CONQUER:
        for t in range(n):
            out[t] = owner[t] != p and cont_mask[target, t]
    elif kind == BREAK:
        for c in range(cont_mask.shape[0]):
            if held(owner, target, cont_mask, c):
                for t in range(n):
                    if cont_mask[c, t] and owner[t] == target and owner[t] != p:
                        out[t] = True
    elif kind == ELIMINATE:
        for t in range(n):
            out[t] = owner[t] == target
    return out


@njit(cache=True)
def goal_applicable(kind, target, owner, p, tables) -> bool:
    """The initiation condition of a rule-following goal (`Goal.applicable`)."""
    if kind == SECURE:
        return True
    t = goal_targets(kind, target, owner, p, tables)
    start, nbr = tables[NBR_START], tables[NBR]
    for x in range(owner.shape[0]):
        if owner[x] != p:
            continue
        for j in range(start[x], start[x + 1]):
            if t[nbr[j]]:
                return True
    return False


@njit(cache=True)
def _conquers(tables, attackers, defenders) -> bool:
    return tables[EB_CONQ][min(attackers, EB_CAP), min(defenders, EB_CAP)]


@njit(cache=True)
def _entry_scores(kind, target, owner, armies, p, tables):
    start, nbr = tables[NBR_START], tables[NBR]
    t = goal_targets(kind, target, owner, p, tables)
    r = reserve(owner, p, tables[CONT_MASK], tables[BONUS])
    score = np.full(owner.shape[0], -np.inf)
    for x in range(owner.shape[0]):
        if owner[x] != p:
            continue
        facing, before, after = 0, 0, 0
        for j in range(start[x], start[x + 1]):
            y = nbr[j]
            if t[y]:
                facing += 1
                if armies[x] >= 2 and _conquers(tables, armies[x] - 1, armies[y]):
                    before += 1
                if _conquers(tables, armies[x] + r - 1, armies[y]):
                    after += 1
        if facing:
            score[x] = (after - before) * 10_000 + after * 100 - min(armies[x], 99)
    return score


@njit(cache=True)
def _attack_step(kind, target, owner, armies, p, attacks, tables, counter) -> int:
    """The goal's next attack (a border index) or -1 to end the turn (`Goal.next_action` in the attack phase)."""
    if kind == SECURE or attacks >= tables[MAX_ATTACKS]:
        return -1
    e = greedy_attack(owner, armies, p, goal_targets(kind, target, owner, p, tables), tables, counter)
    if e >= 0:
        return e
    return greedy_attack(owner, armies, p, owner != p, tables, counter)


@njit(cache=True)
def _defence_scores(kind, target, owner, armies, p, tables, counter):
    start, nbr = tables[NBR_START], tables[NBR]
    n = owner.shape[0]
    # the turn's attacks planned without the reserve; each state they make counts as a probe
    o, a, made = owner, armies, 0
    while True:
        e = _attack_step(kind, target, o, a, p, made, tables, counter)
        if e < 0:
            break
        o, a = attack(o, a, tables[EDGE_SRC][e], tables[EDGE_DST][e], tables)
        counter[0] += 1  # `Model.apply`
        made += 1
    mine = np.zeros(n, dtype=np.bool_)
    for x in placements(owner, p, tables):
        mine[x] = o[x] == p
    r = reserve(owner, p, tables[CONT_MASK], tables[BONUS])
    score = np.full(n, -np.inf)
    for x in range(n):
        if not mine[x]:
            continue
        threat = 0
        saved = False
        for j in range(start[x], start[x + 1]):
            y = nbr[j]
            if o[y] != p:
                threat += a[y]
                enemy = a[y] - 1
                if not saved and enemy >= 1 and _conquers(tables, enemy, a[x]) and \
                        not _conquers(tables, enemy, a[x] + r):
                    saved = True
        score[x] = threat / a[x]
        score[x] += 10_000 * saved
    return score


@njit(cache=True)
def _place_step(kind, target, owner, armies, p, tables, counter) -> int:
    """The goal's placement (`Goal.next_action` in the placement phase)."""
    score = np.full(1, -np.inf)
    if kind != SECURE:
        score = _entry_scores(kind, target, owner, armies, p, tables)
    if score.max() < 10_000:  # the reserve enables no conquest: defend instead
        score = _defence_scores(kind, target, owner, armies, p, tables, counter)
    if not np.isfinite(score).any():
        return placements(owner, p, tables)[0]
    return int(np.argmax(score))


@njit(cache=True)
def goal_turn(kind, target, owner, armies, to_move, phase, attacks, tables, counter):
    """The goal followed to the end of the turn (`GBSearch.simulate`): (action codes, owner, armies, to move,
    phase, attacks) of the state after; every state made, probes included, counts in `counter[0]`."""
    n = owner.shape[0]
    p = to_move
    codes = np.empty(tables[MAX_ATTACKS] + 2, dtype=np.int64)
    k = 0
    while True:
        if phase == 0:
            x = _place_step(kind, target, owner, armies, p, tables, counter)
            armies = armies.copy()
            armies[x] += reserve(owner, to_move, tables[CONT_MASK], tables[BONUS])
            phase, attacks, code = 1, 0, x
        else:
            e = _attack_step(kind, target, owner, armies, p, attacks, tables, counter)
            if e < 0:
                to_move, phase, attacks, code = next_player(owner, to_move, tables[N_PLAYERS]), 0, 0, -1
            else:
                owner, armies = attack(owner, armies, tables[EDGE_SRC][e], tables[EDGE_DST][e], tables)
                attacks, code = attacks + 1, n + e
        counter[0] += 1  # `Model.apply`
        codes[k] = code
        k += 1
        if code < 0 or terminal(owner):
            return codes[:k], owner, armies, to_move, phase, attacks
