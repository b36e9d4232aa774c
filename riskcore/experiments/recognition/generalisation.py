"""The generalisation experiment: riskcore's recogniser on play it was not trained on, beside the placement count
and the reference's own recogniser on the same players.

Families. Foreign families are imported from games other programs recorded, and every one of them is a
development set (looked at while recognisers were built): the Domination corpus (its own AI, nearly mission-blind),
the reference study's own mission-following AI at mission weight 100 and 4 (`datasets/domination/fork-ai`), and
Domination's own AI in mission mode, played fresh by the program (`peer_logs`) where Java and the program are
there. riskcore's own agent families (4 players, mission mode; `-blind` ignore their missions; `mixed` seats one
mission-blind agent of four) run decision code the training population runs: on them every learned model is scored
in-model, and they are reported apart.

Protocol, declared before measuring:
- riskcore's recogniser is the one the training protocol named on simulated play alone
  (`models/recogniser-protocol.json`, `training`): nothing here chooses or fits anything. The other two candidates
  are scored beside it.
- Clock: the reference's game clock (`pipeline.turn_ends`: every setup placement and turn end, none for the
  winning turn); checkpoints at 10, 30, 50, 70 and 100% of it. Every recogniser observes setup placements and
  move-ins.
- Measured, with 95% bootstrap intervals over games: gain over uniform (ln 6 - log loss, nats), top-1 at the card
  level and at the reference's reading (the most probable explanation's card, ties split), log loss,
  calibration; paired over games on the same players, riskcore's recogniser less the placement count (top-1) and
  less the reference (card level; and riskcore's card level less the reference's own published reading; log
  loss); the same at 100% by number of players; each family's mission lean, a property of the play.

Writes `reports/generalisation.md` (`generalisation_report`) and the tables `generalisation_metrics`,
`generalisation_paired`, `generalisation_players`, `generalisation_calibration`, `generalisation_lean`,
`generalisation_runs` and `riskcore_recogniser` (the spec: `riskcore recognize --recogniser SPEC`).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from riskcore import paths
from riskcore.engine.config import GameConfig
from riskcore.db import query, store_frames
from riskcore.experiments.recognition.protocol import (  # noqa: F401 (the protocol's names, re-exported)
    BORDERS, CALIBRATION_BINS, FAMILIES, FOREIGN, KEY, LABELS, NAMED, RECOGNISER_NAMES, REFERENCE, UNIFORM_LOSS,
    YARDSTICK, Family, all_families, candidate_specs, row_metrics, slow_games)
from riskcore.experiments.recognition.peer_family import PEER_GAMES, peer_logs
from riskcore.experiments.recognition.training import load_protocol
from riskcore.recognition.features import Features, load_features
from riskcore.recognition.metrics import bootstrap_ci
from riskcore.recognition.mission_lean import LEAN_KINDS, player_lean
from riskcore.recognition.pipeline import CHECKPOINTS, ensure_features, ensure_features_many, game_clock_rows, turn_ends
from riskcore.recognition.evidence import evidence_posterior, load_model
from riskcore.recognition.recognisers import Recogniser, calibrated
from riskcore.simulate import RunSpec, simulate_many

FIXED = {"uniform": "uniform", YARDSTICK: YARDSTICK, REFERENCE: REFERENCE}


def simulate_runs(families: tuple[Family, ...], games: int, seed: int, data_dir: Path | None, workers: int | None,
                  dask: str | None, progress: bool) -> None:
    # every family's games in one pool; search agents take seconds a game: small chunks keep every worker busy
    specs = [RunSpec(fam.run, slow_games(games) if fam.slow else games, GameConfig(n_players=4, mode="mission"),
                     fam.agents, seed + i, chunk=2 if fam.slow else 25) for i, fam in enumerate(families)]
    simulate_many(specs, data_dir, workers, dask, progress, desc="simulate families")
    ensure_features_many([fam.run for fam in families], "cards6", data_dir, rebuild=True, workers=workers,
                         dask_address=dask, progress=progress)


def foreign_logs(family: Family, data_dir: Path | None = None, games: int = PEER_GAMES) -> list[Path]:
    """A foreign family's logs: the bundled ones, or Domination's AI played fresh (none where it cannot run)."""
    if family.source == "peer":
        return peer_logs(data_dir, games)
    folder = paths.datasets_dir() / "domination" / family.source
    pattern = f"fork-w{family.weight}-*.log.gz" if family.weight else "*.log.gz"
    return sorted(folder.glob(pattern))


def import_foreign(logs: dict[str, list[Path]], data_dir: Path | None, workers: int | None, progress: bool
                   ) -> list[Family]:
    """Import each foreign family's logs as its run, on the map they were recorded on; the families imported."""
    from riskcore.domination import import_logs

    imported = []
    for family in FOREIGN:
        if not logs.get(family.name):
            continue
        import_logs(logs[family.name], family.run, data_dir, borders=BORDERS[family.source])
        ensure_features(family.run, "cards6", data_dir, rebuild=True, workers=workers, progress=progress)
        imported.append(family)
    return imported


