"""The generalisation experiment: recognisers judged on play they were not built from.

Every agent family plays its own run (4 players, mission mode, mission-following settings where the family has a
choice; `domination-blind`, `expert-blind` and `bsr-blind` are the same agents ignoring their mission), and the
Domination corpus (games recorded by another program, `datasets/domination/corpus`) is imported as one more run.
Protocol, leave one family out: for each held-out riskcore family every fitted recogniser (its grid point: PHATT
weights, goal temperature, inverse planning's beta and lapse, the mixtures' beta, rho and temper) is chosen on the
training families, those that share no agent with the held-out one (holding out `domination` also removes
`domination-blind` and `mixed`, whose seats include it; holding out `expert` removes `expert-blind`), and the
classifier is trained on their runs. For the Domination corpus every riskcore family trains: nothing is fitted on
the corpus. The corpus's ceiling is the conditional logit (`recognition.conditional_logit`) cross-validated on the
corpus itself (5 folds by game): how much of the mission that play reveals to a model that has seen it. Beside it,
every family's mission lean (`recognition.mission_lean`): how much more its reinforcements and conquests land in
its own card's continents than in the others', a property of the play that no recogniser's model enters.

Grid points are chosen by the lowest mean log loss over the training families, except for the open-goal mixture,
the recogniser meant for players of unknown style: it must know when it does not know, so its grid point is the
lowest mean log loss among those no worse than uniform on every training family (if none is, the one whose worst
family is least above uniform).

Writes `reports/generalisation.md` and the tables `generalisation_metrics` (family x recogniser x checkpoint:
top-1 and log loss with 95% bootstrap intervals over games, ECE), `generalisation_calibration` (reliability
bins), `generalisation_fits` (the grid point chosen for each held-out family) and `generalisation_lean` (each
family's mission lean with its interval).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd

from riskcore import paths
from riskcore.config import GameConfig
from riskcore.db import query, store_frames
from riskcore.recognition import conditional_logit
from riskcore.recognition.features import Features, load_features
from riskcore.recognition.inverse import Candidates, inverse_posterior, load_candidates
from riskcore.recognition.metrics import bootstrap_ci, card_metrics
from riskcore.recognition.mission_lean import LEAN_KINDS, player_lean
from riskcore.recognition.mixture import mixture_from_logliks, model_logliks
from riskcore.recognition.pipeline import ensure_features, ensure_features_many
from riskcore.recognition.posterior import group_starts
from riskcore.recognition.recognisers import Recogniser, classifier_posterior, fit_classifier
from riskcore.recognition.scoring import Scorer
from riskcore.simulate import RunSpec, simulate_many
from riskcore.storage import write_text

KEY = "generalisation"  # the experiment's own tables live under this run key
CORPUS = "domination corpus"


@dataclass(frozen=True)
class Family:
    name: str
    agents: tuple[str, ...]
    slow: bool = False  # plays a share of the games (search agents take seconds a game)
    follows_mission: bool = True

    @property
    def run(self) -> str:
        return f"gen-{self.name}"

    @property
    def agent_names(self) -> set[str]:
        """The agents behind its seats, whatever their settings."""
        return {spec.split(":")[0] for spec in self.agents}


FAMILIES = (
    Family("mission", ("mission",)),
    Family("expert", ("expert:mission_weight=1",)),
    Family("bsr", ("bsr:mission_weight=1",)),
    Family("aware", ("aware",)),
    Family("minimax", ("minimax:mission_weight=1",), slow=True),
    Family("mcs", ("mcs:playouts=6:mission_weight=1",), slow=True),
    Family("gb", ("gb",), slow=True),
    Family("domination-blind", ("domination",), follows_mission=False),
    Family("mixed", ("mission", "expert:mission_weight=1", "bsr:mission_weight=1", "domination")),
    Family("expert-blind", ("expert",), follows_mission=False),
    Family("bsr-blind", ("bsr",), follows_mission=False),
    # last: a family's games come from seed + its position, so the families above keep theirs
    Family("domination", ("domination:mission_weight=1",)),
)
CORPUS_RUN = "gen-domination-corpus"

# Fixed recognisers (nothing to fit) and the grids of the fitted ones, declared before measuring.
FIXED = ("uniform", "phatt:scheme=simple:c=1:i=0.98", "phatt:scheme=khan2013")
GRIDS = {
    "goal": [f"goal:temperature={t}" for t in (0.05, 0.1, 0.2)],
    "phatt-simple": [f"phatt:scheme=simple:c=1:i={i}" for i in (0.98, 0.9, 0.7, 0.5)],
    "inverse": [f"inverse:beta={b}:focus=-1:eps={e}" for b in (5, 10, 20) for e in (0.05, 0.2)],
    "mixture": [f"mixture:beta={b}:temper={t}" for b in (5, 10, 20) for t in (0.25, 0.5, 1)],
    "open": [f"mixture:beta=5:goals=3:rho={r}:temper={t}" for r in (0.5, 0.2, 0.05) for t in (0.5, 1)],
}
CAUTIOUS = ("open",)  # grids chosen among settings no worse than uniform on every training family
CLASSIFIER = "classifier"
CALIBRATION_BINS = 10


def slow_games(games: int) -> int:
    return max(2, round(games * 0.2))


def simulate_runs(families: tuple[Family, ...], games: int, seed: int, data_dir: Path | None, workers: int | None,
                  dask: str | None, progress: bool) -> None:
    # every family's games in one pool; search agents take seconds a game: small chunks keep every worker busy
    specs = [RunSpec(fam.run, slow_games(games) if fam.slow else games, GameConfig(n_players=4, mode="mission"),
                     fam.agents, seed + i, chunk=2 if fam.slow else 25) for i, fam in enumerate(families)]
    simulate_many(specs, data_dir, workers, dask, progress, desc="simulate families")
    ensure_features_many([fam.run for fam in families], "cards6", data_dir, rebuild=True, workers=workers,
                         dask_address=dask, progress=progress)


def corpus_logs() -> list[Path]:
    return sorted((paths.datasets_dir() / "domination" / "corpus").glob("*.log.gz"))


def import_corpus(logs: list[Path], data_dir: Path | None, workers: int | None, progress: bool) -> None:
    from riskcore.domination import import_logs

    import_logs(logs, CORPUS_RUN, data_dir)
    ensure_features(CORPUS_RUN, "cards6", data_dir, rebuild=True, workers=workers, progress=progress)


# ---- scoring ---------------------------------------------------------------------------------------------------

class Run:
    """One run's features, candidates and checkpoint rows, loaded once and scored for many posteriors."""

    def __init__(self, name: str, data_dir: Path | None):
        self.name = name
        self.f = load_features(name, "cards6", data_dir)
        self.starts = group_starts(self.f)
        self._rows = {}
        self.data_dir = data_dir
        self._mixture_ll = {}

    @cached_property
    def extended(self) -> Features:
        return load_features(self.name, "cards6", self.data_dir, extended=True)

    @cached_property
    def cands(self) -> Candidates:
        return load_candidates(self.f, self.name, self.data_dir)

    def rows(self, f: Features) -> pd.DataFrame:
        key = id(f)
        if key not in self._rows:
            self._rows[key] = Scorer(f).rows  # the scored (player, checkpoint) rows, as in the tuning
        return self._rows[key]

    def players(self, post: np.ndarray, f: Features | None = None) -> pd.DataFrame:
        """One row per scored (player, checkpoint): top-1, log loss and the confidence (largest card probability)."""
        f = f or self.f
        rows = self.rows(f)
        probs = f.hyp.card_probs(post[rows.row.to_numpy()])
        m = card_metrics(probs, rows.card.to_numpy())
        return pd.DataFrame({"game_id": rows.game_id, "player": rows.player, "point": rows.point,
                             "top1": m.top1, "log_loss": m.log_loss, "confidence": probs.max(axis=1)})

    def posterior(self, setting: str) -> pd.DataFrame:
        rec = Recogniser.from_spec(setting)
        if rec.name == "mixture":
            p = rec.kwargs
            key = (p["beta"], p["eps"], int(p.get("goals", 0)))
            if key not in self._mixture_ll:  # the tempers and rhos of one beta share the per-model likelihoods
                self._mixture_ll[key] = model_logliks(self.f, self.cands, *key)
            post = mixture_from_logliks(self.f, self._mixture_ll[key], self.starts, p["rho"], p["temper"])
            return self.players(post)
        if rec.name == "inverse":
            p = rec.kwargs
            return self.players(inverse_posterior(self.f, self.cands, self.starts, p["beta"], p["focus"], p["eps"]))
        f = self.extended if rec.extended else self.f
        return self.players(rec.posterior(f, self.name, self.data_dir), f)


