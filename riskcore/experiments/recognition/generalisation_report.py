"""`reports/generalisation.md` and the tables the notebooks and the report read from the generalisation tables.

Every number comes from the tables `riskcore.experiments.recognition.generalisation` stores; nothing here computes a result.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from riskcore import paths
from riskcore.db import query
from riskcore.experiments.recognition.protocol import (CEILING, KEY, NAMED, RECOGNISER_NAMES, REFERENCE,
                                                          UNIFORM_LOSS, YARDSTICK, slow_games)
from riskcore.recognition.recognisers import Recogniser
from riskcore.recognition.mission_lean import LEAN_KINDS
from riskcore.storage import write_text
from riskcore.verdicts import direction, undecided

REFERENCE_NAME = RECOGNISER_NAMES[REFERENCE]
YARDSTICK_NAME = RECOGNISER_NAMES[YARDSTICK]
WITHOUT = f"{NAMED} without setup and move-ins"
LEAN_NAMES = {"place": "setup placements", "reinforce": "reinforcements", "attack_won": "conquests"}
TARGET_W100 = 0.50  # the aim on the reference's own AI at weight 100: top-1 at 100%, both readings


class Tables:
    """The generalisation tables of one data directory, with look-ups by family, recogniser, metric, point."""

    def __init__(self, data_dir: Path | None = None):
        self.data_dir = data_dir
        read = lambda name: query(f"SELECT * FROM {name} WHERE run = ?", [KEY], data_dir)  # noqa: E731
        self.m, self.paired, self.fits = read("generalisation_metrics"), read("generalisation_paired"), \
            read("generalisation_fits")
        self.named, self.lean, self.runs = read("generalisation_named"), read("generalisation_lean"), \
            read("generalisation_runs")
        self.cal = read("generalisation_calibration")
        self.spec = read("riskcore_recogniser").spec.iloc[0]
        self.grids = read("generalisation_grids")
        self.families = list(self.runs.family)
        self.foreign = list(self.runs.family[self.runs.foreign])
        self.riskcore = [f for f in self.families if f not in self.foreign]
        self.label = dict(zip(self.runs.family, self.runs.label))
        self.named_grid = self.named[self.named.chosen].grid.iloc[0]

    def row(self, recogniser: str, family: str, metric: str, point: float = 1.0) -> pd.Series:
        d = self.m[(self.m.recogniser == recogniser) & (self.m.family == family) & (self.m.metric == metric)
                   & np.isclose(self.m.point.fillna(-1), point)]
        return d.iloc[0] if len(d) else pd.Series({"value": np.nan, "ci_low": np.nan, "ci_high": np.nan})

    def value(self, recogniser: str, family: str, metric: str, point: float = 1.0) -> float:
        return float(self.row(recogniser, family, metric, point).value)

    def cell(self, recogniser: str, family: str, metric: str, point: float = 1.0, spec: str = ".3f") -> str:
        r = self.row(recogniser, family, metric, point)
        return "" if np.isnan(r.value) else f"{r.value:{spec}} [{r.ci_low:{spec}}, {r.ci_high:{spec}}]"

    def diff(self, b: str, family: str, metric: str, point: float = 1.0) -> pd.Series:
        d = self.paired[(self.paired.b == b) & (self.paired.family == family) & (self.paired.metric == metric)
                        & np.isclose(self.paired.point, point)]
        return d.iloc[0] if len(d) else pd.Series({"difference": np.nan, "ci_low": np.nan, "ci_high": np.nan})

    def diff_cell(self, b: str, family: str, metric: str, point: float = 1.0) -> str:
        r = self.diff(b, family, metric, point)
        return "" if np.isnan(r.difference) else f"{r.difference:+.3f} [{r.ci_low:+.3f}, {r.ci_high:+.3f}]"

    def named_setting(self, family: str) -> tuple[str, float]:
        d = self.fits[(self.fits.held_out == family) & (self.fits.grid == f"{NAMED} (full)")].iloc[0]
        return d.setting, float(d.temperature)

    def held(self, family: str) -> bool:
        return bool(self.runs.set_index("family").held_out[family])

    def games(self, family: str) -> int:
        return int(self.row(NAMED, family, "top1").games)

    def riskcore_games(self) -> pd.Series:
        """Games played by each riskcore family's run (the search agents' runs are smaller)."""
        played = query("SELECT run, count(*) AS n FROM games WHERE run IN (SELECT experiment_run FROM "
                       "generalisation_runs WHERE run = ?) GROUP BY run", [KEY], self.data_dir).set_index("run").n
        return played.reindex(self.runs.set_index("family").experiment_run[self.riskcore]).dropna()

    def held_riskcore(self, following: bool) -> list[str]:
        """The held-out riskcore families whose agents follow their missions (or ignore them)."""
        follows = self.runs.set_index("family").follows_mission
        return [f for f in self.riskcore if follows[f] == following and self.held(f)]

    def setup_effect(self) -> tuple[list[str], list[str]]:
        """The families where setup placements and move-ins lower riskcore's recogniser's log loss (decided), and
        those where they raise it."""
        helped = [f for f in self.families if self.diff(WITHOUT, f, "log_loss").ci_high < 0]
        hurt = [f for f in self.families if self.diff(WITHOUT, f, "log_loss").ci_low > 0]
        return helped, hurt

    # ---- tables ---------------------------------------------------------------------------------------------
    def against_reference(self, point: float = 1.0) -> pd.DataFrame:
        """Foreign families: riskcore's recogniser and the reference's on the same players, both readings."""
        rows = []
        for f in self.foreign:
            rows.append({"family": f, "games": self.games(f),
                         "riskcore, card": self.cell(NAMED, f, "top1", point),
                         "riskcore, reading": self.cell(NAMED, f, "top1_explanation", point),
                         "reference, card": self.cell(REFERENCE_NAME, f, "top1", point),
                         "reference, reading": self.cell(REFERENCE_NAME, f, "top1_explanation", point),
                         "difference, card": self.diff_cell(REFERENCE_NAME, f, "top1", point),
                         "difference, reading": self.diff_cell(REFERENCE_NAME, f, "top1_explanation", point),
                         "yardstick": f"{self.value(YARDSTICK_NAME, f, 'top1', point):.3f}"})
        return pd.DataFrame(rows).set_index("family")

    def log_loss_against_reference(self, point: float = 1.0) -> pd.DataFrame:
        rows = [{"family": f, "riskcore": self.cell(NAMED, f, "log_loss", point),
                 "reference": self.cell(REFERENCE_NAME, f, "log_loss", point),
                 "difference": self.diff_cell(REFERENCE_NAME, f, "log_loss", point),
                 "riskcore's gain over uniform (nats)": self.cell(NAMED, f, "gain", point)} for f in self.foreign]
        return pd.DataFrame(rows).set_index("family")

    def standing(self, point: float = 1.0) -> pd.DataFrame:
        """Every family: riskcore's recogniser at `point`, whether it was held out, and how much the play shows."""
        lean = self.lean.set_index(["family", "kind"]).value
        rows = []
        for f in self.families:
            rows.append({"family": self.label[f], "held out": "yes" if self.held(f) else "no (in-house)",
                         "mission lean (" + " / ".join(LEAN_NAMES[k] for k in LEAN_KINDS) + ")":
                             " / ".join(f"{lean.get((f, k), np.nan):+.2f}" for k in LEAN_KINDS),
                         "top-1": self.cell(NAMED, f, "top1", point),
                         "reading": f"{self.value(NAMED, f, 'top1_explanation', point):.3f}",
                         "log loss": self.cell(NAMED, f, "log_loss", point),
                         "yardstick top-1": f"{self.value(YARDSTICK_NAME, f, 'top1', point):.3f}"})
        return pd.DataFrame(rows).set_index("family")

    def gain_by_checkpoint(self, points: tuple[float, ...] = (0.1, 0.3, 0.5, 0.7, 1.0)) -> pd.DataFrame:
        rows = {self.label[f]: {f"{p:.0%}": self.cell(NAMED, f, "gain", p, "+.3f") for p in points}
                for f in self.families}
        return pd.DataFrame(rows).T.rename_axis("family")

    def evidence(self, points: tuple[float, ...] = (0.3, 1.0)) -> pd.DataFrame:
        rows = {}
        for f in self.families:
            rows[self.label[f]] = {**{f"top-1, {p:.0%}": self.diff_cell(WITHOUT, f, "top1", p) for p in points},
                                   **{f"log loss, {p:.0%}": self.diff_cell(WITHOUT, f, "log_loss", p)
                                      for p in points}}
        return pd.DataFrame(rows).T.rename_axis("family")

    def everyone(self, metric: str, point: float = 1.0) -> pd.DataFrame:
        """Every recogniser (rows) on every family (columns): values only; intervals are in the table."""
        d = self.m[(self.m.metric == metric) & np.isclose(self.m.point.fillna(-1), point)]
        order = list(dict.fromkeys(d.recogniser))
        t = d.pivot(index="recogniser", columns="family", values="value").reindex(order)[
            [f for f in self.families if f in set(d.family)]]
        return t.round(3).astype(object).where(t.notna(), "")

    def lean_table(self) -> pd.DataFrame:
        cells = self.lean.assign(cell=[f"{r.value:+.3f} [{r.ci_low:+.3f}, {r.ci_high:+.3f}]"
                                       for r in self.lean.itertuples()])
        t = cells.pivot(index="family", columns="kind", values="cell").reindex(self.families)
        return t[list(LEAN_KINDS)].rename(columns=LEAN_NAMES).rename(index=self.label)

    def named_choice(self) -> pd.DataFrame:
        t = self.named.groupby("grid").log_loss.agg(["mean", "max", "count"])
        t.index = [RECOGNISER_NAMES[g] for g in t.index]
        return t.rename(columns={"mean": "mean log loss", "max": "worst family", "count": "held-out families"}
                        ).round(3).sort_values("mean log loss")

    def targets(self) -> list[str]:
        """The aims on the reference's own AI, each met when the 95% interval clears it."""
        out = []
        w100, w4 = "fork-ai w100", "fork-ai w4"
        if w100 in self.foreign:
            for metric, reading in (("top1", "card level"), ("top1_explanation", "the reference's reading")):
                r = self.row(NAMED, w100, metric)
                met = r.ci_low > TARGET_W100
                out.append(f"- At weight 100, top-1 at 100% at least {TARGET_W100:.2f} ({reading}): "
                           f"{r.value:.3f} [{r.ci_low:.3f}, {r.ci_high:.3f}]: "
                           + ("met." if met else f"not met (the interval's lower bound is {r.ci_low:.3f})."))
        if w4 in self.foreign:
            for metric, reading in (("top1", "card level"), ("top1_explanation", "the reference's reading")):
                d = self.diff(REFERENCE_NAME, w4, metric)
                met = d.ci_low > 0
                out.append(f"- At weight 4, above the reference's own output ({reading}): difference "
                           f"{d.difference:+.3f} [{d.ci_low:+.3f}, {d.ci_high:+.3f}]: "
                           + ("met." if met else "not met." if d.ci_high <= 0 else
                              undecided(int(d.games), d.ci_low, d.ci_high) + "."))
        return out


