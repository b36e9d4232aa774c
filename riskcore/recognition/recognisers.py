"""Recognisers by name, each turning a run's features into the posterior after every observation.

| name | parameters | what it is |
|---|---|---|
| `uniform` | | the prior |
| `goal` | temperature | goal completion (`baselines.goal_posterior`) |
| `phatt` | scheme, weights | PHATT with equal / simple / proportional weights (`phatt`) |
| `inverse` | beta, focus | Bayesian inverse planning with the mission agent (`inverse`) |
| `classifier` | C, train run | multinomial logistic regression on trace features, trained on other seeds |
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from riskcore.recognition.baselines import goal_posterior, uniform_posterior
from riskcore.recognition.features import KINDS, Features, load_features
from riskcore.recognition.inverse import inverse_posterior, load_candidates
from riskcore.recognition.phatt import PhattWeights, phatt_loglik
from riskcore.recognition.posterior import cumulative_posterior, group_starts, grouped_cumsum

NAMES = ("uniform", "goal", "phatt", "inverse", "classifier")
# inverse: focus = -1 marginalises the player's focus over inverse.FOCUS_GRID (unknown to the observer)
DEFAULTS = {"goal": {"temperature": 0.1}, "inverse": {"beta": 10.0, "focus": -1.0, "eps": 0.05},
            "classifier": {"C": 1.0}}


@dataclass
class Recogniser:
    name: str
    params: dict[str, float] = field(default_factory=dict)
    weights: PhattWeights | None = None
    train_run: str | None = None  # classifier: one run or several, comma-separated
    kinds: tuple[str, ...] | None = None  # ablation: only these observation kinds carry evidence

    def __post_init__(self) -> None:
        if self.name not in NAMES:
            raise ValueError(f"unknown recogniser {self.name!r}; known: {NAMES}")
        allowed = set(DEFAULTS.get(self.name, {}))
        unknown = set(self.params) - allowed
        if unknown:
            raise ValueError(f"recogniser {self.name!r} has no parameter(s) {sorted(unknown)}; "
                             f"known: {sorted(allowed) or 'none'}")
        self.params = {**DEFAULTS.get(self.name, {}), **self.params}
        if self.name == "phatt" and self.weights is None:
            self.weights = PhattWeights()
        if self.name == "classifier" and not self.train_run:
            raise ValueError("the classifier needs --train-run: a run with other seeds to learn from")
        if self.kinds is not None:
            unknown = set(self.kinds) - set(KINDS)
            if unknown or not self.kinds:
                raise ValueError(f"unknown observation kind(s) {sorted(unknown)}; known: {KINDS}")
            if self.name in ("uniform", "goal", "classifier"):
                raise ValueError(f"recogniser {self.name!r} does not take evidence by kind")

    @property
    def setting(self) -> str:
        if self.name == "phatt":
            return f"phatt:{self.weights.label()}"
        extra = ",".join(f"{k}={v:g}" for k, v in sorted(self.params.items()))
        if self.name == "classifier":
            extra += f",train={self.train_run}"
        base = f"{self.name}:{extra}" if extra else self.name
        return base + (f"|kinds={'+'.join(self.kinds)}" if self.kinds else "")

    def _only_kinds(self, f: Features, ll: np.ndarray) -> np.ndarray:
        if self.kinds is None:
            return ll
        keep = np.isin(f.obs.kind.to_numpy(), self.kinds)
        return np.where(keep[:, None], ll, 0.0)

    def posterior(self, f: Features, run: str, data_dir: Path | None = None) -> np.ndarray:
        """(N, E) posterior after each observation of `f`."""
        starts = group_starts(f)
        if self.name == "uniform":
            return uniform_posterior(f)
        if self.name == "goal":
            return goal_posterior(f, self.params["temperature"])
        if self.name == "phatt":
            return cumulative_posterior(f, self._only_kinds(f, phatt_loglik(f, self.weights)), starts)
        if self.name == "inverse":
            p = self.params
            return inverse_posterior(f, load_candidates(f, run, data_dir), starts, p["beta"], p["focus"], p["eps"],
                                     self._only_kinds)
        train = [load_features(r.strip(), f.hyp.name, data_dir) for r in self.train_run.split(",")]
        if run in [r.strip() for r in self.train_run.split(",")]:
            raise ValueError(f"the classifier must not train on the run it is tested on ({run!r})")
        model = fit_classifier(train, self.params["C"])
        return classifier_posterior(model, f)


def parse_params(text: str | None) -> dict[str, float]:
    out = {}
    for item in filter(None, (text or "").split(",")):
        key, sep, value = item.partition("=")
        if not sep:
            raise ValueError(f"parameter {item!r} must look like name=value")
        try:
            out[key.strip()] = float(value)
        except ValueError:
            raise ValueError(f"parameter {key!r} has a non-numeric value {value!r}") from None
    return out


# ---- supervised classifier ---------------------------------------------------------------------------------------
def trace_features(f: Features) -> np.ndarray:
    """(N, F) features after each observation: the share of each observation kind landing in each continent so
    far, the share of each explanation's territories owned now, and log(1 + observations so far)."""
    board = f.hyp.board
    kind = f.obs.kind_code.to_numpy()
    terr = f.obs.territory.to_numpy()
    cont = np.where(terr >= 0, board.continent_of[np.maximum(terr, 0)], board.n_continents)
    width = board.n_continents + 1
    onehot = np.zeros((f.n, len(KINDS) * width))
    onehot[np.arange(f.n), kind * width + cont] = 1.0
    starts = group_starts(f)
    cum = grouped_cumsum(onehot, starts)
    seen = grouped_cumsum(np.ones((f.n, 1)), starts)
    share = f.owned_in / np.maximum(f.member_size, 1)
    return np.hstack([cum / seen, share, np.log1p(seen)])


def fit_classifier(train: Features | list[Features], C: float = 1.0):
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from riskcore.recognition.metrics import GRID
    from riskcore.recognition.posterior import evaluation_rows

    xs, ys = [], []
    for part in train if isinstance(train, list) else [train]:
        rows = evaluation_rows(part, turns=False, fractions=GRID).row.to_numpy()  # 20 points per player
        xs.append(trace_features(part)[rows])
        truth = part.truth.set_index(["game_id", "player"]).card
        ys.append(truth.reindex(list(zip(part.obs.game_id.to_numpy()[rows], part.obs.player.to_numpy()[rows])))
                  .to_numpy())
    x, y = np.vstack(xs), np.concatenate(ys)
    keep = y >= 0
    if len(np.unique(y[keep])) < 2:
        raise ValueError("the training run has fewer than two mission cards among its players")
    model = make_pipeline(StandardScaler(), LogisticRegression(C=C, max_iter=500))
    model.fit(x[keep], y[keep])
    return model


def classifier_posterior(model, f: Features) -> np.ndarray:
    """Card probabilities from the classifier, spread evenly over each card's derivatives."""
    proba = model.predict_proba(trace_features(f))
    cards = np.zeros((f.n, len(f.hyp.cards)))
    cards[:, model.classes_] = proba
    per_card = np.bincount(f.hyp.card_of, minlength=len(f.hyp.cards))
    return cards[:, f.hyp.card_of] / per_card[f.hyp.card_of]
