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
        return "" if np.isnan(r.value) else f"{r.value:{spec}} [{r.ci_low:{spec}}, {r.ci_high:{spec}}]"

    def diff(self, b: str, family: str, metric: str, point: float = 1.0, n_players: int | None = None
             ) -> pd.Series:
        p = self.paired
        d = p[(p.b == b) & (p.family == family) & (p.metric == metric) & np.isclose(p.point, point)
              & (p.n_players.isna() if n_players is None else (p.n_players == n_players))]
        return d.iloc[0] if len(d) else pd.Series({"difference": np.nan, "ci_low": np.nan, "ci_high": np.nan,
                                                   "games": 0})

    def diff_cell(self, b: str, family: str, metric: str, point: float = 1.0, n_players: int | None = None) -> str:
        r = self.diff(b, family, metric, point, n_players)
        return "" if np.isnan(r.difference) else f"{r.difference:+.3f} [{r.ci_low:+.3f}, {r.ci_high:+.3f}]"

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
                         "count": f"{self.value(YARDSTICK_NAME, f, 'top1', point):.3f}",
                         "reference (card / reading)": f"{self.value(REFERENCE_NAME, f, 'top1', point):.3f} / "
                                                       f"{self.value(REFERENCE_NAME, f, 'top1_explanation', point):.3f}",
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
        return f"{d.difference:+.3f} [{d.ci_low:+.3f}, {d.ci_high:+.3f}] {direction(d.ci_low, d.ci_high)}"

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
                pick = lambda name, metric: p[(p.family == f) & (p.n_players == n) & (p.recogniser == name)  # noqa
                                              & (p.metric == metric)].iloc[0]
                r = pick(NAMED, "top1")
                rows.append({"family": self.label[f], "players": int(n), "games": int(r.games),
                             "riskcore": f"{r.value:.3f} [{r.ci_low:.3f}, {r.ci_high:.3f}]",
                             "count": f"{pick(YARDSTICK_NAME, 'top1').value:.3f}",
                             "reference's reading": f"{pick(REFERENCE_NAME, 'top1_explanation').value:.3f}",
                             "riskcore - count": self._verdict_cell(YARDSTICK_NAME, f, "top1", 1.0, n),
                             "riskcore - reference's reading": self._verdict_cell(REFERENCE_NAME, f,
                                                                                  "top1_vs_reading", 1.0, n)})
        return pd.DataFrame(rows).set_index("family")

    def in_model(self, point: float = 1.0) -> pd.DataFrame:
        lean = self.lean.set_index(["family", "kind"]).value
        rows = []
        for f in self.riskcore:
            rows.append({"family": self.label[f], "follows its mission": "yes" if self.follows[f] else "no",
                         "mission lean (" + " / ".join(LEAN_NAMES[k] for k in LEAN_KINDS) + ")":
                             " / ".join(f"{lean.get((f, k), np.nan):+.2f}" for k in LEAN_KINDS),
                         "gain over uniform": self.cell(NAMED, f, "gain", point, "+.3f"),
                         "top-1": self.cell(NAMED, f, "top1", point),
                         "count": f"{self.value(YARDSTICK_NAME, f, 'top1', point):.3f}",
                         "reference": f"{self.value(REFERENCE_NAME, f, 'top1', point):.3f}",
                         "riskcore - count": self._verdict_cell(YARDSTICK_NAME, f, "top1", point)})
        return pd.DataFrame(rows).set_index("family")

    def candidates(self, metric: str = "top1", point: float = 1.0) -> pd.DataFrame:
        """Every recogniser scored (rows) on every family (columns), values only (intervals in the metrics)."""
        d = self.m[(self.m.metric == metric) & np.isclose(self.m.point.fillna(-1), point)
                   & (self.m.recogniser != NAMED)]
        if metric in ("log_loss", "gain"):  # the count is a guess, not a distribution
            d = d[d.recogniser != YARDSTICK_NAME]
        order = list(dict.fromkeys(d.recogniser))
        t = d.pivot(index="recogniser", columns="family", values="value").reindex(order)[
            [f for f in self.families if f in set(d.family)]]
        return t.round(3)

    def curve(self) -> pd.DataFrame:
        c = pd.DataFrame(self.protocol["learning_curve"])
        if c.empty:
            return c
        c["model"] = c.model.map(RECOGNISER_NAMES)
        t = c.pivot_table(index=["family", "model"], columns="games", values=["gain", "top1_at_100"]).round(3)
        names = {"gain": "gain", "top1_at_100": "top-1 at 100%"}
        t.columns = [f"{names[m]}, {g:,} games" for m, g in t.columns]
        return t.reset_index().set_index("family")

    def curve_sizes(self) -> str:
        games = sorted({r["games"] for r in self.protocol["learning_curve"]})
        names = [f"{g:,}" for g in games]
        return " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names) or "no"

    def ece(self) -> pd.DataFrame:
        return self.m[self.m.metric == "ece"].pivot(index="recogniser", columns="family", values="value").round(3)

    def lean_table(self) -> pd.DataFrame:
        cells = self.lean.assign(cell=[f"{r.value:+.3f} [{r.ci_low:+.3f}, {r.ci_high:+.3f}]"
                                       for r in self.lean.itertuples()])
        t = cells.pivot(index="family", columns="kind", values="cell").reindex(self.families)
        return t[list(LEAN_KINDS)].rename(columns=LEAN_NAMES).rename(index=self.label)

    # ---- sentences ------------------------------------------------------------------------------------------
    def targets(self) -> list[str]:
        """The aims, each met when the 95% interval's lower bound clears it."""
        out = []
        for f in TARGET_FAMILIES:
            if f not in self.foreign:
                continue
            for b, metric, what in ((YARDSTICK_NAME, "top1", "above the placement count"),
                                    (REFERENCE_NAME, "top1_vs_reading", "above the reference's published reading")):
                d = self.diff(b, f, metric)
                out.append(f"- {self.label[f]}, top-1 at 100% {what}: {d.difference:+.3f} "
                           f"[{d.ci_low:+.3f}, {d.ci_high:+.3f}]: " + _answer(d))
        for f in self.following(True) + self.following(False):
            r = self.row(NAMED, f, "gain")
            out.append(f"- {self.label[f]}, gain over uniform at 100% above 0: {r.value:+.3f} "
                       f"[{r.ci_low:+.3f}, {r.ci_high:+.3f}]: "
                       + ("met." if r.ci_low > 0 else "not met (below 0)." if r.ci_high < 0
                          else undecided(int(r.games), r.ci_low, r.ci_high) + "."))
        return out

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

    def losses(self) -> list[str]:
        """Where riskcore's recogniser is decided worse than the count or the reference, at any checkpoint, and
        where its gain over uniform is decided below 0."""
        out = []
        p = self.paired[self.paired.n_players.isna()]
        worse = p[((p.metric.isin(["top1", "top1_vs_reading", "gain"])) & (p.ci_high < 0))
                  | ((p.metric == "log_loss") & (p.ci_low > 0))]
        for r in worse.itertuples():
            out.append(f"- {self.label[r.family]}, {r.point:.0%} of the game: {COMPARISONS[r.metric]} "
                       f"{r.difference:+.3f} [{r.ci_low:+.3f}, {r.ci_high:+.3f}] against {r.b}.")
        g = self.m[(self.m.recogniser == NAMED) & (self.m.metric == "gain") & (self.m.ci_high < 0)]
        for r in g.itertuples():
            out.append(f"- {self.label[r.family]}, {r.point:.0%} of the game: gain over uniform {r.value:+.3f} "
                       f"[{r.ci_low:+.3f}, {r.ci_high:+.3f}] (worse than knowing nothing).")
        return out or ["- none decided."]