def riskcore_recogniser(data_dir: Path | None = None) -> Recogniser:
    """riskcore's recogniser for play it has not seen, as the experiment named and calibrated it."""
    from riskcore.db import DataError, query

    try:
        spec = query("SELECT spec FROM riskcore_recogniser WHERE run = ?", [KEY], data_dir).spec
    except Exception:  # the table does not exist yet
        spec = pd.Series(dtype=str)
    if spec.empty:
        raise DataError("riskcore's recogniser is named by the generalisation experiment: run `riskcore experiment "
                        "generalisation` (or `make generalisation`) first")
    return Recogniser.from_spec(spec.iloc[0])


def span(values: list[float], spec: str = ".2f") -> str:
    return f"{min(values):{spec}} to {max(values):{spec}}" if values else "none"


def verdict(d: pd.Series) -> str:
    """A paired difference's answer: decided better, decided worse, or not decided with the size that would."""
    word = direction(d.ci_low, d.ci_high)
    return word if word != "not decided" else undecided(int(d.games), d.ci_low, d.ci_high)  # resampled: games


def md(table: pd.DataFrame) -> str:
    return table.to_markdown()


def write_report(games: int, data_dir: Path | None = None, out: Path | None = None) -> Path:
    t = Tables(data_dir)
    named_name = RECOGNISER_NAMES[t.named_grid]
    lines = [
        "# Generalisation: recognisers on play they were not built from", "",
        f"riskcore's agent families play {games} four-player games each ({slow_games(games)} for the search agents); "
        "the foreign families are imported from the logs of another program: the Domination corpus (its own AI, "
        "a development set: it was looked at while the recognisers were built) and the reference study's own "
        "mission-following AI at mission weight 100 and 4 (held out). Card level, 6 continent cards (chance 1/6, "
        f"uniform log loss ln 6 = {UNIFORM_LOSS:.3f}); the reference's game clock (every setup placement and turn "
        "end, none for the winning turn); 95% bootstrap intervals over games. Generated by `riskcore experiment "
        "generalisation`; the protocol is in `docs/recognition.md`.", "",
        "## riskcore's recogniser", "",
        f"Named before any foreign family was scored: the candidate with the lowest leave-one-lineage-out log loss "
        f"over the held-out riskcore families (each at the point chosen on its own training families) is "
        f"**{named_name}**, calibrated by a temperature fitted on the training families. As applied to play it "
        f"has not seen (every riskcore family trains): `{t.spec}`.", "",
        md(t.named_choice()), "",
        "## Against the reference on the same players, at 100% of the game", "",
        "Top-1 at the card level and at the reference's reading (its published one: the most probable "
        "explanation's card, ties split); the reference is its own recogniser (`phatt:scheme=khan2013`, equal to "
        "its output on every one of these games); differences paired over games; the yardstick guesses the card "
        "whose continents got most of the player's placements.", "",
        md(t.against_reference()), "",
        md(t.log_loss_against_reference()), "",
        "Aims on the reference's own AI:", ""] + t.targets() + [
        "", "## riskcore's recogniser on every family, at 100% of the game", "",
        "Mission lean: the share of a player's actions of a kind that land in its own card's named continents, "
        "less the mean of that share over the other five cards' (a property of the play that no recogniser's "
        "model enters; play that ignores the mission leans 0).", "",
        md(t.standing()), "",
        "## Gain over uniform (nats) at every checkpoint of the game", "",
        md(t.gain_by_checkpoint()), "",
        "## What setup placements and move-ins are worth", "",
        "riskcore's recogniser with them less the same recogniser without them (`view=turns`, its own "
        "temperature), paired over games; positive top-1 and negative log loss mean they help.", "",
        md(t.evidence()), "",
        "## Mission lean", "", md(t.lean_table()), "",
        "## Every recogniser at 100% of the game (exploration)", "",
        "Top-1 (card level):", "", md(t.everyone("top1")), "",
        "Log loss:", "", md(t.everyone("log_loss")), "",
        "## Grids, grid points and training families", "",
        "The settings added beyond a declared grid's edge, where a choice lay on it:", "",
        md(t.grids[~t.grids.declared].drop(columns=["run", "declared"]).set_index("grid")) if
        (~t.grids.declared).any() else "none", "",
        md(t.fits[~t.fits.grid.str.startswith(NAMED)].pivot(index="held_out", columns="grid", values="setting")),
        "",
        md(t.fits.drop_duplicates("held_out").set_index("held_out")[["training"]]), ""]
    path = Path(out or paths.reports_dir()) / "generalisation.md"
    write_text(path, "\n".join(lines) + "\n")
    return path


__all__ = ["Tables", "write_report", "riskcore_recogniser", "CEILING"]