def score_run(family: str, run: str, data_dir: Path | None) -> pd.DataFrame:
    """Per-player rows of every fixed recogniser and grid point on one run."""
    loaded = Run(run, data_dir)
    settings = list(FIXED) + [s for grid in GRIDS.values() for s in grid]
    return pd.concat([loaded.posterior(s).assign(family=family, setting=Recogniser.from_spec(s).setting)
                      for s in settings], ignore_index=True)


def score_all(runs: dict[str, str], data_dir: Path | None, workers: int | None, dask: str | None,
              progress: bool) -> pd.DataFrame:
    """`score_run` of every (family, run), one task each, in task order."""
    from riskcore.parallel import in_task_order, run_tasks

    tasks = [(family, run, data_dir) for family, run in runs.items()]
    return pd.concat(in_task_order(run_tasks(score_run, tasks, workers, dask, desc="score", progress=progress)),
                     ignore_index=True)


def per_family_loss(scores: pd.DataFrame) -> pd.DataFrame:
    """Mean log loss of each setting on each family (games weighted equally, checkpoints pooled)."""
    per_game = scores.groupby(["family", "setting", "point", "game_id"]).log_loss.mean()
    return per_game.groupby(["family", "setting"]).mean().unstack("family")


def training_families(families: tuple[Family, ...], held_out: str) -> list[str]:
    """The riskcore families that share no agent with `held_out` (all of them for the corpus)."""
    held = next((f.agent_names for f in families if f.name == held_out), set())
    return [f.name for f in families if f.name != held_out and not f.agent_names & held]


