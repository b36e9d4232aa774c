"""Compiled kernels of the abstract turn model (`abstract.Model`) and exhaustive max^n search over them (numba).

A state is two int64 arrays, `owner` and `armies`, and three numbers: the player to move, the phase (0 placement,
1 attacks) and the attacks made this turn. The board and the model's settings enter as one tuple of arrays
(`tables`, built by `abstract.Model.tables`): the directed borders in the order `np.nonzero(adjacency)` lists them,
each territory's neighbours, the continent mask and bonuses, per player an optional mask of target territories,
and the expected outcome of every battle up to 40 against 40 armies (`battle.expected_battle`, which caps there).

Every kernel computes exactly what the model's Python methods compute, in the same order and with the same
floating-point operations, so values, decisions and node counts are bit-identical (a test holds them to the
recorded golden searches).

`maxn` is exhaustive max^n with a transposition table (`transpositions.py`: bounded, so a bound changes the work
done, never the values, the decisions or the tree's size).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from riskcore.engine.battle import EXPECTED_BATTLE_CAP as EB_CAP
from riskcore.engine.kernel import LEAST_REINFORCEMENT, TERRITORIES_PER_ARMY  # the kernel drops stale caches
from riskcore.search.transpositions import lookup, store

# indices into the `tables` tuple
EDGE_SRC, EDGE_DST, NBR_START, NBR, CONT_MASK, BONUS, N_PLAYERS, MAX_ATTACKS, HAS_TARGET, TARGET, TARGET_WEIGHT, \
    EB_CONQ, EB_ATT, EB_DEF = range(14)
@njit(cache=True)
def held(owner, p, cont_mask, c) -> bool:
    for t in range(owner.shape[0]):
        if cont_mask[c, t] and owner[t] != p:
            return False
    return True


@njit(cache=True)
def reserve(owner, p, cont_mask, bonus) -> int:
    """The reinforcement rule (`rules.base_reinforcement`) + the bonus of every continent p holds
    (`Board.reinforcements`)."""
    count = 0
    for t in range(owner.shape[0]):
        if owner[t] == p:
            count += 1
    r = max(LEAST_REINFORCEMENT, count // TERRITORIES_PER_ARMY)
    for c in range(cont_mask.shape[0]):
        if held(owner, p, cont_mask, c):
            r += bonus[c]
    return r


@njit(cache=True)
def terminal(owner) -> bool:
    for t in range(1, owner.shape[0]):
        if owner[t] != owner[0]:
            return False
    return True


@njit(cache=True)
def evaluate(owner, armies, tables):
    """Per-player values (`Model.evaluate`)."""
    cont_mask, bonus, n_players = tables[CONT_MASK], tables[BONUS], tables[N_PLAYERS]
    has_target, target, weight = tables[HAS_TARGET], tables[TARGET], tables[TARGET_WEIGHT]
    n = owner.shape[0]
    total_armies = 0
    for t in range(n):
        total_armies += armies[t]
    total_bonus = 0
    for c in range(bonus.shape[0]):
        total_bonus += bonus[c]
    v = np.zeros(n_players)
    for p in range(n_players):
        count = 0
        mine = 0
        for t in range(n):
            if owner[t] == p:
                count += 1
                mine += armies[t]
        if count == n:
            v[p] = 1.0
            continue
        b = 0
        for c in range(cont_mask.shape[0]):
            if held(owner, p, cont_mask, c):
                b += bonus[c]
        v[p] = (count / n + mine / total_armies + b / total_bonus) / 3
        if has_target[p]:
            hit = 0
            size = 0
            for t in range(n):
                if target[p, t]:
                    size += 1
                    if owner[t] == p:
                        hit += 1
            v[p] = (3 * v[p] + weight * hit / size) / (3 + weight)
    return v


@njit(cache=True)
def placements(owner, p, tables):
    """The territories the mover may reinforce: those facing an enemy, or all its own if none does."""
    start, nbr = tables[NBR_START], tables[NBR]
    n = owner.shape[0]
    out = np.empty(n, dtype=np.int64)
    k = 0
    for t in range(n):
        if owner[t] != p:
            continue
        for j in range(start[t], start[t + 1]):
            if owner[nbr[j]] != p:
                out[k] = t
                k += 1
                break
    if k == 0:
        for t in range(n):
            if owner[t] == p:
                out[k] = t
                k += 1
    return out[:k]


@njit(cache=True)
def attack_edges(owner, armies, p, attacks, tables):
    """Indices into the directed borders of the mover's possible attacks (none once `max_attacks` are made)."""
    src, dst = tables[EDGE_SRC], tables[EDGE_DST]
    out = np.empty(src.shape[0], dtype=np.int64)
    k = 0
    if attacks >= tables[MAX_ATTACKS]:
        return out[:0]
    for e in range(src.shape[0]):
        if owner[src[e]] == p and owner[dst[e]] != p and armies[src[e]] >= 2:
            out[k] = e
            k += 1
    return out[:k]


