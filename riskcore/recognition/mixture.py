"""`mixture`: inverse planning for players whose style of play is unknown.

Inverse planning with one model of play (`inverse`) reads every choice as the choice of a mission-following
`mission` agent. A player who seeks continents for their bonus, whatever the mission, then looks like a confident
witness for whichever mission those continents serve, and the posterior is confidently wrong. Here each player
is explained by one of several models of play, and which one is inferred per player along with the mission:

- goal-directed: the `mission` agent's valuation with focus 0.25, 0.5, 0.75 or 1 (as in `inverse`), each in two
  styles of placing armies: to attack from (staging: a placement scores the best value-weighted conquest odds it
  creates, as in `inverse`) or to hold (a placement scores the value of its own territory, 1 inside the
  explanation's territories, else 1 - focus); attacks are read the same way in both;
- mission-blind: `greedy` (the best conquest odds, every territory alike), `continent` (odds x the value a
  continent-seeking player puts on the target's continent, `features.Extractor.continent_values`), each also
  placing to hold (`greedy holding`: every placement alike; `continent holding`: a placement scores its own
  continent's value), the mission-blind twins of the goal-directed styles, and `random` (every candidate alike);
- with `goals` = n > 0, `free goals`: the goal-directed model pursuing a goal of its own, any set of 1 to n
  continents, drawn uniformly and kept for the game, whatever the card; its likelihood is the mean over those
  goals (and the focus levels and placing styles) of prod_i P(obs_i | goal). It is the goal-directed models' mission-blind twin: a
  player heading for continents that no card names is explained by it far better than by any card, and the
  posterior over cards stays near the prior. Because the goals include every card's continents, a player heading
  for exactly a card's continents is explained by both, and the goal-directed reading wins only by Occam's factor
  (its prior over 12 explanations against the free model's over all goals), so even such a player is not read
  with certainty.

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

One fact holds for every style of play: a completed mission ends the game, so a card the player's territories
already complete is not theirs (`posterior.completed_cards`). Both mixtures rule such cards out after every
observation, whichever model of play explains the player.
"""

from __future__ import annotations

from itertools import combinations
from typing import Callable

import numpy as np
from scipy.special import logsumexp

from riskcore.recognition.features import Features
from riskcore.recognition.hypotheses import Hypotheses
from riskcore.recognition.inverse import Candidates, choice_loglik, inverse_loglik
from riskcore.recognition.posterior import completed_cards, grouped_cumsum, normalise

GOAL_FOCUS = (0.25, 0.5, 0.75, 1.0)
FREE_MODELS = ("greedy", "continent", "greedy holding", "continent holding", "random")
FREE_GOALS = "free goals"


def goal_sets(n_continents: int, max_size: int) -> np.ndarray:
    """(G, C) bool: every set of 1 to `max_size` continents."""
    sets = [s for k in range(1, max_size + 1) for s in combinations(range(n_continents), k)]
    out = np.zeros((len(sets), n_continents), dtype=bool)
    for g, s in enumerate(sets):
        out[g, list(s)] = True
    return out


def target_continents(hyp: Hypotheses, bits: np.ndarray) -> np.ndarray:
    """The continent of each candidate row's target, read from its explanation bit mask (the explanations whose
    continents contain the target); every continent must have a bit pattern of its own. -1: a row without a
    target (no bits)."""
    patterns = {0: -1}
    for k in range(hyp.board.n_continents):
        pattern = sum(1 << e for e, x in enumerate(hyp.explanations) if x.kind == "continents" and k in x.continents)
        if pattern in patterns:
            raise ValueError(f"free goals: hypotheses {hyp.name!r} cannot tell continents "
                             f"{hyp.board.continent_names[patterns[pattern]]!r} and {hyp.board.continent_names[k]!r} "
                             "apart on this board")
        patterns[pattern] = k
    mask = sum(1 << e for e, x in enumerate(hyp.explanations) if x.kind == "continents")
    keys = np.array(sorted(patterns))
    found = bits & mask
    at = np.minimum(np.searchsorted(keys, found), len(keys) - 1)
    if (keys[at] != found).any():
        raise ValueError(f"free goals: a candidate's explanation bits {int(found[keys[at] != found][0])} name no "
                         "continent")
    return np.array([patterns[int(k)] for k in keys])[at]


def free_goal_loglik(f: Features, c: Candidates, beta: float, eps: float, max_size: int) -> np.ndarray:
    """(N, styles x focus levels x goals) log P(obs_i | goal, focus, style) of the goal-directed model pursuing
    every goal of `goal_sets`, placing armies to attack from or to hold (as the goal-directed models do)."""
    sets = goal_sets(f.hyp.board.n_continents, max_size)
    sets = np.c_[sets, np.zeros(len(sets), dtype=bool)]  # continent -1: a target-less row is in no goal
    member = lambda bits: sets[:, target_continents(f.hyp, bits)].T  # noqa: E731
    return np.hstack([choice_loglik(f.n, c, *c.goal_scores(("free goals", max_size), x, member, holding), beta,
                                    eps) for holding in (False, True) for x in GOAL_FOCUS])


