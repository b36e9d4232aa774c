"""The recognition study's numbers as the report states them: the test runs' metrics by recogniser, focus and
checkpoint, the PHATT weights chosen on training runs, and winners against losers.

The report notebook's recognition section reads its sentences from here, so the section's code stays a page of prose.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from riskcore.db import query
from riskcore.experiments.recognition.focus import REFERENCE_PHATT, experiment_runs, test_metrics, winners_vs_losers
from riskcore.recognition.recognisers import Recogniser
from riskcore.verdicts import pct, undecided


class RecognitionResults:
    """The test runs' metrics (`test_metrics`, every checkpoint of the observation window) at one default focus."""

    def __init__(self, metrics: pd.DataFrame, games: int, focus: float):
        self.focus = focus
        self.games = games  # per test run
        self.recognisers = {s: Recogniser.from_spec(s) for s in metrics.setting.unique()}
        self.main = metrics[(metrics.subset == "all") & ~metrics.ablation]

    @classmethod
    def load(cls, focus: float, data_dir: Path | None = None) -> "RecognitionResults":
        runs = experiment_runs("test", data_dir)
        games = query("SELECT count(*) AS n FROM games WHERE run = ?", [runs.set_index("focus").run[focus]],
                      data_dir).n[0]
        return cls(test_metrics(data_dir), int(games), focus)

    def metric(self, setting: str, name: str, point: float, focus: float | None = None
               ) -> tuple[float, float, float]:
        m = self.main
        r = m[(m.setting == setting) & (m.metric == name) & (m.point == point) & (m.focus == self._focus(focus))]
        return float(r.value.iloc[0]), float(r.ci_low.iloc[0]), float(r.ci_high.iloc[0])

    def top1(self, setting: str, point: float, focus: float | None = None) -> str:
        v, lo, hi = self.metric(setting, "top1", point, focus)
        return f"{pct(v)} [{pct(lo)}, {pct(hi)}]"

    def best_at(self, point: float, focus: float | None = None) -> str:
        """The setting with the highest top-1 at a checkpoint (exploration, not a headline)."""
        m = self.main
        at = m[(m.focus == self._focus(focus)) & (m.metric == "top1") & (m.point == point)]
        return at.sort_values("value").setting.iloc[-1]

    def best_top1_at_focus_zero(self) -> float:
        m = self.main
        return float(m[(m.focus == 0) & (m.metric == "top1") & (m.point == 1.0)].value.max())

    def reference_drift(self) -> tuple[float, float, str]:
        """PHATT with the reference's weights: top-1 at 10% and 100% of the window, and how it moves between."""
        early, late = self.metric(REFERENCE_PHATT, "top1", 0.1)[0], self.metric(REFERENCE_PHATT, "top1", 1.0)[0]
        return early, late, "then drifts down" if late < early else "and keeps it"

    def phatt_weights(self, data_dir: Path | None = None) -> tuple[pd.Series, float, float]:
        """The `phatt_weights` sweep at the default focus: the setting the training run chooses (lowest mean log
        loss), its test top-1 at half of the window, and the reference weights' test top-1 there."""
        sweep = query("SELECT * FROM phatt_sweep WHERE sweep = 'phatt_weights'", data_dir=data_dir)
        sweep["share"] = sweep.share.astype(float).round(2)
        train = sweep[sweep.split == "train"].groupby(["focus", "kind", "inconsistent"]).log_loss.mean().reset_index()
        pick = train.loc[train.groupby("focus").log_loss.idxmin()].set_index("focus").loc[self.focus]
        at_test = sweep[(sweep.split == "test") & (sweep.focus == self.focus) & (sweep.share == 0.5)]
        chosen = at_test[(at_test.kind == pick.kind) & (at_test.inconsistent == pick.inconsistent)].top1.iloc[0]
        reference = at_test[(at_test.kind == "all") & (at_test.inconsistent == 0.98)].top1.iloc[0]
        return pick, float(chosen), float(reference)

    def winners(self, setting: str, data_dir: Path | None = None) -> tuple[pd.DataFrame, pd.Series, str]:
        """Winners less losers at half of the window, per focus; the default focus's row and its answer."""
        wl = winners_vs_losers(setting, 0.5, data_dir=data_dir)
        at = wl.set_index("focus").loc[self.focus]
        answer = ("winners give their missions away more than losers" if at.ci_low > 0 else
                  "losers give their missions away more than winners" if at.ci_high < 0 else
                  undecided(int(at.games), at.ci_low, at.ci_high))
        return wl, at, answer

    def _focus(self, focus: float | None) -> float:
        return self.focus if focus is None else focus
