"""Fast in-memory scoring of posterior matrices at the checkpoints, for parameter sweeps and tuning.

Same definitions as `metrics.card_metrics`, without writing anything: a PHATT weight setting over a
1,000-game run is one vectorised likelihood, one grouped cumulative sum and one gather.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np
import pandas as pd

from riskcore.params import Spec
from riskcore.recognition.features import Features
from riskcore.recognition.metrics import card_metrics
from riskcore.recognition.phatt import PhattWeights, pending_counts, phatt_loglik
from riskcore.recognition.posterior import CHECKPOINTS, cumulative_posterior, evaluation_rows, group_starts


class Scorer:
    """Precomputes the checkpoint rows and true cards of a Features table once, then scores posteriors."""

    def __init__(self, f: Features):
        self.f = f
        self.starts = group_starts(f)
        rows = evaluation_rows(f, self.starts, turns=False, fractions=CHECKPOINTS)
        truth = f.truth.set_index(["game_id", "player"])
        rows = rows.join(truth[["card", "won"]], on=["game_id", "player"])
        self.rows = rows[rows.card >= 0].reset_index(drop=True)
        self.index = self.rows.row.to_numpy()
        self.cards = self.rows.card.to_numpy()
        self._counts = None

    def score(self, post: np.ndarray) -> pd.DataFrame:
        """Mean top-1, top-3 and log loss per checkpoint (players of a game averaged equally)."""
        m = card_metrics(self.f.hyp.card_probs(post[self.index]), self.cards)
        df = pd.concat([self.rows[["game_id", "point"]], m[["top1", "top3", "log_loss"]]], axis=1)
        return df.groupby(["point", "game_id"]).mean().groupby("point").mean()

    def phatt(self, weights: PhattWeights) -> pd.DataFrame:
        if self._counts is None:
            self._counts = pending_counts(self.f)
        post = cumulative_posterior(self.f, phatt_loglik(self.f, weights, self._counts), self.starts)
        return self.score(post)

    def sweep_phatt(self, settings: Iterable[PhattWeights]) -> pd.DataFrame:
        """One row per (setting, checkpoint)."""
        out = []
        for w in settings:
            out.append(self.phatt(w).reset_index().assign(setting=Spec("phatt", w.params()).text))
        return pd.concat(out, ignore_index=True)