def choose(losses: pd.DataFrame, training: list[str]) -> dict[str, str]:
    """Per grid, the setting with the lowest mean log loss over the `training` families; for the `CAUTIOUS`
    grids, among the settings no worse than uniform on every one of them (if none is, the setting whose worst
    family is least above uniform)."""
    out = {}
    for grid, specs in GRIDS.items():
        table = losses.loc[[Recogniser.from_spec(s).setting for s in specs], training]
        mean = table.mean(axis=1)
        if grid in CAUTIOUS:
            worst = table.max(axis=1)
            safe = worst <= np.log(6)
            out[grid] = mean[safe].idxmin() if safe.any() else worst.idxmin()
        else:
            out[grid] = mean.idxmin()
    return out


def classifier_scores(runs: dict[str, Run], training: list[str], held_out: str) -> pd.DataFrame:
    model = fit_classifier([runs[f].f for f in training])
    run = runs[held_out]
    return run.players(classifier_posterior(model, run.f))


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
    return run.players(post)


def summarise(players: pd.DataFrame, family: str, recogniser: str, setting: str, rng: np.random.Generator,
              n_boot: int) -> tuple[list[dict], list[dict]]:
    """Metric rows with bootstrap intervals over games, and the reliability bins (checkpoints pooled)."""
    metrics = []
    for point, d in players.groupby("point"):
        per_game = d.groupby("game_id")[["top1", "log_loss"]].mean()
        for metric in ("top1", "log_loss"):
            lo, hi = bootstrap_ci(per_game[metric].to_numpy(), rng, n_boot)
            metrics.append({"family": family, "recogniser": recogniser, "setting": setting, "point": point,
                            "metric": metric, "value": per_game[metric].mean(), "ci_low": lo, "ci_high": hi,
                            "games": len(per_game)})
    bins = np.minimum((players.confidence * CALIBRATION_BINS).astype(int), CALIBRATION_BINS - 1)
    cal = players.groupby(bins).agg(confidence=("confidence", "mean"), accuracy=("top1", "mean"),
                                    count=("top1", "size")).reset_index(names="bin")
    ece = float((cal["count"] * (cal.accuracy - cal.confidence).abs()).sum() / cal["count"].sum())
    metrics.append({"family": family, "recogniser": recogniser, "setting": setting, "point": np.nan,
                    "metric": "ece", "value": ece, "ci_low": np.nan, "ci_high": np.nan,
                    "games": players.game_id.nunique()})
    calibration = cal.assign(family=family, recogniser=recogniser, setting=setting).to_dict("records")
    return metrics, calibration


def lean_rows(family: str, run: Run, rng: np.random.Generator, n_boot: int) -> list[dict]:
    """The family's mean mission lean per action kind (a game's players averaged first), with its interval."""
    per_game = player_lean(run.f).groupby("game_id")[list(LEAN_KINDS)].mean()
    out = []
    for kind in LEAN_KINDS:
        lo, hi = bootstrap_ci(per_game[kind].to_numpy(), rng, n_boot)
        out.append({"family": family, "kind": kind, "value": per_game[kind].mean(), "ci_low": lo, "ci_high": hi,
                    "games": int(per_game[kind].notna().sum())})
    return out


