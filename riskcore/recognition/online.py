"""Recognition during a game: posteriors over each player's mission from the public log so far.

The interface an agent needs (`agents.aware` takes any object with this `posteriors` method): the events an
observer at one seat has seen, and back the posterior over the explanations of every player who has acted. The
default, `OnlinePhatt`, is PHATT with the proportional scheme over the 12 continent-card explanations (the
recogniser that needs no model of the players it watches), updated event by event rather than recomputed.
"""

from __future__ import annotations

from typing import Protocol, Sequence

import numpy as np

from riskcore.engine.board import Board
from riskcore.engine import EVENT_FIELDS
from riskcore.recognition.features import EVENT_COLUMNS, Extractor, features_from_parts
from riskcore.recognition.hypotheses import Hypotheses, build_hypotheses
from riskcore.recognition.phatt import PhattWeights, phatt_loglik
from riskcore.recognition.posterior import normalise


class LogRecogniser(Protocol):
    def hypotheses(self, board: Board) -> Hypotheses:
        """The explanations the posteriors are over."""

    def posteriors(self, log: Sequence[tuple], n_players: int, board: Board) -> dict[int, np.ndarray]:
        """Each player's posterior over the explanations after the events of `log` (rows of `EVENT_FIELDS`)."""


class OnlinePhatt:
    """PHATT posteriors that follow one game: each call processes only the events since the last one and adds their
    log-likelihoods to each player's running sum (one instance per game, as an agent has)."""

    def __init__(self, weights: PhattWeights = PhattWeights("proportional", lam=0.9), hypotheses: str = "cards6"):
        self.weights, self.hypotheses_name = weights, hypotheses
        self._extractor: Extractor | None = None
        self._seen = 0  # log rows processed
        self._observed = 0  # observations turned into evidence
        self._loglik: dict[int, np.ndarray] = {}

    def hypotheses(self, board: Board) -> Hypotheses:
        return build_hypotheses(board, self.hypotheses_name)

    def posteriors(self, log: Sequence[tuple], n_players: int, board: Board) -> dict[int, np.ndarray]:
        hyp = self.hypotheses(board)
        if self._extractor is None:
            self._extractor = Extractor(n_players, hyp)
        new = log[self._seen:]
        self._seen = len(log)
        if new:
            cols = {c: np.array([row[EVENT_FIELDS.index(c)] if c != "game_id" else 0 for row in new],
                                dtype=object if c == "kind" else float) for c in EVENT_COLUMNS}
            cols["conquered"] = np.array([bool(row[EVENT_FIELDS.index("conquered")]) for row in new])
            self._extractor.feed(cols, final=False)
        parts = self._extractor.parts
        fresh = {k: v[self._observed:] for k, v in parts.items() if k in Extractor.FIELDS}
        self._observed = len(parts["game_id"])
        if fresh["game_id"]:
            f = features_from_parts(fresh, hyp)
            ll = phatt_loglik(f, self.weights)
            for player, row in zip(f.obs.player.to_numpy(), ll):
                self._loglik[int(player)] = self._loglik.get(int(player), 0.0) + row
        prior = np.log(hyp.prior)
        return {p: normalise(prior + ll) for p, ll in sorted(self._loglik.items())}
