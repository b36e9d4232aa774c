"""On-policy first-visit Monte Carlo control (Sutton & Barto 2018, 5.4) for the dice choices of a battle.

State: (attacker armies capped at 4, defender armies capped at 3, attacker > defender before capping). The attacker
picks 0-3 dice (0 = stop attacking, at most armies - 1), then the defender, seeing that, picks 1-2 (at most its
armies). Reward per roll: defender losses - attacker losses for the attacker, the negative for the defender.
Behaviour is epsilon-greedy with epsilon = 1/k in episode k; Q is the mean of first-visit returns. The caps
merge real states whose exact optimum differs (e.g. 4 vs 2 and 9 vs 2 armies), so agreement with the exact
choices plateaus below 1; `agreement` measures it over the real states.

`exact_choices` solves the same battle game exactly (a minimax dynamic programme over the real army counts with
the exact roll distributions), so the learned choices can be compared with the optimum.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from riskcore.engine.battle import roll_outcomes, sample_roll
from riskcore.storage import write_text

A_CAP, D_CAP = 4, 3


def state_of(attacker_armies: int, defender_armies: int) -> tuple[int, int, int]:
    return (min(attacker_armies, A_CAP), min(defender_armies, D_CAP), int(attacker_armies > defender_armies))


def attacker_options(attacker_armies: int) -> list[int]:
    return [0] + list(range(1, min(3, attacker_armies - 1) + 1))


def defender_options(defender_armies: int) -> list[int]:
    return list(range(1, min(2, defender_armies) + 1))


@dataclass
class DiceTables:
    """Q values and visit counts: attacker Q[state][dice], defender Q[(state, attacker dice)][dice]."""

    q_att: dict = field(default_factory=dict)
    n_att: dict = field(default_factory=dict)
    q_def: dict = field(default_factory=dict)
    n_def: dict = field(default_factory=dict)

    def attacker_choice(self, attacker_armies: int, defender_armies: int) -> int:
        s, opts = state_of(attacker_armies, defender_armies), attacker_options(attacker_armies)
        q = [self.q_att.get((s, a), 0.0) for a in opts]
        return opts[int(np.argmax(q))]

    def defender_choice(self, attacker_armies: int, defender_armies: int, attacker_dice: int) -> int:
        s, opts = state_of(attacker_armies, defender_armies), defender_options(defender_armies)
        q = [self.q_def.get((s, attacker_dice, d), 0.0) for d in opts]
        return opts[int(np.argmax(q))]

    def save(self, path: Path) -> None:
        def pack(d):
            return [[list(k[0]) if isinstance(k[0], tuple) else k[0], *k[1:], v] for k, v in sorted(d.items())]

        write_text(Path(path), json.dumps({"q_att": pack(self.q_att), "n_att": pack(self.n_att),
                                           "q_def": pack(self.q_def), "n_def": pack(self.n_def)}))

    @classmethod
    def load(cls, path: Path) -> "DiceTables":
        try:
            raw = json.loads(Path(path).read_text())
            tables = cls()
            for name in ("q_att", "n_att", "q_def", "n_def"):
                getattr(tables, name).update({(tuple(r[0]), *r[1:-1]): r[-1] for r in raw[name]})
        except (OSError, KeyError, ValueError, TypeError, IndexError) as exc:
            raise ValueError(f"cannot read dice tables from {path}: {exc}") from None
        return tables


def _pick(rng: np.random.Generator, q: list[float], eps: float) -> int:
    if rng.random() < eps:
        return int(rng.integers(len(q)))
    best = np.flatnonzero(np.isclose(q, max(q)))
    return int(best[rng.integers(len(best))])


def learn(episodes: int, seed: int = 0, max_armies: int = 10, tables: DiceTables | None = None,
          start_episode: int = 1) -> tuple[DiceTables, pd.DataFrame]:
    """Run `episodes` battles from random starts; return the tables and the per-episode attacker reward."""
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    t = tables or DiceTables()
    rewards = np.zeros(episodes)
    for i in range(episodes):
        eps = 1.0 / (start_episode + i)
        a, d = int(rng.integers(2, max_armies + 1)), int(rng.integers(1, max_armies + 1))
        att_steps, def_steps, step_rewards = [], [], []
        while a >= 2 and d >= 1:
            s = state_of(a, d)
            opts = attacker_options(a)
            ad = opts[_pick(rng, [t.q_att.get((s, x), 0.0) for x in opts], eps)]
            att_steps.append((s, ad))
            if ad == 0:
                step_rewards.append(0.0)
                break
            dopts = defender_options(d)
            dd = dopts[_pick(rng, [t.q_def.get((s, ad, x), 0.0) for x in dopts], eps)]
            def_steps.append((s, ad, dd))
            al, dl = sample_roll(rng, ad, dd)
            step_rewards.append(float(dl - al))
            a, d = a - al, d - dl
        returns = np.cumsum(step_rewards[::-1])[::-1]
        seen = set()
        for k, key in enumerate(att_steps):  # first visit only
            if key not in seen:
                seen.add(key)
                n = t.n_att.get(key, 0) + 1
                t.n_att[key] = n
                t.q_att[key] = t.q_att.get(key, 0.0) + (returns[k] - t.q_att.get(key, 0.0)) / n
        seen = set()
        for k, key in enumerate(def_steps):
            if key not in seen:
                seen.add(key)
                n = t.n_def.get(key, 0) + 1
                t.n_def[key] = n
                t.q_def[key] = t.q_def.get(key, 0.0) + (-returns[k] - t.q_def.get(key, 0.0)) / n
        rewards[i] = returns[0] if len(returns) else 0.0
    curve = pd.DataFrame({"episode": np.arange(start_episode, start_episode + episodes), "reward": rewards})
    return t, curve


def solve_battle(max_armies: int = 12) -> tuple[np.ndarray, dict[tuple[int, int, int, int], float]]:
    """The battle game solved by a minimax DP over real army counts with the exact roll distributions: the value
    of every state (attacker's expected defender losses minus attacker losses, both sides optimal) and the value
    of every pair of dice choices (a, d, attacker dice, defender dice), optimal play after it."""
    value = np.zeros((max_armies + 1, max_armies + 1))
    q = {}
    for total in range(2, 2 * max_armies + 1):
        for a in range(2, max_armies + 1):
            d = total - a
            if not 1 <= d <= max_armies:
                continue
            best = 0.0  # stopping is worth 0
            for ad in attacker_options(a)[1:]:
                for dd in defender_options(d):
                    q[(a, d, ad, dd)] = sum(float(p) * (dl - al + value[a - al, d - dl])
                                            for (al, dl), p in roll_outcomes(ad, dd).items())
                best = max(best, min(q[(a, d, ad, dd)] for dd in defender_options(d)))
            value[a, d] = best
    return value, q


def exact_choices(max_armies: int = 12) -> dict[tuple[int, int], tuple[int, dict[int, int]]]:
    """Optimal (attacker dice, {attacker dice: defender dice}) for real armies (a, d), by `solve_battle`; ties go to
    fewer dice."""
    value, q = solve_battle(max_armies)
    choice = {}
    for a in range(2, max_armies + 1):
        for d in range(1, max_armies + 1):
            def_best, best_ad, best_v = {}, 0, 0.0
            for ad in attacker_options(a)[1:]:
                replies = {dd: q[(a, d, ad, dd)] for dd in defender_options(d)}
                def_best[ad] = min(replies, key=lambda dd: (replies[dd] + 1e-12 * dd))
                if replies[def_best[ad]] > best_v + 1e-12:
                    best_ad, best_v = ad, replies[def_best[ad]]
            choice[(a, d)] = (best_ad, def_best)
    return choice


def agreement(tables: DiceTables, max_armies: int = 8) -> pd.DataFrame:
    """Per real state (2 <= a, 1 <= d <= max_armies) and side: the learned choice, the exact optimum, whether they
    agree, the regret of the learned choice (armies per battle lost against optimal play after it), how often
    learning tried the optimal choice in the state's (capped) class; and agreement and regret of the rule of thumb
    of always rolling the most dice."""
    value, q = solve_battle(max_armies)
    exact = exact_choices(max_armies)

    def attacker_value(a, d, ad):
        return 0.0 if ad == 0 else min(q[(a, d, ad, dd)] for dd in defender_options(d))

    rows = []
    for (a, d), (best_ad, def_best) in exact.items():
        learned, thumb = tables.attacker_choice(a, d), attacker_options(a)[-1]
        rows.append({"a": a, "d": d, "side": "attacker", "learned": learned, "optimal": best_ad,
                     "regret": value[a, d] - attacker_value(a, d, learned),
                     "optimal_tries": tables.n_att.get((state_of(a, d), best_ad), 0),
                     "thumb_agree": thumb == best_ad, "thumb_regret": value[a, d] - attacker_value(a, d, thumb)})
        for ad, dd in def_best.items():
            learned, thumb = tables.defender_choice(a, d, ad), defender_options(d)[-1]
            rows.append({"a": a, "d": d, "side": f"defender vs {ad}", "learned": learned, "optimal": dd,
                         "regret": q[(a, d, ad, learned)] - q[(a, d, ad, dd)],
                         "optimal_tries": tables.n_def.get((state_of(a, d), ad, dd), 0), "thumb_agree": thumb == dd,
                         "thumb_regret": q[(a, d, ad, thumb)] - q[(a, d, ad, dd)]})
    df = pd.DataFrame(rows)
    df["agree"] = df.learned == df.optimal
    return df