RECOGNISER_NAMES = {"uniform": "uniform", "phatt:scheme=simple:c=1:i=0.98": "PHATT simple (reference weights)",
                    "phatt:scheme=khan2013": "PHATT khan2013 (the reference's code)",
                    "goal": "goal completion", "phatt-simple": "PHATT simple (fitted)",
                    "inverse": "inverse planning", "mixture": "play-style mixture", "open": "open-goal mixture",
                    CLASSIFIER: "classifier",
                    "ceiling": "corpus ceiling (conditional logit, 5-fold CV on the corpus)"}


def run_experiment(games: int = 150, seed: int = 4040, data_dir: Path | None = None, workers: int | None = None,
                   dask: str | None = None, progress: bool = True, n_boot: int = 1000, out: Path | None = None,
                   families: tuple[Family, ...] = FAMILIES, logs: list[Path] | None = None) -> Path:
    simulate_runs(families, games, seed, data_dir, workers, dask, progress)
    import_corpus(corpus_logs() if logs is None else logs, data_dir, workers, progress)
    run_names = {**{f.name: f.run for f in families}, CORPUS: CORPUS_RUN}
    scores = score_all(run_names, data_dir, workers, dask, progress)
    runs = {family: Run(run, data_dir) for family, run in run_names.items()}
    losses = per_family_loss(scores)
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    metrics, calibration, fits = [], [], []
    for family in runs:
        training = training_families(families, family)
        chosen = choose(losses, training)
        fits += [{"held_out": family, "grid": g, "setting": s, "training": ", ".join(training)}
                 for g, s in chosen.items()]
        entries = [(RECOGNISER_NAMES[Recogniser.from_spec(s).setting], Recogniser.from_spec(s).setting,
                    scores[(scores.family == family) & (scores.setting == Recogniser.from_spec(s).setting)])
                   for s in FIXED]
        entries += [(RECOGNISER_NAMES[g], s, scores[(scores.family == family) & (scores.setting == s)])
                    for g, s in chosen.items()]
        entries.append((RECOGNISER_NAMES[CLASSIFIER], "classifier:train=<other families>",
                        classifier_scores(runs, training, family)))
        if family == CORPUS:
            entries.append((RECOGNISER_NAMES["ceiling"], "conditional logit (5-fold CV by game)",
                            ceiling_scores(runs[family], 5, seed)))
        for name, setting, players in entries:
            m, c = summarise(players, family, name, setting, rng, n_boot)
            metrics += m
            calibration += c
    # drawn after the recognisers' intervals, so a measure of the play never moves theirs
    lean = [row for family, run in runs.items() for row in lean_rows(family, run, rng, n_boot)]
    tables = {"generalisation_metrics": pd.DataFrame(metrics), "generalisation_calibration": pd.DataFrame(calibration),
              "generalisation_fits": pd.DataFrame(fits), "generalisation_lean": pd.DataFrame(lean),
              "generalisation_runs": pd.DataFrame(
                  [{"family": f.name, "experiment_run": f.run, "agents": ",".join(f.agents),
                    "follows_mission": f.follows_mission} for f in families]
                  + [{"family": CORPUS, "experiment_run": CORPUS_RUN, "agents": "Domination AI (imported)",
                      "follows_mission": True}])}
    store_frames({k: v.assign(run=KEY) for k, v in tables.items()}, "metrics", {"run": KEY}, data_dir)
    return write_report(games, data_dir, out)


# ---- report ----------------------------------------------------------------------------------------------------

def load_metrics(data_dir: Path | None = None) -> pd.DataFrame:
    return query("SELECT * FROM generalisation_metrics WHERE run = ?", [KEY], data_dir)


def _cell(r, spec: str = ".3f") -> str:
    return f"{r.value:{spec}} [{r.ci_low:{spec}}, {r.ci_high:{spec}}]"


def table(m: pd.DataFrame, metric: str, point: float) -> pd.DataFrame:
    d = m[(m.metric == metric) & (m.point == point)]
    d = d.assign(cell=[_cell(r) for r in d.itertuples()])
    order = list(dict.fromkeys(d.recogniser))
    return d.pivot(index="recogniser", columns="family", values="cell").reindex(order)[
        list(dict.fromkeys(d.family))].fillna("")  # the ceiling exists on the corpus only


def load_lean(data_dir: Path | None = None) -> pd.DataFrame:
    return query("SELECT * FROM generalisation_lean WHERE run = ?", [KEY], data_dir)