# ---- scoring ---------------------------------------------------------------------------------------------------

class Run:
    """One run's features and game-clock rows, loaded once and scored for many recognisers."""

    def __init__(self, name: str, data_dir: Path | None, games: tuple[int, int] | None = None):
        self.name, self.data_dir, self.games = name, data_dir, games
        self._f: Features | None = None
        self._rows: pd.DataFrame | None = None
        self._posts: dict[str, np.ndarray] = {}

    @property
    def f(self) -> Features:
        if self._f is None:
            self._f = load_features(self.name, "cards6", self.data_dir, "full", self.games)
        return self._f

    def rows(self) -> pd.DataFrame:
        """The scored (player, checkpoint) rows on the game clock: players holding a card of the hypotheses, the
        row of their last observation at the checkpoint (-1: none yet), their true card and the game's seats."""
        if self._rows is None:
            f = self.f
            rows = game_clock_rows(f, turn_ends(self.name, self.data_dir, self.games), CHECKPOINTS)
            keys = pd.MultiIndex.from_frame(rows[["game_id", "player"]])
            rows["card"] = f.truth.set_index(["game_id", "player"]).card.reindex(keys).to_numpy()
            seats = f.truth.groupby("game_id").player.count()
            rows["n_players"] = seats.reindex(rows.game_id.to_numpy()).to_numpy()
            self._rows = rows[rows.card >= 0].reset_index(drop=True)
        return self._rows

    def full_posterior(self, setting: str) -> np.ndarray:
        """(N, E) the posterior after every observation, computed once a setting: a stacked evidence model reads
        the reference's and the mixture's, which are scored here too."""
        rec = Recogniser.from_spec(setting)
        setting = rec.setting
        if setting not in self._posts:
            if rec.calibration != 1.0:  # the same posterior, tempered: computed once
                base = self.full_posterior(replace(rec, calibration=1.0).setting)
                post = calibrated(base, rec.calibration, self.f.hyp.card_of)
            elif rec.name == "evidence":
                post = evidence_posterior(self.f, load_model(rec.kwargs["model"]), self.full_posterior)
            else:
                post = rec.posterior(self.f, self.name, self.data_dir)
            self._posts[setting] = post
        return self._posts[setting]

    def posterior(self, setting: str) -> pd.DataFrame:
        """The scored rows with each row's explanation probabilities (`e0`, `e1`, ...) under `setting`."""
        rec = Recogniser.from_spec(setting)
        post = self.full_posterior(rec.setting)
        rows = self.rows()
        r = rows.row.to_numpy()
        probs = np.where(r[:, None] >= 0, post[np.maximum(r, 0)], rec.prior(self.f.hyp)[None, :])
        return pd.concat([rows[["game_id", "player", "point", "card", "n_players"]],
                          pd.DataFrame(probs, columns=[f"e{k}" for k in range(probs.shape[1])])], axis=1)


SCORE_CHUNK = 40  # games per scoring task: the larger runs split, so that every worker stays busy


