"""`mixture`: inverse planning for players whose style of play is unknown.

Inverse planning with one model of play (`inverse`) reads every choice as the choice of a mission-following
`mission` agent. A player who seeks continents for their bonus, whatever the mission, then looks like a confident
witness for whichever mission those continents serve, and the posterior is confidently wrong. Here each player
is explained by one of several models of play, and which one is inferred per player along with the mission:

- goal-directed: the `mission` agent's valuation with focus 0.25, 0.5, 0.75 or 1 (as in `inverse`);
- mission-blind: `greedy` (the best conquest odds, every territory alike), `continent` (odds x the value a
  continent-seeking player puts on the target's continent, `features.Extractor.continent_values`), and `random`
  (every candidate alike).

Each model picks a decision's candidate with probability softmax(beta score) mixed with a lapse `eps`, as in
`inverse`. With prior weight `rho` on the goal-directed models (shared evenly) and 1 - rho on the mission-blind
ones, the joint posterior over (model, explanation) of a player after t decisions is

    P(k, e | obs) ∝ P(e) pi_k prod_i P_k(obs_i | e)

and the mission posterior is its sum over k. `temper` (in (0, 1]) raises each observation's likelihood to that
power: consecutive choices of one player are not independent evidence (a player who heads for a continent makes
many choices for one reason), and counting each as independent makes the posterior overconfident on players
none of the models describes. A mission-blind model gives every explanation the same likelihood,
so when it explains a player's choices better than any goal-directed one, the posterior over missions stays
close to the prior instead of following the player's continents: the recogniser knows that it does not know.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
from scipy.special import logsumexp

from riskcore.recognition.features import Features
from riskcore.recognition.inverse import Candidates, choice_loglik, inverse_loglik
from riskcore.recognition.posterior import grouped_cumsum, normalise

GOAL_FOCUS = (0.25, 0.5, 0.75, 1.0)
FREE_MODELS = ("greedy", "continent", "random")


def model_logliks(f: Features, c: Candidates, beta: float, eps: float
                  ) -> list[tuple[str, np.ndarray]]:
    """Per model of play, the (N, E) or (N, 1) log-likelihood of each observation."""
    out = [(f"mission focus {x:g}", inverse_loglik(f, c, beta, x, eps)) for x in GOAL_FOCUS]
    for model in FREE_MODELS:
        if model == "random":
            score, chosen = c.free_scores("greedy")
            ll = choice_loglik(f.n, c, np.zeros_like(score), chosen, 0.0, 0.0)
        else:
            score, chosen = c.free_scores(model)
            ll = choice_loglik(f.n, c, score, chosen, beta, eps)
        out.append((model, ll))
    return out


def mixture_posterior(f: Features, c: Candidates, starts: np.ndarray, beta: float, eps: float, rho: float,
                      temper: float = 1.0, transform: Callable | None = None, with_models: bool = False):
    """(N, E) posterior over explanations after each observation; with `with_models`, also the (N, K) posterior
    over the models of play (which style the recogniser thinks each player has)."""
    logliks = model_logliks(f, c, beta, eps)
    if transform:
        logliks = [(name, transform(f, ll)) for name, ll in logliks]
    return mixture_from_logliks(f, logliks, starts, rho, temper, with_models)


def mixture_from_logliks(f: Features, logliks: list[tuple[str, np.ndarray]], starts: np.ndarray, rho: float,
                         temper: float = 1.0, with_models: bool = False):
    """`mixture_posterior` from the per-model log-likelihoods (`model_logliks`): several rho or temper values
    share them."""
    if not 0 < rho < 1:
        raise ValueError(f"mixture: rho (the prior weight of goal-directed play) must be in (0, 1), got {rho}")
    if not 0 < temper <= 1:
        raise ValueError(f"mixture: temper (the power on each observation's likelihood) must be in (0, 1], "
                         f"got {temper}")
    terms, names = [], []
    for name, ll in logliks:
        weight = rho / len(GOAL_FOCUS) if name.startswith("mission") else (1 - rho) / len(FREE_MODELS)
        terms.append(np.log(weight) + temper * grouped_cumsum(ll, starts))
        names.append(name)
    e = f.hyp.size
    joint = np.stack([np.broadcast_to(t, (f.n, e)) for t in terms]) + np.log(f.hyp.prior)[None, None, :]
    post = normalise(logsumexp(joint, axis=0))
    if not with_models:
        return post
    per_model = logsumexp(joint, axis=2).T  # (N, K)
    return post, normalise(per_model), names
