"""The report's decision rules, declared before any number is read: a comparison is answered yes or no only when
its 95% interval excludes no difference, and otherwise "not decided at this size" with the size that would give an
interval half-width of 0.03 (the width at which the report calls an undecided comparison settled as a tie)."""

from __future__ import annotations

import math

import numpy as np

from riskcore.stats import wilson_interval

Z = 1.959964
HALF_WIDTH = 0.03


def pct(x: float) -> str:
    """A share as the report writes it: one decimal of a percent."""
    return f"{x:.1%}"


def direction(low: float, high: float, zero: float = 0.0) -> str:
    """'higher' when the interval of a difference (or rate) lies above `zero`, 'lower' when below, else
    'not decided'."""
    return "higher" if low > zero else "lower" if high < zero else "not decided"


def trials_for_half_width(rate: float, half_width: float = HALF_WIDTH) -> int:
    """Trials a binomial rate needs for a 95% interval of the given half-width (normal approximation)."""
    rate = min(max(rate, 0.05), 0.95)  # near 0 or 1 the approximation says too little
    return math.ceil(Z**2 * rate * (1 - rate) / half_width**2)


def trials_to_narrow(trials: int, low: float, high: float, half_width: float = HALF_WIDTH) -> int:
    """Trials an interval measured on `trials` (low, high) needs to narrow to the given half-width: intervals
    shrink as one over the square root of the sample size."""
    return math.ceil(round(trials * ((high - low) / 2 / half_width) ** 2, 6))  # no 401 for 400 from rounding


def undecided(trials: int, low: float, high: float, unit: str = "games", needs: int | None = None) -> str:
    """The answer for an interval that straddles its threshold, with the size that would decide it (`needs`, when
    a table already holds it, else `trials_to_narrow`)."""
    needs = trials_to_narrow(trials, low, high) if needs is None else needs
    return f"not decided at {trials:,} {unit} (a half-width of {HALF_WIDTH} needs about {needs:,})"


def rate_difference(wins_a: int, n_a: int, wins_b: int, n_b: int) -> tuple[float, float, float]:
    """a's rate minus b's with Newcombe's hybrid score interval (method 10 of Newcombe 1998): two independent
    binomials, 95%."""
    pa, pb = wins_a / n_a, wins_b / n_b
    la, ha = (float(x) for x in wilson_interval(wins_a, n_a))
    lb, hb = (float(x) for x in wilson_interval(wins_b, n_b))
    d = pa - pb
    low = d - math.sqrt((pa - la) ** 2 + (hb - pb) ** 2)
    high = d + math.sqrt((ha - pa) ** 2 + (pb - lb) ** 2)
    return d, low, high


def sign_test_share(wins: int, losses: int) -> tuple[float, float, float]:
    """The share of decided pairs won, with its Wilson interval: the sign test's reading of a head-to-head
    (draws carry no sign and are left out)."""
    n = wins + losses
    if n == 0:
        return float("nan"), 0.0, 1.0
    low, high = wilson_interval(wins, n)
    return wins / n, float(low), float(high)


def mcnemar_p(only_a: int, only_b: int) -> float:
    """Exact two-sided McNemar test for paired right/wrong: `only_a` pairs a got right and b wrong, `only_b` the
    reverse; the binomial sign test on the discordant pairs."""
    from scipy.stats import binomtest

    n = only_a + only_b
    return 1.0 if n == 0 else float(binomtest(only_a, n, 0.5).pvalue)


def leaders_sentence(table, games_column: str = "games") -> str:
    """One sentence on a tournament table sorted best first (columns agent, win_rate, ci_low, ci_high and
    `games_column`): the leader is decided when its interval clears every other agent's; otherwise the agents
    whose intervals overlap the leader's, and the games an agent that a half-width of 0.03 needs."""
    top = table.iloc[0]
    tied = table[table.ci_high >= top.ci_low].agent.tolist()
    games = int(top[games_column])
    if len(tied) == 1:
        return (f"`{top.agent}` leads with its 95% interval clear of every other agent's ({games} games an "
                "agent)")
    needed = trials_for_half_width(float(np.mean(table.win_rate.iloc[:len(tied)])))
    return (f"the leaders are not decided at {games} games an agent: {', '.join(f'`{a}`' for a in tied)} have "
            f"overlapping 95% intervals (a half-width of {HALF_WIDTH} needs about {needed:,} games an agent)")