def model_logliks(f: Features, c: Candidates, beta: float, eps: float, goals: int = 0
                  ) -> list[tuple[str, np.ndarray]]:
    """Per model of play, the (N, E) or (N, 1) log-likelihood of each observation; `free goals` (with `goals`)
    is (N, K): one column per (focus, goal), the goal kept over the game."""
    if not 0 <= goals <= f.hyp.board.n_continents:
        raise ValueError(f"mixture: goals (the most continents of a free goal) must be in "
                         f"0..{f.hyp.board.n_continents}, got {goals}")
    out = [(f"mission focus {x:g}", inverse_loglik(f, c, beta, x, eps)) for x in GOAL_FOCUS]
    out += [(f"mission focus {x:g}, holding", choice_loglik(f.n, c, *c.holding_scores(x, f.hyp.size), beta, eps))
            for x in GOAL_FOCUS]
    for model in FREE_MODELS:
        if model == "random":
            score, chosen = c.free_scores("greedy")
            ll = choice_loglik(f.n, c, np.zeros_like(score), chosen, 0.0, 0.0)
        else:
            score, chosen = c.free_scores(model)
            ll = choice_loglik(f.n, c, score, chosen, beta, eps)
        out.append((model, ll))
    if goals:
        out.append((FREE_GOALS, free_goal_loglik(f, c, beta, eps, goals)))
    return out


def mixture_posterior(f: Features, c: Candidates, starts: np.ndarray, beta: float, eps: float, rho: float,
                      temper: float = 1.0, transform: Callable | None = None, with_models: bool = False,
                      goals: int = 0):
    """(N, E) posterior over explanations after each observation; with `with_models`, also the (N, K) posterior
    over the models of play (which style the recogniser thinks each player has)."""
    logliks = model_logliks(f, c, beta, eps, goals)
    if transform:
        logliks = [(name, transform(f, ll)) for name, ll in logliks]
    return mixture_from_logliks(f, logliks, starts, rho, temper, with_models)


def mixture_from_logliks(f: Features, logliks: list[tuple[str, np.ndarray]], starts: np.ndarray, rho: float,
                         temper: float = 1.0, with_models: bool = False, cumulative: bool = False):
    """`mixture_posterior` from the per-model log-likelihoods (`model_logliks`): several rho or temper values
    share them; `cumulative`: they are already summed over each player's observations (`grouped_cumsum`)."""
    if not 0 < rho < 1:
        raise ValueError(f"mixture: rho (the prior weight of goal-directed play) must be in (0, 1), got {rho}")
    if not with_models:
        return mixture_combine(f, mixture_parts(f, logliks, starts, temper, cumulative), rho)
    terms, names = _terms(f, logliks, starts, temper, cumulative)
    n_goal = sum(name.startswith("mission") for name in names)
    weights = [rho / n_goal if name.startswith("mission") else (1 - rho) / (len(names) - n_goal) for name in names]
    e = f.hyp.size
    joint = np.stack([np.broadcast_to(np.log(w) + t, (f.n, e)) for w, t in zip(weights, terms)])
    joint += np.log(f.hyp.prior)[None, None, :]
    joint[:, completed_cards(f)] = -np.inf  # the rules, not a model of play: a completed card would have won
    post = normalise(logsumexp(joint, axis=0))
    per_model = logsumexp(joint, axis=2).T  # (N, K)
    return post, normalise(per_model), names


def _terms(f: Features, logliks: list[tuple[str, np.ndarray]], starts: np.ndarray, temper: float, cumulative: bool
           ) -> tuple[list[np.ndarray], list[str]]:
    """Each model's tempered cumulative log-likelihood: (N, E) for a goal-directed model, (N, 1) for a blind one."""
    if not 0 < temper <= 1:
        raise ValueError(f"mixture: temper (the power on each observation's likelihood) must be in (0, 1], "
                         f"got {temper}")
    terms, names = [], []
    for name, ll in logliks:
        cum = temper * (ll if cumulative else grouped_cumsum(ll, starts))
        if name == FREE_GOALS:  # the goal is the player's own, not the card's: its mean over goals
            cum = logsumexp(cum, axis=1, keepdims=True) - np.log(cum.shape[1])
        terms.append(cum)
        names.append(name)
    return terms, names


def mixture_parts(f: Features, logliks: list[tuple[str, np.ndarray]], starts: np.ndarray, temper: float = 1.0,
                  cumulative: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """The goal-directed models' mean likelihood (N, E) and the mission-blind models' (N, 1), in logs, at one
    temper: every rho combines them (`mixture_combine`) without computing them again."""
    terms, names = _terms(f, logliks, starts, temper, cumulative)
    goal = [t for t, name in zip(terms, names) if name.startswith("mission")]
    free = [t for t, name in zip(terms, names) if not name.startswith("mission")]
    return (logsumexp(np.stack(goal), axis=0) - np.log(len(goal)),
            logsumexp(np.stack(free), axis=0) - np.log(len(free)))


def mixture_combine(f: Features, parts: tuple[np.ndarray, np.ndarray], rho: float) -> np.ndarray:
    """The mission posterior: goal-directed play with prior weight rho, mission-blind play with 1 - rho."""
    goal, free = parts
    total = np.logaddexp(np.log(rho) + goal, np.log(1 - rho) + free) + np.log(f.hyp.prior)[None, :]
    return normalise(np.where(completed_cards(f), -np.inf, total))  # the rules: a completed card would have won
