"""The recognition experiment: mission agents at focus 0, 0.5, 0.8 and 1 (1 = constrained play), 4 players.

Honest protocol: for every focus level a training run and a test run are simulated with disjoint seeds. Every
recogniser parameter (PHATT weights, goal temperature, inverse-planning beta and focus, the classifier) is chosen
on the pooled training runs by mean log loss over the checkpoints, without knowing each run's focus, and all
reported numbers come from the test runs. Writes `reports/recognition.md` and the tables `recognition_tuning`
and `recognition_runs` (which run is the training or test run of which focus level).
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm
import pandas as pd

from riskcore import paths
from riskcore.engine.config import GameConfig
from riskcore.db import DataError, query, store_frames
from riskcore.experiments.recognition.protocol import NAMED
from riskcore.experiments.recognition.generalisation_report import riskcore_recogniser
from riskcore.recognition.baselines import goal_posterior
from riskcore.recognition.features import load_features
from riskcore.recognition.inverse import inverse_posterior, load_candidates
from riskcore.recognition.pipeline import CHECKPOINTS, ensure_features_many, evaluate, recognize_many, top1_table
from riskcore.recognition.recognisers import Recogniser, label
from riskcore.recognition.scoring import Scorer
from riskcore.simulate import RunSpec, simulate_many
from riskcore.storage import write_text

FOCUS_LEVELS = (0.0, 0.5, 0.8, 1.0)
DEFAULT_FOCUS = 0.8  # the mission agent's default
GRIDS = {  # per family, the settings tuned on the training runs
    "phatt-simple": [f"phatt:scheme=simple:c=1:i={i}" for i in (0.98, 0.9, 0.7, 0.5, 0.3)],
    "phatt-proportional": [f"phatt:scheme=proportional:lam={x}" for x in (0.6, 0.7, 0.8, 0.9, 0.95, 0.99)],
    "goal": [f"goal:temperature={t}" for t in (0.02, 0.05, 0.1, 0.2, 0.5)],
    # beta x focus (-1: marginalised over the player's unknown focus) x lapse rate
    "inverse": [f"inverse:beta={b}:focus={f}:eps={e}"
                for b, f, e in itertools.product((5, 10, 20), (-1, 0.8, 1), (0.05, 0.2))],
}
ABLATION = ("attack_won,attack_lost", "attack_won,attack_lost,reinforce",
            "attack_won,attack_lost,reinforce,defend_won,defend_lost,fortify")
REFERENCE_PHATT = "phatt:scheme=simple:c=1:i=0.98"  # the reference study's weights
RUNS_KEY = "rec-experiment"  # the key of the experiment's own tables (tuning, runs)


def run_name(split: str, focus: float) -> str:
    return f"rec-{split}-f{focus:g}"


def simulate_runs(games: int, seed: int, data_dir: Path | None, workers: int | None, dask: str | None,
                  progress: bool) -> None:
    specs = [RunSpec(run_name(split, focus), games, GameConfig(n_players=4, mode="mission"),
                     (f"mission:focus={focus:g}",), seed + 1000 * j + i)
             for i, focus in enumerate(FOCUS_LEVELS) for j, split in enumerate(("train", "test"))]
    simulate_many(specs, data_dir, workers, dask, progress, desc="simulate runs")
    ensure_features_many([spec.run for spec in specs], "cards6", data_dir, rebuild=True, workers=workers,
                         dask_address=dask, progress=progress)
    store_frames({"recognition_runs": runs_table(games, seed)}, "metrics", {"run": RUNS_KEY}, data_dir)


def experiment_runs(split: str = "test", data_dir: Path | None = None) -> pd.DataFrame:
    """The experiment's runs of one split (`train` or `test`): columns `run` and `focus`, by focus."""
    df = query("SELECT experiment_run AS run, focus FROM recognition_runs WHERE run = ? AND split = ? ORDER BY focus",
               [RUNS_KEY, split], data_dir)
    if df.empty:
        raise DataError(f"no {split} runs of the recognition experiment: run `riskcore experiment recognition`")
    return df