def targets(m: pd.DataFrame, lean: pd.DataFrame, data_dir: Path | None = None) -> list[str]:
    """The measured standing against the aims: best top-1 at 100% on mission-following families, log loss
    against uniform everywhere, the corpus against its ceiling; beside them, how much each family's play shows."""
    runs = query("SELECT family, follows_mission FROM generalisation_runs WHERE run = ?", [KEY], data_dir)
    follows = dict(zip(runs.family, runs.follows_mission))
    leans = lean.set_index(["family", "kind"]).value
    fitted = m[~m.recogniser.str.startswith("corpus ceiling")]
    end = fitted[(fitted.point == 1.0)]
    lines = []
    uniform_ll = np.log(6)
    for family, d in end.groupby("family", sort=False):
        top = d[d.metric == "top1"].sort_values("value", ascending=False).iloc[0]
        ll = d[d.metric == "log_loss"].set_index("recogniser").value
        below = [r for r, v in ll.items() if v <= uniform_ll + 1e-9 and r != "uniform"]
        aim = ("another program's AI" if family == CORPUS else
               "follows its mission" if follows.get(family, True) else "mission-blind")
        shown = " / ".join(f"{leans.get((family, k), np.nan):+.2f}" for k in LEAN_KINDS)
        lines.append(f"| {family} | {aim} | {shown} | {top.recogniser} | {top.value:.3f} | "
                     f"{ll.get('open-goal mixture', np.nan):.3f} | {ll.get('play-style mixture', np.nan):.3f} | "
                     f"{', '.join(below) or 'none'} |")
    return (["| held-out family | play | mission lean (reinforcements / conquests) | best top-1 at 100% | top-1 | "
             f"open-goal mixture log loss | play-style mixture log loss | log loss <= uniform ({uniform_ll:.3f}) at "
             "100% |",
             "|---|---|---|---|---:|---:|---:|---|"] + lines)


def lean_table(lean: pd.DataFrame) -> pd.DataFrame:
    cells = lean.assign(cell=[_cell(r, "+.3f") for r in lean.itertuples()])  # a lean's sign is its direction
    table = cells.pivot(index="family", columns="kind", values="cell").reindex(list(dict.fromkeys(lean.family)))
    return table[list(LEAN_KINDS)].rename(columns={"reinforce": "reinforcements", "attack_won": "conquests"})


def write_report(games: int, data_dir: Path | None = None, out: Path | None = None) -> Path:
    m, lean = load_metrics(data_dir), load_lean(data_dir)
    fits = query("SELECT * FROM generalisation_fits WHERE run = ?", [KEY], data_dir)
    ece = m[m.metric == "ece"].pivot(index="recogniser", columns="family", values="value")
    lines = [f"# Generalisation: recognisers on play they were not built from ({games} games per family, "
             f"{slow_games(games)} for the search agents; 4 players)", "",
             "Card level, 6 continent cards (chance 1/6, uniform log loss ln 6 = 1.792). Leave one family out: "
             "every fitted recogniser is chosen or trained on the riskcore families that share no agent with the "
             "held-out one (listed at the end); on the Domination corpus nothing is fitted on the corpus. Grid "
             "points by the lowest mean log loss on those families; the open-goal mixture's among the points no "
             "worse than uniform on every one of them. 95% bootstrap intervals over games. Generated by "
             "`riskcore experiment generalisation`.", "",
             "## Standing at 100% observed", ""] + targets(m, lean, data_dir) + [
             "", "## How much of its mission each family's play shows", "",
             "Mission lean: the share of a player's reinforcements (or conquests) that land in its own card's named "
             "continents, less the mean of that share over the other five cards'; players with a continent card, "
             "whole game, a game's players averaged first, 95% bootstrap interval over games. Missions are dealt at "
             "random, so play that ignores them leans 0; no recogniser's model enters this number.", "",
             lean_table(lean).to_markdown(), ""]
    for metric, point in (("top1", 0.3), ("top1", 0.5), ("top1", 1.0), ("log_loss", 0.5), ("log_loss", 1.0)):
        lines += [f"## {'Top-1' if metric == 'top1' else 'Log loss'} at {point:.0%} observed", "",
                  table(m, metric, point).to_markdown(), ""]
    lines += ["## Expected calibration error (top-1 confidence, checkpoints pooled)", "",
              ece.round(3).astype(object).where(ece.notna(), "").to_markdown(), "",
              "## Grid points chosen for each held-out family", "",
              fits.pivot(index="held_out", columns="grid", values="setting").to_markdown(), "",
              "## Training families for each held-out family", "",
              fits.drop_duplicates("held_out").set_index("held_out")[["training"]].to_markdown(), ""]
    path = Path(out or paths.reports_dir()) / "generalisation.md"
    write_text(path, "\n".join(lines) + "\n")
    return path
