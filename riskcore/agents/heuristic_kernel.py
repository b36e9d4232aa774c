"""The games of the heuristic agents compiled (numba): `mission` and `domination` seats play on flat arrays.

The kernel plays from the setup placements on (the deal stays in Python) with the rules of `engine/kernel.py` and
the decisions of `MissionAgent` and `DominationAgent` (with `mission_weight`), with the same floating-point
operations in the same order and the same draws from the same generators (numba's `Generator` methods share
numpy's bit streams: chance from one, each seat's tie-breaks from its own). A compiled game therefore writes the
Python engine's events and snapshots exactly, and leaves every generator where the Python game leaves it.
`agents/compiled.py` packs a `GameState` into the arrays and back; `mcs`'s playouts and `game.play_game` use it.

The loop decides each action and applies it with the engine kernel's branch of `reference.step` for it
(`step_place`, `step_trade`, `step_attack`, `step_occupy`, `step_end_attack`, `step_fortify`, `step_end_turn`):
the rules and the turn flow between actions are the engine's, the decisions the agents'.

The kernel stops at an action boundary when its event buffers are nearly full (status `ROOM`); the caller grows
them and calls again, since the whole state lives in the arrays.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from riskcore.engine.kernel import (
    ACTIONS, ATTACK, CONQUERED, CONTINENTS, CURRENT, DESTROY, FORCED_AT, M_COLOUR, M_EXTRA, M_KIND, M_LISTED, OCCUPY,
    OCC_DST, OCC_LOW, OCC_SRC, OVER, PHASE, REINFORCE, RESERVE, SETUP, TURN, first_set, holds, room, step_attack,
    step_end_attack, step_end_turn, step_fortify, step_occupy, step_place, step_trade)

DOMINATION_AGENT, MISSION_AGENT = range(2)
DONE, ROOM, UNPLAYABLE = 0, 1, 2  # kernel statuses
MOST_SEATS = 6


# ---- the agents' decisions ------------------------------------------------------------------------------------------
@njit(cache=True)
def domination_values(me, counts, sizes, bonus, continent_of, alive):
    """`DominationAgent._continent_values`."""
    top = bonus.max()
    n_c = sizes.shape[0]
    per = np.empty(n_c)
    for c in range(n_c):
        held = False
        for p in range(alive.shape[0]):
            if p != me and alive[p] and holds(counts, sizes, p, c):
                held = True
        per[c] = 0.5 + counts[me, c] / sizes[c] * bonus[c] / top + (0.5 if held else 0.0)
    value = np.empty(continent_of.shape[0])
    for t in range(value.shape[0]):
        value[t] = per[continent_of[t]]
    return value / value.max()


@njit(cache=True)
def mission_targets(me, owner, counts, sizes, continent_of, n_players, eliminated_by, missions, out):
    """`heuristic.mission_targets` into `out`; False when any territory serves (no mission, or none to aim at)."""
    kind = missions[me, M_KIND]
    if kind < 0:
        return False
    if kind == CONTINENTS:
        chosen = missions[me, M_LISTED:] != 0
        for _ in range(missions[me, M_EXTRA]):  # the most advanced other continents (argsort of -share, stable)
            best, best_share = -1, -np.inf
            for c in range(sizes.shape[0]):
                share = counts[me, c] / sizes[c]
                if not chosen[c] and share > best_share:
                    best, best_share = c, share
            chosen[best] = True
        for t in range(out.shape[0]):
            out[t] = chosen[continent_of[t]]
        return True
    c = missions[me, M_COLOUR]
    if kind == DESTROY and not (c == me or c >= n_players or (eliminated_by[c] >= 0 and eliminated_by[c] != me)):
        for t in range(out.shape[0]):
            out[t] = owner[t] == c
        return True
    return False


@njit(cache=True)
def seat_values(me, agents, owner, counts, sizes, bonus, continent_of, alive, eliminated_by, missions, targets):
    """The seat's territory values (`MissionAgent.values`, or `DominationAgent.valued`); fills `targets` with the
    mission's targets and returns whether there are any (a domination agent without `mission_weight` never looks)."""
    agent_kind, _, focus, weight = agents
    n = owner.shape[0]
    if agent_kind[me] != MISSION_AGENT and weight[me] == 0:  # playouts and plain domination seats
        return domination_values(me, counts, sizes, bonus, continent_of, alive), False
    aimed = mission_targets(me, owner, counts, sizes, continent_of, alive.shape[0], eliminated_by, missions, targets)
    if agent_kind[me] == MISSION_AGENT:
        if not aimed:
            return np.ones(n), aimed
        value = np.empty(n)
        for t in range(n):
            value[t] = focus[me] * (1.0 if targets[t] else 0.0) + (1 - focus[me]) * 1.0
        return value, aimed
    value = domination_values(me, counts, sizes, bonus, continent_of, alive)
    if aimed:
        for t in range(n):
            value[t] = value[t] + weight[me] * (1.0 if targets[t] else 0.0)
    return value, aimed


