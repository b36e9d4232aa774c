"""Recognisers by name, each turning a run's features into the posterior after every observation.

| name | parameters | what it is |
|---|---|---|
| `uniform` | | the prior |
| `placements` | | the yardstick: the card whose named continents got most of the player's placements, setup and
reinforcements, ties split (`baselines.placement_posterior`): a guess, not a distribution |
| `goal` | temperature | goal completion (`baselines.goal_posterior`) |
| `phatt` | scheme, c, i, <kind>.c, <kind>.i, lam, variant | PHATT: equal / simple / proportional weights, or the
reference implementation's own update, `khan2013` (`phatt`) |
| `inverse` | beta, focus, eps | Bayesian inverse planning with the mission agent (`inverse`) |
| `mixture` | beta, eps, rho, temper, goals | inverse planning over a mixture of models of play, goal-directed and
mission-blind, the model inferred per player (`mixture`): for players of unknown style; with goals = n > 0, the
open-goal mixture: one more mission-blind model pursues a goal of its own (any 1 to n continents) |
| `classifier` | C, train (runs) | multinomial logistic regression on trace features, trained on other seeds |
| `evidence` | model | what each kind of evidence is worth, learned from simulated play with known missions: a logistic score
of every card from the shares of the player's actions in it, a softmax over the cards (`evidence`); `model` names a
fitted model file under `models/` |

Every recogniser is given as a spec of `riskcore.params` (`Recogniser.from_spec`). Every one observes setup
placements and the armies moved in after a conquest (`view=full`, the default); `view=turns` leaves them out, to
measure their worth. `calibration=T` raises every card's posterior probability to the power 1/T and renormalises (a
temperature fitted on other play: T > 1 tempers an overconfident recogniser; the card ranking is unchanged).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from riskcore.params import Spec, check_types, parse
from riskcore.recognition.baselines import goal_posterior, placement_posterior, uniform_posterior
from riskcore.recognition.evidence import evidence_posterior, load_model
from riskcore.recognition.features import KINDS, VIEWS, Features, load_features
from riskcore.recognition.hypotheses import Hypotheses
from riskcore.recognition.inverse import inverse_posterior, load_candidates
from riskcore.recognition.mixture import mixture_posterior
from riskcore.recognition.phatt import PhattWeights, phatt_loglik
from riskcore.recognition.posterior import cumulative_posterior, group_starts, grouped_cumsum, training_rows

NAMES = ("uniform", "placements", "goal", "phatt", "inverse", "mixture", "classifier", "evidence")
# every parameter with its default (None: required); inverse's focus = -1 marginalises the player's focus over
# inverse.FOCUS_GRID (unknown to the observer). `kinds` (every recogniser that accumulates evidence): only these
# observation kinds carry evidence, an ablation.
DEFAULTS: dict[str, dict[str, Any]] = {
    "uniform": {}, "placements": {}, "goal": {"temperature": 0.1}, "phatt": {},
    "inverse": {"beta": 10.0, "focus": -1.0, "eps": 0.05},
    "mixture": {"beta": 10.0, "eps": 0.05, "rho": 0.5, "temper": 1.0, "goals": 0},
    "classifier": {"C": 1.0, "train": None}, "evidence": {"model": "evidence"}}
EVIDENCE = ("phatt", "inverse", "mixture")  # the recognisers `kinds` applies to
TYPES = {"temperature": float, "beta": float, "focus": float, "eps": float, "rho": float, "temper": float,
         "goals": int, "C": float,
         "train": (str, tuple), "model": str,
         "kinds": (str, tuple)}
# the same names the report's tables use, so the README, the explorer and the report call a model alike
EVIDENCE_LABELS = {"evidence": "learned evidence weights", "evidence-stacked": "learned weights, stacked"}
KIND_GROUPS = {("attack_won", "attack_lost"): "attacks only",
               ("attack_won", "attack_lost", "reinforce"): "attacks and reinforcements",
               ("attack_won", "attack_lost", "reinforce", "defend_won", "defend_lost", "fortify"):
                   "every kind but trades"}


@dataclass(frozen=True)
class Recogniser:
    """A recogniser and its parameters, built from a spec (`riskcore.params`): `phatt:scheme=simple:i=0.9`,
    `inverse:beta=20:eps=0.05`, `classifier:train=RUN1,RUN2`, or the same as a mapping. `setting` is the canonical
    text, the key of its stored posteriors; `label` a readable name for tables and legends."""

    name: str
    params: tuple[tuple[str, Any], ...] = ()
    weights: PhattWeights | None = None
    kinds: tuple[str, ...] | None = None
    view: str = "full"
    calibration: float = 1.0

    @classmethod
    def from_spec(cls, spec: "str | Mapping | Spec") -> "Recogniser":
        parsed = parse(spec)
        if parsed.name not in NAMES:
            raise ValueError(f"unknown recogniser {parsed.name!r}; known: {NAMES}")
        given = parsed.kwargs
        view = given.pop("view", "full")
        if view not in VIEWS:
            raise ValueError(f"recogniser spec {parsed.text!r}: view is one of {VIEWS}, not {view!r}")
        calibration = given.pop("calibration", 1.0)
        if isinstance(calibration, bool) or not isinstance(calibration, (int, float)) or not calibration > 0:
            raise ValueError(f"recogniser spec {parsed.text!r}: calibration is a positive temperature, not "
                             f"{calibration!r}")
        extra = {"view": view, "calibration": float(calibration)}
        kinds = given.pop("kinds", None)
        if kinds is not None:
            kinds = (kinds,) if isinstance(kinds, str) else tuple(kinds)
            unknown = set(kinds) - set(KINDS)
            if unknown or parsed.name not in EVIDENCE:
                raise ValueError(f"recogniser spec {parsed.text!r}: kinds applies to {EVIDENCE} and names "
                                 f"observation kinds {KINDS}")
        if parsed.name == "phatt":
            return cls("phatt", weights=PhattWeights.from_params(given), kinds=kinds, **extra)
        defaults = DEFAULTS[parsed.name]
        unknown = set(given) - set(defaults)
        if unknown:
            raise ValueError(f"recogniser {parsed.name!r} has no parameter(s) {sorted(unknown)}; "
                             f"known: {sorted(defaults) or 'none'}")
        check_types(Spec(parsed.name, tuple(given.items())), TYPES, "recogniser spec")
        params = {**defaults, **given}
        if parsed.name == "classifier":
            if not params["train"]:
                raise ValueError("the classifier needs train=RUN[,RUN...]: runs with other seeds to learn from")
            params["train"] = (params["train"],) if isinstance(params["train"], str) else tuple(params["train"])
        if parsed.name == "mixture" and not params["goals"]:
            del params["goals"]  # the play-style mixture keeps its canonical text
        return cls(parsed.name, tuple((k, v if k in ("train", "model") else float(v)) for k, v in params.items()),
                   kinds=kinds, **extra)

    @property
    def kwargs(self) -> dict[str, Any]:
        return dict(self.params)

    @property
    def spec(self) -> Spec:
        params = self.weights.params() if self.weights is not None else self.params
        return Spec(self.name, tuple(params) + ((("kinds", self.kinds),) if self.kinds else ())
                    + ((("view", self.view),) if self.view != "full" else ())
                    + ((("calibration", self.calibration),) if self.calibration != 1.0 else ()))

    @property
    def setting(self) -> str:
        return self.spec.text

    @property
    def label(self) -> str:
        """A readable name: `PHATT simple (1 / 0.98)`, `inverse planning (beta 20, eps 0.05)`, ..."""
        p = self.kwargs
        if self.name == "uniform":
            text = "uniform prior"
        elif self.name == "placements":
            text = "placement count (yardstick)"
        elif self.name == "goal":
            text = f"goal completion (T {p['temperature']:g})"
        elif self.name == "inverse":
            focus = "focus marginalised" if p["focus"] < 0 else f"focus {p['focus']:g}"
            text = f"inverse planning (beta {p['beta']:g}, eps {p['eps']:g}, {focus})"
        elif self.name == "mixture":
            goals = p.get("goals", 0)
            text = (("open-goal mixture" if goals else "play-style mixture")
                    + f" (beta {p['beta']:g}, eps {p['eps']:g}, rho {p['rho']:g}"
                    + (f", temper {p['temper']:g}" if p["temper"] != 1 else "")
                    + (f", goals of <= {goals:g} continents)" if goals else ")"))
        elif self.name == "classifier":
            text = f"classifier (C {p['C']:g})"
        elif self.name == "evidence":
            text = EVIDENCE_LABELS.get(p["model"], f"learned evidence weights ({p['model']})")
        else:
            text = _phatt_label(self.weights)
        if self.kinds:
            text += f" [{KIND_GROUPS.get(tuple(self.kinds), '+'.join(self.kinds))}]"
        if self.view == "turns":
            text += " [no setup placements or move-ins]"
        if self.calibration != 1.0:
            text += f", calibrated (T {self.calibration:.3g})"
        return text

    def prior(self, hyp: Hypotheses) -> np.ndarray:
        """The prior over explanations: the hypotheses' (uniform over cards), or uniform over explanations for
        `khan2013`, as the reference implementation had it."""
        khan = self.weights is not None and self.weights.scheme == "khan2013"
        return np.full(hyp.size, 1.0 / hyp.size) if khan else hyp.prior

    def _only_kinds(self, f: Features, ll: np.ndarray) -> np.ndarray:
        if self.kinds is None:
            return ll
        keep = np.isin(f.obs.kind.to_numpy(), self.kinds)
        return np.where(keep[:, None], ll, 0.0)

    def posterior(self, f: Features, run: str, data_dir: Path | None = None) -> np.ndarray:
        """(N, E) posterior after each observation of `f`, at the calibration temperature."""
        post = self._posterior(f, run, data_dir)
        return post if self.calibration == 1.0 else calibrated(post, self.calibration, f.hyp.card_of)

    def _posterior(self, f: Features, run: str, data_dir: Path | None = None) -> np.ndarray:
        starts = group_starts(f)
        p = self.kwargs
        if self.name == "uniform":
            return uniform_posterior(f)
        if self.name == "placements":
            return placement_posterior(f)
        if self.name == "goal":
            return goal_posterior(f, p["temperature"])
        if self.name == "phatt":
            return cumulative_posterior(f, self._only_kinds(f, phatt_loglik(f, self.weights)), starts,
                                        self.prior(f.hyp))
        if self.name == "inverse":
            return inverse_posterior(f, load_candidates(f, run, data_dir), starts, p["beta"], p["focus"], p["eps"],
                                     self._only_kinds)
        if self.name == "mixture":
            return mixture_posterior(f, load_candidates(f, run, data_dir), starts, p["beta"], p["eps"], p["rho"],
                                     p["temper"], self._only_kinds, goals=int(p.get("goals", 0)))
        if self.name == "evidence":
            model = load_model(p["model"])
            return evidence_posterior(f, model, lambda spec: Recogniser.from_spec(spec).posterior(f, run, data_dir))
        if run in p["train"]:
            raise ValueError(f"the classifier must not train on the run it is tested on ({run!r})")
        return classifier_posterior(_trained(tuple(p["train"]), p["C"], f.hyp.name, data_dir, self.view), f)


def calibrated(probs: np.ndarray, temperature: float, card_of: np.ndarray) -> np.ndarray:
    """Rows of explanation probabilities with their cards' probabilities raised to 1 / temperature and
    renormalised, each card's explanations keeping their shares of it: the card ranking is unchanged."""
    cards = np.zeros(probs.shape[:-1] + (int(card_of.max()) + 1,))
    np.add.at(cards.T, card_of, np.moveaxis(probs, -1, 0))
    logc = np.log(np.clip(cards, 1e-300, 1)) / temperature
    logc -= logc.max(axis=-1, keepdims=True)
    new = np.exp(logc)
    new /= new.sum(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(cards[..., card_of] > 0, probs / cards[..., card_of], 0.0)
    return new[..., card_of] * share


def label(setting: str) -> str:
    """The readable name of a stored setting (its canonical spec text)."""
    return Recogniser.from_spec(setting).label


def _phatt_label(w: PhattWeights) -> str:
    params = dict(w.params())
    if w.scheme == "equal":
        return "PHATT equal"
    if w.scheme == "proportional":
        return f"PHATT proportional (lam {w.lam:g})"
    if w.scheme == "khan2013":
        return "PHATT khan2013 (the reference's code" + (", its later version)" if w.variant == "head" else ")")
    extra = [f"{k} {v:g}" for k, v in params.items() if "." in k]
    return f"PHATT {w.scheme} ({params['c']:g} / {params['i']:g}" + "".join(f", {x}" for x in extra) + ")"


# ---- supervised classifier ---------------------------------------------------------------------------------------
@lru_cache(maxsize=4)
def _trained(train: tuple[str, ...], C: float, hyp_name: str, data_dir: Path | None, view: str = "full"):
    """The classifier fitted on the `train` runs, once per process (it is scored on several test runs)."""
    return fit_classifier([load_features(r, hyp_name, data_dir, view) for r in train], C)


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

    xs, ys = [], []
    for part in train if isinstance(train, list) else [train]:
        rows, cards = training_rows(part)
        xs.append(trace_features(part)[rows])
        ys.append(cards)
    x, y = np.vstack(xs), np.concatenate(ys)
    if len(np.unique(y)) < 2:
        raise ValueError("the training run has fewer than two mission cards among its players")
    model = make_pipeline(StandardScaler(), LogisticRegression(C=C, max_iter=500))
    model.fit(x, y)
    return model


def classifier_posterior(model, f: Features) -> np.ndarray:
    """Card probabilities from the classifier, spread evenly over each card's derivatives."""
    proba = model.predict_proba(trace_features(f))
    cards = np.zeros((f.n, len(f.hyp.cards)))
    cards[:, model.classes_] = proba
    per_card = np.bincount(f.hyp.card_of, minlength=len(f.hyp.cards))
    return cards[:, f.hyp.card_of] / per_card[f.hyp.card_of]