def score_run(family: str, run: str, settings: list[str], data_dir: Path | None,
              games: tuple[int, int] | None = None) -> pd.DataFrame:
    """Explanation probabilities at every scored row of one run (or a chunk of its games), for each setting."""
    loaded = Run(run, data_dir, games)
    return pd.concat([loaded.posterior(s).assign(family=family, setting=Recogniser.from_spec(s).setting)
                      for s in settings], ignore_index=True)


def score_all(runs: dict[str, str], settings: list[str], data_dir: Path | None, workers: int | None,
              dask: str | None, progress: bool) -> pd.DataFrame:
    """`score_run` of every (family, run), `SCORE_CHUNK` games a task, in task order (every recogniser reads each
    player alone, so a chunk's scores are the run's)."""
    from riskcore.parallel import in_task_order, run_tasks
    from riskcore.recognition.pipeline import game_chunks

    tasks = [(family, run, settings, data_dir, games) for family, run in runs.items()
             for games in game_chunks(run, data_dir, SCORE_CHUNK)]
    return pd.concat(in_task_order(run_tasks(score_run, tasks, workers, dask, desc="score", progress=progress)),
                     ignore_index=True)


# ---- summaries --------------------------------------------------------------------------------------------------

METRICS = ("top1", "top1_explanation", "log_loss", "gain")
# riskcore's recogniser against another on the same players: (its metric, the other's metric, the comparison)
PAIRS = {YARDSTICK: (("top1", "top1", "top1"),),
         REFERENCE: (("top1", "top1", "top1"), ("top1", "top1_explanation", "top1_vs_reading"),
                     ("top1_explanation", "top1_explanation", "top1_explanation"),
                     ("log_loss", "log_loss", "log_loss"), ("gain", "gain", "gain"))}


def summarise(rows: pd.DataFrame, family: str, recogniser: str, setting: str, rng: np.random.Generator,
              n_boot: int) -> tuple[list[dict], list[dict]]:
    """Metric rows with bootstrap intervals over games, and the reliability bins (checkpoints pooled)."""
    metrics = []
    for point, d in rows.groupby("point"):
        per_game = d.groupby("game_id")[list(METRICS)].mean()
        ci = {}
        for metric in METRICS:
            if metric == "gain":  # ln 6 less the log loss, game by game: the log loss's interval, mirrored
                lo, hi = UNIFORM_LOSS - ci["log_loss"][1], UNIFORM_LOSS - ci["log_loss"][0]
            else:
                lo, hi = ci[metric] = bootstrap_ci(per_game[metric].to_numpy(), rng, n_boot)
            metrics.append({"family": family, "recogniser": recogniser, "setting": setting, "point": point,
                            "metric": metric, "value": per_game[metric].mean(), "ci_low": lo, "ci_high": hi,
                            "games": len(per_game)})
    bins = np.minimum((rows.confidence * CALIBRATION_BINS).astype(int), CALIBRATION_BINS - 1)
    cal = rows.groupby(bins).agg(confidence=("confidence", "mean"), accuracy=("top1", "mean"),
                                 count=("top1", "size")).reset_index(names="bin")
    ece = float((cal["count"] * (cal.accuracy - cal.confidence).abs()).sum() / cal["count"].sum())
    metrics.append({"family": family, "recogniser": recogniser, "setting": setting, "point": np.nan,
                    "metric": "ece", "value": ece, "ci_low": np.nan, "ci_high": np.nan,
                    "games": rows.game_id.nunique()})
    calibration = cal.assign(family=family, recogniser=recogniser, setting=setting).to_dict("records")
    return metrics, calibration


