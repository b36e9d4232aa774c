"""`evidence`: a recogniser that learns what each piece of evidence is worth.

Every other recogniser here states a model of play and inverts it; this one is told, by many simulated games whose
missions are known, how much each kind of action says about a card. For a player after observation i and each
mission card c (its named continents T_c) it measures (`FEATURES`):

- the share of the player's setup placements, reinforcements, conquests, failed attacks, won and lost defences,
  fortifies, armies moved in and trade bonuses so far that landed in T_c; the share of all placements (setup and
  reinforcements, the placement count's quantity) and of the last `RECENT` observations' placements and conquests;
- how far the count puts c ahead of the best other card (its share less the best other share) and whether c is the
  count's own guess (1 / number of leading cards): the placement count lies inside the model, so it cannot lose
  to it systematically on the play it was trained on;
- the share of T_c the player owns (goal progress) and the share of its territories inside T_c (what mission-blind
  play would place there); for a "+ a third continent" card, the best third continent's placement share and
  progress;
- these shares against the evidence so far (log of the observations) and the number of players, and the card's
  identity (six intercepts);
- optionally (`stacked`), the card's log posterior under the reference's recogniser (`phatt:scheme=khan2013`) and
  the play-style mixture, so that what those models say is weighed like any other evidence.

Each (player, point, card) row is scored by a logistic regression (scikit-learn) fitted to say whether c is the
player's card; a row's cards are then compared by a softmax of their scores at a temperature fitted on the same
training rows:

    P(c | obs_1..i) ∝ exp(s_c(i) / T) over the cards not ruled out,   s_c(i) = w . x_c(i) + b

A card whose named continents the player's territories already complete is ruled out (the rules: it would have won;
`posterior.completed_cards`). A card's probability is shared among its explanations as goal completion shares it
(their third continents' progress, `WITHIN_TEMPERATURE`). The fitted weights, the feature scaling and the
temperature live in a JSON model file under `models/` (`EvidenceModel`), with the recipe that trained them; the
training is `riskcore.experiments.recognition.training`.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import logsumexp

from riskcore import paths
from riskcore.recognition.features import KIND, KINDS, Features
from riskcore.recognition.posterior import completed_cards, group_starts, grouped_cumsum

SHARE_KINDS = ("place", "reinforce", "attack_won", "attack_lost", "defend_won", "defend_lost", "fortify", "occupy",
               "trade")
RECENT = 20  # observations: the window of the recent shares (how a player's aim changes over the game)
BASE_FEATURES = (
    *(f"share_{k}" for k in SHARE_KINDS),
    "share_placements", "recent_placements", "recent_attack_won",
    "lead_placements", "lead_attack_won", "count_guess",
    "progress", "territory_share", "third_placements", "third_progress",
    "placements_x_evidence", "progress_x_evidence", "placements_x_players", "progress_x_players",
    *(f"card_{c}" for c in range(6)),
)
STACKED_FEATURES = ("log_khan2013", "log_mixture")
STACKED_SPECS = {"log_khan2013": "phatt:scheme=khan2013", "log_mixture": "mixture:beta=5:eps=0.05:rho=0.5:temper=0.5"}
LOG_FLOOR = float(np.log(1e-4))  # a stacked model's log probability is floored here: a zero must not be -inf
WITHIN_TEMPERATURE = 0.1  # a card's explanations share it as goal completion (temperature 0.1) does
MODEL_FORMAT = 1


# ---- features ------------------------------------------------------------------------------------------------------

def card_continents(hyp) -> tuple[np.ndarray, np.ndarray]:
    """(C, K) 0/1 the named continents of each card, and (C,) whether it adds a third continent of the player's
    choice, from the explanations (a card's named continents are those all its explanations share)."""
    n_cont = hyp.board.n_continents
    named = np.ones((len(hyp.cards), n_cont), dtype=bool)
    plus = np.zeros(len(hyp.cards), dtype=bool)
    for e, c in zip(hyp.explanations, hyp.card_of):
        if e.kind != "continents":
            raise ValueError(f"the evidence recogniser scores continent cards only; {hyp.name!r} holds {e.card!r}")
        mask = np.zeros(n_cont, dtype=bool)
        mask[list(e.continents)] = True
        named[c] &= mask
    for c in range(len(hyp.cards)):
        plus[c] = (hyp.card_of == c).sum() > 1
    return named.astype(float), plus


def continent_owned(f: Features) -> np.ndarray:
    """(N, K) territories the player owns in each continent before each observation, recovered exactly from the
    explanations' counts (`owned_in`: every explanation is a union of continents, and together they determine
    each continent's count)."""
    hyp = f.hyp
    member = np.zeros((hyp.size, hyp.board.n_continents))
    for i, e in enumerate(hyp.explanations):
        member[i, list(e.continents)] = 1.0
    if np.linalg.matrix_rank(member) < member.shape[1]:
        raise ValueError(f"the explanations of {hyp.name!r} do not determine every continent's count")
    return np.rint(f.owned_in @ np.linalg.pinv(member).T)


def _players_per_game(f: Features) -> np.ndarray:
    """(N,) the number of seats in each observation's game."""
    seats = f.truth.groupby("game_id").player.count()
    return seats.reindex(f.obs.game_id.to_numpy()).to_numpy().astype(float)


def card_features(f: Features, rows: np.ndarray | None = None,
                  stacked: dict[str, np.ndarray] | None = None) -> np.ndarray:
    """(R, C, F) the features `BASE_FEATURES` (then `STACKED_FEATURES` when `stacked` gives their (N, C) card
    probabilities) of every card after each observation `rows` (default: every one)."""
    hyp, board = f.hyp, f.hyp.board
    n_cont = board.n_continents
    named, plus = card_continents(hyp)
    starts = group_starts(f)
    rows = np.arange(f.n) if rows is None else np.asarray(rows)
    kind = f.obs.kind_code.to_numpy()
    terr = f.obs.territory.to_numpy()
    cont = np.where(terr >= 0, board.continent_of[np.maximum(terr, 0)], -1)
    codes = [KIND[k] for k in SHARE_KINDS]
    # per observation: a one at (kind, continent) of where it landed; summed over the player's observations so far
    hits = np.zeros((f.n, len(SHARE_KINDS) + 1, n_cont))
    which = np.full(f.n, -1)
    for j, code in enumerate(codes):
        which[kind == code] = j
    placing = np.isin(kind, [KIND["place"], KIND["reinforce"]])
    landed = (which >= 0) & (cont >= 0)
    hits[np.flatnonzero(landed), which[landed], cont[landed]] = 1.0
    hits[np.flatnonzero(placing & (cont >= 0)), len(SHARE_KINDS), cont[placing & (cont >= 0)]] = 1.0
    flat = hits.reshape(f.n, -1)
    total = grouped_cumsum(flat, starts)
    recent = total - _lagged(total, starts, RECENT)
    total = total[rows].reshape(len(rows), len(SHARE_KINDS) + 1, n_cont)
    recent = recent[rows].reshape(len(rows), len(SHARE_KINDS) + 1, n_cont)
    seen = np.maximum(total.sum(axis=2), 1.0)  # (R, kinds + 1)
    seen_recent = np.maximum(recent.sum(axis=2), 1.0)
    share_cont = total / seen[:, :, None]  # (R, kinds + 1, K): the share of each kind in each continent
    share = share_cont @ named.T  # (R, kinds + 1, C)
    recent_share = (recent / seen_recent[:, :, None]) @ named.T
    pl = share[:, -1]  # (R, C) placements
    won = share[:, SHARE_KINDS.index("attack_won")]
    owned_cont = continent_owned(f)[rows]  # (R, K)
    n_owned = np.maximum(owned_cont.sum(axis=1, keepdims=True), 1.0)
    sizes = np.asarray(board.continent_sizes, dtype=float)
    progress = (owned_cont @ named.T) / (named @ sizes)[None, :]
    territory_share = (owned_cont @ named.T) / n_owned
    # "+ a third continent": the best continent outside the named ones, by placements and by progress
    outside = 1.0 - named  # (C, K)
    cont_progress = owned_cont / sizes[None, :]
    third_pl = np.where(plus[None, :], (share_cont[:, -1][:, None, :] * outside[None]).max(axis=2), 0.0)
    third_pr = np.where(plus[None, :], (cont_progress[:, None, :] * outside[None]).max(axis=2), 0.0)
    counts = total[:, -1] @ named.T  # the count's raw numbers
    guess = (counts >= counts.max(axis=1, keepdims=True)).astype(float)
    guess /= guess.sum(axis=1, keepdims=True)
    # how much evidence there is: log of the observations so far, about 1 after 300
    evidence = (np.log1p(total[:, :len(SHARE_KINDS)].sum(axis=(1, 2))) / np.log(301.0))[:, None]
    players = ((_players_per_game(f)[rows] - 4.5) / 1.5)[:, None]
    columns = [share[:, j] for j in range(len(SHARE_KINDS))]
    columns += [pl, recent_share[:, -1], recent_share[:, SHARE_KINDS.index("attack_won")],
                pl - _best_other(pl), won - _best_other(won), guess,
                progress, territory_share, third_pl, third_pr,
                pl * evidence, progress * evidence, pl * players, progress * players]
    columns += [np.broadcast_to(np.eye(len(hyp.cards))[c], pl.shape) for c in range(len(hyp.cards))]
    if stacked is not None:
        columns += [np.maximum(np.log(np.clip(stacked[name][rows], 1e-300, None)), LOG_FLOOR)
                    for name in STACKED_FEATURES]
    return np.stack(columns, axis=2)


def _lagged(total: np.ndarray, starts: np.ndarray, lag: int) -> np.ndarray:
    """Each row's cumulative sums `lag` rows earlier in its group (zero before the group's start)."""
    out = np.zeros_like(total)
    index = np.arange(len(total)) - lag
    group_start = np.repeat(starts[:-1], np.diff(starts))
    ok = index >= group_start
    out[ok] = total[index[ok]]
    return out


def _best_other(values: np.ndarray) -> np.ndarray:
    """(R, C) the largest value among the other cards of the row."""
    order = np.sort(values, axis=1)
    top, second = order[:, -1:], order[:, -2:-1]
    return np.where(values >= top, second, top)


def ruled_out_cards(f: Features, rows: np.ndarray | None = None) -> np.ndarray:
    """(R, C) cards the player's territories complete (`posterior.completed_cards`, at the card level)."""
    done = completed_cards(f if rows is None else f.select(rows))
    return f.hyp.card_probs(done.astype(float)) > 0


# ---- the model -----------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class EvidenceModel:
    """Fitted weights on standardised features, the softmax temperature and the recipe that trained them."""

    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    weights: tuple[float, ...]
    intercept: float
    temperature: float
    training: dict = field(default_factory=dict)  # seeds, population, rows, library versions: how to refit
    format: int = MODEL_FORMAT

    @property
    def stacked(self) -> tuple[str, ...]:
        return tuple(name for name in self.features if name in STACKED_FEATURES)

    def scores(self, x: np.ndarray) -> np.ndarray:
        """(R, C) scores of (R, C, F) features."""
        if x.shape[-1] != len(self.features):
            raise ValueError(f"evidence model: {x.shape[-1]} features given, the model has {len(self.features)}")
        z = (x - np.asarray(self.mean)) / np.asarray(self.scale)
        return z @ np.asarray(self.weights) + self.intercept

    def card_posterior(self, x: np.ndarray, ruled_out: np.ndarray) -> np.ndarray:
        return softmax_cards(self.scores(x), ruled_out, self.temperature)

    def to_json(self) -> str:
        body = asdict(self)
        body["digest"] = self.digest
        return json.dumps(body, indent=1, sort_keys=True) + "\n"

    @property
    def digest(self) -> str:
        """sha256 of the fitted numbers and features (what the posteriors depend on)."""
        fitted = json.dumps([self.features, self.mean, self.scale, self.weights, self.intercept, self.temperature])
        return hashlib.sha256(fitted.encode()).hexdigest()

    @classmethod
    def from_json(cls, text: str, where: str = "model") -> "EvidenceModel":
        try:
            body = json.loads(text)
            digest = body.pop("digest")
            model = cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in body.items()})
        except (ValueError, TypeError, KeyError) as exc:
            raise ValueError(f"{where}: not an evidence model file ({exc})") from None
        if model.format != MODEL_FORMAT:
            raise ValueError(f"{where}: model format {model.format}, this code reads {MODEL_FORMAT}")
        if digest != model.digest:
            raise ValueError(f"{where}: the fitted numbers do not match the recorded digest (edited or damaged)")
        expected = BASE_FEATURES + tuple(n for n in STACKED_FEATURES if n in model.features)
        if model.features != expected:
            raise ValueError(f"{where}: its features {list(model.features)} are not this code's {list(expected)}: "
                             "refit it (`make recogniser-model`)")
        if not (len(model.mean) == len(model.scale) == len(model.weights) == len(model.features)):
            raise ValueError(f"{where}: weights and scaling do not match its features")
        return model


