"""`riskcore train-scorer`: refit the search's learned end scorer from its recorded seeds.

Positions come from the search experiment's position generator (`experiments.search.positions`) with seeds
disjoint from the experiment's; the groups, the fit and the agreement checks are `search.endtrain`'s. The weights
go to the models folder (`search.endscore.scorer_path()`), never into the installed package.
"""

from __future__ import annotations

from pathlib import Path

from riskcore.experiments.search import positions
from riskcore.parallel import in_task_order, run_tasks
from riskcore.search.endscore import EndScorer
from riskcore.search.endtrain import RECIPE, Group, fit_scorer, position_groups, store_scorer


def training_groups(players: int, seeds: tuple[int, ...], n: int, workers: int | None = None,
                    dask: str | None = None, progress: bool = True) -> dict[int, list[Group]]:
    """The groups of the first `n` positions of each seed, by seed."""
    states = {seed: positions(n, players, seed) for seed in seeds}
    tasks = [(s, players) for seed in seeds for s in states[seed]]
    labels = [seed for seed in seeds for _ in states[seed]]
    parts = in_task_order(run_tasks(position_groups, tasks, workers, dask, desc=f"{players}-player positions",
                                    progress=progress))
    return {seed: [g for label, part in zip(labels, parts) if label == seed for g in part] for seed in seeds}


def train_scorer(players: int, seeds: tuple[int, ...], validation_seed: int, n: int, workers: int | None = None,
                 dask: str | None = None, progress: bool = True) -> tuple[EndScorer, dict]:
    """A scorer fitted on the positions of `seeds`, and its record: the recipe and, per k, the agreement with
    exact search of the own-value rule and of the scorer on the training and the validation positions."""
    if validation_seed in seeds:
        raise ValueError(f"validation seed {validation_seed} is also a training seed")
    data = training_groups(players, (*seeds, validation_seed), n, workers, dask, progress)
    train = [g for seed in seeds for g in data[seed]]
    valid = data[validation_seed]
    scorer, checks = fit_scorer(train, valid)
    record = {"seeds": list(seeds), "validation_seed": validation_seed, "positions_per_seed": n,
              "groups": {"train": len(train), "validation": len(valid)}, "recipe": RECIPE, "agreement": checks}
    return scorer, record


def refit(players: int, seeds: tuple[int, ...], validation_seed: int, n: int, out: Path | None = None,
          workers: int | None = None, dask: str | None = None, progress: bool = True) -> tuple[Path, dict]:
    """Fit and store the scorer for `players` players; returns the file written and the record."""
    scorer, record = train_scorer(players, seeds, validation_seed, n, workers, dask, progress)
    return store_scorer(scorer, record, players, out), record
