"""The report's decision rules: each answers yes, no or not decided from an interval, never from a point."""

import math

import pandas as pd
import pytest

from riskcore.verdicts import (direction, leaders_sentence, mcnemar_p, rate_difference, sign_test_share,
                               trials_for_half_width)


def test_direction_reads_only_the_interval():
    assert direction(0.01, 0.2) == "higher"
    assert direction(-0.2, -0.01) == "lower"
    assert direction(-0.01, 0.3) == "not decided"
    assert direction(0.51, 0.6, zero=0.5) == "higher" and direction(0.4, 0.5, zero=0.5) == "not decided"


def test_newcombes_published_example():
    # Newcombe (1998), table II, example (a): 56/70 against 48/80, method 10 gives 0.0524 to 0.3339
    d, low, high = rate_difference(56, 70, 48, 80)
    assert d == pytest.approx(0.2)
    assert (low, high) == (pytest.approx(0.0524, abs=5e-4), pytest.approx(0.3339, abs=5e-4))


def test_the_size_for_a_half_width_follows_the_normal_approximation():
    assert trials_for_half_width(0.5) == math.ceil(1.959964**2 * 0.25 / 0.03**2) == 1068
    assert trials_for_half_width(0.5, 0.06) == 267
    assert trials_for_half_width(0.0) == trials_for_half_width(0.05)  # no zero from a rate of zero


def test_the_sign_test_leaves_draws_out_and_mcnemar_is_exact():
    share, low, high = sign_test_share(60, 40)
    assert share == 0.6 and low > 0.5 > 0.4 < high
    assert math.isnan(sign_test_share(0, 0)[0])
    assert mcnemar_p(0, 0) == 1.0
    assert mcnemar_p(10, 0) == pytest.approx(2 / 2**10)
    assert mcnemar_p(5, 5) == pytest.approx(1.0)


def test_a_leader_is_named_only_when_its_interval_clears_every_other():
    clear = pd.DataFrame({"agent": ["a", "b"], "games": [200, 200], "win_rate": [0.8, 0.4], "ci_low": [0.74, 0.33],
                          "ci_high": [0.85, 0.47]})
    assert leaders_sentence(clear).startswith("`a` leads")
    tied = clear.assign(ci_high=[0.85, 0.75])
    sentence = leaders_sentence(tied)
    assert "not decided at 200 games an agent" in sentence and "`a`, `b`" in sentence and "needs about" in sentence


def test_an_undecided_interval_says_the_size_that_would_decide_it():
    from riskcore.verdicts import trials_to_narrow, undecided

    # half-width 0.06 on 100 games: four times the games halve it to 0.03
    assert trials_to_narrow(100, 0.44, 0.56) == 400
    assert trials_to_narrow(100, 0.485, 0.515) <= 100  # already narrow enough
    assert undecided(91, -0.10, 0.08, "players") == "not decided at 91 players (a half-width of 0.03 needs about 819)"