def softmax_cards(scores: np.ndarray, ruled_out: np.ndarray, temperature: float) -> np.ndarray:
    """(R, C) card probabilities: a softmax of the scores at `temperature` over the cards not ruled out."""
    s = np.where(ruled_out, -np.inf, scores / temperature)
    return np.exp(s - logsumexp(s, axis=1, keepdims=True))


def model_path(name: str) -> Path:
    if not name or "/" in name or name.startswith("."):
        raise ValueError(f"evidence model name {name!r}: a file name under the models folder, without .json")
    return paths.models_dir() / f"{name}.json"


def load_model(name: str) -> EvidenceModel:
    path = model_path(name)
    if not path.is_file():
        raise FileNotFoundError(f"no evidence model {path} (fit it with `make recogniser-model`)")
    return EvidenceModel.from_json(path.read_text(), str(path))


def fit_model(x: np.ndarray, truth: np.ndarray, ruled_out: np.ndarray, features: tuple[str, ...], C: float = 1.0,
              training: dict | None = None) -> EvidenceModel:
    """Fit on (R, C, F) features of R (player, point) rows with their true cards: a logistic regression of
    "this is the player's card" on every (row, card) not ruled out, then the softmax temperature that minimises
    the rows' mean log loss."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler
    from threadpoolctl import threadpool_limits

    if len(truth) == 0:
        raise ValueError("evidence model: no training rows (no player with a continent card)")
    keep = ~ruled_out
    if not keep[np.arange(len(truth)), truth].all():
        raise ValueError("evidence model: a player's own card is ruled out in a training row")
    flat = x[keep]
    label = (np.arange(x.shape[1])[None, :] == truth[:, None])[keep]
    # one BLAS thread: sums in one order, so a refit writes the same bytes on any number of cores
    with threadpool_limits(1):
        scaler = StandardScaler().fit(flat)
        scale = np.where(scaler.scale_ > 0, scaler.scale_, 1.0)
        z = (flat - scaler.mean_) / scale
        reg = LogisticRegression(C=C, max_iter=2000, tol=1e-8).fit(z, label)
    raw = np.full(ruled_out.shape, -np.inf)
    raw[keep] = reg.decision_function(z)

    def loss(log_t: float) -> float:
        s = raw / np.exp(log_t)
        return float(-(s[np.arange(len(truth)), truth] - logsumexp(s, axis=1)).mean())

    temperature = float(np.exp(minimize_scalar(loss, bounds=(-3, 3), method="bounded", options={"xatol": 1e-6}).x))
    return EvidenceModel(tuple(features), _floats(scaler.mean_), _floats(scale), _floats(reg.coef_[0]),
                         float(reg.intercept_[0]), temperature, dict(training or {}))


def _floats(values: np.ndarray) -> tuple[float, ...]:
    return tuple(float(v) for v in np.asarray(values, dtype=float))


# ---- the recogniser ------------------------------------------------------------------------------------------------

def within_card(f: Features, rows: np.ndarray | None = None) -> np.ndarray:
    """(R, E) each explanation's share of its card: goal completion's softmax within the card."""
    hyp = f.hyp
    owned = f.owned_in if rows is None else f.owned_in[rows]
    size = f.member_size if rows is None else f.member_size[rows]
    logit = np.log(hyp.prior)[None, :] + owned / np.maximum(size, 1) / WITHIN_TEMPERATURE
    out = np.zeros_like(logit)
    for c in range(len(hyp.cards)):
        cols = np.flatnonzero(hyp.card_of == c)
        block = logit[:, cols]
        out[:, cols] = np.exp(block - logsumexp(block, axis=1, keepdims=True))
    return out


def evidence_posterior(f: Features, model: EvidenceModel,
                       stacked: Callable[[str], np.ndarray] | None = None) -> np.ndarray:
    """(N, E) posterior after every observation. `stacked(spec)` gives another recogniser's (N, E) posterior,
    for a model that weighs them."""
    parts = None
    if model.stacked:
        if stacked is None:
            raise ValueError("this evidence model weighs other recognisers' posteriors; none were given")
        parts = {name: f.hyp.card_probs(stacked(STACKED_SPECS[name])) for name in model.stacked}
    cards = np.zeros((f.n, len(f.hyp.cards)))
    for lo in range(0, f.n, 200_000):  # bounded memory on a large chunk: (rows, cards, features) floats
        rows = np.arange(lo, min(f.n, lo + 200_000))
        cards[rows] = model.card_posterior(card_features(f, rows, parts), ruled_out_cards(f, rows))
    return cards[:, f.hyp.card_of] * within_card(f)
