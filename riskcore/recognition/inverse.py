"""Bayesian inverse planning (Baker, Saxe & Tenenbaum 2009) with the `mission` agent as the model of play.

A player pursuing explanation e values a target territory n at v_e(n) = 1 if n is one of e's territories, else
1 - focus, and scores a decision candidate by the best value-weighted exact conquest odds it offers:
attack (src, dst): s_e = v_e(dst) P(conquer); reinforce T with k armies: s_e = max_n v_e(n) P(conquer n from T).
A noisily rational player picks candidate c with probability softmax(beta * s_e(c)) over the candidates, so

    log P(obs | e) = beta s_e(chosen) - log sum_c exp(beta s_e(c))

A lapse rate `eps` mixes in a uniform choice, P = eps / |C| + (1 - eps) softmax, so unmodelled play cannot make
the posterior arbitrarily confident. Other observations (defence outcomes are dice, fortifies and trades are not
modelled) leave the posterior as it is.

The observer does not know how single-minded a player is. `marginal_loglik` treats focus as a per-player latent
variable with a uniform prior over `FOCUS_GRID`: P(obs_1..t | e) = mean_f prod_i P(obs_i | e, f), so a player who
ignores their mission (focus 0) is soon recognised as uninformative instead of misleading the recogniser.
`focus`, `beta` and `eps` are parameters, chosen on training games.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from riskcore.db import DataError, query, reading, run_source
from riskcore.recognition.features import Features


@dataclass
class Candidates:
    """Candidate rows sorted by (game_id, player, seq, cand); `obs_row` links each decision to a Features row."""

    odds: np.ndarray
    bits: np.ndarray
    self_bits: np.ndarray  # a placement candidate's own territory's explanation bits (0 on attack rows)
    continent: np.ndarray  # a mission-blind player's value of each row's target (`Extractor.continent_values`)
    self_continent: np.ndarray  # the same of a placement candidate's own territory (0 on attack rows)
    chosen: np.ndarray
    cand_start: np.ndarray  # row where each candidate starts (+ sentinel)
    decision_start: np.ndarray  # candidate index where each decision starts (+ sentinel)
    obs_row: np.ndarray  # per decision: row in Features
    _scores: dict = field(default_factory=dict, repr=False)

    def candidate_scores(self, focus: float, e: int) -> tuple[np.ndarray, np.ndarray]:
        """(candidates x explanations) scores max over a candidate's rows of odds * v_e(target), and whether each
        candidate was chosen; computed once per focus (beta and the lapse rate only rescale them)."""
        bit = (1 << np.arange(e)).astype(np.int64)
        return self.goal_scores(("explanations", e), focus, lambda b: (b[:, None] & bit) != 0)

    def holding_scores(self, focus: float, e: int) -> tuple[np.ndarray, np.ndarray]:
        """`candidate_scores` of a player who places armies to hold what it values, not to attack from it: a
        placement candidate scores its own territory's value v_e (1 inside e, else 1 - focus); an attack as in
        `candidate_scores`."""
        bit = (1 << np.arange(e)).astype(np.int64)
        return self.goal_scores(("explanations", e), focus, lambda b: (b[:, None] & bit) != 0, holding=True)

    def goal_scores(self, key: tuple, focus: float, member, holding: bool = False
                    ) -> tuple[np.ndarray, np.ndarray]:
        """`candidate_scores` for any K goals: `member(bits)` is the (n, K) bool membership in each goal of
        targets with those explanation bits; with `holding`, a placement scores its own territory's value, not
        the odds it creates (attacks are as before). Cached under (`key`, focus, holding); compiled
        (`compiled_scores`), `goal_scores_reference` is the same in arrays."""
        from riskcore.recognition.compiled_scores import class_scores

        full = key + (float(focus), holding)
        if full not in self._scores:
            classes, row_class = self._classes
            own_bits = self.self_bits[self.cand_start[:-1]]
            own_classes, own_class = np.unique(own_bits, return_inverse=True)
            own_class = np.where(own_bits > 0, own_class, -1).astype(np.int64)
            score = class_scores(self.odds, row_class, member(classes), own_class, member(own_classes),
                                 float(focus), self.cand_start.astype(np.int64), holding)
            self._scores[full] = (score, self.chosen_candidates)
        return self._scores[full]

    @property
    def _classes(self) -> tuple[np.ndarray, np.ndarray]:
        """The distinct explanation bits of the rows' targets, and each row's index into them."""
        if "classes" not in self._scores:
            classes, row_class = np.unique(self.bits, return_inverse=True)
            self._scores["classes"] = (classes, row_class.astype(np.int64))
        return self._scores["classes"]

    @property
    def chosen_candidates(self) -> np.ndarray:
        if "chosen" not in self._scores:
            self._scores["chosen"] = np.logical_or.reduceat(self.chosen, self.cand_start[:-1])
        return self._scores["chosen"]

    def goal_scores_reference(self, focus: float, member, holding: bool = False) -> np.ndarray:
        """`goal_scores` in arrays, row by row (rows x K matrices): the reference the compiled form is held to."""
        row_score = self.odds[:, None] * np.where(member(self.bits), 1.0, 1.0 - focus)
        if holding:
            row_score = np.where(self.self_bits[:, None] > 0,
                                 np.where(member(self.self_bits), 1.0, 1.0 - focus), row_score)
        return np.maximum.reduceat(row_score, self.cand_start[:-1], axis=0)

    def free_scores(self, model: str) -> tuple[np.ndarray, np.ndarray]:
        """(candidates x 1) scores of a mission-blind model of play: `greedy` (best conquest odds, every territory
        alike) or `continent` (odds x the target's continent value); `... holding`, the same placing to hold: a
        placement scores its own territory (every one alike; its continent's value) and attacks as before. With
        whether each candidate was chosen."""
        key = (model,)
        if key not in self._scores:
            base, holding = model.removesuffix(" holding"), model.endswith(" holding")
            value = self.odds if base == "greedy" else self.odds * self.continent
            if holding:
                own = 1.0 if base == "greedy" else self.self_continent
                value = np.where(self.self_bits > 0, own, value)
            starts = self.cand_start[:-1]
            self._scores[key] = (np.maximum.reduceat(value, starts)[:, None], self.chosen_candidates)
        return self._scores[key]


def load_candidates(f: Features, run: str, data_dir: Path | None = None) -> Candidates:
    """The decision candidates of `f`'s games whose decision `f` observes (a setup placement is a decision only
    in the `full` view)."""
    games = f.obs.game_id.to_numpy()
    first, last = (int(games.min()), int(games.max())) if len(games) else (0, -1)
    try:
        with reading(data_dir):
            source = run_source("rec_candidates", run, data_dir, (first, last))
            df = query("SELECT game_id, player, seq, cand, odds, bits, self_bits, continent, self_continent, chosen "
                       f"FROM {source} WHERE run = ? AND hypotheses = ? AND game_id BETWEEN ? AND ? "
                       "ORDER BY game_id, player, seq, cand", [run, f.hyp.name, first, last], data_dir)
    except Exception as exc:
        raise DataError(f"no decision candidates for run {run!r}: rebuild its features ({exc})") from None
    obs_index = pd.MultiIndex.from_frame(f.obs[["game_id", "player", "seq"]])
    rows = obs_index.get_indexer(pd.MultiIndex.from_frame(df[["game_id", "player", "seq"]]))
    if (rows < 0).any():
        if f.obs.kind.eq("place").any():  # the full view observes every decision that has candidates
            raise DataError(f"decision candidates of run {run!r} do not match its observations")
        df = df[rows >= 0].reset_index(drop=True)  # the setup placements the `turns` view leaves out
    key = df[["game_id", "player", "seq"]].to_numpy()
    new_dec = np.r_[True, (key[1:] != key[:-1]).any(axis=1)][:len(df)]
    new_cand = new_dec | np.r_[True, df.cand.to_numpy()[1:] != df.cand.to_numpy()[:-1]][:len(df)]
    cand_start = np.r_[np.flatnonzero(new_cand), len(df)]
    dec_rows = np.flatnonzero(new_dec)
    decision_start = np.r_[np.searchsorted(cand_start[:-1], dec_rows), len(cand_start) - 1]
    dec_keys = pd.MultiIndex.from_arrays([df.game_id.to_numpy()[dec_rows], df.player.to_numpy()[dec_rows],
                                          df.seq.to_numpy()[dec_rows]])
    obs_row = obs_index.get_indexer(dec_keys)  # the observation of the deciding player at that event
    return Candidates(df.odds.to_numpy(np.float64), df.bits.to_numpy(np.int64), df.self_bits.to_numpy(np.int64),
                      df.continent.to_numpy(np.float64), df.self_continent.to_numpy(np.float64),
                      df.chosen.to_numpy(bool), cand_start, decision_start, obs_row)


FOCUS_GRID = (0.0, 0.25, 0.5, 0.75, 1.0)


def inverse_loglik(f: Features, c: Candidates, beta: float = 10.0, focus: float = 0.8, eps: float = 0.0
                   ) -> np.ndarray:
    """(N, E) log P(obs_i | e) under the noisily rational mission-agent model."""
    if not beta >= 0 or not 0 <= focus <= 1 or not 0 <= eps < 1:
        raise ValueError(f"need beta >= 0, focus in [0, 1], eps in [0, 1); got {beta}, {focus}, {eps}")
    cand_score, chosen_cand = c.candidate_scores(focus, f.hyp.size)
    return choice_loglik(f.n, c, cand_score, chosen_cand, beta, eps)


def choice_loglik(n_rows: int, c: Candidates, cand_score: np.ndarray, chosen_cand: np.ndarray, beta: float,
                  eps: float) -> np.ndarray:
    """(n_rows, K) log P(chosen candidate) of each decision under softmax(beta score) with lapse `eps`, for K
    score columns (explanations, or one for a mission-blind model); 0 on rows that are not decisions. Compiled
    (`compiled_scores.choice_logliks`); `choice_loglik_reference` is the same in arrays."""
    from riskcore.recognition.compiled_scores import choice_logliks

    return choice_logliks(n_rows, c.obs_row.astype(np.int64), c.decision_start.astype(np.int64),
                          np.ascontiguousarray(cand_score, dtype=np.float64), np.asarray(chosen_cand, dtype=bool),
                          float(beta), float(eps))


def choice_loglik_reference(n_rows: int, c: Candidates, cand_score: np.ndarray, chosen_cand: np.ndarray,
                            beta: float, eps: float) -> np.ndarray:
    """`choice_loglik` in arrays, all decisions at once."""
    z = beta * cand_score
    d_start = c.decision_start[:-1]
    top = np.maximum.reduceat(z, d_start, axis=0)
    n_per = np.diff(c.decision_start)
    lse = top + np.log(np.add.reduceat(np.exp(z - np.repeat(top, n_per, axis=0)), d_start, axis=0))
    chosen_score = np.add.reduceat(np.where(chosen_cand[:, None], z, 0.0), d_start, axis=0)
    n_chosen = np.add.reduceat(chosen_cand.astype(int), d_start)
    soft = chosen_score - lse
    if eps > 0:
        soft = np.logaddexp(np.log(eps) - np.log(n_per)[:, None], np.log1p(-eps) + soft)
    ll = np.zeros((n_rows, cand_score.shape[1]))
    ok = n_chosen == 1
    ll[c.obs_row[ok]] = soft[ok]
    return ll


def inverse_posterior(f: Features, c: Candidates, starts: np.ndarray, beta: float, focus: float, eps: float = 0.0,
                      transform=None) -> np.ndarray:
    """(N, E) posterior after each observation; `focus < 0` marginalises focus per player over `FOCUS_GRID`:
    log P(obs_1..i | e) = log mean_f exp(sum_i log P(obs_i | e, f)). `transform(f, ll)` may mask evidence."""
    from scipy.special import logsumexp

    from riskcore.recognition.posterior import grouped_cumsum, normalise

    def loglik(x: float) -> np.ndarray:
        ll = inverse_loglik(f, c, beta, x, eps)
        return transform(f, ll) if transform else ll

    grid = FOCUS_GRID if focus < 0 else (focus,)
    cum = logsumexp(np.stack([grouped_cumsum(loglik(x), starts) for x in grid]), axis=0) - np.log(len(grid))
    return normalise(np.log(f.hyp.prior)[None, :] + cum)
