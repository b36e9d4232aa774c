"""The rules of `reference.py` on flat arrays (numba), for the compiled games of `agents/heuristic_kernel.py`.

A game is an int64 array of scalars (`PHASE`, `CURRENT`, ..., the buffers' fill levels), the rule settings (`RULES`
indices: `GameConfig`'s fields as numbers), arrays for owners, armies, hands, deck, discards and eliminations, and
the missions (a row per seat, `M_*`). `step_place` ... `step_end_turn` apply an action as the branch of
`reference.step` for it does; the compiled agents call them, and tests/test_kernel_step.py holds them to `step`.
Each function does what the engine's function of the same name does, in the same order, drawing chance from the
same generator: full battles (`stop_at` 0) as `battle.sample_battle` draws them, one uniform against the cumulative
distribution of the absorbing states built with `battle._absorbing`'s float arithmetic; card draws as
`RngChance.draw`. Events go to a row buffer with the engine's fields (-1 for None; cards in their own buffer) and
snapshots to another, unless the buffers are empty (playouts record nothing).

The constants and tables come from `rules.py`, as the reference's do. Numba freezes module globals and callees
from other files into its cached machine code but checks only the function's own file for staleness, so
`forget_stale_compilations` drops every cache of the package when a compiled source or `rules.py` changed.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
from numba import njit

from riskcore.engine.rules import (ATTACKER_DICE, DEFENDER_DICE, END_REASONS, ESCALATING, ESCALATING_STEP,
                                   EVENT_KINDS, FIXED, FIXED_MIXED, LEAST_REINFORCEMENT, MISSION_KINDS, PHASES,
                                   TERRITORIES_PER_ARMY, TERRITORY_BONUS, WILD, WIN_TESTS)

# phases, event kinds, end reasons and mission kinds: the reference's names, numbered by their place in rules.py
# (looked up by name, so reordering a table there cannot mislabel them here)
SETUP, REINFORCE, ATTACK, OCCUPY, FORTIFY, OVER = (PHASES.index(name) for name in (
    "setup", "reinforce", "attack", "occupy", "fortify", "over"))
# state scalars: one int64 array
(PHASE, CURRENT, TURN, RESERVE, CONQUERED, BONUS_USED, TRADES, OCC_SRC, OCC_DST, OCC_LOW, WINNER, REASON, ACTIONS,
 N_EVENTS, N_CARDS, N_SNAPSHOTS, N_SCALARS) = range(17)
PLAYING, BY_DOMINATION, BY_MISSION, BY_TURN_CAP = (END_REASONS.index(name) for name in (
    "", "domination", "mission", "turn_cap"))
# rule settings: one int64 array (GameConfig's fields)
(DOMINATION, FIXED_VALUES, CARD_CAP, EVERY_TRADE, AT_ONCE, TURN_CAP, FORCED_AT, ELIMINATION_AT, SETUP_BATCH,
 WIN_TEST, N_RULES) = range(11)
ANY_SEAT, MOVER = (WIN_TESTS.index(name) for name in ("any_seat", "mover"))  # the values of rules[WIN_TEST]
CONTINENTS, TERRITORIES, DESTROY = (MISSION_KINDS.index(name) for name in ("continents", "territories", "destroy"))
# a seat's mission: one int64 row (kind, extra continents, territory target, least armies, colour, then a 0/1 column
# per continent it names), so that a call passes one array where six arrays cost six reference counts
M_KIND, M_EXTRA, M_TARGET, M_MIN_ARMIES, M_COLOUR, M_LISTED = range(6)
PLACE, REINFORCE_EVENT, TRADE = EVENT_KINDS.index("place"), EVENT_KINDS.index("reinforce"), EVENT_KINDS.index("trade")
ATTACK_EVENT, OCCUPY_EVENT = EVENT_KINDS.index("attack"), EVENT_KINDS.index("occupy")
END_ATTACK, FORTIFY_EVENT = EVENT_KINDS.index("end_attack"), EVENT_KINDS.index("fortify")
END_TURN, DRAW_CARD = EVENT_KINDS.index("end_turn"), EVENT_KINDS.index("draw_card")
ELIMINATE, WIN, DRAW = EVENT_KINDS.index("eliminate"), EVENT_KINDS.index("win"), EVENT_KINDS.index("draw")
# the columns of an event row (-1 stands for None; cards live in their own buffer)
(E_TURN, E_PLAYER, E_PHASE, E_KIND, E_SRC, E_DST, E_ARMIES, E_A_DICE, E_D_DICE, E_A_LOSS, E_D_LOSS, E_CONQUERED,
 E_OPPONENT, E_STOP_AT, E_CARDS_START, E_CARDS_LEN, N_COLUMNS) = range(17)
MOST_EVENTS_PER_ACTION = 8
FIXED_ALL_WILD = max(FIXED)  # three wilds stand for the best set of three alike


def forget_stale_compilations(here: Path = Path(__file__).parent) -> bool:
    """Delete every numba cache under the package when any compiled source changed since they were written; True
    when it did. Numba checks only the file of the function it loads, but a cached function carries the machine
    code of everything it calls and the values of every global it read in other files (this kernel in the agents'
    loops, `rules.py`'s tables everywhere)."""
    package = here.parent
    digest = hashlib.sha256()
    for source in sorted(package.glob("**/*.py")):
        text = source.read_bytes()
        if b"njit" in text or source == here / "rules.py":
            digest.update(str(source.relative_to(package)).encode() + b"\0" + text)
    stamp = here / "__pycache__" / "compiled-sources.sha256"
    try:
        if stamp.exists() and stamp.read_text() == digest.hexdigest():
            return False
        for cache in package.glob("**/__pycache__/*.nb[ic]"):
            cache.unlink(missing_ok=True)
        stamp.parent.mkdir(exist_ok=True)
        stamp.write_text(digest.hexdigest())
    except OSError:  # an installed, read-only package: its caches were built from its own sources
        return False
    return True


forget_stale_compilations()


# ---- battles -------------------------------------------------------------------------------------------------------
@njit(cache=True)
def battle_cumulative(attackers, defenders, roll_al, roll_dl, roll_p, roll_start):
    """Cumulative probabilities of a full battle's absorbing states in sorted order, (0, 1..d) then (1..a, 0): the
    `_battle_table(a, d, 0)` distribution (a state never reached holds zero mass, which no draw selects)."""
    width = defenders + 1
    mass = np.zeros((attackers + 1) * width)
    mass[attackers * width + defenders] = 1.0
    for total in range(attackers + defenders, -1, -1):
        for a in range(min(attackers, total), max(total - defenders, 0) - 1, -1):
            d = total - a
            p = mass[a * width + d]
            if p == 0.0 or d == 0 or a == 0:
                continue
            r = (min(ATTACKER_DICE, a) - 1) * DEFENDER_DICE + min(DEFENDER_DICE, d) - 1
            for j in range(roll_start[r], roll_start[r + 1]):
                k = (a - roll_al[j]) * width + d - roll_dl[j]
                mass[k] = mass[k] + p * roll_p[j]
    cum = np.empty(attackers + defenders)
    acc = 0.0
    for j in range(defenders):
        acc += mass[j + 1]  # (0, j + 1)
        cum[j] = acc
    for i in range(attackers):
        acc += mass[(i + 1) * width]  # (i + 1, 0)
        cum[defenders + i] = acc
    last = cum[-1]
    for j in range(cum.shape[0]):
        cum[j] = cum[j] / last
    return cum


@njit(cache=True)
def sample_full_battle(rng, attackers, defenders, roll_al, roll_dl, roll_p, roll_start):
    """(attacker losses, defender losses, last attacker dice) as `battle.sample_battle(rng, a, d, 0)` draws them."""
    cum = battle_cumulative(attackers, defenders, roll_al, roll_dl, roll_p, roll_start)
    u = rng.random()
    lo, hi = 0, cum.shape[0]
    while lo < hi:  # bisect_right
        mid = (lo + hi) // 2
        if u < cum[mid]:
            hi = mid
        else:
            lo = mid + 1
    if lo < defenders:
        a, d = 0, lo + 1
    else:
        a, d = lo - defenders + 1, 0
    return attackers - a, defenders - d, min(ATTACKER_DICE, max(a, 1))


# ---- facts that follow from ownership --------------------------------------------------------------------------------
@njit(cache=True)
def territories_of(counts, p):
    return counts[p].sum()


@njit(cache=True)
def holds(counts, sizes, p, c):
    return counts[p, c] == sizes[c]


@njit(cache=True)
def mission_done(p, missions, owner, armies, counts, sizes, n_players, eliminated_by):
    """`Mission.complete` for player p's mission."""
    k = missions[p, M_KIND]
    if k == CONTINENTS:
        listed = held = 0
        for c in range(sizes.shape[0]):
            whole = holds(counts, sizes, p, c)
            held += whole
            if missions[p, M_LISTED + c]:
                listed += 1
                if not whole:
                    return False
        return held - listed >= missions[p, M_EXTRA]
    n_owned = territories_of(counts, p)
    if k == TERRITORIES:
        if missions[p, M_MIN_ARMIES] <= 1:
            return n_owned >= missions[p, M_TARGET]
        strong = 0
        for t in range(owner.shape[0]):
            if owner[t] == p and armies[t] >= missions[p, M_MIN_ARMIES]:
                strong += 1
        return strong >= missions[p, M_TARGET]
    c = missions[p, M_COLOUR]
    if c == p or c >= n_players or (eliminated_by[c] >= 0 and eliminated_by[c] != p):
        return n_owned >= missions[p, M_TARGET]
    return eliminated_by[c] == p


# ---- the log ------------------------------------------------------------------------------------------------------
@njit(cache=True)
def emit(log, sc, kind, src=-1, dst=-1, armies=-1, a_dice=-1, d_dice=-1, a_loss=-1, d_loss=-1, conquered=-1,
         opponent=-1, stop_at=-1, cards_start=-1, cards_len=-1):
    events = log[0]
    if events.shape[0] == 0:  # not recording (playouts)
        return
    row = events[sc[N_EVENTS]]
    row[E_TURN], row[E_PLAYER], row[E_PHASE], row[E_KIND] = sc[TURN], sc[CURRENT], sc[PHASE], kind
    row[E_SRC], row[E_DST], row[E_ARMIES], row[E_A_DICE], row[E_D_DICE] = src, dst, armies, a_dice, d_dice
    row[E_A_LOSS], row[E_D_LOSS], row[E_CONQUERED], row[E_OPPONENT] = a_loss, d_loss, conquered, opponent
    row[E_STOP_AT], row[E_CARDS_START], row[E_CARDS_LEN] = stop_at, cards_start, cards_len
    sc[N_EVENTS] += 1


@njit(cache=True)
def log_cards(log, sc, cards, n):
    """Append n cards to the card buffer; returns where they start."""
    buffer = log[1]
    start = sc[N_CARDS]
    if log[0].shape[0] == 0:
        return start
    for i in range(n):
        buffer[start + i] = cards[i]
    sc[N_CARDS] += n
    return start


@njit(cache=True)
def snapshot(log, sc, owner, armies):
    shots = log[2]
    if shots.shape[0] == 0:
        return
    row = shots[sc[N_SNAPSHOTS]]
    n = owner.shape[0]
    row[0], row[1] = sc[TURN], sc[CURRENT]
    row[2:2 + n] = owner
    row[2 + n:2 + 2 * n] = armies
    sc[N_SNAPSHOTS] += 1


@njit(cache=True)
def room(log, sc):
    events, cards, shots = log
    if events.shape[0] == 0:
        return True
    return (sc[N_EVENTS] + MOST_EVENTS_PER_ACTION <= events.shape[0] and sc[N_CARDS] + 64 <= cards.shape[0]
            and sc[N_SNAPSHOTS] + 2 <= shots.shape[0])


# ---- the rules ------------------------------------------------------------------------------------------------------
@njit(cache=True)
def finish(log, sc, winner, reason):
    emit(log, sc, WIN, opponent=winner)
    sc[WINNER], sc[PHASE], sc[REASON] = winner, OVER, reason


@njit(cache=True)
def check_victory(log, sc, rules, owner, armies, counts, sizes, alive, eliminated_by, missions):
    """`reference._check_victory` under the default test (`any_seat`); the placements, occupations and
    fortifications of `win_test="mover"` call `check_mover_victory` instead."""
    if rules[WIN_TEST] == MOVER:  # no test after the other actions
        return
    if sc[TURN] == 0:  # claims and setup placements: a game is won on a player's own turn, after setup
        return
    me = sc[CURRENT]
    n_players = alive.shape[0]
    if rules[DOMINATION]:
        if territories_of(counts, me) == owner.shape[0]:
            finish(log, sc, me, BY_DOMINATION)
        return
    # the acting player first; after an elimination a destroy mission elsewhere may have fallen back to 24
    anyone_out = False
    for c in range(eliminated_by.shape[0]):
        anyone_out = anyone_out or eliminated_by[c] >= 0
    for p in range(-1, n_players if anyone_out else 0):
        if p == me:
            continue
        q = me if p < 0 else p
        if alive[q] and mission_done(q, missions, owner, armies, counts, sizes, n_players, eliminated_by):
            finish(log, sc, q, BY_MISSION)
            return
    living = 0
    for p in range(n_players):
        living += alive[p]
    if living == 1:  # the last player standing wins even in mission mode
        finish(log, sc, me, BY_DOMINATION)


@njit(cache=True)
def check_mover_victory(log, sc, rules, owner, armies, counts, sizes, eliminated_by, missions, setup_left):
    """`reference._check_mover_victory`: the mover alone, all territories first, then its mission once the setup
    placements are over (`setup_left`: the setup armies all seats have still to place)."""
    me = sc[CURRENT]
    if territories_of(counts, me) == owner.shape[0]:
        finish(log, sc, me, BY_DOMINATION)
    elif not rules[DOMINATION] and setup_left == 0 and mission_done(me, missions, owner, armies, counts, sizes,
                                                                    counts.shape[0], eliminated_by):
        finish(log, sc, me, BY_MISSION)


@njit(cache=True)
def begin_turn(log, sc, rules, player, owner, armies, counts, sizes, bonus):
    if sc[TURN] >= rules[TURN_CAP]:
        sc[PHASE], sc[REASON] = OVER, BY_TURN_CAP
        emit(log, sc, DRAW)
        return
    sc[TURN] += 1
    sc[CURRENT] = player
    sc[CONQUERED] = 0
    sc[BONUS_USED] = 0
    sc[PHASE] = REINFORCE
    reserve = max(LEAST_REINFORCEMENT, territories_of(counts, player) // TERRITORIES_PER_ARMY)
    for c in range(sizes.shape[0]):
        if holds(counts, sizes, player, c):
            reserve += bonus[c]
    sc[RESERVE] = reserve
    snapshot(log, sc, owner, armies)


@njit(cache=True)
def next_setup_player(log, sc, rules, setup_left, owner, armies, counts, sizes, bonus):
    """`reference._next_setup_player` after a placement used up the reserve."""
    p = setup_left.shape[0]
    for k in range(p):
        cand = (sc[CURRENT] + 1 + k) % p
        if setup_left[cand] > 0:
            sc[CURRENT], sc[PHASE], sc[RESERVE] = cand, SETUP, min(rules[SETUP_BATCH], setup_left[cand])
            return
    begin_turn(log, sc, rules, 0, owner, armies, counts, sizes, bonus)


@njit(cache=True)
def end_turn(log, chance_rng, sc, rules, owner, armies, hands, hand_len, deck, discard, alive, counts, sizes,
             bonus):
    """`reference._end_turn`: a card for a conquest (the deck refilled from the discards when empty), next player."""
    me = sc[CURRENT]
    if sc[CONQUERED]:
        if deck[0] == 0:  # deck[0] and discard[0] hold the lengths
            n = discard[0]
            deck[1:n + 1] = np.sort(discard[1:n + 1])
            deck[0], discard[0] = n, 0
        if deck[0] > 0:
            i = chance_rng.integers(0, deck[0])
            card = deck[1 + i]
            deck[1 + i:deck[0]] = deck[2 + i:deck[0] + 1].copy()
            deck[0] -= 1
            hands[me, hand_len[me]] = card
            hand_len[me] += 1
            emit(log, sc, DRAW_CARD, cards_start=log_cards(log, sc, hands[me, hand_len[me] - 1:], 1), cards_len=1)
    nxt = (me + 1) % alive.shape[0]
    while not alive[nxt]:
        nxt = (nxt + 1) % alive.shape[0]
    begin_turn(log, sc, rules, nxt, owner, armies, counts, sizes, bonus)


@njit(cache=True)
def first_set(hand, n, card_symbol):
    """`cards.find_sets(hand)[0]` as positions in the hand (i < j < k), or (-1, -1, -1)."""
    for i in range(n):
        for j in range(i + 1, n):
            for k in range(j + 1, n):
                a, b, c = card_symbol[hand[i]], card_symbol[hand[j]], card_symbol[hand[k]]
                if a == WILD or b == WILD or c == WILD or (a == b and b == c) or (a != b and b != c and a != c):
                    return i, j, k
    return -1, -1, -1


@njit(cache=True)
def trade_value(rules, trades, symbols):
    """`cards.fixed_value` or `cards.escalating_value`."""
    if rules[FIXED_VALUES]:
        plain = [s for s in symbols if s != WILD]
        alike = mixed = True
        for x in range(len(plain)):
            for y in range(x + 1, len(plain)):
                alike = alike and plain[x] == plain[y]
                mixed = mixed and plain[x] != plain[y]
        best = 0
        if alike:
            best = FIXED[plain[0]] if len(plain) else FIXED_ALL_WILD
        if mixed:
            best = max(best, FIXED_MIXED)
        return best
    n = len(ESCALATING)
    value = ESCALATING[trades] if trades < n else ESCALATING[n - 1] + ESCALATING_STEP * (trades - n + 1)
    return value if rules[CARD_CAP] < 0 else min(value, rules[CARD_CAP])


@njit(cache=True)
def trade(log, sc, rules, owner, armies, hands, hand_len, deck, discard, card_symbol, i, j, k):
    """`reference._trade` of the hand's cards at positions i < j < k (card ids ascending, as `find_sets` sorts)."""
    me = sc[CURRENT]
    cards = np.sort(np.array([hands[me, i], hands[me, j], hands[me, k]]))
    value = trade_value(rules, sc[TRADES], [card_symbol[c] for c in cards])
    bonus_at = -1
    if not sc[BONUS_USED] or rules[EVERY_TRADE]:
        for c in cards:
            if c < owner.shape[0] and owner[c] == me:
                bonus_at = c
                break
    kept = 0
    for x in range(hand_len[me]):
        if x != i and x != j and x != k:
            hands[me, kept] = hands[me, x]
            kept += 1
    hand_len[me] = kept
    pile = deck if rules[AT_ONCE] else discard
    for c in cards:
        pile[0] += 1
        pile[pile[0]] = c
    sc[TRADES] += 1
    sc[RESERVE] += value
    if bonus_at >= 0:
        sc[BONUS_USED] = 1
        armies[bonus_at] += TERRITORY_BONUS
    emit(log, sc, TRADE, dst=bonus_at, armies=value, cards_start=log_cards(log, sc, cards, 3), cards_len=3)


# ---- `reference.step`, one function per branch ------------------------------------------------------------------
# The actions the compiled games take (a `Place` of the whole reserve, a `Trade`, a full battle, an `Occupy`, an
# `EndAttack`, a `Fortify`, an `EndTurn`; claims, single rolls and retreats stay in Python), each as `step` applies
# it and in its order. An agent's loop calls the branch of the action it chose: one dispatching `step` cost the
# compiled games a fifth of their speed, since numba counts references to every array it is passed on every call.
@njit(cache=True)
def step_place(log, sc, rules, setup_left, owner, armies, counts, sizes, bonus, alive, eliminated_by, missions,
               hand_len, t, n):
    """`Place(t, n)`."""
    me = sc[CURRENT]
    armies[t] += n
    sc[RESERVE] -= n
    if sc[PHASE] == SETUP:
        setup_left[me] -= n
        emit(log, sc, PLACE, dst=t, armies=n)
        if rules[WIN_TEST] == MOVER:
            check_mover_victory(log, sc, rules, owner, armies, counts, sizes, eliminated_by, missions,
                                setup_left.sum())
        else:
            check_victory(log, sc, rules, owner, armies, counts, sizes, alive, eliminated_by, missions)
        if sc[PHASE] != OVER and sc[RESERVE] == 0:
            next_setup_player(log, sc, rules, setup_left, owner, armies, counts, sizes, bonus)
        return
    emit(log, sc, REINFORCE_EVENT, dst=t, armies=n)
    if sc[RESERVE] == 0 and hand_len[me] < rules[FORCED_AT]:
        sc[PHASE] = ATTACK
    if rules[WIN_TEST] == MOVER:
        check_mover_victory(log, sc, rules, owner, armies, counts, sizes, eliminated_by, missions, 0)
    else:
        check_victory(log, sc, rules, owner, armies, counts, sizes, alive, eliminated_by, missions)


@njit(cache=True)
def step_trade(log, sc, rules, owner, armies, hands, hand_len, deck, discard, card_symbol, counts, sizes, alive,
               eliminated_by, missions, i, j, k):
    """`Trade` of the cards at hand positions i < j < k."""
    trade(log, sc, rules, owner, armies, hands, hand_len, deck, discard, card_symbol, i, j, k)
    check_victory(log, sc, rules, owner, armies, counts, sizes, alive, eliminated_by, missions)


@njit(cache=True)
def step_attack(log, chance_rng, sc, rules, owner, armies, counts, sizes, continent_of, alive, eliminated_by,
                missions, hands, hand_len, src, dst, rolls):
    """`Attack(src, dst, stop_at=0)`, a full battle, with `reference._attack` written in (a call less per attack:
    a twentieth of the compiled games' time); True when it conquered: ownership moves (and the victim's cards when
    it is out), the armies move in with the next action."""
    me, defender = sc[CURRENT], owner[dst]
    rolling, defending = armies[src] - 1, armies[dst]
    a_loss, d_loss, last = sample_full_battle(chance_rng, rolling, defending, rolls[0], rolls[1], rolls[2], rolls[3])
    armies[src] -= a_loss
    armies[dst] -= d_loss
    conquered = armies[dst] == 0
    emit(log, sc, ATTACK_EVENT, src=src, dst=dst, a_dice=min(ATTACKER_DICE, rolling),
         d_dice=min(DEFENDER_DICE, defending), a_loss=a_loss, d_loss=d_loss, conquered=conquered, opponent=defender,
         stop_at=0)
    if not conquered:
        check_victory(log, sc, rules, owner, armies, counts, sizes, alive, eliminated_by, missions)
        return False
    owner[dst] = me
    counts[me, continent_of[dst]] += 1
    counts[defender, continent_of[dst]] -= 1
    sc[CONQUERED] = 1
    sc[OCC_SRC], sc[OCC_DST], sc[OCC_LOW] = src, dst, min(last, armies[src] - 1)
    sc[PHASE] = OCCUPY  # a conquest is complete only once the armies have moved in: no victory check yet
    if territories_of(counts, defender) == 0:
        alive[defender] = False
        eliminated_by[defender] = me
        taken = hand_len[defender]
        emit(log, sc, ELIMINATE, opponent=defender, cards_start=log_cards(log, sc, hands[defender], taken),
             cards_len=taken)
        for x in range(taken):
            hands[me, hand_len[me]] = hands[defender, x]
            hand_len[me] += 1
        hand_len[defender] = 0
    return True


@njit(cache=True)
def step_occupy(log, sc, rules, owner, armies, counts, sizes, alive, eliminated_by, missions, hand_len, n):
    """`Occupy(n)`."""
    src, dst = sc[OCC_SRC], sc[OCC_DST]
    armies[src] -= n
    armies[dst] += n
    emit(log, sc, OCCUPY_EVENT, src=src, dst=dst, armies=n)
    # trade down at once after taking a victim's cards, then place
    sc[PHASE] = REINFORCE if hand_len[sc[CURRENT]] >= rules[ELIMINATION_AT] else ATTACK
    if rules[WIN_TEST] == MOVER:
        check_mover_victory(log, sc, rules, owner, armies, counts, sizes, eliminated_by, missions, 0)
    else:
        check_victory(log, sc, rules, owner, armies, counts, sizes, alive, eliminated_by, missions)


@njit(cache=True)
def step_end_attack(log, sc, rules, owner, armies, counts, sizes, alive, eliminated_by, missions):
    """`EndAttack()`."""
    emit(log, sc, END_ATTACK)
    sc[PHASE] = FORTIFY
    check_victory(log, sc, rules, owner, armies, counts, sizes, alive, eliminated_by, missions)


@njit(cache=True)
def step_fortify(log, chance_rng, sc, rules, owner, armies, hands, hand_len, deck, discard, alive, eliminated_by,
                 missions, counts, sizes, bonus, src, dst, n):
    """`Fortify(src, dst, n)`: the turn ends with it."""
    armies[src] -= n
    armies[dst] += n
    emit(log, sc, FORTIFY_EVENT, src=src, dst=dst, armies=n)
    if rules[WIN_TEST] == MOVER:
        check_mover_victory(log, sc, rules, owner, armies, counts, sizes, eliminated_by, missions, 0)
    else:
        check_victory(log, sc, rules, owner, armies, counts, sizes, alive, eliminated_by, missions)
    if sc[PHASE] != OVER:
        end_turn(log, chance_rng, sc, rules, owner, armies, hands, hand_len, deck, discard, alive, counts, sizes,
                 bonus)


@njit(cache=True)
def step_end_turn(log, chance_rng, sc, rules, owner, armies, hands, hand_len, deck, discard, alive, counts, sizes,
                  bonus):
    """`EndTurn()`."""
    emit(log, sc, END_TURN)
    end_turn(log, chance_rng, sc, rules, owner, armies, hands, hand_len, deck, discard, alive, counts, sizes, bonus)
