from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import chisquare

from riskcore.engine.battle import (battle_distribution, conquer_probability, roll_outcomes, sample_battle, sample_roll,
                             win_probability_table)


def test_three_vs_two_exact_odds():
    out = roll_outcomes(3, 2)
    assert out[(0, 2)] == Fraction(2890, 7776)
    assert out[(1, 1)] == Fraction(2611, 7776)
    assert out[(2, 0)] == Fraction(2275, 7776)


@pytest.mark.parametrize("a,d", [(a, d) for a in (1, 2, 3) for d in (1, 2)])
def test_roll_outcomes_sum_to_one_and_lose_min_dice(a, d):
    out = roll_outcomes(a, d)
    assert sum(out.values()) == 1
    assert all(al + dl == min(a, d) for al, dl in out)


def test_one_vs_one_defender_wins_ties():
    assert roll_outcomes(1, 1) == {(0, 1): Fraction(15, 36), (1, 0): Fraction(21, 36)}


def test_illegal_dice_counts_rejected():
    with pytest.raises(ValueError, match="attacker dice"):
        roll_outcomes(4, 1)
    with pytest.raises(ValueError, match="defender dice"):
        roll_outcomes(1, 3)


def test_conquer_probability_small_cases():
    assert conquer_probability(1, 1) == Fraction(15, 36)
    assert conquer_probability(5, 0) == 1
    assert conquer_probability(0, 3) == 0
    assert abs(float(conquer_probability(10, 10)) - 0.5676) < 1e-3  # Osborne (2003), table 3


def test_battle_distribution_is_a_distribution_over_absorbing_states():
    dist = battle_distribution(6, 4, stop_at=2)
    assert sum(dist.values()) == 1
    assert all(d == 0 or a <= 2 for a, d in dist)


def test_float_table_matches_exact():
    table = win_probability_table(20)
    for a, d in [(1, 1), (3, 2), (7, 5), (12, 15)]:
        assert abs(table[a, d] - float(conquer_probability(a, d))) < 1e-12


def _chi2_pvalue(samples, dist):
    keys = sorted(dist)
    observed = np.array([samples.count(k) for k in keys], dtype=float)
    expected = np.array([float(dist[k]) for k in keys]) * len(samples)
    assert sum(observed) == len(samples), "sampled an impossible outcome"
    return chisquare(observed, expected).pvalue


@pytest.mark.parametrize("roll_by_roll", [False, True])
def test_battle_sampler_matches_exact_distribution(roll_by_roll):
    rng = np.random.default_rng(123)
    a, d, stop = 7, 5, 1
    dist = {(a - fa, d - fd): p for (fa, fd), p in battle_distribution(a, d, stop).items()}
    samples = [sample_battle(rng, a, d, stop, roll_by_roll)[:2] for _ in range(20000)]
    assert _chi2_pvalue(samples, dist) > 1e-3


def test_roll_sampler_matches_exact_distribution():
    rng = np.random.default_rng(7)
    samples = [sample_roll(rng, 3, 2) for _ in range(20000)]
    assert _chi2_pvalue(samples, roll_outcomes(3, 2)) > 1e-3


def test_battle_without_anything_to_do_changes_nothing():
    rng = np.random.default_rng(0)
    assert sample_battle(rng, 3, 0)[:2] == (0, 0)
    assert sample_battle(rng, 2, 4, stop_at=2)[:2] == (0, 0)


def test_the_expected_battle_table_is_expected_battle_everywhere():
    from riskcore.engine.battle import expected_battle, expected_battle_table

    conq, att, dfn = expected_battle_table(40)
    rng = np.random.default_rng(5)
    pairs = {(a, d) for a, d in rng.integers(1, 41, size=(150, 2))} | {(1, 1), (40, 40), (3, 2), (6, 6)}
    for a, d in sorted(pairs):
        assert (bool(conq[a, d]), int(att[a, d]), int(dfn[a, d])) == expected_battle(int(a), int(d)), (a, d)
