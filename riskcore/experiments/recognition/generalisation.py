"""The generalisation experiment: recognisers judged on play they were not built from.

Families. Every riskcore agent family plays its own run (4 players, mission mode, mission-following settings
where the family has a choice; `domination-blind`, `expert-blind` and `bsr-blind` are the same agents ignoring
their mission; `mixed` seats three mission-following agents and one mission-blind `domination` agent). Three
foreign families are imported from games another program recorded: the Domination corpus (the program's own AI,
nearly mission-blind; looked at while the recognisers were built, so a development set) and the reference study's
own mission-following AI at mission weight 100 and 4 (`datasets/domination/fork-ai`, held out).

Protocol, declared before measuring:
- Clock: the reference's game clock (`pipeline.turn_ends`: every setup placement and turn end, none for the
  winning turn); checkpoints at 10, 30, 50, 70 and 100% of it. Every recogniser observes setup placements and
  move-ins (`view=full`).
- Held out by code lineage: a riskcore family's training families are the riskcore families that run none of its
  agents' code (`agents.lineage`: `aware` runs the `mission` agent's, `bsr`, `minimax`, `mcs` and `gb` the
  `domination` agent's). `mixed` shares code with every other family, so nothing can be held out against it: its
  numbers are in-house, marked so. For the foreign families every riskcore family trains; nothing is fitted on
  foreign play.
- Grid points: the lowest mean log loss over the training families (the open-goal mixture: among the points no
  worse than uniform on every training family); a grid whose choice lies on an axis's edge is widened beyond it.
- riskcore's recogniser, named before any foreign family is scored: among inverse planning, the play-style mixture
  and the open-goal mixture, the one whose leave-one-lineage-out log loss over the held-out riskcore families is
  lowest; then calibrated by a temperature on its card probabilities, fitted on the training families by
  log loss. It is the recogniser of every headline; the other recognisers are exploration, reported as such.
- Measured, with 95% bootstrap intervals over games: top-1 at the card level and at the reference's reading (the
  most probable explanation's card, ties split), log loss and its gain over uniform (ln 6 - log loss, nats),
  calibration; on the foreign families, riskcore's recogniser against the reference's own recogniser
  (`phatt:scheme=khan2013`, equal to its output) on the same players, paired over games; on every family, what
  setup placements and move-ins are worth (riskcore's recogniser without them, `view=turns`, paired); and each
  family's mission lean, a property of the play.

Writes `reports/generalisation.md` (`generalisation_report`) and the tables `generalisation_metrics`,
`generalisation_paired`, `generalisation_calibration`, `generalisation_fits`, `generalisation_named`,
`generalisation_lean`, `generalisation_runs` and `riskcore_recogniser` (the spec of riskcore's recogniser as
applied to play it has not seen, calibration included: `riskcore recognize --recogniser SPEC`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from riskcore import paths
from riskcore.engine.config import GameConfig
from riskcore.db import store_frames
from riskcore.experiments.recognition.protocol import (  # noqa: F401 (the protocol's names, re-exported)
    BORDERS, CALIBRATION_BINS, CEILING, CLASSIFIER, FAMILIES, FIXED, FOREIGN, GRIDS, KEY, LABELS, NAMED,
    RECOGNISER_NAMES, REFERENCE, WIDEN_ROUNDS, YARDSTICK, Family, all_families, choose, choose_named,
    fit_temperature, fitting_families, per_family_loss, row_metrics, slow_games, training_families, widen)
from riskcore.recognition import conditional_logit
from riskcore.recognition.features import Features, load_features
from riskcore.recognition.inverse import Candidates, inverse_posterior, load_candidates
from riskcore.recognition.metrics import bootstrap_ci
from riskcore.recognition.mission_lean import LEAN_KINDS, player_lean
from riskcore.recognition.mixture import mixture_combine, mixture_parts, model_logliks
from riskcore.recognition.pipeline import CHECKPOINTS, ensure_features, ensure_features_many, game_clock_rows, turn_ends
from riskcore.recognition.posterior import group_starts, grouped_cumsum
from riskcore.recognition.recognisers import Recogniser, classifier_posterior, fit_classifier
from riskcore.simulate import RunSpec, simulate_many

def simulate_runs(families: tuple[Family, ...], games: int, seed: int, data_dir: Path | None, workers: int | None,
                  dask: str | None, progress: bool) -> None:
    # every family's games in one pool; search agents take seconds a game: small chunks keep every worker busy
    specs = [RunSpec(fam.run, slow_games(games) if fam.slow else games, GameConfig(n_players=4, mode="mission"),
                     fam.agents, seed + i, chunk=2 if fam.slow else 25) for i, fam in enumerate(families)]
    simulate_many(specs, data_dir, workers, dask, progress, desc="simulate families")
    ensure_features_many([fam.run for fam in families], "cards6", data_dir, rebuild=True, workers=workers,
                         dask_address=dask, progress=progress)


def foreign_logs(family: Family) -> list[Path]:
    folder = paths.datasets_dir() / "domination" / family.source
    pattern = f"fork-w{family.weight}-*.log.gz" if family.weight else "*.log.gz"
    return sorted(folder.glob(pattern))


def corpus_logs() -> list[Path]:
    return foreign_logs(FOREIGN[0])


def import_foreign(logs: dict[str, list[Path]], data_dir: Path | None, workers: int | None, progress: bool) -> None:
    """Import each foreign family's logs as its run, on the map they were recorded on."""
    from riskcore.domination import import_logs

    for family in FOREIGN:
        import_logs(logs[family.name], family.run, data_dir, borders=BORDERS[family.source])
        ensure_features(family.run, "cards6", data_dir, rebuild=True, workers=workers, progress=progress)