@njit(cache=True)
def attack(owner, armies, s, d, tables):
    """New (owner, armies) after s attacks d with all but one army, by the expected battle."""
    o, a = owner.copy(), armies.copy()
    i, j = min(armies[s] - 1, EB_CAP), min(armies[d], EB_CAP)
    if tables[EB_CONQ][i, j]:
        o[d] = o[s]
        a[d] = tables[EB_ATT][i, j]
    else:
        a[d] = tables[EB_DEF][i, j]
    a[s] = 1
    return o, a


@njit(cache=True)
def next_player(owner, p, n_players) -> int:
    q = p
    for _ in range(n_players):
        q = (q + 1) % n_players
        for t in range(owner.shape[0]):
            if owner[t] == q:
                return q
    return p


@njit(cache=True)
def maxn(owner, armies, mover, phase, attacks, turns, tables, table, counter):
    """(value vector, tree size) of exhaustive max^n below the state with `turns` ends of turn to go. The mover
    keeps the first child best for itself (a later child must be better by more than 1e-12). `counter[0]` counts
    the states made (`Model.generated`); `table` is kept between calls of one search.

    Depth first with an explicit stack of frames (no recursion: it compiles once and caches safely)."""
    n_players = tables[N_PLAYERS]
    if turns == 0 or terminal(owner):
        return evaluate(owner, armies, tables), np.int64(1)
    key0, check0, hit, v0, n0 = lookup(table, owner, armies, mover, phase, attacks, turns, n_players)
    if hit:
        return v0, n0
    src, dst = tables[EDGE_SRC], tables[EDGE_DST]
    n = owner.shape[0]
    depth = turns * (tables[MAX_ATTACKS] + 2) + 2
    width = max(n, src.shape[0]) + 1
    own = np.empty((depth, n), dtype=np.int64)
    arm = np.empty((depth, n), dtype=np.int64)
    mov = np.empty(depth, dtype=np.int64)
    pha = np.empty(depth, dtype=np.int64)
    att = np.empty(depth, dtype=np.int64)
    tur = np.empty(depth, dtype=np.int64)
    keys = np.empty(depth, dtype=np.int64)
    checks = np.empty(depth, dtype=np.int64)
    kids = np.empty((depth, width), dtype=np.int64)  # placement: territory; attack: border index; -1: end of turn
    n_kids = np.empty(depth, dtype=np.int64)
    nxt = np.empty(depth, dtype=np.int64)
    best = np.zeros((depth, n_players))
    found = np.zeros(depth, dtype=np.bool_)
    size = np.zeros(depth, dtype=np.int64)
    res = np.empty(depth, dtype=np.int64)  # the mover's reserve, for placements
    own[0], arm[0], mov[0], pha[0], att[0], tur[0] = owner, armies, mover, phase, attacks, turns
    keys[0], checks[0] = key0, check0
    d = 0
    expand = True  # frame d is new: list its children
    v = np.zeros(n_players)
    sz = np.int64(0)
    while True:
        if expand:
            k = 0
            if pha[d] == 0:
                res[d] = reserve(own[d], mov[d], tables[CONT_MASK], tables[BONUS])
                for t in placements(own[d], mov[d], tables):
                    kids[d, k] = t
                    k += 1
            else:
                for e in attack_edges(own[d], arm[d], mov[d], att[d], tables):
                    kids[d, k] = e
                    k += 1
                kids[d, k] = -1
                k += 1
            n_kids[d], nxt[d], size[d], found[d] = k, 0, 1, False
            expand = False
        if nxt[d] < n_kids[d]:  # make the next child in frame d + 1
            c = kids[d, nxt[d]]
            counter[0] += 1
            if pha[d] == 0:
                own[d + 1] = own[d]
                arm[d + 1] = arm[d]
                arm[d + 1, c] += res[d]
                mov[d + 1], pha[d + 1], att[d + 1], tur[d + 1] = mov[d], 1, 0, tur[d]
            elif c >= 0:
                o, a = attack(own[d], arm[d], src[c], dst[c], tables)
                own[d + 1], arm[d + 1] = o, a
                mov[d + 1], pha[d + 1], att[d + 1], tur[d + 1] = mov[d], 1, att[d] + 1, tur[d]
            else:
                own[d + 1], arm[d + 1] = own[d], arm[d]
                mov[d + 1] = next_player(own[d], mov[d], n_players)
                pha[d + 1], att[d + 1], tur[d + 1] = 0, 0, tur[d] - 1
            if tur[d + 1] == 0 or terminal(own[d + 1]):
                v, sz = evaluate(own[d + 1], arm[d + 1], tables), np.int64(1)
            else:
                keys[d + 1], checks[d + 1], hit, v, sz = lookup(table, own[d + 1], arm[d + 1], mov[d + 1],
                                                                  pha[d + 1], att[d + 1], tur[d + 1], n_players)
                if not hit:
                    d += 1
                    expand = True
                    continue
        else:  # frame d is done: store it and hand it to its parent
            v, sz = best[d].copy(), size[d]
            store(table, keys[d], checks[d], v, sz)
            if d == 0:
                return v, sz
            d -= 1
        # frame d takes the child's value and size
        size[d] += sz
        p = mov[d]
        if not found[d] or v[p] > best[d, p] + 1e-12:
            best[d] = v
            found[d] = True
        nxt[d] += 1


