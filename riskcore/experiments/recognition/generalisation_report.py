"""`reports/generalisation.md` and the tables the notebooks and the report read from the generalisation tables
and the training protocol (`models/recogniser-protocol.json`).

Every number comes from the tables `riskcore.experiments.recognition.generalisation` stores and the protocol file
`training` writes; nothing here computes a result.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from riskcore import paths
from riskcore.db import query
from riskcore.experiments.recognition.protocol import (KEY, NAMED, RECOGNISER_NAMES, REFERENCE, UNIFORM_LOSS,
                                                       YARDSTICK, slow_games)
from riskcore.experiments.recognition import population as pop
from riskcore.experiments.recognition.training import load_protocol
from riskcore.recognition.mission_lean import LEAN_KINDS
from riskcore.recognition.recognisers import Recogniser
from riskcore.storage import write_text
from riskcore.verdicts import direction, undecided

REFERENCE_NAME = RECOGNISER_NAMES[REFERENCE]
YARDSTICK_NAME = RECOGNISER_NAMES[YARDSTICK]
LEAN_NAMES = {"place": "setup placements", "reinforce": "reinforcements", "attack_won": "conquests"}
POINTS = (0.1, 0.3, 0.5, 0.7, 1.0)
COMPARISONS = {"top1": "top-1, card level", "top1_vs_reading": "top-1, against the reference's reading",
               "top1_explanation": "top-1, both at the reference's reading", "log_loss": "log loss",
               "gain": "gain over uniform"}
TARGET_FAMILIES = ("fork-ai w100", "fork-ai w4")


class Tables:
    """The generalisation tables of one data directory and the training protocol, with look-ups by family,
    recogniser, metric and point."""

    def __init__(self, data_dir: Path | None = None, models: Path | None = None):
        self.data_dir = data_dir
        read = lambda name: query(f"SELECT * FROM {name} WHERE run = ?", [KEY], data_dir)  # noqa: E731
        self.m, self.paired, self.players = read("generalisation_metrics"), read("generalisation_paired"), \
            read("generalisation_players")
        self.lean, self.runs, self.cal = read("generalisation_lean"), read("generalisation_runs"), \
            read("generalisation_calibration")
        self.spec = read("riskcore_recogniser").spec.iloc[0]
        self.protocol = load_protocol(models)
        self.families = list(self.runs.family)
        self.foreign = list(self.runs.family[self.runs.foreign])
        self.riskcore = [f for f in self.families if f not in self.foreign]
        self.label = dict(zip(self.runs.family, self.runs.label))
        self.follows = dict(zip(self.runs.family, self.runs.follows_mission))

    # ---- look-ups -------------------------------------------------------------------------------------------
    def row(self, recogniser: str, family: str, metric: str, point: float = 1.0) -> pd.Series:
        d = self.m[(self.m.recogniser == recogniser) & (self.m.family == family) & (self.m.metric == metric)
                   & np.isclose(self.m.point.fillna(-1), point)]
        return d.iloc[0] if len(d) else pd.Series({"value": np.nan, "ci_low": np.nan, "ci_high": np.nan,
                                                   "games": 0})

    def value(self, recogniser: str, family: str, metric: str, point: float = 1.0) -> float:
        return float(self.row(recogniser, family, metric, point).value)

    def cell(self, recogniser: str, family: str, metric: str, point: float = 1.0, spec: str = ".3f") -> str:
        r = self.row(recogniser, family, metric, point)
        return "" if np.isnan(r.value) else _interval(r.value, r.ci_low, r.ci_high, spec)

    def diff(self, b: str, family: str, metric: str, point: float = 1.0, n_players: int | None = None
             ) -> pd.Series:
        p = self.paired
        d = p[(p.b == b) & (p.family == family) & (p.metric == metric) & np.isclose(p.point, point)
              & (p.n_players.isna() if n_players is None else (p.n_players == n_players))]
        return d.iloc[0] if len(d) else pd.Series({"difference": np.nan, "ci_low": np.nan, "ci_high": np.nan,
                                                   "games": 0})

    def diff_cell(self, b: str, family: str, metric: str, point: float = 1.0, n_players: int | None = None) -> str:
        r = self.diff(b, family, metric, point, n_players)
        return "" if np.isnan(r.difference) else _interval(r.difference, r.ci_low, r.ci_high)

    def games(self, family: str) -> int:
        return int(self.row(NAMED, family, "top1").games)

    @property
    def named_candidate(self) -> str:
        return self.protocol["named"]

    @property
    def named_label(self) -> str:
        return Recogniser.from_spec(self.spec).label

    def following(self, foreign: bool) -> list[str]:
        return [f for f in (self.foreign if foreign else self.riskcore) if self.follows[f]]

    # ---- tables ---------------------------------------------------------------------------------------------
    def naming(self) -> pd.DataFrame:
        """The naming protocol's choice: held-out log loss of each candidate on the naming folds, and the named
        candidate's paired difference to it."""
        rows = []
        for r in self.protocol["choice"]:
            rows.append({"candidate": RECOGNISER_NAMES[r["candidate"]] + (" (named)" if r["named"] else ""),
                         "gain over uniform": f"{r['gain']:+.3f}", "log loss": f"{r['log_loss']:.3f}",
                         "top-1": f"{r['top1']:.3f}",
                         "named less this (log loss)": "" if r["named"] else
                         f"{r['named_minus_this']:+.3f} [{r['ci_low']:+.3f}, {r['ci_high']:+.3f}]",
                         "games": r["games"]})
        return pd.DataFrame(rows).set_index("candidate")

    def folds(self) -> pd.DataFrame:
        """Every candidate on every held-out lineage, in-model folds marked."""
        f = pd.DataFrame(self.protocol["folds"])
        f["candidate"] = f.candidate.map(RECOGNISER_NAMES)
        f["cell"] = [f"{v:.3f}" + (" (in-model)" if m else "") for v, m in zip(f.log_loss_mean, f.in_model)]
        return f.pivot(index="candidate", columns="held_out", values="cell").rename_axis(columns=None)

    def population_sentence(self) -> str:
        """What the training population holds, from the population's declared pools."""
        def values(prefix: str) -> list[float]:
            return [float(a.split("=")[1]) for a in pop.HEURISTIC_FOLLOWING if a.startswith(prefix)]

        focus, weight = values("mission:focus="), values("domination:mission_weight=")
        return (f"{self.protocol['games']:,} simulated games ({min(pop.PLAYERS)} to {max(pop.PLAYERS)} players; "
                f"{' and '.join(pop.CARDS)} card values; the "
                f"{_and([f'{m}-' for m in pop.MAPS[:-1]] + [str(pop.MAPS[-1])])}-border maps): "
                f"mission-following seats of the `mission` agent (focus {min(focus):g} to {max(focus):g}) and of the "
                f"`domination` agent valuing its mission's continents {min(weight):g} to {max(weight):g} times (as "
                "Domination's own AI does: 4 upstream, 100 in the reference study's first runs), the random agent "
                f"tilted towards its mission in {pop.RANDOM_SHARE:.0%} of the games, and {pop.BLIND_SHARE:.0%} of "
                "seats mission-blind")

    def naming_basis(self) -> str:
        """On which held-out play the choice was made, in games and in rows."""
        p = self.protocol
        folds = p["choice"][0]["folds"]
        rows = sum(v for k, v in p["lineages"].items() if k in folds.split(", "))
        return (f"Only the {folds} lineage shares decision code with no candidate (the mixture's model of play is "
                "the heuristic agents' code, and the stacked model weighs the mixture), so the choice rests on that "
                f"lineage alone: {p['choice'][0]['games']:,} games, {rows:,} of the {p['rows']:,} player-checkpoints "
                "(the table's `games` counts games; each game weighs the same)")

    def other_candidates_sentence(self) -> str:
        """The candidates not named against the named one on other programs' play: gain over uniform at 100%,
        paired over games on the same players."""
        out = []
        for key in self.protocol["candidates"]:
            if key == self.named_candidate:
                continue
            name = RECOGNISER_NAMES[key]
            cells = [(f, self.diff(name, f, "gain")) for f in self.foreign]
            cells = [(f, d) for f, d in cells if not np.isnan(d.difference)]
            if cells:
                words = [direction(-d.ci_high, -d.ci_low) for _, d in cells]
                out.append(f"the {name} candidate less the named one: "
                           + "; ".join(f"{self.label[f]} {_interval(-d.difference, -d.ci_high, -d.ci_low)}"
                                       for f, d in cells)
                           + f" (higher on {words.count('higher')}, lower on {words.count('lower')}, not decided on "
                           f"{words.count('not decided')} of {len(words)})")
        if not out:
            return ""
        return ("Gain over uniform at 100% on other programs' play, paired over games on the same players: "
                + "; ".join(out) + ". The naming stands as declared; these differences are reported, not acted on.")

    def gain(self, families: list[str]) -> pd.DataFrame:
        rows = {self.label[f]: {f"{p:.0%}": self.cell(NAMED, f, "gain", p, "+.3f") for p in POINTS}
                for f in families}
        return pd.DataFrame(rows).T.rename_axis("family")

    def against(self, point: float = 1.0) -> pd.DataFrame:
        """Other programs' play: riskcore's recogniser, the count and the reference on the same players."""
        rows = []
        for f in self.foreign:
            rows.append({"family": self.label[f], "games": self.games(f),
                         "riskcore": self.cell(NAMED, f, "top1", point),
                         "count": self.cell(YARDSTICK_NAME, f, "top1", point),
                         "reference, card": self.cell(REFERENCE_NAME, f, "top1", point),
                         "reference's reading": self.cell(REFERENCE_NAME, f, "top1_explanation", point),
                         "riskcore - count": self._verdict_cell(YARDSTICK_NAME, f, "top1", point),
                         "riskcore - reference, card": self._verdict_cell(REFERENCE_NAME, f, "top1", point),
                         "riskcore - reference's reading": self._verdict_cell(REFERENCE_NAME, f, "top1_vs_reading",
                                                                              point)})
        return pd.DataFrame(rows).set_index("family")

    def _verdict_cell(self, b: str, family: str, metric: str, point: float = 1.0,
                      n_players: int | None = None) -> str:
        d = self.diff(b, family, metric, point, n_players)
        if np.isnan(d.difference):
            return ""
        return f"{_interval(d.difference, d.ci_low, d.ci_high)} {direction(d.ci_low, d.ci_high)}"

    def log_loss(self, point: float = 1.0) -> pd.DataFrame:
        rows = [{"family": self.label[f], "riskcore": self.cell(NAMED, f, "log_loss", point),
                 "reference": self.cell(REFERENCE_NAME, f, "log_loss", point),
                 "riskcore - reference": self._verdict_cell(REFERENCE_NAME, f, "log_loss", point)}
                for f in self.foreign]
        return pd.DataFrame(rows).set_index("family")

    def by_players(self, families: list[str]) -> pd.DataFrame:
        rows = []
        p = self.players
        for f in families:
            for n in sorted(p[p.family == f].n_players.unique()):
                def pick(name: str, metric: str) -> str:
                    d = p[(p.family == f) & (p.n_players == n) & (p.recogniser == name) & (p.metric == metric)]
                    if d.empty:
                        return ""
                    r = d.iloc[0]
                    return _interval(r.value, r.ci_low, r.ci_high, "+.3f" if metric == "gain" else ".3f")

                games = p[(p.family == f) & (p.n_players == n) & (p.recogniser == NAMED) & (p.metric == "top1")]
                rows.append({"family": self.label[f], "players": int(n), "games": int(games.games.iloc[0]),
                             "gain over uniform": pick(NAMED, "gain"), "riskcore": pick(NAMED, "top1"),
                             "count": pick(YARDSTICK_NAME, "top1"),
                             "reference's reading": pick(REFERENCE_NAME, "top1_explanation"),
                             "riskcore - count": self._verdict_cell(YARDSTICK_NAME, f, "top1", 1.0, n),
                             "riskcore - reference's reading": self._verdict_cell(REFERENCE_NAME, f,
                                                                                  "top1_vs_reading", 1.0, n)})
        return pd.DataFrame(rows).set_index("family")

    def players_comparisons(self, families: list[str]) -> tuple[int, int]:
        """(paired comparisons the by-players table shows, gains against 0 it shows), for the multiplicity
        caveat."""
        p = self.paired[self.paired.family.isin(families) & self.paired.n_players.notna()]
        shown = ((p.b == YARDSTICK_NAME) & (p.metric == "top1")) | ((p.b == REFERENCE_NAME)
                                                                   & (p.metric == "top1_vs_reading"))
        g = self.players[self.players.family.isin(families) & (self.players.recogniser == NAMED)
                         & (self.players.metric == "gain")]
        return int(shown.sum()), len(g)

    def in_model(self, point: float = 1.0) -> pd.DataFrame:
        lean = self.lean.set_index(["family", "kind"]).value
        rows = []
        for f in self.riskcore:
            rows.append({"family": self.label[f], "gain over uniform": self.cell(NAMED, f, "gain", point, "+.3f"),
                         "top-1": self.cell(NAMED, f, "top1", point),
                         "count": self.cell(YARDSTICK_NAME, f, "top1", point),
                         "reference, card": self.cell(REFERENCE_NAME, f, "top1", point),
                         "riskcore - count": self._verdict_cell(YARDSTICK_NAME, f, "top1", point),
                         "follows its mission": "yes" if self.follows[f] else "no",
                         "mission lean (" + " / ".join(LEAN_NAMES[k] for k in LEAN_KINDS) + ")":
                             " / ".join(f"{lean.get((f, k), np.nan):+.2f}" for k in LEAN_KINDS)})
        return pd.DataFrame(rows).set_index("family")

    def reference_better(self, families: list[str]) -> str:
        """Where the reference's recogniser is decided better than riskcore's at 100% (gain over uniform, or top-1
        against its published reading)."""
        worse = []
        for f in families:
            for metric, what in (("gain", "gain over uniform"), ("top1_vs_reading", "top-1 against its reading")):
                d = self.diff(REFERENCE_NAME, f, metric)
                if d.ci_high < 0:
                    worse.append(f"{self.label[f]}, {what}: {_interval(d.difference, d.ci_low, d.ci_high)}")
        if not worse:
            return "The reference's recogniser is decided better than riskcore's at 100% on none of these families."
        return ("The reference's recogniser is decided better than riskcore's at 100% (riskcore less the reference) "
                "on " + "; ".join(worse) + "; on no other of these families.")

    def candidates(self, metric: str = "top1", point: float = 1.0, families: list[str] | None = None
                   ) -> pd.DataFrame:
        """Every recogniser scored (rows) on every family of `families` (columns, default all), values only
        (the intervals are in the `generalisation_metrics` table)."""
        families = self.families if families is None else families
        d = self.m[(self.m.metric == metric) & np.isclose(self.m.point.fillna(-1), point)
                   & (self.m.recogniser != NAMED) & self.m.family.isin(families)]
        if metric in ("log_loss", "gain"):  # the count is a guess, not a distribution
            d = d[d.recogniser != YARDSTICK_NAME]
        order = list(dict.fromkeys(d.recogniser))
        t = d.pivot(index="recogniser", columns="family", values="value").reindex(order)[
            [f for f in families if f in set(d.family)]]
        return t.round(3).rename(columns=self.label).rename_axis(columns=None)

    def curve(self, metric: str = "gain") -> pd.DataFrame:
        """The learning curve of `metric` (gain, log_loss or top1_at_100) with its intervals, one column per
        training size; for the gain also the largest size less the smallest, paired over the same games."""
        c = pd.DataFrame(self.protocol["learning_curve"])
        if c.empty:
            return c
        low, high = ("top1_ci_low", "top1_ci_high") if metric == "top1_at_100" else (f"{metric}_ci_low",
                                                                                        f"{metric}_ci_high")
        spec = "+.3f" if metric == "gain" else ".3f"
        c["model"] = c.model.map(RECOGNISER_NAMES)
        c["family"] = c.family.map(lambda f: self.label.get(f, f))
        c["cell"] = [_interval(v, lo, hi, spec) for v, lo, hi in zip(c[metric], c[low], c[high])]
        t = c.pivot(index=["family", "model"], columns="games", values="cell")
        t.columns = [f"{g:,} games" for g in t.columns]
        if metric == "gain" and c.games.nunique() > 1:
            last = c[c.games == c.games.max()].set_index(["family", "model"])
            t[f"{c.games.max():,} less {c.games.min():,} (paired)"] = [
                f"{_interval(d, lo, hi)} {direction(lo, hi)}"
                for d, lo, hi in last.reindex(t.index)[["gain_less_smallest", "gain_less_smallest_ci_low",
                                                        "gain_less_smallest_ci_high"]].itertuples(index=False)]
        return t.reset_index().set_index("family")

    def curve_reading(self) -> str:
        """What the learning curve says: does more training play of the same population raise the gain on the
        development families?"""
        c = pd.DataFrame(self.protocol["learning_curve"])
        if c.empty or c.games.nunique() < 2:
            return "One training size only: no learning curve."
        last = c[c.games == c.games.max()]
        words = [direction(lo, hi) for lo, hi in zip(last.gain_less_smallest_ci_low, last.gain_less_smallest_ci_high)]
        small, large = f"{c.games.min():,}", f"{c.games.max():,}"
        text = (f"Between the {small}- and the {large}-game fits the gain over uniform (checkpoints pooled) moves by "
                f"at most {last.gain_less_smallest.abs().max():.3f} nats (paired over the same games: decided higher "
                f"on {words.count('higher')}, lower on {words.count('lower')} and not decided on "
                f"{words.count('not decided')} of {len(words)} (family, model) pairs).")
        below = last[last.gain < 0]
        if len(below):
            rise, shortfall = below.gain_less_smallest.max(), -below.gain.max()
            text += (f" Where the gain stays below 0 ({len(below)} pairs, from {-below.gain.max():.3f} to "
                     f"{-below.gain.min():.3f} nats short of uniform), the largest rise is {rise:+.3f} nats")
            if rise < shortfall / 5:
                text += (": a hundredfold more play from the same population changes it by a small part of the "
                         "shortfall, so the shortfall does not come from too few training games of this population. "
                         "Its source lies elsewhere (how those families' play differs from that population's, or what "
                         "the model's features can express); this curve does not separate the two.")
            else:
                text += "."
        return text

    def curve_sizes(self) -> str:
        games = sorted({r["games"] for r in self.protocol["learning_curve"]})
        return _and([f"{g:,}" for g in games]) if games else "no"

    def ece(self, families: list[str] | None = None) -> pd.DataFrame:
        """Expected calibration error of every recogniser (riskcore's is its named candidate's row)."""
        families = self.families if families is None else families
        d = self.m[(self.m.metric == "ece") & (self.m.recogniser != NAMED) & self.m.family.isin(families)]
        t = d.pivot(index="recogniser", columns="family", values="value")[[f for f in families if f in set(d.family)]]
        return t.round(3).rename(columns=self.label).rename_axis(columns=None)

    def lean_table(self, families: list[str] | None = None) -> pd.DataFrame:
        families = self.families if families is None else families
        cells = self.lean.assign(cell=[_interval(r.value, r.ci_low, r.ci_high)
                                       for r in self.lean.itertuples()])
        t = cells.pivot(index="family", columns="kind", values="cell").reindex(families)
        return t[list(LEAN_KINDS)].rename(columns=LEAN_NAMES).rename(index=self.label)

    # ---- sentences ------------------------------------------------------------------------------------------
    def target_rows(self) -> list[dict]:
        """The targets (each above 0, met when the 95% interval's lower bound clears it): other programs' play
        first, then riskcore's families (in-model)."""
        out = []
        for f in TARGET_FAMILIES:
            if f not in self.foreign:
                continue
            for b, metric, short in ((YARDSTICK_NAME, "top1", "riskcore - count"),
                                     (REFERENCE_NAME, "top1_vs_reading", "riskcore - the reference's published "
                                                                         "reading")):
                d = self.diff(b, f, metric)
                out.append({"family": f, "foreign": True, "short": short, "what": f"{short}, top-1 at 100%",
                            "value": d.difference, "low": d.ci_low, "high": d.ci_high, "games": int(d.games)})
        for foreign in (True, False):
            for f in self.following(foreign):
                r = self.row(NAMED, f, "gain")
                out.append({"family": f, "foreign": foreign, "short": "gain over uniform",
                            "what": "gain over uniform at 100%", "value": r.value, "low": r.ci_low,
                            "high": r.ci_high, "games": int(r.games)})
        for r in out:
            r["met"] = bool(r["low"] > 0)
        return out

    def target_lists(self) -> tuple[list[str], list[str], list[str]]:
        """(missed, met, families where the gain is no target), as the report lists them."""
        missed, met = [], []
        for r in self.target_rows():
            where = "development set" if r["foreign"] else "in-model"
            (met if r["met"] else missed).append(
                f"- {self.label[r['family']]} ({where}), {r['what']} above 0: "
                f"{_interval(r['value'], r['low'], r['high'])}, lower bound {r['low']:+.3f}: "
                + _answer(r["value"], r["low"], r["high"], r["games"]))
        exempt = [self.label[f] for f in self.foreign + self.riskcore if not self.follows[f]]
        return missed, met, exempt

    def targets(self) -> list[str]:
        """The targets as the report lists them: missed first, then met, then where the gain is no target."""
        missed, met, exempt = self.target_lists()
        return ([f"Missed ({len(missed)} of {len(missed) + len(met)}):", ""] + (missed or ["- none."])
                + ["", f"Met ({len(met)}):", ""] + (met or ["- none."])
                + ["", "Gain above 0 is no target on the families declared not to follow their missions before "
                   "they were scored: " + ", ".join(exempt) + "." + self._exempt_foreign()])

    def _exempt_foreign(self) -> str:
        """What the exempt families of other programs' play measure: their mission lean and gain at 100%."""
        lean = self.lean.set_index(["family", "kind"])
        out = []
        for f in self.foreign:
            if self.follows[f]:
                continue
            leans = ", ".join(f"{LEAN_NAMES[k]} {_interval(*lean.loc[(f, k)][['value', 'ci_low', 'ci_high']])}"
                              for k in LEAN_KINDS if (f, k) in lean.index)
            out.append(f" The {self.label[f]} still leans towards its missions a little ({leans}); its gain at 100% "
                       f"is {self.cell(NAMED, f, 'gain', 1.0, '+.3f')}.")
        return "".join(out)

    def meaning(self) -> str:
        """What the comparisons at 100% of the game say, tallied from their verdicts over other programs' play."""
        def tally(b: str, metric: str) -> str:
            words = [direction(d.ci_low, d.ci_high) for d in (self.diff(b, f, metric) for f in self.foreign)
                     if not np.isnan(d.difference)]
            return (f"decided higher on {words.count('higher')}, decided lower on {words.count('lower')} and not "
                    f"decided on {words.count('not decided')} of {len(words)}")

        gains = [self.row(NAMED, f, "gain") for f in self.foreign]
        below = sum(r.ci_high < 0 for r in gains)
        return (f"Against the placement count, riskcore's recogniser is {tally(YARDSTICK_NAME, 'top1')} families of "
                f"other programs' play; against the reference's published reading it is "
                f"{tally(REFERENCE_NAME, 'top1_vs_reading')}. Its gain over uniform is decided below 0 on {below} of "
                f"{len(gains)}. A claim that riskcore reads missions better than these baselines holds only where "
                "it is decided higher; elsewhere the evidence does not separate them, or goes against it.")

    def losses(self, families: list[str]) -> list[str]:
        """Where riskcore's recogniser is decided worse than the count or the reference on `families`, at any
        checkpoint, and where its gain over uniform is decided below 0 (a gain difference is the log loss one with
        its sign turned, so only the log loss is listed)."""
        out = []
        p = self.paired[self.paired.n_players.isna() & self.paired.family.isin(families)]
        worse = p[((p.metric.isin(["top1", "top1_vs_reading"])) & (p.ci_high < 0))
                  | ((p.metric == "log_loss") & (p.ci_low > 0))]
        for r in worse.itertuples():
            out.append(f"- {self.label[r.family]}, {r.point:.0%} of the game: {COMPARISONS[r.metric]} "
                       f"{_interval(r.difference, r.ci_low, r.ci_high)} against {r.b}.")
        g = self.m[(self.m.recogniser == NAMED) & (self.m.metric == "gain") & (self.m.ci_high < 0)
                   & self.m.family.isin(families)]
        for r in g.itertuples():
            out.append(f"- {self.label[r.family]}, {r.point:.0%} of the game: gain over uniform "
                       f"{_interval(r.value, r.ci_low, r.ci_high)} (worse than knowing nothing).")
        return out or ["- none decided."]