# ---- scoring ---------------------------------------------------------------------------------------------------

class Run:
    """One run's features, candidates and game-clock rows, loaded once and scored for many posteriors."""

    def __init__(self, name: str, data_dir: Path | None, games: tuple[int, int] | None = None):
        self.name = name
        self.data_dir = data_dir
        self.games = games  # a chunk of the run's games (first, last), or all of them
        self._views: dict[str, Features] = {}
        self._cands: dict[str, Candidates] = {}
        self._rows: dict[str, pd.DataFrame] = {}
        self._mixture_ll: dict[tuple, list] = {}
        self._clock: pd.DataFrame | None = None

    def features(self, view: str = "full") -> Features:
        if view not in self._views:
            self._views[view] = load_features(self.name, "cards6", self.data_dir, view, self.games)
        return self._views[view]

    @property
    def f(self) -> Features:
        return self.features("full")

    def cands(self, view: str = "full") -> Candidates:
        if view not in self._cands:
            self._cands[view] = load_candidates(self.features(view), self.name, self.data_dir)
        return self._cands[view]

    def rows(self, view: str = "full") -> pd.DataFrame:
        """The scored (player, checkpoint) rows on the game clock: players holding a card of the hypotheses, the
        row of their last observation at the checkpoint (-1: none yet) and their true card."""
        if view not in self._rows:
            if self._clock is None:
                clock = turn_ends(self.name, self.data_dir)
                self._clock = clock if self.games is None else clock[clock.game_id.between(*self.games)]
            f = self.features(view)
            rows = game_clock_rows(f, self._clock, CHECKPOINTS)
            truth = f.truth.set_index(["game_id", "player"]).card
            rows["card"] = truth.reindex(pd.MultiIndex.from_frame(rows[["game_id", "player"]])).to_numpy()
            self._rows[view] = rows[rows.card >= 0].reset_index(drop=True)
        return self._rows[view]

    def explanation_rows(self, post: np.ndarray, rec: Recogniser) -> pd.DataFrame:
        """The scored rows with each row's explanation probabilities (`e0`, `e1`, ...)."""
        rows = self.rows(rec.view)
        r = rows.row.to_numpy()
        probs = np.where(r[:, None] >= 0, post[np.maximum(r, 0)], rec.prior(self.f.hyp)[None, :])
        return pd.concat([rows[["game_id", "player", "point", "card"]],
                          pd.DataFrame(probs, columns=[f"e{k}" for k in range(probs.shape[1])])], axis=1)

    def posterior(self, setting: str) -> pd.DataFrame:
        rec = Recogniser.from_spec(setting)
        f = self.features(rec.view)
        if rec.name == "mixture":
            p = rec.kwargs
            key = (rec.view, p["beta"], p["eps"], int(p.get("goals", 0)))
            if key not in self._mixture_ll:  # the tempers and rhos of one beta share the per-model likelihoods
                starts = group_starts(f)
                self._mixture_ll[key] = [(name, grouped_cumsum(ll, starts)) for name, ll in
                                         model_logliks(f, self.cands(rec.view), *key[1:])]
            parts = key + (p["temper"],)
            if parts not in self._mixture_ll:  # and the rhos of one temper its two halves
                self._mixture_ll[parts] = mixture_parts(f, self._mixture_ll[key], None, p["temper"], True)
            post = mixture_combine(f, self._mixture_ll[parts], p["rho"])
        elif rec.name == "inverse":
            p = rec.kwargs
            post = inverse_posterior(f, self.cands(rec.view), group_starts(f), p["beta"], p["focus"], p["eps"])
        else:
            post = rec.posterior(f, self.name, self.data_dir)
        return self.explanation_rows(post, rec)