def _answer(d: pd.Series) -> str:
    if np.isnan(d.difference):
        return "not measured."
    if d.ci_low > 0:
        return "met."
    if d.ci_high < 0:
        return "not met (decided lower)."
    return "not met: " + undecided(int(d.games), d.ci_low, d.ci_high) + "."


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
        f"Named on simulated play alone, before any other program's play was scored: {p['games']:,} games of the "
        f"training population ({p['rows']:,} scored player-checkpoints; by lineage of decision code: {lineages}). "
        "Each lineage is held out in turn; the candidates are compared on the held-out lineages that none of them "
        "shares code with (the mixture's model of play is the heuristic agents' code, and the stacked model weighs "
        "the mixture), by mean log loss over games, with the named candidate's paired difference to each other "
        f"one. The choice is **{RECOGNISER_NAMES[p['named']]}**. As applied to play it has not seen (every "
        f"riskcore family trains): `{t.spec}`.", "",
        md(t.naming()), "",
        "Every candidate on every held-out lineage (mean held-out log loss; in-model folds marked):", "",
        md(t.folds()), "",
        "## Gain over uniform (nats)", "",
        "Above 0: better than knowing nothing. Other programs' play (development sets):", "",
        md(t.gain(t.foreign)), "",
        "riskcore's families (in-model):", "",
        md(t.gain(t.riskcore)), "",
        "## Against the count and the reference, on other programs' play", "",
        "Top-1 at 100% of the game. riskcore's recogniser at the card level; the count guesses the card whose "
        "continents got most of the player's placements; the reference is its own recogniser "
        "(`phatt:scheme=khan2013`, equal to its output), at the card level and at its published reading (the most "
        "probable explanation's card, ties split).", "",
        md(t.against()), "",
        md(t.log_loss()), "",
        "Aims, each met when the 95% interval's lower bound clears it:", ""] + t.targets() + [
        "", "## By number of players, at 100% of the game", "",
        md(t.by_players(t.foreign)), "",
        "## riskcore's own families (in-model), at 100% of the game", "",
        "Mission lean: the share of a player's actions of a kind that land in its own card's named continents, "
        "less the mean of that share over the other five cards' (a property of the play that no recogniser's "
        "model enters; play that ignores the mission leans 0).", "",
        md(t.in_model()), "",
        "## Learning curve", "",
        f"The learned models fitted on the first {t.curve_sizes()} games of the training population (10^3 and "
        "every tenfold step up to its size), scored on the development families (gain over uniform, checkpoints "
        "pooled; top-1 at 100%):", "",
        md(t.curve()), "",
        "## Where riskcore's recogniser loses", "",
        "Every comparison decided against it, at any checkpoint:", ""] + t.losses() + [
        "", "## Every candidate, the count and the reference at 100% of the game", "",
        "Top-1 (card level):", "", md(t.candidates("top1")), "",
        "Gain over uniform:", "", md(t.candidates("gain")), "",
        "Calibration (expected calibration error, checkpoints pooled):", "", md(t.ece()), "",
        "## Mission lean", "", md(t.lean_table()), ""]
    path = Path(out or paths.reports_dir()) / "generalisation.md"
    write_text(path, "\n".join(lines) + "\n")
    return path


__all__ = ["Tables", "write_report", "riskcore_recogniser"]