def _interval(value: float, low: float, high: float, spec: str = "+.3f") -> str:
    """A value with its 95% interval, as every table and sentence of the report writes it."""
    return f"{value:{spec}} [{low:{spec}}, {high:{spec}}]"


def _and(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _answer(value: float, low: float, high: float, games: int) -> str:
    """A target above 0: met when the lower bound clears it; a projection of the size that would decide it only
    where the point estimate clears it (elsewhere more games would not be expected to meet it)."""
    if np.isnan(value):
        return "not measured."
    if low > 0:
        return "met."
    if high < 0:
        return "not met (decided below)."
    if value > 0:
        return "not met: " + undecided(games, low, high) + "."
    return f"not met: not decided at {games:,} games, and the point estimate does not clear it."


def riskcore_recogniser(data_dir: Path | None = None) -> Recogniser:
    """riskcore's recogniser for play it has not seen, as the training protocol named it (read from the
    experiment's table, or from the protocol file when the experiment has not run)."""
    try:
        spec = query("SELECT spec FROM riskcore_recogniser WHERE run = ?", [KEY], data_dir).spec
    except Exception:  # the table does not exist yet
        spec = pd.Series(dtype=str)
    if spec.empty:
        return Recogniser.from_spec(load_protocol()["spec"])
    return Recogniser.from_spec(spec.iloc[0])


def span(values: list[float], spec: str = ".2f") -> str:
    return f"{min(values):{spec}} to {max(values):{spec}}" if values else "none"


def verdict(d: pd.Series) -> str:
    """A paired difference's answer: decided better, decided worse, or not decided with the size that would."""
    word = direction(d.ci_low, d.ci_high)
    return word if word != "not decided" else undecided(int(d.games), d.ci_low, d.ci_high)  # resampled: games


def md(table: pd.DataFrame) -> str:
    return table.to_markdown() if len(table) else "none"


def write_report(games: int, data_dir: Path | None = None, out: Path | None = None, models: Path | None = None
                 ) -> Path:
    t = Tables(data_dir, models)
    p = t.protocol
    lineages = ", ".join(f"{k} {v:,}" for k, v in p["lineages"].items())
    n_pairs, n_gains = t.players_comparisons(t.foreign)
    lines = [
        "# Generalisation: riskcore's recogniser on play it was not trained on", "",
        "Card level, 6 continent cards (chance 1/6, uniform log loss ln 6 = "
        f"{UNIFORM_LOSS:.3f}); the reference's game clock (every setup placement and turn end, none for the winning "
        "turn); 95% bootstrap intervals over games; differences paired over games on the same players. Every "
        "family of other programs' play is a development set: each was looked at while recognisers were built. "
        f"riskcore's families play {games} four-player games each ({slow_games(games)} for the search agents) and "
        "run decision code the training population runs, so on them the learned models are scored in-model. "
        "Generated by `riskcore experiment generalisation` and `riskcore train-recogniser`; the method is in "
        "`docs/recognition.md`.", "",
        "## riskcore's recogniser", "",
        f"Named on simulated play alone, by a protocol declared before its candidates were scored on any other "
        f"program's play. The training population: "
        f"{t.population_sentence()}; {p['rows']:,} scored player-checkpoints (by lineage of decision code: "
        f"{lineages}). Each lineage is held out in turn and every candidate fitted on the rest. "
        f"{t.naming_basis()}. The named candidate has the lowest mean held-out log loss there; beside it, its "
        "paired difference to each other candidate. The learned models' features include the count's own guess "
        "and the share of the player's placements in each card's continents, so the count lies inside their "
        "hypothesis space: a model weighing that guess alone guesses as the count does. The choice is "
        f"**{RECOGNISER_NAMES[p['named']]}**. As applied to play it has not seen (every riskcore family trains): "
        f"`{t.spec}`.", "",
        md(t.naming()), "",
        "Every candidate on every held-out lineage (mean held-out log loss over games; in-model folds marked; the "
        "choice reads the lineage no candidate shares code with):", "",
        md(t.folds()), "",
        t.other_candidates_sentence(), "",
        "## Gain over uniform (nats)", "",
        "Above 0: better than knowing nothing. Other programs' play (development sets):", "",
        md(t.gain(t.foreign)), "",
        "riskcore's families (in-model):", "",
        md(t.gain(t.riskcore)), "",
        "## Against the count and the reference, on other programs' play (development sets)", "",
        "Top-1 at 100% of the game. riskcore's recogniser at the card level; the count guesses the card whose "
        "continents got most of the player's placements; the reference is its own recogniser "
        "(`phatt:scheme=khan2013`, equal to its output), at the card level and at its published reading (the most "
        "probable explanation's card, ties split).", "",
        md(t.against()), "",
        f"Log loss at 100% of the game (nats; lower is better; uniform {UNIFORM_LOSS:.3f}), riskcore's recogniser "
        "less the reference's, paired over games (the count is a guess, not a distribution: it has no log loss):",
        "",
        md(t.log_loss()), "",
        t.meaning(), "",
        "## Targets", "",
        "The targets were declared with the question: on the reference's own mission-following AI (fork-ai, mission "
        "weights 100 and 4), where reading the mission should pay most, riskcore above both the placement count and "
        "the reference's published reading; and on every mission-following family, riskcore better than knowing "
        "nothing (gain over uniform above 0). The other families are reported against the same baselines above, "
        "with no target. Each target is met when its 95% interval's lower bound clears it. Where an open target's "
        "point estimate "
        "clears it, the games an interval half-width of 0.03 needs are given; where it does not, more games would "
        "not be expected to meet it.", ""] + t.targets() + [
        "", "## By number of players, at 100% of the game (development sets)", "",
        f"{n_pairs} paired comparisons and {n_gains} gains against 0, each at 95% with no correction for "
        "multiplicity: where there is no difference, about one in twenty is decided by chance alone, so a single "
        "decided row is a lead, not a finding.", "",
        md(t.by_players(t.foreign)), "",
        "## riskcore's own families (in-model), at 100% of the game", "",
        "Mission lean: the share of a player's actions of a kind that land in its own card's named continents, "
        "less the mean of that share over the other five cards' (a property of the play that no recogniser's "
        "model enters; play that ignores the mission leans 0).", "",
        md(t.in_model()), "",
        t.reference_better(t.riskcore), "",
        "## Learning curve", "",
        f"The learned models fitted on the first {t.curve_sizes()} games of the training population (a prefix of "
        "every run), scored on the development families by the training driver with its own bootstrap (95% "
        "intervals over their games; the tables above give the report's intervals for the named model). Gain over "
        "uniform (checkpoints pooled), with the largest size less the smallest paired over the same games:", "",
        md(t.curve("gain")), "",
        "Log loss (checkpoints pooled):", "", md(t.curve("log_loss")), "",
        "Top-1 at 100%:", "", md(t.curve("top1_at_100")), "",
        t.curve_reading(), "",
        "## Where riskcore's recogniser loses", "",
        "Every comparison decided against it, at any checkpoint. Other programs' play (development sets):", ""]
    lines += t.losses(t.foreign) + ["", "riskcore's families (in-model):", ""] + t.losses(t.riskcore)
    for title, group in (("other programs' play (development sets)", t.foreign),
                         ("riskcore's families (in-model)", t.riskcore)):
        lines += ["", f"## Every candidate, the count and the reference at 100% of the game: {title}", "",
                  "Values only (their intervals are in the `generalisation_metrics` table). Top-1 (card level):", "",
                  md(t.candidates("top1", families=group)), "",
                  "Gain over uniform:", "", md(t.candidates("gain", families=group)), "",
                  "Calibration (expected calibration error, checkpoints pooled; riskcore's recogniser is its named "
                  "candidate's row):", "", md(t.ece(group))]
    lines += ["", "## Mission lean", "", "Other programs' play (development sets):", "", md(t.lean_table(t.foreign)),
              "", "riskcore's families (in-model):", "", md(t.lean_table(t.riskcore))]
    path = Path(out or paths.reports_dir()) / "generalisation.md"
    write_text(path, "\n".join(lines) + "\n")
    return path


__all__ = ["Tables", "write_report", "riskcore_recogniser"]
