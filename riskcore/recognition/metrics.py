"""Evaluation of mission recognition at the card level.

Per (game, player) with a card in the hypothesis set, at each checkpoint of the observation window:
top-1 (ties split: 1/|argmax set| when the true card is in it; `top1_explanation`, the reference's published
reading: the card of the most probable explanation, ties split), top-3 (ties split the same way), spread (size of
the argmax set), rank of the true card (ties averaged), log loss (-ln p_true), Brier score (sum over cards of
(p - 1[true])^2). The convergence point is the earliest window fraction (on a 5% grid) from which the true card is
the unique argmax at every later point. Confidence intervals: 95% percentile bootstrap over games (players of a
game move together); paired comparisons bootstrap the per-game difference between two recognisers.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

METRICS = ("top1", "top3", "spread", "rank", "log_loss", "brier", "top1_explanation")
READINGS = {"card": "top1", "explanation": "top1_explanation"}  # which top-1 a reading reports
GRID = tuple(np.round(np.arange(0.05, 1.0001, 0.05), 2))
EPS = 1e-12


def card_metrics(probs: np.ndarray, true: np.ndarray) -> pd.DataFrame:
    """Metrics of card probability rows (M, C) against the true card index (M,)."""
    m = np.arange(len(true))
    p_true = probs[m, true]
    pmax = probs.max(axis=1)
    in_top = probs >= pmax[:, None] - EPS
    spread = in_top.sum(axis=1)
    greater = (probs > p_true[:, None] + EPS).sum(axis=1)
    equal = (np.abs(probs - p_true[:, None]) <= EPS).sum(axis=1)
    top1 = np.where(greater == 0, 1.0 / equal, 0.0)
    top3 = np.clip((3 - greater) / equal, 0.0, 1.0)
    onehot = np.zeros_like(probs)
    onehot[m, true] = 1.0
    return pd.DataFrame({"top1": top1, "top3": top3, "spread": spread.astype(float),
                         "rank": 1 + greater + (equal - 1) / 2, "log_loss": -np.log(np.clip(p_true, 1e-15, 1)),
                         "brier": ((probs - onehot) ** 2).sum(axis=1)})


def explanation_top1(probs: np.ndarray, card_of: np.ndarray, true: np.ndarray) -> np.ndarray:
    """The reference's published reading of explanation rows (M, E): the card of the most probable explanation,
    ties split (1/|argmax set| for each tied explanation of the true card), against the true card index (M,)."""
    top = probs >= probs.max(axis=1, keepdims=True) - EPS
    hits = (top & (card_of[None, :] == true[:, None])).sum(axis=1)
    return hits / top.sum(axis=1)


def convergence_points(correct: pd.DataFrame) -> pd.Series:
    """Earliest grid fraction from which `correct` (unique argmax is true) holds to the end; NaN if never."""
    out = {}
    for key, grp in correct.sort_values("point").groupby(["game_id", "player"], sort=False):
        ok = grp.correct.to_numpy()
        if not ok[-1]:
            out[key] = np.nan
            continue
        wrong = np.flatnonzero(~ok)
        out[key] = grp.point.to_numpy()[wrong[-1] + 1] if len(wrong) else grp.point.to_numpy()[0]
    return pd.Series(out, name="convergence")


def bootstrap_ci(per_game: np.ndarray, rng: np.random.Generator, n_boot: int = 1000) -> tuple[float, float]:
    """95% percentile interval of the mean of per-game values (NaNs dropped)."""
    values = per_game[~np.isnan(per_game)]
    if len(values) < 2:
        return (np.nan, np.nan)
    idx = rng.integers(0, len(values), size=(n_boot, len(values)))
    means = values[idx].mean(axis=1)
    return float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))


def summarise(per_player: pd.DataFrame, group_cols: list[str], seed: int = 0, n_boot: int = 1000) -> pd.DataFrame:
    """Mean of each metric per group with a bootstrap CI over games (a game's players are averaged first)."""
    rng = np.random.default_rng(seed)
    rows = []
    metrics = [c for c in (*METRICS, "convergence") if c in per_player]
    for key, grp in per_player.groupby(group_cols, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        by_game = grp.groupby("game_id")[metrics].mean()
        for metric in metrics:
            values = by_game[metric].to_numpy(float)
            lo, hi = bootstrap_ci(values, rng, n_boot)
            mean = float(np.nanmean(values)) if np.isfinite(values).any() else np.nan
            rows.append({**dict(zip(group_cols, key)), "metric": metric, "value": mean,
                         "ci_low": lo, "ci_high": hi, "n_games": int(np.isfinite(values).sum()),
                         "n_players": int(grp[metric].notna().sum())})
    return pd.DataFrame(rows)


def paired(per_player: pd.DataFrame, a: str, b: str, metric: str = "top1", seed: int = 0,
           n_boot: int = 2000) -> pd.DataFrame:
    """Per checkpoint: mean per-game difference a - b in `metric`, bootstrap CI and two-sided p-value."""
    rng = np.random.default_rng(seed)
    wide = per_player[per_player.setting.isin([a, b])].pivot_table(
        index=["point", "game_id"], columns="setting", values=metric, aggfunc="mean")
    rows = []
    for point, grp in wide.groupby(level="point"):
        d = (grp[a] - grp[b]).to_numpy(float)
        d = d[~np.isnan(d)]
        idx = rng.integers(0, len(d), size=(n_boot, len(d)))
        means = d[idx].mean(axis=1)
        p = 2 * min((means <= 0).mean(), (means >= 0).mean())
        rows.append({"point": point, "a": a, "b": b, "metric": metric, "difference": float(d.mean()),
                     "ci_low": float(np.quantile(means, 0.025)), "ci_high": float(np.quantile(means, 0.975)),
                     "p_value": float(min(1.0, max(p, 1.0 / n_boot))), "n_games": len(d)})
    return pd.DataFrame(rows)
