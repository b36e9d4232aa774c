"""The observations of a chunk of games, compiled (numba): what `features.Extractor` computes, one pass over the
chunk's events with no Python object per event.

`features.Extractor` is the reference (it also feeds `recognition.online` a few events at a time);
`tests/recognition/test_compiled_features.py` holds the two equal on simulated and imported games. Events arrive
as int64 columns (-1 for a missing value) and kind codes (`EVENT_CODES`); observations leave as one int64 row of
`SCALARS` plus one (E,) row per matrix of `features.MATRICES`, candidates as float64 rows of `CANDIDATE_COLUMNS`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# the event kinds the extractor tells apart (any other kind: `OTHER`)
EVENT_CODES = ("deal", "claim", "place", "reinforce", "trade", "fortify", "occupy", "attack", "eliminate", "win")
DEAL, CLAIM, PLACE, REINFORCE, TRADE, FORTIFY, OCCUPY, ATTACK, ELIMINATE, WIN = range(len(EVENT_CODES))
OTHER = len(EVENT_CODES)
# observation kinds, in `features.KINDS` order
O_REINFORCE, O_DEFEND_WON, O_DEFEND_LOST, O_FORTIFY, O_ATTACK_WON, O_ATTACK_LOST, O_TRADE, O_PLACE, O_OCCUPY = range(9)
SCALARS = ("game_id", "player", "seq", "turn", "kind", "territory", "src", "n_owned", "n_attack", "n_fortify",
           "n_targets", "obs")
(S_GAME, S_PLAYER, S_SEQ, S_TURN, S_KIND, S_TERRITORY, S_SRC, S_OWNED, S_ATTACK, S_FORTIFY, S_TARGETS,
 S_OBS) = range(len(SCALARS))
# matrices per observation, in `features.MATRICES` order
M_OWNED, M_ATTACK, M_FORTIFY, M_SIZE, M_CONSISTENT, M_TARGETS = range(6)
CANDIDATE_COLUMNS = ("c_game_id", "c_player", "c_seq", "c_cand", "c_odds", "c_bits", "c_self_bits", "c_continent",
                     "c_self_continent", "c_chosen")


@njit(cache=True)
def _membership(static, colour, owner, out):
    """`Hypotheses.membership`: a destroy explanation holds the territories its colour owns now."""
    for e in range(static.shape[0]):
        for t in range(static.shape[1]):
            out[e, t] = (owner[t] == colour[e]) if colour[e] >= 0 else static[e, t]


@njit(cache=True)
def _pending(p, owner, nb_start, nb, member, scal, mats):
    """`Extractor.pending`: p's pending-set counts (`scal`: owned, attack pairs, fortify pairs, distinct targets)
    and, per explanation, those inside it (`mats`: owned, attack, fortify, size, -, targets)."""
    n = owner.shape[0]
    scal[:] = 0
    mats[:, :] = 0
    for t in range(n):
        mine = owner[t] == p
        near = 0
        for k in range(nb_start[t], nb_start[t + 1]):
            if owner[nb[k]] == p:
                near += 1
        enemy = 0 if mine else near
        fort = near if mine else 0
        target = 1 if enemy > 0 else 0
        scal[0] += 1 if mine else 0
        scal[1] += enemy
        scal[2] += fort
        scal[3] += target
        for e in range(member.shape[0]):
            if member[e, t]:
                mats[M_OWNED, e] += 1 if mine else 0
                mats[M_ATTACK, e] += enemy
                mats[M_FORTIFY, e] += fort
                mats[M_SIZE, e] += 1
                mats[M_TARGETS, e] += target


@njit(cache=True)
def _continent_values(p, owner, cont_mask, cont_size, bonus, continent_of, values):
    """`Extractor.continent_values`, in the same float operations."""
    n_c, n = cont_mask.shape
    top = bonus.max()
    per = np.empty(n_c)
    for c in range(n_c):
        mine, lowest, highest = 0, n, -2
        for t in range(n):
            if cont_mask[c, t]:
                mine += 1 if owner[t] == p else 0
                lowest = min(lowest, owner[t])
                highest = max(highest, owner[t])
        per[c] = 0.5 + (mine / cont_size[c]) * bonus[c] / top
        if lowest == highest and lowest != p and lowest != -1:
            per[c] += 0.5
    best = -np.inf
    for t in range(n):
        values[t] = per[continent_of[t]]
        best = max(best, values[t])
    for t in range(n):
        values[t] = values[t] / best


@njit(cache=True)
def _grow(a, need):
    if need <= a.shape[0]:
        return a
    bigger = np.empty((max(need, 2 * a.shape[0]), a.shape[1]), a.dtype)
    bigger[:a.shape[0]] = a
    return bigger


@njit(cache=True)
def _odds_at(odds, attackers, defenders):
    """The conquest odds as numpy indexes them (a negative index counts from the end)."""
    k = odds.shape[0]
    a, d = min(attackers, k - 1), min(defenders, k - 1)
    return odds[a + k if a < 0 else a, d + k if d < 0 else d]


@njit(cache=True)
def extract_events(game, seq, turn, player, kind, src, dst, armies, a_loss, d_loss, conquered, opponent, stop_at,
                   n_players, nb_start, nb, static, colour, cont_mask, cont_size, bonus, continent_of, odds):
    """Observations and decision candidates of every game in the chunk (events ordered by game, seq)."""
    n_ev, n_e, n = kind.shape[0], static.shape[0], static.shape[1]
    bit = np.empty(n_e, np.int64)
    for e in range(n_e):
        bit[e] = 1 << e
    obs = np.empty((2 * n_ev, len(SCALARS)), np.int64)
    mats = np.empty((2 * n_ev, 6, n_e), np.int64)
    cands = np.empty((1024, len(CANDIDATE_COLUMNS)), np.float64)
    n_obs, n_cand = 0, 0
    owner, army = np.empty(n, np.int64), np.empty(n, np.int64)
    member = np.empty((n_e, n), np.bool_)
    cached = np.zeros(n_players, np.bool_)
    c_scal, c_mats = np.zeros((n_players, 4), np.int64), np.zeros((n_players, 6, n_e), np.int64)
    eliminated, counter = np.zeros(n_players, np.bool_), np.zeros(n_players, np.int64)
    values = np.empty(n)
    front_s, front_d = np.empty(n * n + n, np.int64), np.empty(n * n + n, np.int64)
    is_front = np.zeros(n, np.bool_)
    dynamic = False
    for e in range(n_e):
        dynamic |= colour[e] >= 0
    lo = 0
    while lo < n_ev:
        hi = lo
        while hi < n_ev and game[hi] == game[lo]:
            hi += 1
        owner[:] = -1
        army[:] = 0
        cached[:] = False
        eliminated[:] = False
        counter[:] = 0
        _membership(static, colour, owner, member)
        cut = hi  # the game-ending action and what led to it stay unseen
        if kind[hi - 1] == WIN:
            cut = hi - 2
            if cut - 1 >= lo and kind[cut] == OCCUPY and kind[cut - 1] == ATTACK:
                cut -= 1
            cut = max(cut, lo)
        battle_end, attacker_row = lo - 1, -1
        for i in range(lo, hi):
            k, p = kind[i], player[i]
            if k == DEAL or k == CLAIM:
                owner[dst[i]] = p
                army[dst[i]] += 1
                cached[p] = False
                if dynamic:
                    cached[:] = False
                    _membership(static, colour, owner, member)
                continue
            if i >= cut:
                break
            # the observations this event makes: (player, kind, territory, src), at most two
            p0, k0, t0, s0, p1, k1, t1 = -1, -1, -1, -1, -1, -1, -1
            n_new = 0
            cand_kind = 0  # 1: a placement decision, 2: an attack decision
            if k == PLACE or k == REINFORCE:
                if k == REINFORCE and turn[i] >= 1:
                    p0, k0, t0, n_new = p, O_REINFORCE, dst[i], 1
                    cand_kind = 0 if eliminated[p] else 1
                elif k == PLACE:
                    p0, k0, t0, n_new = p, O_PLACE, dst[i], 1
                    cand_kind = 1
            elif k == TRADE:
                if turn[i] >= 1:
                    p0, k0, t0, n_new = p, O_TRADE, dst[i], 1
            elif k == FORTIFY or k == OCCUPY:
                p0, k0, t0, s0, n_new = p, O_FORTIFY if k == FORTIFY else O_OCCUPY, dst[i], src[i], 1
            elif k == ATTACK and i > battle_end:  # a battle's first roll: observed once, with its last roll's outcome
                battle_end = i
                while battle_end + 1 < cut and _continues(battle_end, kind, stop_at, conquered, player, src, dst,
                                                          hi):
                    battle_end += 1
                won = conquered[battle_end]
                p0, k0, t0, s0 = p, O_ATTACK_WON if won else O_ATTACK_LOST, dst[i], src[i]
                p1, k1, t1 = opponent[i], O_DEFEND_LOST if won else O_DEFEND_WON, dst[i]
                n_new = 2
                cand_kind = 0 if eliminated[p] else 2
            for j in range(n_new):
                q, o_k, o_t, o_s = (p0, k0, t0, s0) if j == 0 else (p1, k1, t1, -1)
                row = -1
                if not eliminated[q]:
                    if not cached[q]:
                        _pending(q, owner, nb_start, nb, member, c_scal[q], c_mats[q])
                        cached[q] = True
                    row = n_obs
                    obs[row, S_GAME], obs[row, S_PLAYER], obs[row, S_SEQ] = game[i], q, seq[i]
                    obs[row, S_TURN], obs[row, S_KIND], obs[row, S_TERRITORY] = turn[i], o_k, o_t
                    obs[row, S_SRC] = o_s
                    obs[row, S_OWNED], obs[row, S_ATTACK] = c_scal[q, 0], c_scal[q, 1]
                    obs[row, S_FORTIFY], obs[row, S_TARGETS] = c_scal[q, 2], c_scal[q, 3]
                    obs[row, S_OBS] = counter[q]
                    counter[q] += 1
                    mats[row] = c_mats[q]
                    for e in range(n_e):
                        inside = member[e, o_t] if o_t >= 0 else True
                        mats[row, M_CONSISTENT, e] = (not inside) if o_k == O_DEFEND_LOST else inside
                    n_obs += 1
                if j == 0:
                    attacker_row = row if k == ATTACK else attacker_row
            if cand_kind > 0:
                attack = cand_kind == 2
                chosen = src[i] * n + dst[i] if attack else dst[i]
                m, any_chosen = _decision(p, attack, chosen, owner, army, nb_start, nb, front_s, front_d, is_front)
                if any_chosen:
                    _continent_values(p, owner, cont_mask, cont_size, bonus, continent_of, values)
                    cands = _grow(cands, n_cand + m)
                    _write_candidates(cands[n_cand:n_cand + m], game[i], p, seq[i], attack, chosen,
                                      0 if attack else armies[i], front_s, front_d, army, member, bit, values, odds)
                    n_cand += m
            # the event's effect on the board
            if k == PLACE or k == REINFORCE:
                army[dst[i]] += armies[i]
            elif k == TRADE:
                if dst[i] >= 0:
                    army[dst[i]] += 2
            elif k == FORTIFY or k == OCCUPY:
                army[src[i]] -= armies[i]
                army[dst[i]] += armies[i]
            elif k == ATTACK:
                army[src[i]] -= a_loss[i]
                army[dst[i]] -= d_loss[i]
                if conquered[i]:
                    owner[dst[i]] = p
                    cached[p] = False
                    cached[opponent[i]] = False
                    if dynamic:
                        cached[:] = False
                        _membership(static, colour, owner, member)
                    if attacker_row >= 0:  # a conquest's attack options are those after it (the reference's)
                        _pending(p, owner, nb_start, nb, member, c_scal[p], c_mats[p])
                        cached[p] = True
                        obs[attacker_row, S_TARGETS] = c_scal[p, 3]
                        mats[attacker_row, M_TARGETS] = c_mats[p, M_TARGETS]
            elif k == ELIMINATE:
                eliminated[opponent[i]] = True
        lo = hi
    return obs[:n_obs], mats[:n_obs], cands[:n_cand]


@njit(cache=True)
def _decision(p, attack, chosen, owner, army, nb_start, nb, front_s, front_d, is_front):
    """`Extractor.candidates`' candidate pairs of p's decision into `front_s`, `front_d`: attacks (own territory
    with 2+ armies -> enemy neighbour), or placements (own territory -> enemy neighbour, then every interior
    territory with d = -1: it threatens nothing). Returns their number and whether the observed choice is one."""
    n, m = owner.shape[0], 0
    for t in range(n):
        if owner[t] != p:
            continue
        for k in range(nb_start[t], nb_start[t + 1]):
            if owner[nb[k]] != p and (not attack or army[t] >= 2):
                front_s[m], front_d[m] = t, nb[k]
                m += 1
    if not attack:
        is_front[:] = False
        for r in range(m):
            is_front[front_s[r]] = True
        for t in range(n):
            if owner[t] == p and not is_front[t]:
                front_s[m], front_d[m] = t, -1
                m += 1
    any_chosen = False
    for r in range(m):
        any_chosen |= (front_s[r] * n + front_d[r] == chosen) if attack else front_s[r] == chosen
    return m, any_chosen


@njit(cache=True)
def _write_candidates(rows, game, p, seq, attack, chosen, extra, front_s, front_d, army, member, bit, values, odds):
    """The candidate rows (`CANDIDATE_COLUMNS`) of a decision's pairs; an interior territory's row has no odds,
    target bits or target value."""
    n = army.shape[0]
    for r in range(rows.shape[0]):
        s, d = front_s[r], front_d[r]
        row = rows[r]
        row[0], row[1], row[2], row[3] = game, p, seq, r if attack else s
        row[4] = _odds_at(odds, army[s] - 1 + extra, army[d]) if d >= 0 else 0.0
        row[5] = _bits(member, bit, d) if d >= 0 else 0
        row[6] = 0 if attack else _bits(member, bit, s)
        row[7] = values[d] if d >= 0 else 0.0
        row[8] = 0.0 if attack else values[s]
        row[9] = 1.0 if ((s * n + d == chosen) if attack else s == chosen) else 0.0


@njit(cache=True)
def _bits(member, bit, t):
    out = 0
    for e in range(member.shape[0]):
        if member[e, t]:
            out += bit[e]
    return out


@njit(cache=True)
def _continues(i, kind, stop_at, conquered, player, src, dst, hi):
    """Event i + 1 is another roll of the battle that event i (a single roll) began or went on with."""
    j = i + 1
    return (j < hi and kind[j] == ATTACK and stop_at[i] < 0 and stop_at[j] < 0 and not conquered[i]
            and player[j] == player[i] and src[j] == src[i] and dst[j] == dst[i])


def compile_features() -> None:
    """Compile into numba's on-disk cache (run once at install: `make venv`), with the types `compiled_chunk`
    passes."""
    ints, none = np.zeros(0, np.int64), np.zeros(0, np.bool_)
    extract_events(ints, ints, ints, ints, ints, ints, ints, ints, ints, ints, none, ints, ints, 4,
                   np.zeros(2, np.int64), ints, np.zeros((1, 1), np.bool_), np.full(1, -1, np.int64),
                   np.zeros((1, 1), np.bool_), np.ones(1, np.int64), np.ones(1, np.int64), np.zeros(1, np.int64),
                   np.zeros((2, 2)))