def test_metrics(data_dir: Path | None = None) -> pd.DataFrame:
    """`recognition_metrics` of the experiment's test runs, with each row's `focus`, the recogniser's readable
    name (`recogniser`) and whether it is one of the ablation's settings (`ablation`)."""
    runs = experiment_runs("test", data_dir)
    marks = ", ".join("?" for _ in runs.run)
    m = query(f"SELECT * FROM recognition_metrics WHERE run IN ({marks}) AND clock = 'window'", list(runs.run),
              data_dir)
    recs = {s: Recogniser.from_spec(s) for s in m.setting.unique()}
    return m.assign(focus=m.run.map(dict(zip(runs.run, runs.focus))), recogniser=m.setting.map(lambda s: recs[s].label),
                    ablation=m.setting.map(lambda s: recs[s].kinds is not None))


def runs_table(games: int, seed: int) -> pd.DataFrame:
    """Which run is the training or test run of which focus level (notebooks select runs by these columns)."""
    rows = [{"experiment_run": run_name(split, focus), "split": split, "focus": focus,
             "agents": f"mission:focus={focus:g}", "games": games, "seed": seed + 1000 * j + i}
            for i, focus in enumerate(FOCUS_LEVELS) for j, split in enumerate(("train", "test"))]
    return pd.DataFrame(rows).assign(run=RUNS_KEY)


def tune_run(run: str, focus: float, data_dir: Path | None) -> list[dict]:
    """Scores of every grid point on one training run."""
    f = load_features(run, "cards6", data_dir)
    scorer = Scorer(f)
    cands = load_candidates(f, run, data_dir)
    rows: list[dict] = []

    def add(family: str, setting: str, score: pd.DataFrame) -> None:
        for point, r in score.iterrows():
            rows.append({"family": family, "setting": setting, "train_focus": focus, "point": point,
                         "top1": r.top1, "log_loss": r.log_loss})

    for family in ("phatt-simple", "phatt-proportional"):
        for spec in GRIDS[family]:
            rec = Recogniser.from_spec(spec)
            add(family, rec.setting, scorer.phatt(rec.weights))
    for spec in GRIDS["goal"]:
        rec = Recogniser.from_spec(spec)
        add("goal", rec.setting, scorer.score(goal_posterior(f, rec.kwargs["temperature"])))
    for spec in GRIDS["inverse"]:
        rec = Recogniser.from_spec(spec)
        p = rec.kwargs
        add("inverse", rec.setting, scorer.score(inverse_posterior(f, cands, scorer.starts, p["beta"], p["focus"],
                                                                   p["eps"])))
    return rows


def tune(data_dir: Path | None, workers: int | None = None) -> tuple[pd.DataFrame, dict[str, Recogniser]]:
    """Score every grid point on each training run; pick per family the lowest mean log loss (pooled)."""
    from riskcore.parallel import in_task_order, run_tasks

    tasks = [(run_name("train", x), x, data_dir) for x in FOCUS_LEVELS]
    # task order: the pooled means then add up in one order
    rows = [r for part in in_task_order(run_tasks(tune_run, tasks, workers, desc="tune", progress=False)) for r in part]
    table = pd.DataFrame(rows)
    pooled = table.groupby(["family", "setting"])[["log_loss", "top1"]].mean().reset_index()
    best = pooled.loc[pooled.groupby("family").log_loss.idxmin()].set_index("family").setting
    return table, {family: Recogniser.from_spec(setting) for family, setting in best.items()}


def with_kinds(rec: Recogniser, kinds: str) -> Recogniser:
    """`rec` with only the observation `kinds` carrying evidence (the ablation)."""
    return Recogniser.from_spec(f"{rec.setting}:kinds={kinds}")


def recognisers_for_test(chosen: dict[str, Recogniser]) -> list[Recogniser]:
    train_runs = ",".join(run_name("train", f) for f in FOCUS_LEVELS)
    recs = [Recogniser.from_spec("uniform"), Recogniser.from_spec("placements"), chosen[NAMED], chosen["goal"],
            Recogniser.from_spec("phatt:scheme=equal"),
            Recogniser.from_spec(REFERENCE_PHATT), chosen["phatt-simple"], chosen["phatt-proportional"],
            chosen["inverse"], Recogniser.from_spec(f"classifier:train={train_runs}")]
    for kinds in ABLATION:  # does more evidence help? (the reference's hypothesis)
        recs += [with_kinds(chosen["inverse"], kinds), with_kinds(chosen["phatt-simple"], kinds)]
    unique = {}
    for r in recs:
        unique.setdefault(r.setting, r)
    return list(unique.values())


