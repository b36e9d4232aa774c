"""Baseline recognisers.

- `uniform`: the prior, whatever is observed.
- `goal`: goal completion. After each observation, score e by the share of its territories the player owns,
  s_e = |owned ∩ T_e| / |T_e|, and report P(e) ∝ P_prior(e) exp(s_e / temperature). A snapshot of progress, not
  an accumulation of evidence.
"""

from __future__ import annotations

import numpy as np

from riskcore.recognition.features import Features
from riskcore.recognition.posterior import normalise


def uniform_posterior(f: Features) -> np.ndarray:
    return np.broadcast_to(f.hyp.prior, (f.n, f.hyp.size)).copy()


def goal_posterior(f: Features, temperature: float = 0.1) -> np.ndarray:
    if not temperature > 0:
        raise ValueError(f"goal completion temperature must be positive, got {temperature}")
    share = f.owned_in / np.maximum(f.member_size, 1)
    return normalise(np.log(f.hyp.prior)[None, :] + share / temperature)
