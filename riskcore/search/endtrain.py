"""Fitting `search.endscore.EndScorer` (`riskcore train-scorer`, driven by `experiments.scorer`; stored weights:
`endscore.scorer_path()`).

Data: turn-start positions of seeded games (seeds disjoint from the search experiment's); for
every placement of the mover with more than one end, the distinct ends of its turn (`endscore.turn_ends`) with
their features and exact max^n values for the mover k = 1, 2 turns later (`exhaustive.MaxN`).
Model: listwise, one per k: a softmax over one placement's ends against a target spread evenly over the ends of
the best exact value (ListNet, Cao et al. 2007), fitted by full-batch gradient descent with an L2 penalty from
the own-value rule (weight on the `value` feature only). The positions come from seeds and the descent starts
from a fixed point, so training is deterministic.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from riskcore.engine.board import load_board
from riskcore.floatdot import dot
from riskcore.search.abstract import AState, Model, first_best
from riskcore.search.endfeatures import FEATURES, end_features
from riskcore.search.endscore import EndScorer, scorer_path, to_json, turn_ends
from riskcore.search.exhaustive import MaxN
from riskcore.storage import write_text

DEPTHS = (1, 2)  # the k of the exact targets: one model each
RECIPE = {"l2": 1e-3, "steps": 3000, "learning_rate": 0.5, "start_temperature": 0.01}
Group = tuple[np.ndarray, np.ndarray]  # features of a placement's ends, their exact values (a column per k)


def position_groups(s: AState, players: int, max_attacks: int = 2) -> list[Group]:
    """Training groups of position `s`: for each of the mover's placements with more than one end, the ends'
    features and exact values."""
    m, p = Model(load_board("small"), players, max_attacks), s.to_move
    ab, groups = MaxN(m), []
    for a in m.placements(s):
        ends = [z for z, _ in turn_ends(m, m.apply(s, a))[0]]
        if len(ends) > 1:
            groups.append((np.array([end_features(m, z, p) for z in ends]),
                           np.array([[ab.value(z, k)[p] for k in DEPTHS] for z in ends])))
    return groups


def fit(groups: list[Group], column: int, l2: float, steps: int, learning_rate: float,
        start_temperature: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Listwise softmax regression: minimise the mean over groups of the cross-entropy between the target (even
    over the ends whose exact value, column `column`, is best) and softmax(scores), plus l2/2 |w|^2. Starts at
    the own-value rule: weight 1/start_temperature on the standardised `value` feature."""
    x = np.concatenate([f for f, _ in groups])
    mu, sd = x.mean(axis=0), x.std(axis=0) + 1e-9
    z = (x - mu) / sd
    sizes = np.array([len(f) for f, _ in groups])
    starts, group = np.concatenate([[0], np.cumsum(sizes)[:-1]]), np.repeat(np.arange(len(groups)), sizes)
    best = [(v[:, column] >= v[:, column].max() - 1e-9).astype(float) for _, v in groups]
    target = np.concatenate([b / b.sum() for b in best])
    w = np.zeros(len(mu))
    w[0] = sd[0] / start_temperature
    for _ in range(steps):
        s = dot(z, w)
        e = np.exp(s - np.maximum.reduceat(s, starts)[group])
        prob = e / np.add.reduceat(e, starts)[group]
        w = w - learning_rate * (l2 * w + dot(prob - target, z) / len(groups))
    return w, mu, sd


def agreement(groups: list[Group], column: int, score) -> float:
    """The share of groups where the first best end by `score(features)` has the best exact value."""
    hits = []
    for f, v in groups:
        chosen = first_best(dict(enumerate(score(f).tolist())))
        hits.append(v[chosen, column] >= v[:, column].max() - 1e-9)
    return float(np.mean(hits))


def fit_scorer(train: list[Group], valid: list[Group]) -> tuple[EndScorer, dict]:
    """A scorer fitted on the `train` groups (one model per k in `DEPTHS`), and per k the agreement with exact
    search of the own-value rule and of the scorer on the training and the validation groups."""
    models, checks = {}, {}
    own_value = lambda f: f[:, 0]  # noqa: E731 - the rule a strike follows without the scorer
    for column, k in enumerate(DEPTHS):
        models[k] = fit(train, column, **RECIPE)
        scorer = EndScorer({k: models[k]})
        learned = lambda f: scorer.scores(f, k)  # noqa: E731
        checks[str(k)] = {f"{name}_{split}": agreement(groups, column, rule)
                          for name, rule in (("own_value", own_value), ("learned", learned))
                          for split, groups in (("train", train), ("validation", valid))}
    return EndScorer(models), checks


def store_scorer(scorer: EndScorer, record: dict, players: int, path: Path | None = None) -> Path:
    """Write `players`' scorer into the file (default: `endscore.scorer_path()`; other player counts' scorers
    kept), atomically."""
    path = Path(path or scorer_path())
    stored = json.loads(path.read_text()) if path.exists() else {}
    stored["features"] = list(FEATURES)
    stored.setdefault("scorers", {})[str(players)] = {**record, "models": to_json(scorer)}
    write_text(path, json.dumps(stored, indent=1, sort_keys=True) + "\n")
    return path
