"""Explanations (hypotheses) of a player's behaviour and their prior.

`cards6` (Khan 2013): the 6 continent mission cards; each "+ one other continent" card expands into its 4
derivatives (Europe + Australia + North America, ...), giving 12 explanations. Prior: uniform over cards, then
uniform over a card's derivatives. `deck14` adds the other 8 cards of the classic deck: "24 territories" and
"18 territories x2" (every territory serves them) and "destroy colour X" (the territories X holds now).
Accuracy is always judged at the card level: a card's probability is the sum over its derivatives.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from riskcore.engine.board import Board
from riskcore.engine.missions import compile_missions

SETS = ("cards6", "deck14")


@dataclass(frozen=True)
class Explanation:
    name: str
    card: str  # the mission card it derives from
    kind: str  # "continents" | "all" | "destroy"
    continents: tuple[int, ...] = ()
    colour: int = -1


@dataclass(frozen=True)
class Hypotheses:
    name: str
    board: Board
    explanations: tuple[Explanation, ...]
    prior: np.ndarray  # (E,)
    cards: tuple[str, ...]  # card names in order
    card_of: np.ndarray  # (E,) index into cards

    @property
    def size(self) -> int:
        return len(self.explanations)

    def membership(self, owner: np.ndarray) -> np.ndarray:
        """(E, n) bool: the territories each explanation cares about, given current owners (for destroy)."""
        static = self._static
        dynamic = [i for i, e in enumerate(self.explanations) if e.kind == "destroy"]
        if not dynamic:
            return static
        m = static.copy()
        for i in dynamic:
            m[i] = owner == self.explanations[i].colour
        return m

    @property
    def _static(self) -> np.ndarray:
        cached = self.__dict__.get("_static_cache")
        if cached is None:
            n = self.board.n_territories
            cached = np.zeros((self.size, n), dtype=bool)
            for i, e in enumerate(self.explanations):
                if e.kind == "continents":
                    cached[i] = self.board.continent_mask[list(e.continents)].any(axis=0)
                elif e.kind == "all":
                    cached[i] = True
            object.__setattr__(self, "_static_cache", cached)
        return cached

    def card_probs(self, probs: np.ndarray) -> np.ndarray:
        """Sum explanation probabilities (..., E) into card probabilities (..., C)."""
        out = np.zeros(probs.shape[:-1] + (len(self.cards),))
        for e, c in enumerate(self.card_of):
            out[..., c] += probs[..., e]
        return out


def build_hypotheses(board: Board, name: str = "cards6") -> Hypotheses:
    if name not in SETS:
        raise ValueError(f"unknown hypothesis set {name!r}; known: {SETS}")
    explanations: list[Explanation] = []
    card_weights: list[list[int]] = []
    cards: list[str] = []
    for m in compile_missions(board):
        if m.kind != "continents" and name == "cards6":
            continue
        idx = []
        if m.kind == "continents" and m.extra_continents:
            if m.extra_continents != 1:
                raise ValueError(f"mission {m.name!r}: only one optional continent is supported")
            others = [c for c in range(board.n_continents) if c not in m.continents]
            for c in others:
                conts = tuple(m.continents) + (c,)
                label = "+".join(board.continent_names[x] for x in conts)
                idx.append(len(explanations))
                explanations.append(Explanation(label, m.name, "continents", conts))
        elif m.kind == "continents":
            idx.append(len(explanations))
            explanations.append(Explanation(m.name, m.name, "continents", tuple(m.continents)))
        elif m.kind == "territories":
            idx.append(len(explanations))
            explanations.append(Explanation(m.name, m.name, "all"))
        else:
            idx.append(len(explanations))
            explanations.append(Explanation(m.name, m.name, "destroy", colour=m.colour))
        cards.append(m.name)
        card_weights.append(idx)
    prior = np.zeros(len(explanations))
    card_of = np.zeros(len(explanations), dtype=np.int64)
    for c, idx in enumerate(card_weights):
        prior[idx] = 1.0 / len(card_weights) / len(idx)
        card_of[idx] = c
    return Hypotheses(name, board, tuple(explanations), prior, tuple(cards), card_of)