@njit(cache=True)
def principal_variation(owner, armies, mover, phase, attacks, turns, tables, table, counter):
    """The actions max^n picks from the state until `turns` ends of turn (or the end of the game), each with the
    state it leads to (`MaxN.principal_variation`): (action codes, owners, armies, (mover, phase, attacks) per
    step, tree size below the state). Codes as `turn_walk`'s. Children are searched with `maxn` on the shared
    `table`; every child made counts in `counter[0]`."""
    src, dst = tables[EDGE_SRC], tables[EDGE_DST]
    n, n_players = owner.shape[0], tables[N_PLAYERS]
    longest = turns * (tables[MAX_ATTACKS] + 2) + 1
    codes = np.empty(longest, dtype=np.int64)
    owners = np.empty((longest, n), dtype=np.int64)
    armies_at = np.empty((longest, n), dtype=np.int64)
    info = np.empty((longest, 3), dtype=np.int64)  # mover, phase, attacks made
    k, tree = 0, np.int64(0)
    while turns > 0 and not terminal(owner):
        if phase == 0:
            kids = placements(owner, mover, tables)
        else:
            kids = np.append(attack_edges(owner, armies, mover, attacks, tables), -1)
        r = reserve(owner, mover, tables[CONT_MASK], tables[BONUS])
        found, pick, pick_v = False, 0, 0.0
        best_o, best_a, best_m, best_ph, best_at, best_tu = owner, armies, mover, phase, attacks, turns
        for c in kids:
            counter[0] += 1
            o, a, m, ph, at, tu = owner, armies, mover, 1, attacks + 1, turns
            if phase == 0:
                a = armies.copy()
                a[c] += r
                at = 0
            elif c >= 0:
                o, a = attack(owner, armies, src[c], dst[c], tables)
            else:
                m, ph, at, tu = next_player(owner, mover, n_players), 0, 0, turns - 1
            v, size = maxn(o, a, m, ph, at, tu, tables, table, counter)
            if k == 0:
                tree += size
            if not found or v[mover] > pick_v + 1e-12:
                found, pick, pick_v = True, c, v[mover]
                best_o, best_a, best_m, best_ph, best_at, best_tu = o, a, m, ph, at, tu
        if k == 0:
            tree += 1
        codes[k] = pick if phase == 0 or pick < 0 else n + pick
        owner, armies, mover, phase, attacks, turns = best_o, best_a, best_m, best_ph, best_at, best_tu
        owners[k], armies_at[k] = owner, armies
        info[k, 0], info[k, 1], info[k, 2] = mover, phase, attacks
        k += 1
    return codes[:k], owners[:k], armies_at[:k], info[:k], tree