SCORE_CHUNK = 40  # games per scoring task: the larger runs split, so that every worker stays busy


def score_run(family: str, run: str, settings: list[str], data_dir: Path | None,
              games: tuple[int, int] | None = None) -> pd.DataFrame:
    """Explanation probabilities at every scored row of one run (or a chunk of its games), for each setting."""
    loaded = Run(run, data_dir, games)
    return pd.concat([loaded.posterior(s).assign(family=family, setting=Recogniser.from_spec(s).setting)
                      for s in settings], ignore_index=True)


def score_all(runs: dict[str, str], settings: dict[str, list[str]], data_dir: Path | None, workers: int | None,
              dask: str | None, progress: bool) -> pd.DataFrame:
    """`score_run` of every (family, run) with its settings, `SCORE_CHUNK` games a task, in task order (every
    recogniser reads each player alone, so a chunk's scores are the run's)."""
    from riskcore.parallel import in_task_order, run_tasks
    from riskcore.recognition.pipeline import game_chunks

    tasks = [(family, run, settings[family], data_dir, games) for family, run in runs.items() if settings[family]
             for games in game_chunks(run, data_dir, SCORE_CHUNK)]
    if not tasks:
        return pd.DataFrame()
    return pd.concat(in_task_order(run_tasks(score_run, tasks, workers, dask, desc="score", progress=progress)),
                     ignore_index=True)


def classifier_scores(runs: dict[str, Run], training: list[str], held_out: str, fitted: dict) -> pd.DataFrame:
    """The classifier trained on the `training` families (fitted once per training set, kept in `fitted`)."""
    key = tuple(training)
    if key not in fitted:
        fitted[key] = fit_classifier([runs[f].f for f in training])
    model = fitted[key]
    run = runs[held_out]
    return run.explanation_rows(classifier_posterior(model, run.f), Recogniser.from_spec("uniform"))


def ceiling_scores(run: Run, folds: int, seed: int) -> pd.DataFrame:
    """The conditional logit cross-validated on the run's own games: fitted on the other folds, scored on each."""
    games = np.unique(run.f.obs.game_id.to_numpy())
    folds = min(folds, len(games))
    fold_of = dict(zip(games, np.random.default_rng(np.random.SeedSequence(seed)).permutation(len(games)) % folds))
    fold = run.f.obs.game_id.map(fold_of).to_numpy()
    post = np.zeros((run.f.n, run.f.hyp.size))
    for k in range(folds):
        test = fold == k
        weights = conditional_logit.fit([run.f.select(~test)])
        post[test] = conditional_logit.conditional_logit_posterior(weights, run.f.select(test))
    return run.explanation_rows(post, Recogniser.from_spec("uniform"))


# ---- summaries --------------------------------------------------------------------------------------------------

METRICS = ("top1", "top1_explanation", "log_loss", "gain")


def summarise(rows: pd.DataFrame, family: str, recogniser: str, setting: str, rng: np.random.Generator,
              n_boot: int) -> tuple[list[dict], list[dict]]:
    """Metric rows with bootstrap intervals over games, and the reliability bins (checkpoints pooled)."""
    metrics = []
    for point, d in rows.groupby("point"):
        per_game = d.groupby("game_id")[list(METRICS)].mean()
        for metric in METRICS:
            lo, hi = bootstrap_ci(per_game[metric].to_numpy(), rng, n_boot)
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


def paired_rows(a: pd.DataFrame, b: pd.DataFrame, family: str, names: tuple[str, str], rng: np.random.Generator,
                n_boot: int) -> list[dict]:
    """Per checkpoint and metric, the mean per-game difference a - b on the players both score, with its bootstrap
    interval over games."""
    keys = ["game_id", "player", "point"]
    both = a.merge(b, on=keys, suffixes=("_a", "_b"))
    out = []
    for point, d in both.groupby("point"):
        for metric in METRICS:
            diff = (d[f"{metric}_a"] - d[f"{metric}_b"]).groupby(d.game_id).mean().to_numpy()
            lo, hi = bootstrap_ci(diff, rng, n_boot)
            out.append({"family": family, "a": names[0], "b": names[1], "point": point, "metric": metric,
                        "difference": float(diff.mean()), "ci_low": lo, "ci_high": hi, "games": len(diff)})
    return out