@njit(cache=True)
def front(me, owner, edge_src, edge_dst):
    """Indices of the borders from an owned territory to an enemy one, in border order."""
    out = np.empty(edge_src.shape[0], dtype=np.int64)
    n = 0
    for e in range(edge_src.shape[0]):
        if owner[edge_src[e]] == me and owner[edge_dst[e]] != me:
            out[n] = e
            n += 1
    return out[:n]


@njit(cache=True)
def odds(table, a, b):
    cap = table.shape[0] - 1
    return table[a if a < cap else cap, b if b < cap else cap]


@njit(cache=True)
def staging(rng, me, extra, owner, armies, edges, value, table, preferred, use_preferred):
    """`HeuristicAgent._staging`; `preferred` masks the places of constrained play when `use_preferred`."""
    edge_src, edge_dst = edges
    n = owner.shape[0]
    score = np.zeros(n)
    for e in front(me, owner, edge_src, edge_dst):
        s, d = edge_src[e], edge_dst[e]
        gain = value[d] * odds(table, armies[s] + extra - 1, armies[d])
        if gain > score[s]:
            score[s] = gain
    noise = rng.random(n) * 1e-6
    for t in range(n):
        score[t] = score[t] + noise[t]
    keep_preferred = False
    if use_preferred:
        for t in range(n):
            keep_preferred = keep_preferred or (owner[t] == me and preferred[t] and score[t] > 1e-6)
    best, best_score = -1, -np.inf
    for t in range(n):
        if owner[t] == me and (preferred[t] or not keep_preferred) and score[t] > best_score:
            best, best_score = t, score[t]
    if best >= 0 and best_score > 1e-6:
        return best
    # nothing worth attacking: strengthen the most threatened front
    threat = np.zeros(n)
    for e in front(me, owner, edge_src, edge_dst):
        threat[edge_src[e]] += armies[edge_dst[e]]
    noise = rng.random(n) * 1e-6
    best, best_score = -1, -np.inf
    for t in range(n):
        if owner[t] == me:
            x = threat[t] - armies[t] + noise[t]
            if x > best_score:
                best, best_score = t, x
    return max(best, 0)


@njit(cache=True)
def choose_attack(rng, me, conquered, owner, armies, edges, value, table, threshold):
    """`HeuristicAgent._attack`: the border to attack across, or -1 to end the attacks."""
    edge_src, edge_dst = edges
    borders = front(me, owner, edge_src, edge_dst)
    ready = np.empty(borders.shape[0], dtype=np.int64)
    n = 0
    for e in borders:
        if armies[edge_src[e]] >= 2:
            ready[n] = e
            n += 1
    if n == 0:
        return -1
    bonus = 0.0 if conquered else 0.25
    noise = rng.random(n) * 1e-6
    best, best_score, best_odds = 0, -np.inf, 0.0
    for i in range(n):
        s, d = edge_src[ready[i]], edge_dst[ready[i]]
        v = value[d]
        p = odds(table, armies[s] - 1, armies[d])
        score = (v + (bonus if v > 0 else 0.0)) * p + noise[i]
        if score > best_score:
            best, best_score, best_odds = i, score, p
    if best_odds < threshold or value[edge_dst[ready[best]]] <= 0:
        return -1
    return ready[best]


@njit(cache=True)
def is_front(t, me, owner, nbr_start, nbr):
    for x in range(nbr_start[t], nbr_start[t + 1]):
        if owner[nbr[x]] != me:
            return True
    return False


