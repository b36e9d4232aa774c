"""A learned choice of where a `strike` ends its turn: the end that exact search k turns deeper would pick.

A `strike` goal reinforces one front territory and then takes the attacks that leave the player best off at the
end of its own turn (its value there). That choice is blind to the replies: exact search often prefers another
end, e.g. one that keeps a border. `EndScorer` scores each distinct end of the turn (after the placement) by a
linear function of its `endfeatures.FEATURES` and picks the first of the best. One model per k, fitted to the
ends exact max^n search (`exhaustive.MaxN`) values most k turns later; the search uses k = min(turns left after
the strike's turn, the deepest model).

The weights are fitted by `search.endtrain` (`riskcore train-scorer`) and stored in `end_scorer.json` in the
models folder (`paths.models_dir()`), with the recipe that made them and their agreement with exact search on
training and validation positions.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from riskcore import paths
from riskcore.floatdot import dot
from riskcore.search.abstract import AState, Model, first_best, turn_sequences
from riskcore.search.endfeatures import FEATURES, end_features

SCORER_NAME = "end_scorer.json"


def scorer_path() -> Path:
    """The stored end scorers: `end_scorer.json` in the models folder."""
    return paths.models_dir() / SCORER_NAME


@dataclass(frozen=True)
class EndScorer:
    models: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]]  # k -> (weights, feature mean, feature scale)

    def scores(self, features: np.ndarray, after: int) -> np.ndarray:
        """Scores of ends (rows of features) when `after` turns follow the strike's (the model k = min(after,
        deepest))."""
        w, mu, sd = self.models[min(after, max(self.models))]
        return dot((features - mu) / sd, w)

    def end_scores(self, m: Model, ends: list[tuple[AState, list[tuple]]], p: int, after: int) -> np.ndarray:
        """The scores of p's turn `ends` (as `turn_ends` lists them) when `after` turns follow."""
        return self.scores(np.array([end_features(m, z, p) for z, _ in ends]), after)

    def best_end(self, m: Model, s: AState, p: int, after: int) -> tuple[AState, list[tuple]]:
        """The end of p's turn from `s` (placement done) the scorer picks, and the actions leading to it."""
        ends, _ = turn_ends(m, s)
        return ends[first_best(dict(enumerate(self.end_scores(m, ends, p, after).tolist())))]


def turn_ends(m: Model, s: AState) -> tuple[list[tuple[AState, list[tuple]]], int]:
    """The distinct ends of the mover's turn from `s`, depth first in the model's order, each with the first
    action sequence reaching it, and the states the walk made (they count in `Model.generated`)."""
    ends: dict[tuple, tuple[AState, list[tuple]]] = {}
    sequences, made = turn_sequences(m, s)
    for actions, z in sequences:
        ends.setdefault(z.key(), (z, list(actions)))
    return list(ends.values()), made


def to_json(scorer: EndScorer) -> dict:
    return {str(k): {"weights": w.tolist(), "mean": mu.tolist(), "scale": sd.tolist()}
            for k, (w, mu, sd) in scorer.models.items()}


def from_json(models: dict, source: str) -> EndScorer:
    """The scorer stored as `to_json` wrote it; `source` names it in errors."""
    try:
        out = {int(k): tuple(np.array(v[name], dtype=float) for name in ("weights", "mean", "scale"))
               for k, v in models.items()}
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"{source}: malformed end scorer ({e!r})") from e
    for k, arrays in out.items():
        if any(a.shape != (len(FEATURES),) for a in arrays):
            raise ValueError(f"{source}: model k={k} needs {len(FEATURES)} weights, means and scales")
    if not out:
        raise ValueError(f"{source}: no models")
    return EndScorer(out)


def load_scorer(players: int, path: Path | None = None) -> EndScorer:
    """The stored scorer for `players` players (from `scorer_path()` unless `path` is given)."""
    return _load(players, Path(path or scorer_path()))


@cache
def _load(players: int, path: Path) -> EndScorer:
    if not path.exists():
        raise ValueError(f"no end scorer at {path}: fit one with `riskcore train-scorer` or set $RISKCORE_MODELS")
    try:
        stored = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not JSON ({e})") from e
    if str(players) not in stored.get("scorers", {}):
        raise ValueError(f"{path}: no end scorer for {players} players (has {sorted(stored.get('scorers', {}))})")
    return from_json(stored["scorers"][str(players)]["models"], f"{path} ({players} players)")