def lean_rows(family: str, run: Run, rng: np.random.Generator, n_boot: int) -> list[dict]:
    """The family's mean mission lean per action kind (a game's players averaged first), with its interval."""
    per_game = player_lean(run.f).groupby("game_id")[list(LEAN_KINDS)].mean()
    out = []
    for kind in LEAN_KINDS:
        lo, hi = bootstrap_ci(per_game[kind].to_numpy(), rng, n_boot)
        out.append({"family": family, "kind": kind, "value": per_game[kind].mean(), "ci_low": lo, "ci_high": hi,
                    "games": int(per_game[kind].notna().sum())})
    return out


# ---- the experiment ---------------------------------------------------------------------------------------------

def run_experiment(games: int = 150, seed: int = 4040, data_dir: Path | None = None, workers: int | None = None,
                   dask: str | None = None, progress: bool = True, n_boot: int = 1000, out: Path | None = None,
                   families: tuple[Family, ...] = FAMILIES, logs: dict[str, list[Path]] | None = None) -> Path:
    """Simulate and import the families, score every recogniser, apply the protocol, store the tables and write
    the report. `logs`: the foreign families' logs by family name (default: all of `datasets/domination`)."""
    from riskcore.experiments.recognition.generalisation_report import write_report

    simulate_runs(families, games, seed, data_dir, workers, dask, progress)
    import_foreign(logs or {f.name: foreign_logs(f) for f in FOREIGN}, data_dir, workers, progress)
    everyone = all_families(families)
    run_names = {f.name: f.run for f in everyone}
    settings = list(FIXED) + [s for grid in GRIDS.values() for s in grid]
    scores = score_all(run_names, {f: settings for f in run_names}, data_dir, workers, dask, progress)
    runs = {family: Run(run, data_dir) for family, run in run_names.items()}
    card_of = runs[families[0].name].f.hyp.card_of
    scores, grids = widened(scores, families, run_names, card_of, data_dir, workers, dask, progress)
    losses = per_family_loss(scores, card_of)
    named_grid, named_cv = choose_named(losses, families, grids)
    fits, chosen = [], {}
    for fam in everyone:
        training, held = fitting_families(families, fam.name)
        chosen[fam.name] = choose(losses, training, grids)
        for g, s in chosen[fam.name].items():
            fits.append({"held_out": fam.name, "grid": g, "setting": s, "training": ", ".join(training),
                         "held": held})
    # riskcore's recogniser without setup placements and move-ins, at the same points (what they are worth)
    turns = {f: [Recogniser.from_spec(chosen[f][named_grid] + ":view=turns").setting] for f in run_names}
    needed = sorted({s for v in turns.values() for s in v})
    scores_turns = score_all(run_names, {f: needed for f in run_names}, data_dir, workers, dask, progress)
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    metrics, calibration, paired, recogniser, classifiers = [], [], [], {}, {}
    for fam in everyone:
        family, (training, held) = fam.name, fitting_families(families, fam.name)
        pick = lambda d, s: d[(d.family == family) & (d.setting == s)]  # noqa: E731
        entries = [(RECOGNISER_NAMES[s], Recogniser.from_spec(s).setting,
                    row_metrics(pick(scores, Recogniser.from_spec(s).setting), card_of)) for s in FIXED]
        entries += [(RECOGNISER_NAMES[g], s, row_metrics(pick(scores, s), card_of)) for g, s in chosen[family].items()]
        (named_rows, named_spec), (turns_rows, _) = (
            _calibrated(table, setting, training, family, card_of, fits, f"{NAMED} ({view})", held)
            for view, table, setting in (("full", scores, chosen[family][named_grid]),
                                         ("turns", scores_turns, turns[family][0])))
        entries.append((NAMED, named_spec, named_rows))
        if fam.foreign:
            recogniser = {"spec": named_spec, "grid": named_grid, "chosen_on": ", ".join(training)}
        entries.append((RECOGNISER_NAMES[CLASSIFIER], "classifier:train=<training families>",
                        row_metrics(classifier_scores(runs, training, family, classifiers), card_of)))
        if fam.foreign:
            entries.append((CEILING, "conditional logit (5-fold CV by game)",
                            row_metrics(ceiling_scores(runs[family], 5, seed), card_of)))
        for name, setting, rows in entries:
            m, c = summarise(rows, family, name, setting, rng, n_boot)
            metrics += m
            calibration += c
        reference = dict((n, r) for n, _, r in entries)[RECOGNISER_NAMES[REFERENCE]]
        yardstick = dict((n, r) for n, _, r in entries)[RECOGNISER_NAMES[YARDSTICK]]
        paired += paired_rows(named_rows, reference, family, (NAMED, RECOGNISER_NAMES[REFERENCE]), rng, n_boot)
        paired += paired_rows(named_rows, yardstick, family, (NAMED, RECOGNISER_NAMES[YARDSTICK]), rng, n_boot)
        paired += paired_rows(named_rows, turns_rows, family, (NAMED, f"{NAMED} without setup and move-ins"),
                              rng, n_boot)
    # drawn after the recognisers' intervals, so a measure of the play never moves theirs
    lean = [row for family, run in runs.items() for row in lean_rows(family, run, rng, n_boot)]
    tables = {"generalisation_metrics": pd.DataFrame(metrics), "generalisation_calibration": pd.DataFrame(calibration),
              "generalisation_paired": pd.DataFrame(paired), "generalisation_fits": pd.DataFrame(fits),
              "generalisation_named": named_cv, "generalisation_lean": pd.DataFrame(lean),
              "generalisation_runs": runs_table(families),
              "generalisation_grids": pd.DataFrame([{"grid": g, "setting": s, "declared": s in GRIDS[g]}
                                                    for g, specs in grids.items() for s in specs]),
              "riskcore_recogniser": pd.DataFrame([recogniser])}
    store_frames({k: v.assign(run=KEY) for k, v in tables.items()}, "metrics", {"run": KEY}, data_dir)
    return write_report(games, data_dir, out)