@njit(cache=True)
def occupy_move(sc, owner, armies, nbr_start, nbr):
    """`HeuristicAgent._occupy`."""
    me, src, dst, low = sc[CURRENT], sc[OCC_SRC], sc[OCC_DST], sc[OCC_LOW]
    movable = armies[src] - 1
    if not is_front(dst, me, owner, nbr_start, nbr):
        return low
    if is_front(src, me, owner, nbr_start, nbr):
        return max(low, (movable * 2) // 3)
    return movable


@njit(cache=True)
def choose_fortify(me, owner, armies, nbr_start, nbr):
    """`HeuristicAgent._fortify`: (source, target) or (-1, -1) to end the turn."""
    n = owner.shape[0]
    dist = np.full(n, n + 1, dtype=np.int64)
    frontier = np.empty(n, dtype=np.int64)
    size = 0
    for t in range(n):
        if owner[t] != me:
            dist[t] = 0
            frontier[size] = t
            size += 1
    d = 0
    while size:
        d += 1
        nxt = np.empty(n, dtype=np.int64)
        grown = 0
        for i in range(size):
            u = frontier[i]
            for x in range(nbr_start[u], nbr_start[u + 1]):
                v = nbr[x]
                if dist[v] > d:
                    dist[v] = d
                    nxt[grown] = v
                    grown += 1
        frontier, size = nxt, grown
    best_src, best_dst, key_armies, key_dist = -1, -1, 0, 0
    for t in range(n):
        if owner[t] != me or armies[t] < 2 or dist[t] <= 1:
            continue
        for x in range(nbr_start[t], nbr_start[t + 1]):
            m = nbr[x]
            if owner[m] == me and dist[m] < dist[t]:
                if best_src < 0 or armies[t] > key_armies or (armies[t] == key_armies and -dist[m] > key_dist):
                    best_src, best_dst, key_armies, key_dist = t, m, armies[t], -dist[m]
    return best_src, best_dst


# ---- the game loop --------------------------------------------------------------------------------------------------
@njit(cache=True)
def play(rngs, chance, sc, rules, owner, armies, hands, hand_len, deck, discard, setup_left, alive, eliminated_by,
         missions, agents, board, rolls, table, stop_turn, log):
    """Seats act until the game ends or `stop_turn` begins, changing every array in place. `rngs[p]` is seat p's
    generator and `rngs[chance]` chance's (a playout passes one generator everywhere); `log` is (events, cards,
    snapshots), empty arrays for none. Returns DONE, ROOM (buffers nearly full: grow them and call again) or
    UNPLAYABLE (a state the agents would not act in legally)."""
    edge_src, edge_dst, nbr_start, nbr, continent_of, sizes, bonus, card_symbol = board
    edges = (edge_src, edge_dst)
    agent_kind, threshold, focus, _ = agents
    n_players, n = alive.shape[0], owner.shape[0]
    counts = np.zeros((n_players, sizes.shape[0]), dtype=np.int64)
    for t in range(n):
        counts[owner[t], continent_of[t]] += 1
    targets = np.zeros(n, dtype=np.bool_)
    while sc[PHASE] != OVER and sc[TURN] < stop_turn:
        if not room(log, sc):
            return ROOM
        me, phase = sc[CURRENT], sc[PHASE]
        rng = rngs[me]
        sc[ACTIONS] += 1
        if phase == SETUP or phase == REINFORCE:
            i, j, k = first_set(hands[me], hand_len[me], card_symbol) if phase == REINFORCE else (-1, -1, -1)
            if i >= 0:
                step_trade(log, sc, rules, owner, armies, hands, hand_len, deck, discard, card_symbol, counts, sizes,
                           alive, eliminated_by, missions, i, j, k)
                continue
            if (phase == REINFORCE and hand_len[me] >= rules[FORCED_AT]) or sc[RESERVE] < 1:
                return UNPLAYABLE
            value, aimed = seat_values(me, agents, owner, counts, sizes, bonus, continent_of, alive, eliminated_by,
                                       missions, targets)
            constrained = agent_kind[me] == MISSION_AGENT and focus[me] >= 1 and aimed
            placed = sc[RESERVE]
            t = staging(rng, me, placed if phase == REINFORCE else 1, owner, armies, edges, value, table, targets,
                        constrained)
            step_place(log, sc, rules, setup_left, owner, armies, counts, sizes, bonus, alive, eliminated_by,
                       missions, hand_len, t, placed)
        elif phase == ATTACK:
            value, _ = seat_values(me, agents, owner, counts, sizes, bonus, continent_of, alive, eliminated_by,
                                   missions, targets)
            e = choose_attack(rng, me, sc[CONQUERED], owner, armies, edges, value, table, threshold[me])
            if e < 0:
                step_end_attack(log, sc, rules, owner, armies, counts, sizes, alive, eliminated_by, missions)
            else:
                step_attack(log, rngs[chance], sc, rules, owner, armies, counts, sizes, continent_of, alive,
                            eliminated_by, missions, hands, hand_len, edge_src[e], edge_dst[e], rolls)
        elif phase == OCCUPY:
            step_occupy(log, sc, rules, owner, armies, counts, sizes, alive, eliminated_by, missions, hand_len,
                        occupy_move(sc, owner, armies, nbr_start, nbr))
        else:  # FORTIFY
            src, dst = choose_fortify(me, owner, armies, nbr_start, nbr)
            if src < 0:
                step_end_turn(log, rngs[chance], sc, rules, owner, armies, hands, hand_len, deck, discard, alive,
                              counts, sizes, bonus)
            else:
                step_fortify(log, rngs[chance], sc, rules, owner, armies, hands, hand_len, deck, discard, alive,
                             eliminated_by, missions, counts, sizes, bonus, src, dst, armies[src] - 1)
    return DONE
