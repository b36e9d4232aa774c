"""The candidates' scores under K goals and the choices' log-likelihoods, compiled (numba): the inner loops of
inverse planning and the mixtures.

`inverse.Candidates.goal_scores` is the reference: each candidate scores the best of its rows' value-weighted
conquest odds, a row's value 1 when its target lies in the goal, else 1 - focus; with `holding`, a placement
candidate scores its own territory's value instead. Rows fall into a few classes (their targets' explanation
bits), so membership is a (classes x K) table and the loop over rows x K reads it, without the (rows x K)
matrices the array form builds. `tests/recognition/test_compiled_scores.py` holds the two equal.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def class_scores(odds: np.ndarray, row_class: np.ndarray, inside: np.ndarray, own_class: np.ndarray,
                 own_inside: np.ndarray, focus: float, cand_start: np.ndarray, holding: bool) -> np.ndarray:
    """(candidates x K) scores. `row_class[r]` indexes `inside` (classes x K bool) for row r's target;
    `own_class[c]` indexes `own_inside` for candidate c's own territory (-1: an attack candidate)."""
    n_cand = len(cand_start) - 1
    k_goals = inside.shape[1]
    out = np.empty((n_cand, k_goals))
    outside = 1.0 - focus
    for c in range(n_cand):
        if holding and own_class[c] >= 0:  # a placement, read as holding what it values
            for k in range(k_goals):
                out[c, k] = 1.0 if own_inside[own_class[c], k] else outside
            continue
        for k in range(k_goals):
            out[c, k] = -np.inf
        for r in range(cand_start[c], cand_start[c + 1]):
            cls = row_class[r]
            for k in range(k_goals):
                v = odds[r] if inside[cls, k] else odds[r] * outside
                if v > out[c, k]:
                    out[c, k] = v
    return out


@njit(cache=True)
def choice_logliks(n_rows: int, obs_row: np.ndarray, decision_start: np.ndarray, cand_score: np.ndarray,
                   chosen: np.ndarray, beta: float, eps: float) -> np.ndarray:
    """`inverse.choice_loglik_reference` decision by decision, without its (candidates x K) temporaries: the
    same operations in the same order (a decision's sums run over its candidates in turn); each candidate's row
    of K scores is read whole, as it lies in memory."""
    n_k = cand_score.shape[1]
    out = np.zeros((n_rows, n_k))
    top, total = np.empty(n_k), np.empty(n_k)
    lapse, keep = (np.log(eps), np.log1p(-eps)) if eps > 0 else (0.0, 0.0)
    for d in range(decision_start.shape[0] - 1):
        lo, hi = decision_start[d], decision_start[d + 1]
        picked, n_chosen = -1, 0
        for j in range(lo, hi):
            if chosen[j]:
                picked, n_chosen = j, n_chosen + 1
        if n_chosen != 1:
            continue  # not a decision the model can read
        top[:] = -np.inf
        total[:] = 0.0
        for j in range(lo, hi):
            for k in range(n_k):
                top[k] = max(top[k], beta * cand_score[j, k])
        for j in range(lo, hi):
            for k in range(n_k):
                total[k] += np.exp(beta * cand_score[j, k] - top[k])
        row = obs_row[d]
        for k in range(n_k):
            soft = beta * cand_score[picked, k] - (top[k] + np.log(total[k]))
            if eps > 0:
                soft = np.logaddexp(lapse - np.log(hi - lo), keep + soft)
            out[row, k] = soft
    return out


def compile_scores() -> None:
    """Compile into numba's on-disk cache (run once at install: `make venv`)."""
    class_scores(np.zeros(1), np.zeros(1, np.int64), np.zeros((1, 1), np.bool_), np.zeros(1, np.int64),
                 np.zeros((1, 1), np.bool_), 0.5, np.array([0, 1], np.int64), True)
    choice_logliks(1, np.zeros(1, np.int64), np.array([0, 1], np.int64), np.zeros((1, 1)), np.ones(1, np.bool_),
                   1.0, 0.1)