def paired_rows(a: pd.DataFrame, b: pd.DataFrame, family: str, b_name: str, pairs: tuple, rng: np.random.Generator,
                n_boot: int, by: str | None = None) -> list[dict]:
    """Per checkpoint (and per value of `by`) and comparison, the mean per-game difference a - b on the players
    both score, with its bootstrap interval over games."""
    keys = ["game_id", "player", "point"]
    both = a.merge(b.drop(columns=["n_players"]), on=keys, suffixes=("_a", "_b"))
    out = []
    groups = ["point"] + ([by] if by else [])
    for key, d in both.groupby(groups):
        key = key if isinstance(key, tuple) else (key,)
        for metric_a, metric_b, name in pairs:
            diff = (d[f"{metric_a}_a"] - d[f"{metric_b}_b"]).groupby(d.game_id).mean().to_numpy()
            if name == "gain" and out and out[-1]["metric"] == "log_loss":  # the log loss's, sign turned
                lo, hi = -out[-1]["ci_high"], -out[-1]["ci_low"]
            else:
                lo, hi = bootstrap_ci(diff, rng, n_boot)
            out.append({"family": family, "a": NAMED, "b": b_name, **dict(zip(groups, key)), "metric": name,
                        "difference": float(diff.mean()), "ci_low": lo, "ci_high": hi, "games": len(diff)})
    return out


def players_rows(rows: dict[str, pd.DataFrame], family: str, rng: np.random.Generator, n_boot: int,
                 metrics: tuple[str, ...] = ("top1", "top1_explanation")) -> list[dict]:
    """At 100% of the game, per number of players: each recogniser's `metrics` (by default top-1, the reference
    also at its reading)."""
    out = []
    for name, r in rows.items():
        last = r[r.point == 1.0]
        for n, d in last.groupby("n_players"):
            per_game = d.groupby("game_id")[list(metrics)].mean()
            for metric in metrics:
                lo, hi = bootstrap_ci(per_game[metric].to_numpy(), rng, n_boot)
                out.append({"family": family, "recogniser": name, "n_players": int(n), "metric": metric,
                            "value": float(per_game[metric].mean()), "ci_low": lo, "ci_high": hi,
                            "games": len(per_game)})
    return out


def lean_rows(family: str, f: Features, rng: np.random.Generator, n_boot: int) -> list[dict]:
    """The family's mean mission lean per action kind (a game's players averaged first), with its interval."""
    per_game = player_lean(f).groupby("game_id")[list(LEAN_KINDS)].mean()
    out = []
    for kind in LEAN_KINDS:
        lo, hi = bootstrap_ci(per_game[kind].to_numpy(), rng, n_boot)
        out.append({"family": family, "kind": kind, "value": per_game[kind].mean(), "ci_low": lo, "ci_high": hi,
                    "games": int(per_game[kind].notna().sum())})
    return out


# ---- the experiment ---------------------------------------------------------------------------------------------