@njit(cache=True)
def turn_walk(owner, armies, mover, phase, attacks, tables):
    """Every action sequence of the mover's turn from the state, depth first in the model's order, with the state
    each ends in (the end of the turn, or a conquest that ends the game). Returns (end owners, end armies, end
    mover, end phase, end attacks, action codes, sequence lengths, states made); action codes: a territory for a
    placement, n + border index for an attack, -1 for the end of the turn."""
    src, dst = tables[EDGE_SRC], tables[EDGE_DST]
    n, n_players = owner.shape[0], tables[N_PLAYERS]
    depth = tables[MAX_ATTACKS] + 3
    width = max(n, src.shape[0]) + 1
    own = np.empty((depth, n), dtype=np.int64)
    arm = np.empty((depth, n), dtype=np.int64)
    att = np.empty(depth, dtype=np.int64)
    pha = np.empty(depth, dtype=np.int64)
    kids = np.empty((depth, width), dtype=np.int64)
    n_kids = np.empty(depth, dtype=np.int64)
    nxt = np.empty(depth, dtype=np.int64)
    path = np.empty(depth, dtype=np.int64)
    cap = 64
    e_own = np.empty((cap, n), dtype=np.int64)
    e_arm = np.empty((cap, n), dtype=np.int64)
    e_info = np.empty((cap, 4), dtype=np.int64)  # mover, phase, attacks, length
    e_acts = np.empty((cap, depth), dtype=np.int64)
    count = 0
    made = 0
    own[0], arm[0], att[0], pha[0] = owner, armies, attacks, phase
    d = 0
    expand = True
    while d >= 0:
        if expand:
            k = 0
            if pha[d] == 0:
                for t in placements(own[d], mover, tables):
                    kids[d, k] = t
                    k += 1
            else:
                for e in attack_edges(own[d], arm[d], mover, att[d], tables):
                    kids[d, k] = n + e
                    k += 1
                kids[d, k] = -1
                k += 1
            n_kids[d], nxt[d] = k, 0
            expand = False
        if nxt[d] == n_kids[d]:
            d -= 1
            if d >= 0:
                nxt[d] += 1
            continue
        c = kids[d, nxt[d]]
        path[d] = c
        made += 1
        end_mover, ended = mover, False
        if c == -1:
            own[d + 1], arm[d + 1], att[d + 1], pha[d + 1] = own[d], arm[d], 0, 0
            end_mover, ended = next_player(own[d], mover, n_players), True
        elif c < n:
            own[d + 1] = own[d]
            arm[d + 1] = arm[d]
            arm[d + 1, c] += reserve(own[d], mover, tables[CONT_MASK], tables[BONUS])
            att[d + 1], pha[d + 1] = 0, 1
        else:
            o, a = attack(own[d], arm[d], src[c - n], dst[c - n], tables)
            own[d + 1], arm[d + 1], att[d + 1], pha[d + 1] = o, a, att[d] + 1, 1
        if ended or terminal(own[d + 1]):
            if count == cap:
                cap *= 2
                e_own = _grow(e_own, cap)
                e_arm = _grow(e_arm, cap)
                e_info = _grow(e_info, cap)
                e_acts = _grow(e_acts, cap)
            e_own[count], e_arm[count] = own[d + 1], arm[d + 1]
            e_info[count, 0], e_info[count, 1], e_info[count, 2], e_info[count, 3] = \
                end_mover, pha[d + 1], att[d + 1], d + 1
            e_acts[count, :d + 1] = path[:d + 1]
            count += 1
            nxt[d] += 1
        else:
            d += 1
            expand = True
    return e_own[:count], e_arm[:count], e_info[:count], e_acts[:count], made


@njit(cache=True)
def _grow(a, rows):
    out = np.empty((rows,) + a.shape[1:], dtype=a.dtype)
    out[:a.shape[0]] = a
    return out


