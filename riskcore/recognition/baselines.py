"""Baseline recognisers.

- `uniform`: the prior, whatever is observed.
- `placements`: the naive yardstick. For each card, count the player's placements so far (setup placements and
  reinforcements, one per placing command) that land in the card's named continents (a "+ one other continent"
  card names two), and guess the card with the most, ties split: probability 1/|argmax| on each leading card,
  spread over its explanations as the prior spreads it. A guess, not a distribution: only its top-1 is meant.
- `goal`: goal completion. After each observation, score e by the share of its territories the player owns,
  s_e = |owned ∩ T_e| / |T_e|, and report P(e) ∝ P_prior(e) exp(s_e / temperature). A snapshot of progress, not
  an accumulation of evidence.
"""

from __future__ import annotations

import numpy as np

from riskcore.recognition.features import KIND, Features
from riskcore.recognition.posterior import group_starts, grouped_cumsum, normalise


def uniform_posterior(f: Features) -> np.ndarray:
    return np.broadcast_to(f.hyp.prior, (f.n, f.hyp.size)).copy()


def placement_posterior(f: Features) -> np.ndarray:
    from riskcore.recognition.mission_lean import card_territories

    hyp = f.hyp
    inside = card_territories(hyp)  # (C, T): the cards' named continents
    kind, terr = f.obs.kind_code.to_numpy(), f.obs.territory.to_numpy()
    placing = np.isin(kind, [KIND["place"], KIND["reinforce"]]) & (terr >= 0)
    hits = np.where(placing[:, None], inside[:, np.maximum(terr, 0)].T, False).astype(float)  # (N, C)
    counts = grouped_cumsum(hits, group_starts(f))
    leading = (counts >= counts.max(axis=1, keepdims=True)).astype(float)
    card_mass = leading / leading.sum(axis=1, keepdims=True)
    within = hyp.prior / hyp.card_probs(hyp.prior)[hyp.card_of]  # a card's explanations share it as the prior does
    return card_mass[:, hyp.card_of] * within[None, :]


def goal_posterior(f: Features, temperature: float = 0.1) -> np.ndarray:
    if not temperature > 0:
        raise ValueError(f"goal completion temperature must be positive, got {temperature}")
    share = f.owned_in / np.maximum(f.member_size, 1)
    return normalise(np.log(f.hyp.prior)[None, :] + share / temperature)
