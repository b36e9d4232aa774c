"""Recognition during a game: posteriors over each player's mission from the public log so far.

The interface an agent needs (`agents.aware` takes any object with this `posteriors` method): the events an
observer at one seat has seen, and back the posterior over the explanations of every player who has acted. The
default, `OnlinePhatt`, is PHATT with the proportional scheme over the 12 continent-card explanations (the
recogniser that needs no model of the players it watches).
"""

from __future__ import annotations

from typing import Protocol, Sequence

import numpy as np

from riskcore.board import Board
from riskcore.engine import EVENT_FIELDS
from riskcore.recognition.features import EVENT_COLUMNS, extract_game, features_from_parts
from riskcore.recognition.hypotheses import Hypotheses, build_hypotheses
from riskcore.recognition.phatt import PhattWeights, phatt_loglik
from riskcore.recognition.posterior import cumulative_posterior


class LogRecogniser(Protocol):
    def hypotheses(self, board: Board) -> Hypotheses:
        """The explanations the posteriors are over."""

    def posteriors(self, log: Sequence[tuple], n_players: int, board: Board) -> dict[int, np.ndarray]:
        """Each player's posterior over the explanations after the events of `log` (rows of `EVENT_FIELDS`)."""


class OnlinePhatt:
    def __init__(self, weights: PhattWeights = PhattWeights("proportional", lam=0.9), hypotheses: str = "cards6"):
        self.weights, self.hypotheses_name = weights, hypotheses

    def hypotheses(self, board: Board) -> Hypotheses:
        return build_hypotheses(board, self.hypotheses_name)

    def posteriors(self, log: Sequence[tuple], n_players: int, board: Board) -> dict[int, np.ndarray]:
        hyp = self.hypotheses(board)
        cols = {c: np.array([row[EVENT_FIELDS.index(c)] if c != "game_id" else 0 for row in log],
                            dtype=object if c == "kind" else float) for c in EVENT_COLUMNS}
        cols["conquered"] = np.array([bool(row[EVENT_FIELDS.index("conquered")]) for row in log])
        parts = extract_game(cols, n_players, hyp)
        if not parts["game_id"]:
            return {}
        f = features_from_parts(parts, hyp)
        post = cumulative_posterior(f, phatt_loglik(f, self.weights))
        last = f.obs.groupby("player").tail(1)
        return {int(row.player): post[idx] for idx, row in last.iterrows()}