@njit(cache=True)
def pairwise_sum(a, lo, n):
    """numpy's own summation of a float array (eight accumulators up to 128 values), so a mean here has its bits."""
    if n < 8:
        res = -0.0
        for i in range(lo, lo + n):
            res += a[i]
        return res
    if n <= 128:
        r = a[lo:lo + 8].copy()
        i = 8
        while i < n - (n % 8):
            for j in range(8):
                r[j] += a[lo + i + j]
            i += 8
        res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        while i < n:
            res += a[lo + i]
            i += 1
        return res
    raise ValueError("pairwise_sum: more than 128 values")


@njit(cache=True)
def _conquerable(owner, armies, victim_mask, attacker_mask, tables):
    """Mask of the victim territories some adjacent attacker stack conquers by expected battle."""
    start, nbr = tables[NBR_START], tables[NBR]
    n = owner.shape[0]
    out = np.zeros(n, dtype=np.bool_)
    for t in range(n):
        if not victim_mask[t]:
            continue
        for j in range(start[t], start[t + 1]):
            y = nbr[j]
            if attacker_mask[y] and armies[y] >= 2 and \
                    tables[EB_CONQ][min(armies[y] - 1, EB_CAP), min(armies[t], EB_CAP)]:
                out[t] = True
                break
    return out


@njit(cache=True)
def _chain(owner, armies, src, q, victim, p, depth, sign, before, tables, counter):
    """The largest change of p's value (times `sign`, at least 0) that up to `depth` chained attacks of q's stack
    on `src` make, each from the territory the last one conquered (only on `victim`'s land unless -1)."""
    best = 0.0
    if depth == 0 or armies[src] < 2:
        return best
    start, nbr = tables[NBR_START], tables[NBR]
    for j in range(start[src], start[src + 1]):
        dst = nbr[j]
        if owner[dst] == q or (victim >= 0 and owner[dst] != victim):
            continue
        o, a = attack(owner, armies, src, dst, tables)
        counter[0] += 1
        after = evaluate(o, a, tables)[p]
        change = sign * (after - before)
        if o[dst] == q and depth > 1:
            change += _chain2(o, a, dst, q, victim, p, sign, after, tables, counter)
        if change > best:
            best = change
    return best


@njit(cache=True)
def _chain2(owner, armies, src, q, victim, p, sign, before, tables, counter):
    """`_chain` with one attack left (written out: no recursion, so it caches)."""
    best = 0.0
    if armies[src] < 2:
        return best
    start, nbr = tables[NBR_START], tables[NBR]
    for j in range(start[src], start[src + 1]):
        dst = nbr[j]
        if owner[dst] == q or (victim >= 0 and owner[dst] != victim):
            continue
        o, a = attack(owner, armies, src, dst, tables)
        counter[0] += 1
        change = sign * (evaluate(o, a, tables)[p] - before)
        if change > best:
            best = change
    return best