def run_experiment(games: int = 1000, seed: int = 2013, data_dir: Path | None = None, workers: int | None = None,
                   dask: str | None = None, progress: bool = True, n_boot: int = 1000,
                   out: Path | None = None) -> Path:
    named = riskcore_recogniser(data_dir)  # named on other play: fails early when it is not there yet
    simulate_runs(games, seed, data_dir, workers, dask, progress)
    tuning, chosen = tune(data_dir, workers)
    chosen[NAMED] = named
    recs = recognisers_for_test(chosen)
    tests = [run_name("test", focus) for focus in FOCUS_LEVELS]
    # after every turn too: the explorer draws these runs' posteriors turn by turn
    recognize_many([(run, rec) for run in tests for rec in recs], "cards6", data_dir, workers, dask, progress,
                   turns=True)
    for run in tqdm(tests, desc="evaluate", disable=not progress):
        # its own settings: a run may keep another configuration's (a recogniser named on other play before)
        evaluate(run, data_dir, n_boot=n_boot, settings=[rec.setting for rec in recs])
    _store_tuning(tuning, data_dir)
    return write_report(chosen, games, data_dir, out)


def _store_tuning(tuning: pd.DataFrame, data_dir: Path | None) -> None:
    # a publication replaces everything recorded under its keys: the runs table goes out again beside the tuning,
    # or its file would be left in the directory unrecorded
    runs = query("SELECT * FROM recognition_runs WHERE run = ?", [RUNS_KEY], data_dir)
    store_frames({"recognition_runs": runs, "recognition_tuning": tuning.assign(run=RUNS_KEY)}, "metrics",
                 {"run": RUNS_KEY}, data_dir)


def _fmt(v: float, lo: float, hi: float) -> str:
    return f"{v:.3f} [{lo:.3f}, {hi:.3f}]"


def focus_of(runs: pd.Series) -> pd.Series:
    """The focus level of each test run name."""
    return runs.map({run_name("test", f): f for f in FOCUS_LEVELS})


def write_report(chosen: dict[str, Recogniser], games: int, data_dir: Path | None, out: Path | None) -> Path:
    runs = [run_name("test", f) for f in FOCUS_LEVELS]
    marks = ", ".join("?" for _ in runs)
    m = query(f"SELECT * FROM recognition_metrics WHERE run IN ({marks}) AND clock = 'window'", runs, data_dir)
    pairs = query(f"SELECT * FROM recognition_paired WHERE run IN ({marks})", runs, data_dir)
    m["recogniser"] = m.setting.map(label)
    main_settings = [r.setting for r in recognisers_for_test(chosen) if r.kinds is None]
    lines = [f"# Mission recognition results ({games} test games per focus level, 4 players)", "",
             "Card level, 6 continent mission cards (chance 1/6); players holding another card are not scored. "
             "Parameters chosen on training runs with other seeds (`recognition_tuning`); 95% bootstrap "
             "intervals over games. Generated by `riskcore experiment recognition`.", "",
             "Chosen settings: " + ", ".join(f"{r.label} (`{r.setting}`)" for r in chosen.values()), ""]
    for focus, run in zip(FOCUS_LEVELS, runs):
        sub = m[(m.run == run) & m.setting.isin(main_settings)]
        lines += [f"## Focus {focus:g}: top-1 by share of the observation window", "",
                  top1_table(sub, index="recogniser").to_markdown(), "",
                  f"Log loss (uniform = {np.log(6):.3f}):", "",
                  top1_table(sub, "log_loss", index="recogniser").to_markdown(), ""]
    lines += _targets(m, pairs, chosen)
    lines += _winners(m, main_settings), ""
    lines += _ablation(m, chosen), ""
    path = Path(out or paths.reports_dir()) / "recognition.md"
    write_text(path, "\n".join(lines) + "\n")
    return path


