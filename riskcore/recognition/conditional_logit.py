"""`conditional_logit`: a supervised model that scores every mission with the same weights on its own features.

A multinomial classifier (`recognisers.fit_classifier`) learns separate weights for each of the six cards from
generic trace features; with a few hundred players that is many parameters for little data. A conditional logit
(McFadden) instead describes each explanation e by what the player did in e's territories and scores it with
weights w shared by all explanations:

    P(e | obs_1..i) ∝ P(e) exp(w . x_e(i)),   x_e(i) = (share of e's territories owned after obs i,
                                                      share of the player's placements, won attacks, lost
                                                      attacks, fortifies, won defences, lost defences so far
                                                      that landed in e's territories)

so seven weights describe how a player's missions show in their play, whatever the card. Explanations whose card
the player's territories already complete are ruled out (`posterior.completed_cards`: the rules, not the fit).
Fitted by maximum likelihood of the true card (its explanations' probabilities summed) with a small L2 penalty,
on the same 20 points per player as the classifier.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize
from scipy.special import logsumexp

from riskcore.recognition.features import KIND, Features
from riskcore.recognition.posterior import completed_cards, group_starts, grouped_cumsum, training_rows

SHARE_KINDS = ("reinforce", "attack_won", "attack_lost", "fortify", "defend_won", "defend_lost")
FEATURE_NAMES = ("owned", *SHARE_KINDS)
L2 = 1e-3


def explanation_features(f: Features) -> np.ndarray:
    """(N, E, F) the features `FEATURE_NAMES` of every explanation after every observation."""
    inside_e = f.hyp.membership(np.full(f.hyp.board.n_territories, -1))  # (E, territories)
    terr = f.obs.territory.to_numpy()
    inside = np.where(terr[:, None] >= 0, inside_e[:, np.maximum(terr, 0)].T, False).astype(float)  # (N, E)
    kind = f.obs.kind_code.to_numpy()
    starts = group_starts(f)
    out = np.empty((f.n, f.hyp.size, len(FEATURE_NAMES)))
    out[:, :, 0] = f.owned_in / np.maximum(f.member_size, 1)
    for j, k in enumerate(SHARE_KINDS, start=1):
        codes = [KIND[k], KIND["place"]] if k == "reinforce" else [KIND[k]]  # a setup army is placed like one
        is_k = np.isin(kind, codes).astype(float)[:, None]
        out[:, :, j] = grouped_cumsum(inside * is_k, starts) / np.maximum(grouped_cumsum(is_k, starts), 1)
    return out


def _log_scores(weights: np.ndarray, x: np.ndarray, ruled_out: np.ndarray, log_prior: np.ndarray) -> np.ndarray:
    return np.where(ruled_out, -np.inf, x @ weights + log_prior)


def fit_conditional_logit(x: np.ndarray, ruled_out: np.ndarray, truth: np.ndarray, card_of: np.ndarray,
                          prior: np.ndarray, l2: float = L2) -> np.ndarray:
    """Weights maximising the mean log probability of each row's true card (`truth`, a card index) under
    (R, E, F) features `x`, less l2 |w|^2."""
    if len(truth) == 0:
        raise ValueError("conditional logit: no training rows (no player with a mission card)")
    of_truth = card_of[None, :] == truth[:, None]  # (R, E): the true card's explanations
    if (of_truth & ruled_out).any(axis=1).any():
        raise ValueError("conditional logit: a player's own card is complete in an observed state, which mission "
                         "rules do not allow (are these games played for missions?)")
    log_prior = np.log(prior)

    def loss(w):
        s = _log_scores(w, x, ruled_out, log_prior)
        p = np.exp(s - logsumexp(s, axis=1, keepdims=True))
        s_true = np.where(of_truth, s, -np.inf)
        q = np.exp(s_true - logsumexp(s_true, axis=1, keepdims=True))  # within the true card
        value = -(logsumexp(s_true, axis=1) - logsumexp(s, axis=1)).mean() + l2 * w @ w
        grad = -np.einsum("re,ref->f", q - p, x) / len(truth) + 2 * l2 * w
        return value, grad

    return minimize(loss, np.zeros(x.shape[2]), jac=True, method="L-BFGS-B").x


def fit(parts: list[Features], l2: float = L2) -> np.ndarray:
    """Weights fitted on every part's training rows."""
    xs, outs, truths = [], [], []
    for part in parts:
        rows, cards = training_rows(part)
        xs.append(explanation_features(part)[rows])
        outs.append(completed_cards(part)[rows])
        truths.append(cards)
    hyp = parts[0].hyp
    return fit_conditional_logit(np.concatenate(xs), np.concatenate(outs), np.concatenate(truths), hyp.card_of,
                                 hyp.prior, l2)


def conditional_logit_posterior(weights: np.ndarray, f: Features) -> np.ndarray:
    """(N, E) the model's posterior after every observation."""
    s = _log_scores(weights, explanation_features(f), completed_cards(f), np.log(f.hyp.prior))
    return np.exp(s - logsumexp(s, axis=1, keepdims=True))