def widened(scores: pd.DataFrame, families: tuple[Family, ...], run_names: dict[str, str], card_of: np.ndarray,
            data_dir: Path | None, workers: int | None, dask: str | None, progress: bool):
    """Widen the grids where a choice for some held-out family lies on an axis's edge, score the new settings,
    and again (`WIDEN_ROUNDS`): the scores and the grids' settings."""
    grids = {grid: list(specs) for grid, specs in GRIDS.items()}
    for _ in range(WIDEN_ROUNDS):
        losses = per_family_loss(scores, card_of)
        picks = [(g, s) for fam in all_families(families)
                 for g, s in choose(losses, fitting_families(families, fam.name)[0], grids).items()]
        grids = widen(grids, picks)
        new = sorted({s for specs in grids.values() for s in specs} - set(scores.setting))
        if not new:
            break
        scores = pd.concat([scores, score_all(run_names, {f: new for f in run_names}, data_dir, workers, dask,
                                              progress)], ignore_index=True)
    return scores, grids


def _calibrated(table: pd.DataFrame, setting: str, training: list[str], family: str, card_of: np.ndarray,
                fits: list[dict], grid: str, held: bool) -> tuple[pd.DataFrame, str]:
    """`family`'s rows of `setting` at the temperature fitted on the training families' rows (noted in `fits`),
    and the calibrated recogniser's spec."""
    fitted = fit_temperature(table[table.family.isin(training) & (table.setting == setting)], card_of)
    temperature = float(f"{fitted:.4g}")  # as its spec writes it, so the spec reproduces these numbers
    spec = Recogniser.from_spec(f"{setting}:calibration={temperature:g}").setting
    fits.append({"held_out": family, "grid": grid, "setting": setting, "training": ", ".join(training),
                 "held": held, "temperature": temperature, "spec": spec})
    return row_metrics(table[(table.family == family) & (table.setting == setting)], card_of, temperature), spec


def runs_table(families: tuple[Family, ...]) -> pd.DataFrame:
    return pd.DataFrame([{"family": f.name, "label": LABELS.get(f.name, f.name), "experiment_run": f.run,
                          "agents": ",".join(f.agents), "follows_mission": f.follows_mission, "foreign": f.foreign,
                          "held_out": bool(training_families(families, f.name)),
                          "lineage": ", ".join(sorted(f.lineage))} for f in all_families(families)])