def _targets(m: pd.DataFrame, pairs: pd.DataFrame, chosen: dict[str, Recogniser]) -> list[str]:
    """riskcore's recogniser at the default focus (named on other play, nothing tuned here), and
    beside it the best of the tuned recognisers (exploration: a best-of-several)."""
    run = run_name("test", DEFAULT_FOCUS)
    d = m[(m.run == run) & (m.subset == "all")]
    named = chosen[NAMED].setting
    best = max((r.setting for name, r in chosen.items() if name != NAMED),
               key=lambda s: d[(d.setting == s) & (d.metric == "top1") & (d.point == 0.5)].value.max())

    def val(setting, metric, point):
        row = d[(d.setting == setting) & (d.metric == metric) & (d.point == point)]
        return row.iloc[0] if len(row) else pd.Series({"value": np.nan, "ci_low": np.nan, "ci_high": np.nan})

    def cell(setting, metric, point):
        r = val(setting, metric, point)
        return _fmt(r.value, r.ci_low, r.ci_high)

    below = [p for p in CHECKPOINTS if val(named, "log_loss", p).value <= np.log(6)]
    lines = [f"## riskcore's recogniser at the default focus ({DEFAULT_FOCUS:g})", "",
             f"{label(named)} (`{named}`), named by the training protocol on a simulated population (other "
             "games; `mission` agents among them, so these runs are in-model for it); nothing of it is tuned on "
             "these runs.", "",
             f"- top-1 at 50% of the window: {cell(named, 'top1', 0.5)}; at 100%: {cell(named, 'top1', 1.0)}",
             f"- log loss at or below uniform ({np.log(6):.3f}) at {len(below)} of {len(CHECKPOINTS)} checkpoints "
             f"(at 100%: {cell(named, 'log_loss', 1.0)})",
             f"- the placement-count yardstick: {cell('placements', 'top1', 0.5)} at 50%, "
             f"{cell('placements', 'top1', 1.0)} at 100%", "",
             f"Exploration, the best of the recognisers tuned on these runs' training runs: {label(best)}, "
             f"{cell(best, 'top1', 0.5)} at 50% and {cell(best, 'top1', 1.0)} at 100%.", ""]
    return lines


def winners_vs_losers(setting: str, point: float = 0.5, n_boot: int = 1000, data_dir: Path | None = None
                      ) -> pd.DataFrame:
    """Per focus level: the mean over games of the winner's top-1 less the mean of the losers' top-1 in the same
    game (players of a card in the hypotheses, games with both), with a 95% bootstrap interval over games."""
    from riskcore.recognition.metrics import bootstrap_ci
    from riskcore.recognition.pipeline import player_metrics

    rng = np.random.default_rng(0)
    rows = []
    runs = experiment_runs("test", data_dir)
    for focus, run in zip(runs.focus, runs.run):
        per = player_metrics(run, data_dir, [setting])
        at = per[np.isclose(per.point, point)]
        by = at.groupby(["game_id", "won"]).top1.mean().unstack("won").dropna()
        diff = (by[True] - by[False]).to_numpy()
        lo, hi = bootstrap_ci(diff, rng, n_boot)
        rows.append({"focus": focus, "setting": setting, "point": point, "difference": float(diff.mean()),
                     "ci_low": lo, "ci_high": hi, "games": len(diff)})
    return pd.DataFrame(rows)


def _winners(m: pd.DataFrame, settings: list[str]) -> str:
    d = m[m.subset.isin(["winners", "losers"]) & (m.metric == "top1") & (m.point == 0.5) & m.setting.isin(settings)]
    d = d.assign(cell=[_fmt(r.value, r.ci_low, r.ci_high) for r in d.itertuples()], focus=focus_of(d.run))
    table = d.pivot_table(index=["focus", "recogniser"], columns="subset", values="cell", aggfunc="first")
    return "## Winners vs losers (top-1 at 50% observed)\n\n" + table.to_markdown()


def _ablation(m: pd.DataFrame, chosen: dict[str, Recogniser]) -> str:
    d = m[(m.subset == "all") & (m.metric == "top1") & (m.point == 0.5)].assign(focus=lambda x: focus_of(x.run))
    rows = []
    for base in (chosen["phatt-simple"], chosen["inverse"]):
        for rec in [with_kinds(base, kinds) for kinds in ABLATION] + [base]:
            for r in d[d.setting == rec.setting].sort_values("focus").itertuples():
                rows.append({"recogniser": base.label, "kinds": rec.label.removeprefix(base.label).strip(" []")
                             or "every kind", "focus": f"{r.focus:g}",
                             "top1@50%": _fmt(r.value, r.ci_low, r.ci_high)})
    table = pd.DataFrame(rows).pivot_table(index=["recogniser", "kinds"], columns="focus", values="top1@50%",
                                           aggfunc="first")
    return "## Ablation: observation kinds (top-1 at 50% observed)\n\n" + table.to_markdown()