def run_experiment(games: int = 150, seed: int = 4040, data_dir: Path | None = None, workers: int | None = None,
                   dask: str | None = None, progress: bool = True, n_boot: int = 1000, out: Path | None = None,
                   families: tuple[Family, ...] = FAMILIES, logs: dict[str, list[Path]] | None = None,
                   models: Path | None = None) -> Path:
    """Simulate and import the families, score riskcore's recogniser (named in `models`, default the models
    folder) beside the candidates, the count and the reference, store the tables and write the report.
    `logs`: the foreign families' logs by family name (default: `datasets/domination` and the peer's games)."""
    from riskcore.experiments.recognition.generalisation_report import write_report

    protocol = load_protocol(models)
    simulate_runs(families, games, seed, data_dir, workers, dask, progress)
    logs = logs if logs is not None else {f.name: foreign_logs(f, data_dir) for f in FOREIGN}
    foreign = import_foreign(logs, data_dir, workers, progress)
    everyone = families + tuple(foreign)
    run_names = {f.name: f.run for f in everyone}
    specs = {**FIXED, **candidate_specs(protocol)}
    settings = {key: Recogniser.from_spec(s).setting for key, s in specs.items()}
    scores = score_all(run_names, list(settings.values()), data_dir, workers, dask, progress)
    card_of = Run(run_names[families[0].name], data_dir).f.hyp.card_of
    named_key = protocol["named"]
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    metrics, calibration, paired, players = [], [], [], []
    named_rows, candidate_rows = {}, {}
    for fam in everyone:
        mine = scores[scores.family == fam.name]
        rows = {RECOGNISER_NAMES[key]: row_metrics(mine[mine.setting == s], card_of) for key, s in settings.items()}
        rows[NAMED] = named_rows[fam.name] = rows[RECOGNISER_NAMES[named_key]]
        candidate_rows[fam.name] = {RECOGNISER_NAMES[k]: rows[RECOGNISER_NAMES[k]] for k in protocol["candidates"]
                                    if k != named_key}
        for name, r in rows.items():
            setting = settings[named_key] if name == NAMED else next(
                s for k, s in settings.items() if RECOGNISER_NAMES[k] == name)
            m, c = summarise(r, fam.name, name, setting, rng, n_boot)
            metrics += m
            calibration += c
        for other, pairs in PAIRS.items():
            paired += paired_rows(rows[NAMED], rows[RECOGNISER_NAMES[other]], fam.name, RECOGNISER_NAMES[other],
                                  pairs, rng, n_boot)
        last = {k: v[v.point == 1.0] for k, v in rows.items()}
        for other, pairs in PAIRS.items():
            paired += [dict(r, point=1.0) for r in paired_rows(
                last[NAMED], last[RECOGNISER_NAMES[other]], fam.name, RECOGNISER_NAMES[other],
                pairs[:2], rng, n_boot, by="n_players")]
        players += players_rows({k: rows[k] for k in (NAMED, RECOGNISER_NAMES[YARDSTICK],
                                                     RECOGNISER_NAMES[REFERENCE])}, fam.name, rng, n_boot)
    # drawn after the recognisers' intervals, so a measure of the play never moves theirs
    lean = [row for fam in everyone for row in lean_rows(fam.name, Run(fam.run, data_dir).f, rng, n_boot)]
    players += [row for fam in everyone
                for row in players_rows({NAMED: named_rows[fam.name]}, fam.name, rng, n_boot, ("gain",))]
    # the candidates not named against the named one, on the same players at 100% (gain over uniform)
    for fam in everyone:
        last = named_rows[fam.name][named_rows[fam.name].point == 1.0]
        for name, r in candidate_rows[fam.name].items():
            paired += paired_rows(last, r[r.point == 1.0], fam.name, name, (("gain", "gain", "gain"),), rng, n_boot)
    paired_table = pd.DataFrame(paired)
    if "n_players" not in paired_table:
        paired_table["n_players"] = np.nan
    tables = {"generalisation_metrics": pd.DataFrame(metrics), "generalisation_calibration": pd.DataFrame(calibration),
              "generalisation_paired": paired_table, "generalisation_players": pd.DataFrame(players),
              "generalisation_lean": pd.DataFrame(lean), "generalisation_runs": runs_table(families, foreign),
              "riskcore_recogniser": pd.DataFrame([{"spec": settings[named_key], "candidate": named_key,
                                                    "chosen_on": protocol.get("population_label",
                                                                              "the training population")}])}
    store_frames({k: v.assign(run=KEY) for k, v in tables.items()}, "metrics", {"run": KEY}, data_dir)
    return write_report(games, data_dir, out, models)


def runs_table(families: tuple[Family, ...], foreign: list[Family]) -> pd.DataFrame:
    return pd.DataFrame([{"family": f.name, "label": LABELS.get(f.name, f.name), "experiment_run": f.run,
                          "agents": ",".join(f.agents), "follows_mission": f.follows_mission, "foreign": f.foreign,
                          "lineage": ", ".join(sorted(f.lineage))} for f in families + tuple(foreign)])


def family_games(data_dir: Path | None = None) -> pd.Series:
    """Games played or imported by each family's run."""
    played = query("SELECT run, count(*) AS n FROM games WHERE run IN (SELECT experiment_run FROM "
                   "generalisation_runs WHERE run = ?) GROUP BY run", [KEY], data_dir).set_index("run").n
    runs = query("SELECT family, experiment_run FROM generalisation_runs WHERE run = ?", [KEY], data_dir)
    return played.reindex(runs.experiment_run).set_axis(runs.family)
