"""Exact battle mathematics for classic RISK dice, and samplers that draw from the exact distributions.

One roll: the attacker rolls `a` dice (1-3), the defender `d` (1-2); the highest dice are compared pairwise, ties go
to the defender. A whole battle ("attack until the territory falls or I am down to `stop_at` rolling armies") is an
absorbing Markov chain over (attacking armies, defending armies) in which both sides always roll the most dice
(Tan 1997, "Markov chains and the RISK board game"; Osborne 2003 corrected it). `sample_battle` draws the absorbing
state in one uniform draw from the precomputed, cached distribution.
"""

from __future__ import annotations

from bisect import bisect_right
from fractions import Fraction
from functools import lru_cache
from itertools import product

import numpy as np

from riskcore.engine.rules import ATTACKER_DICE, DEFENDER_DICE

EXPECTED_BATTLE_CAP = 40  # `expected_battle` caps both sides here: beyond, the rounding no longer changes


def _check_dice(attacker_dice: int, defender_dice: int) -> None:
    if not 1 <= attacker_dice <= ATTACKER_DICE:
        raise ValueError(f"attacker dice must be 1..{ATTACKER_DICE}, got {attacker_dice}")
    if not 1 <= defender_dice <= DEFENDER_DICE:
        raise ValueError(f"defender dice must be 1..{DEFENDER_DICE}, got {defender_dice}")


@lru_cache(maxsize=None)
def roll_outcomes(attacker_dice: int, defender_dice: int) -> dict[tuple[int, int], Fraction]:
    """Exact distribution of one roll: `{(attacker_losses, defender_losses): probability}`.

    Enumerates all 6**(a+d) equally likely rolls, e.g. 3 vs 2 gives 2890/7776 defender loses two,
    2611/7776 one each, 2275/7776 attacker loses two.
    """
    _check_dice(attacker_dice, defender_dice)
    counts: dict[tuple[int, int], int] = {}
    total = 0
    for dice in product(range(1, 7), repeat=attacker_dice + defender_dice):
        att = sorted(dice[:attacker_dice], reverse=True)
        dfn = sorted(dice[attacker_dice:], reverse=True)
        a_loss = d_loss = 0
        for x, y in zip(att, dfn):
            if x > y:
                d_loss += 1
            else:
                a_loss += 1
        counts[(a_loss, d_loss)] = counts.get((a_loss, d_loss), 0) + 1
        total += 1
    return {k: Fraction(v, total) for k, v in sorted(counts.items())}


