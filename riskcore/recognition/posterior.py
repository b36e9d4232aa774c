"""From per-observation evidence to posteriors after each observation, and the evaluation points.

Sequences are the (game, player) groups of a `Features` table (rows sorted by game, player, obs).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import logsumexp

from riskcore.recognition.features import Features
from riskcore.recognition.metrics import GRID

CHECKPOINTS = (0.1, 0.3, 0.5, 0.7, 1.0)


def group_starts(f: Features) -> np.ndarray:
    """Row index where each (game, player) sequence starts, plus a final sentinel."""
    key = f.obs.game_id.to_numpy() * 8 + f.obs.player.to_numpy()
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    return np.r_[starts, len(key)]


def grouped_cumsum(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Cumulative sum along rows restarting at every group start."""
    total = np.cumsum(values, axis=0)
    lengths = np.diff(starts)
    before = np.zeros((len(lengths),) + values.shape[1:], dtype=total.dtype)
    first = starts[:-1]
    before[first > 0] = total[first[first > 0] - 1]
    return total - np.repeat(before, lengths, axis=0)


def normalise(log_scores: np.ndarray) -> np.ndarray:
    """Rows of log scores -> probabilities, stable in log space."""
    return np.exp(log_scores - logsumexp(log_scores, axis=-1, keepdims=True))


def completed_cards(f: Features) -> np.ndarray:
    """(N, E) bool: the explanations whose card the player's territories already complete after each
    observation. Under mission rules a completed mission ends the game at once, and the game-ending action is
    never observed (`features._cutoff`), so such a card is not the player's, whatever their style of play. A row
    on which every card is complete cannot occur under those rules (a game without missions): nothing is ruled
    out there."""
    hyp = f.hyp
    continents = np.array([e.kind == "continents" for e in hyp.explanations])
    done = continents[None, :] & (f.member_size > 0) & (f.owned_in >= f.member_size)
    out = (hyp.card_probs(done) > 0)[:, hyp.card_of]  # any completed explanation completes its card
    out[out.all(axis=1)] = False
    return out


def cumulative_posterior(f: Features, loglik: np.ndarray, starts: np.ndarray | None = None,
                         prior: np.ndarray | None = None) -> np.ndarray:
    """(N, E) P(e | obs_1..i) for every row i: prior (default: the hypotheses') times the product of the
    sequence's likelihoods so far."""
    starts = group_starts(f) if starts is None else starts
    prior = f.hyp.prior if prior is None else prior
    return normalise(np.log(prior)[None, :] + grouped_cumsum(loglik, starts))


def checkpoint_offsets(n: np.ndarray, fractions: tuple[float, ...]) -> np.ndarray:
    """(len(n), F) offsets of the row after ceil(fraction x n) of n rows (at least the first), per fraction."""
    sizes, which = np.unique(np.asarray(n, dtype=np.int64), return_inverse=True)
    table = np.array([[max(int(np.ceil(round(frac * int(m), 9))), 1) - 1 for frac in fractions] for m in sizes],
                     dtype=np.int64).reshape(len(sizes), len(fractions))
    return table[which.ravel()]


def evaluation_rows(f: Features, starts: np.ndarray | None = None, turns: bool = True,
                    fractions: tuple[float, ...] = CHECKPOINTS) -> pd.DataFrame:
    """Rows at which posteriors are reported: each checkpoint fraction of a player's observation window
    (after ceil(fraction * n) observations) and, with `turns`, the last observation of every turn; per player,
    the fractions first, then the turns."""
    starts = group_starts(f) if starts is None else starts
    lo, n = starts[:-1], np.diff(starts)
    game, player = f.obs.game_id.to_numpy().astype(np.int64)[lo], f.obs.player.to_numpy().astype(np.int64)[lo]
    group = np.repeat(np.arange(len(lo)), len(fractions))
    rows = (lo[:, None] + checkpoint_offsets(n, fractions)).ravel()
    point = np.tile(np.asarray(fractions, dtype=float), len(lo))
    section = np.zeros(len(rows), dtype=np.int64)
    if turns:
        t = f.obs.turn.to_numpy()
        last = np.r_[t[1:] != t[:-1], True]
        last[starts[1:-1] - 1] = True  # a player's last observation ends their last turn
        turn_rows = np.flatnonzero(last)
        turn_group = np.searchsorted(starts, turn_rows, side="right") - 1
        order = np.argsort(np.r_[group * 2, turn_group * 2 + 1], kind="stable")
        rows = np.r_[rows, turn_rows][order]
        point = np.r_[point, t[turn_rows].astype(float)][order]
        section = np.r_[section, np.ones(len(turn_rows), dtype=np.int64)][order]
        group = np.r_[group, turn_group][order]
    return pd.DataFrame({"game_id": game[group], "player": player[group],
                         "point_kind": np.array(["fraction", "turn"], dtype=object)[section], "point": point,
                         "row": rows, "n_obs": n[group]})


def training_rows(f: Features) -> tuple[np.ndarray, np.ndarray]:
    """The rows a supervised model is fitted on (20 points of each player with a card in the hypotheses) and
    their true card indices."""
    rows = evaluation_rows(f, turns=False, fractions=GRID)
    truth = f.truth.set_index(["game_id", "player"]).card
    cards = truth.reindex(list(zip(rows.game_id, rows.player))).to_numpy()
    keep = cards >= 0
    return rows.row.to_numpy()[keep], cards[keep]