@njit(cache=True)
def end_features(owner, armies, mover, p, tables, counter):
    """The features of the end of p's turn (`search.endfeatures.FEATURES`), `mover` the player to move next;
    `counter[0]` counts the probes' states."""
    cont_mask, bonus, n_players = tables[CONT_MASK], tables[BONUS], tables[N_PLAYERS]
    start, nbr = tables[NBR_START], tables[NBR]
    n, n_cont = owner.shape[0], cont_mask.shape[0]
    own = owner == p
    enemy = ~own
    tot = 0
    for t in range(n):
        tot += armies[t]
    total_bonus = 0
    for c in range(n_cont):
        total_bonus += bonus[c]
    value = evaluate(owner, armies, tables)
    lost = _conquerable(owner, armies, own, enemy, tables)
    opened = _conquerable(owner, armies, enemy, own, tables)
    held_bonus, at_risk, one_short_bonus, rival_bonus = 0, 0, 0, 0
    for c in range(n_cont):
        members, mine, risk = 0, 0, False
        for t in range(n):
            if cont_mask[c, t]:
                members += 1
                mine += own[t]
                risk |= lost[t]
        is_held = mine == members
        if is_held:
            held_bonus += bonus[c]
            if risk:
                at_risk += bonus[c]
        elif mine == members - 1:
            one_short_bonus += bonus[c]
        rival = False
        for q in range(n_players):
            if q != p and held(owner, q, cont_mask, c):
                for t in range(n):
                    if owner[t] == q:
                        rival = True
                        break
        if rival:
            rival_bonus += bonus[c]
    border = np.zeros(n, dtype=np.bool_)
    ratio = np.empty(n)
    k = 0
    n_own, own_armies, n_lost, lost_armies, n_opened, opened_armies, biggest = 0, 0, 0, 0, 0, 0, 0
    for t in range(n):
        if own[t]:
            n_own += 1
            own_armies += armies[t]
            enemy_adjacent = 0
            for j in range(start[t], start[t + 1]):
                if not own[nbr[j]]:
                    border[t] = True
                    enemy_adjacent += armies[nbr[j]]
            if border[t]:
                ratio[k] = armies[t] / (armies[t] + enemy_adjacent)
                k += 1
                biggest = max(biggest, armies[t])
        if lost[t]:
            n_lost += 1
            lost_armies += armies[t]
        if opened[t]:
            n_opened += 1
            opened_armies += armies[t]
    if k == 0:
        ratio[0] = 1.0
        k = 1
    ratio_min = ratio[0]
    for i in range(1, k):
        ratio_min = min(ratio_min, ratio[i])
    next_mover = next_player(owner, p, n_players) if mover == p else mover
    best_rival = 0.0
    first = True
    for q in range(n_players):
        if q != p and (first or value[q] > best_rival):
            best_rival, first = value[q], False
    # probes: the next player's worst one-stack reply, p's best one-stack strike next turn
    drop = 0.0
    if next_mover != p:
        r = reserve(owner, next_mover, cont_mask, bonus)
        for y in range(n):
            if owner[y] != next_mover:
                continue
            faces = False
            for j in range(start[y], start[y + 1]):
                faces |= own[nbr[j]]
            if faces:
                a = armies.copy()
                a[y] += r
                change = _chain(owner, a, y, next_mover, p, p, 2, -1.0, evaluate(owner, a, tables)[p], tables,
                                counter)
                if change > drop:
                    drop = change
    gain = 0.0
    r = reserve(owner, p, cont_mask, bonus)
    for x in range(n):
        if border[x]:
            a = armies.copy()
            a[x] += r
            change = _chain(owner, a, x, p, -1, p, 2, 1.0, evaluate(owner, a, tables)[p], tables, counter)
            if change > gain:
                gain = change
    f = np.empty(21)
    f[0], f[1], f[2], f[3] = value[p], n_own / n, own_armies / tot, held_bonus / total_bonus
    f[4], f[5], f[6] = n_lost / n, lost_armies / tot, at_risk / total_bonus
    f[7], f[8], f[9] = n_opened / n, opened_armies / tot, one_short_bonus / total_bonus
    n_border = 0
    for t in range(n):
        n_border += border[t]
    f[10], f[11], f[12] = n_border / n, pairwise_sum(ratio, 0, k) / k, ratio_min
    f[13] = biggest / tot if n_border > 0 else 0.0
    f[14], f[15], f[16] = rival_bonus / total_bonus, reserve(owner, next_mover, cont_mask, bonus) / tot, best_rival
    f[17], f[18], f[19], f[20] = drop, gain, value[p] - drop, value[p] - drop + gain
    return f


@njit(cache=True)
def greedy_attack(owner, armies, p, allowed, tables, counter) -> int:
    """The border (index into the directed borders) of p's attack on an `allowed` territory that raises p's value
    the most, by more than 1e-12 (the first such on ties), or -1; every attack tried counts in `counter[0]`."""
    src, dst = tables[EDGE_SRC], tables[EDGE_DST]
    best, best_v = -1, evaluate(owner, armies, tables)[p]
    for e in range(src.shape[0]):
        s, d = src[e], dst[e]
        if owner[s] == p and owner[d] != p and allowed[d] and armies[s] >= 2:
            o, a = attack(owner, armies, s, d, tables)
            counter[0] += 1
            v = evaluate(o, a, tables)[p]
            if v > best_v + 1e-12:
                best, best_v = e, v
    return best