@lru_cache(maxsize=None)
def _roll_table(attacker_dice: int, defender_dice: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Float form of `roll_outcomes` for sampling: (attacker losses, defender losses, cumulative probabilities)."""
    items = list(roll_outcomes(attacker_dice, defender_dice).items())
    a = np.array([k[0] for k, _ in items])
    d = np.array([k[1] for k, _ in items])
    cum = np.cumsum([float(p) for _, p in items])
    cum[-1] = 1.0
    return a, d, cum


def sample_roll(rng: np.random.Generator, attacker_dice: int, defender_dice: int) -> tuple[int, int]:
    """One roll drawn from its exact distribution: (attacker losses, defender losses)."""
    a, d, cum = _roll_table(attacker_dice, defender_dice)
    i = int(np.searchsorted(cum, rng.random(), side="right"))
    return int(a[i]), int(d[i])


def _absorbing(attackers: int, defenders: int, stop_at: int, one, convert) -> dict[tuple[int, int], object]:
    """Distribution of the absorbing state reached from (attackers, defenders); generic over the number type.
    The mass sits in a flat list indexed by (a, d), not a dictionary per state: float sampling tables are built
    often."""
    if attackers < 0 or defenders < 0 or stop_at < 0:
        raise ValueError(f"armies and stop_at must be non-negative, got {attackers}, {defenders}, {stop_at}")
    width = defenders + 1
    mass: list = [None] * ((attackers + 1) * width)
    mass[attackers * width + defenders] = one
    final: dict[tuple[int, int], object] = {}
    rolls = {(a, d): [(al, dl, convert(q)) for (al, dl), q in roll_outcomes(a, d).items()]
             for a in range(1, ATTACKER_DICE + 1) for d in range(1, DEFENDER_DICE + 1)}
    # every roll lowers a + d, so visiting states by decreasing a + d sees each state's full mass once
    for total in range(attackers + defenders, -1, -1):
        for a in range(min(attackers, total), max(total - defenders, 0) - 1, -1):
            d = total - a
            p = mass[a * width + d]
            if p is None:
                continue
            if d == 0 or a <= stop_at:
                final[(a, d)] = p
                continue
            for al, dl, q in rolls[(min(ATTACKER_DICE, a), min(DEFENDER_DICE, d))]:
                k = (a - al) * width + d - dl
                held = mass[k]
                mass[k] = (0 if held is None else held) + p * q
    return final


@lru_cache(maxsize=4096)
def battle_distribution(attackers: int, defenders: int, stop_at: int = 0) -> dict[tuple[int, int], Fraction]:
    """Exact distribution of the final (attacking armies, defending armies) of a whole battle.

    `attackers` counts the armies allowed to roll (territory armies - 1); the battle stops when the defender has
    none left (conquest) or the attacker is down to `stop_at` rolling armies.
    """
    return _absorbing(attackers, defenders, stop_at, Fraction(1), lambda q: q)


@lru_cache(maxsize=None)
def conquer_probability(attackers: int, defenders: int) -> Fraction:
    """Exact probability that `attackers` rolling armies take a territory held by `defenders`, always max dice."""
    if defenders == 0:
        return Fraction(1)
    return sum((p for (a, d), p in battle_distribution(attackers, defenders, 0).items() if d == 0), Fraction(0))


@lru_cache(maxsize=65536)
def _battle_table(attackers: int, defenders: int, stop_at: int) -> tuple[list[int], list[int], list[float]]:
    """(final attacking armies, final defending armies, cumulative probabilities) of a battle, as lists: sampling
    looks up one entry per battle."""
    dist = _absorbing(attackers, defenders, stop_at, 1.0, float)
    keys = sorted(dist)
    cum = np.cumsum([dist[k] for k in keys])
    cum /= cum[-1]
    return [k[0] for k in keys], [k[1] for k in keys], cum.tolist()


def sample_battle(rng: np.random.Generator, attackers: int, defenders: int, stop_at: int = 0,
                  roll_by_roll: bool = False) -> tuple[int, int, int]:
    """Draw a whole battle's result.

    The default draws the absorbing state in one uniform draw from the exact distribution; `roll_by_roll`
    simulates each roll instead (same distribution, used to cross-check). Returns
    `(attacker_losses, defender_losses, last_attacker_dice)`.
    """
    if roll_by_roll:
        a, d, dice = attackers, defenders, 0
        while d > 0 and a > stop_at:
            dice = min(ATTACKER_DICE, a)
            al, dl = sample_roll(rng, dice, min(DEFENDER_DICE, d))
            a -= al
            d -= dl
        return attackers - a, defenders - d, dice
    if defenders == 0 or attackers <= stop_at:
        return 0, 0, 0
    fa, fd, cum = _battle_table(attackers, defenders, stop_at)
    i = bisect_right(cum, rng.random())  # as numpy's searchsorted(side="right"), on a list: one draw per battle
    a = fa[i]
    # the last roll used min(3, armies before it) >= min(3, a) dice; min(3, a) is all the occupy rule needs
    return attackers - a, defenders - fd[i], min(ATTACKER_DICE, max(a, 1))


@lru_cache(maxsize=None)
def win_probability_table(max_armies: int = 64) -> np.ndarray:
    """Float table P[a, d] of conquering with `a` rolling armies against `d` defenders (a, d < max_armies).

    Agents index it with armies clipped to the table; built by one DP over the absorbing chain.
    """
    n = max_armies
    p = np.zeros((n, n))
    p[:, 0] = 1.0
    tables = {(ad, dd): [(al, dl, float(q)) for (al, dl), q in roll_outcomes(ad, dd).items()]
              for ad in range(1, ATTACKER_DICE + 1) for dd in range(1, DEFENDER_DICE + 1)}
    for a in range(1, n):
        for d in range(1, n):
            roll = (min(ATTACKER_DICE, a), min(DEFENDER_DICE, d))
            p[a, d] = sum(q * p[a - al, d - dl] for al, dl, q in tables[roll])
    return p


@lru_cache(maxsize=None)
def expected_battle(attackers: int, defenders: int) -> tuple[bool, int, int]:
    """A whole battle reduced to one deterministic outcome, its expectation under the exact distribution:
    (conquered, attacker rolling armies left, defender armies left). The attacker conquers when the conquest
    probability is at least 1/2, keeping its expected survivors given a conquest; otherwise the defender keeps its
    expected survivors given a failed attack. The simplified models of the minimax agent and of goal-based search
    play battles this way."""
    attackers, defenders = min(attackers, EXPECTED_BATTLE_CAP), min(defenders, EXPECTED_BATTLE_CAP)
    dist = battle_distribution(attackers, defenders, 0)
    p_win = sum(float(p) for (a, d), p in dist.items() if d == 0)
    if p_win >= 0.5:
        left = sum(float(p) * a for (a, d), p in dist.items() if d == 0) / p_win
        return True, max(1, int(round(left))), 0
    lose = 1 - p_win
    left = sum(float(p) * d for (a, d), p in dist.items() if d > 0) / lose
    return False, 0, max(1, int(round(left)))


def expected_attack(owner: np.ndarray, armies: np.ndarray, src: int, dst: int) -> tuple[np.ndarray, np.ndarray]:
    """New (owner, armies) arrays after `src` attacks `dst` with everything but one army, by `expected_battle`: a
    conquest moves every surviving attacker in; either way one army stays behind on `src`."""
    owner, armies = owner.copy(), armies.copy()
    conquered, att_left, def_left = expected_battle(int(armies[src]) - 1, int(armies[dst]))
    if conquered:
        owner[dst] = owner[src]
        armies[dst] = att_left
    else:
        armies[dst] = def_left
    armies[src] = 1
    return owner, armies


@lru_cache(maxsize=None)
def expected_battle_table(cap: int = EXPECTED_BATTLE_CAP) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`expected_battle(a, d)` for every 1 <= a, d <= cap, as (conquered, attacker left, defender left) arrays
    indexed [a, d] (row and column 0 unused).

    One exact dynamic programme over the absorbing chain gives, for every start at once, the conquest probability
    and the expected survivors on either outcome (linear in the successor states); a start whose probability is 1/2
    or whose expected survivors end in .5, exactly or within 1e-9, is handed to `expected_battle` itself, so the
    table equals it everywhere."""
    win = [[Fraction(0)] * (cap + 1) for _ in range(cap + 1)]
    att = [[Fraction(0)] * (cap + 1) for _ in range(cap + 1)]  # E[attacker left; conquest]
    dfn = [[Fraction(0)] * (cap + 1) for _ in range(cap + 1)]  # E[defender left; no conquest]
    for a in range(cap + 1):
        win[a][0], att[a][0] = Fraction(1), Fraction(a)
    for d in range(cap + 1):
        dfn[0][d] = Fraction(d)
    win[0][0], att[0][0] = Fraction(0), Fraction(0)
    for a in range(1, cap + 1):
        for d in range(1, cap + 1):
            for (al, dl), q in roll_outcomes(min(ATTACKER_DICE, a), min(DEFENDER_DICE, d)).items():
                win[a][d] += q * win[a - al][d - dl]
                att[a][d] += q * att[a - al][d - dl]
                dfn[a][d] += q * dfn[a - al][d - dl]
    conq = np.zeros((cap + 1, cap + 1), dtype=bool)
    left_a = np.zeros((cap + 1, cap + 1), dtype=np.int64)
    left_d = np.zeros((cap + 1, cap + 1), dtype=np.int64)
    for a in range(1, cap + 1):
        for d in range(1, cap + 1):
            p = win[a][d]
            left = att[a][d] / p if p >= Fraction(1, 2) else dfn[a][d] / (1 - p)
            near = abs(p - Fraction(1, 2)) < 1e-9 or abs(left - int(left) - Fraction(1, 2)) < 1e-9
            if near:
                conq[a, d], left_a[a, d], left_d[a, d] = expected_battle(a, d)
            elif p >= Fraction(1, 2):
                conq[a, d], left_a[a, d] = True, max(1, round(left))
            else:
                left_d[a, d] = max(1, round(left))
    return conq, left_a, left_d
