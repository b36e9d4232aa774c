"""The generalisation experiment's protocol: its families, their code lineage, the recognisers it scores and the
rules that choose settings, name riskcore's recogniser and calibrate it (`riskcore.experiments.recognition.generalisation` runs
it, `generalisation_report` reads its tables). Declared before measuring; the reasons are in that module's
docstring and in `docs/recognition.md`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.optimize import minimize_scalar

from riskcore.recognition.metrics import card_metrics, explanation_top1
from riskcore.recognition.recognisers import Recogniser, calibrated

KEY = "generalisation"  # the experiment's own tables live under this run key
CORPUS = "domination corpus"
UNIFORM_LOSS = float(np.log(6))


@dataclass(frozen=True)
class Family:
    name: str
    agents: tuple[str, ...]
    slow: bool = False  # plays a share of the games (search agents take seconds a game)
    follows_mission: bool = True
    source: str = ""  # foreign families: the logs' folder under datasets/domination and the mission weight
    weight: int = 0

    @property
    def run(self) -> str:
        return f"gen-{self.name.replace(' ', '-')}"

    @property
    def foreign(self) -> bool:
        return bool(self.source)

    @property
    def lineage(self) -> frozenset[str]:
        """The registered agents whose code the family's seats run (none for another program's play)."""
        from riskcore.agents import lineage

        return frozenset().union(*(lineage(a) for a in self.agents)) if not self.foreign else frozenset()


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
FOREIGN = (
    Family(CORPUS, ("Domination AI",), follows_mission=False, source="corpus"),  # nearly mission-blind
    Family("fork-ai w100", ("the reference's mission AI, weight 100",), source="fork-ai", weight=100),
    Family("fork-ai w4", ("the reference's mission AI, weight 4",), source="fork-ai", weight=4),
)
BORDERS = {"corpus": 81, "fork-ai": 82}  # the maps the foreign games were recorded on
LABELS = {"mixed": "mixed (one mission-blind seat of four)"}

# Fixed recognisers (nothing to fit) and the grids of the fitted ones, declared before measuring.
REFERENCE = "phatt:scheme=khan2013"  # the reference's own recogniser, equal to its output
YARDSTICK = "placements"
FIXED = ("uniform", YARDSTICK, "phatt:scheme=simple:c=1:i=0.98", REFERENCE)
# each fitted recogniser's grid: a base spec and its axes; a choice on an axis's edge widens the axis (`widen`)
AXES = {
    "goal": ("goal", {"temperature": (0.05, 0.1, 0.2)}),
    "phatt-simple": ("phatt:scheme=simple:c=1", {"i": (0.98, 0.9, 0.7, 0.5, 0.3)}),
    "inverse": ("inverse:focus=-1", {"beta": (5, 10, 20), "eps": (0.1, 0.2, 0.4)}),
    "mixture": ("mixture", {"beta": (2.5, 5, 10), "temper": (0.25, 0.5, 1)}),
    "open": ("mixture:beta=5:goals=3", {"rho": (0.2, 0.05, 0.02), "temper": (0.25, 0.5, 1)}),
}
# where an axis may go: (lowest, highest, whether the highest is a value it may take)
BOUNDS = {"temperature": (0, np.inf, False), "i": (0, 1, False), "beta": (0, np.inf, False),
          "eps": (0, 1, False), "rho": (0, 1, False), "temper": (0, 1, True)}
WIDEN_ROUNDS = 2


def grid_specs(grid: str, axes: dict[str, tuple] | None = None) -> list[str]:
    """Every setting of a grid (its declared axes, or `axes`), canonical."""
    from itertools import product

    base, declared = AXES[grid]
    axes = axes or declared
    names = list(axes)
    return [Recogniser.from_spec(base + "".join(f":{k}={v:g}" for k, v in zip(names, values))).setting
            for values in product(*(axes[k] for k in names))]


GRIDS = {grid: grid_specs(grid) for grid in AXES}


def axis_values(grid: str, setting: str) -> dict[str, float]:
    """A grid setting's value on each of the grid's axes."""
    rec = Recogniser.from_spec(setting)
    if rec.weights is not None:
        return {"i": float(rec.weights.i["reinforce"])}
    return {k: float(rec.kwargs[k]) for k in AXES[grid][1]}


def widen(grids: dict[str, list[str]], chosen: list[tuple[str, str]]) -> dict[str, list[str]]:
    """The grids with, for every chosen (grid, setting) on the edge of one of its grid's axes, the setting with that
    axis moved beyond the edge: half the edge below, double it (or half-way to a bound) above; an axis at a bound
    it may take stays."""
    out = {grid: list(specs) for grid, specs in grids.items()}
    for grid, setting in chosen:
        values = [axis_values(grid, s) for s in out[grid]]
        point = axis_values(grid, setting)
        for axis, value in point.items():
            seen = sorted({v[axis] for v in values})
            low, high, reachable = BOUNDS[axis]
            new = None
            if len(seen) > 1 and value == seen[0]:
                new = value / 2
            elif len(seen) > 1 and value == seen[-1] and not (reachable and value >= high):
                new = value * 2 if np.isinf(high) else (value + high) / 2
            if new is None or not (low < new and (new < high or (reachable and new <= high))):
                continue
            moved = {**point, axis: float(f"{new:.4g}")}
            spec = Recogniser.from_spec(AXES[grid][0] + "".join(f":{k}={v:g}" for k, v in moved.items())).setting
            if spec not in out[grid]:
                out[grid].append(spec)
    return out


CAUTIOUS = ("open",)  # grids chosen among settings no worse than uniform on every training family
NAMED_CANDIDATES = ("inverse", "mixture", "open")  # riskcore's recogniser is one of these, chosen on riskcore play
NAMED = "riskcore's recogniser"
CLASSIFIER = "classifier"
CEILING = "ceiling (conditional logit, 5-fold CV on the family)"
CALIBRATION_BINS = 10
RECOGNISER_NAMES = {"uniform": "uniform", YARDSTICK: "placement count (yardstick)",
                    "phatt:scheme=simple:c=1:i=0.98": "PHATT simple (reference weights)",
                    REFERENCE: "the reference's recogniser (khan2013)",
                    "goal": "goal completion", "phatt-simple": "PHATT simple (fitted)",
                    "inverse": "inverse planning", "mixture": "play-style mixture", "open": "open-goal mixture",
                    CLASSIFIER: "classifier"}


def slow_games(games: int) -> int:
    return max(2, round(games * 0.2))


def all_families(families: tuple[Family, ...] = FAMILIES) -> tuple[Family, ...]:
    return families + FOREIGN


# ---- runs ------------------------------------------------------------------------------------------------------

def explanation_probs(scores: pd.DataFrame) -> np.ndarray:
    return scores[[c for c in scores.columns if c.startswith("e") and c[1:].isdigit()]].to_numpy()


def row_metrics(scores: pd.DataFrame, card_of: np.ndarray, temperature: float = 1.0) -> pd.DataFrame:
    """Per scored row: top-1 at the card level and at the reference's reading, log loss, gain over uniform and
    the confidence (largest card probability), from the explanation probabilities."""

    probs = explanation_probs(scores)
    if temperature != 1.0:
        probs = calibrated(probs, temperature, card_of)
    cards = np.zeros((len(probs), card_of.max() + 1))
    np.add.at(cards.T, card_of, probs.T)
    true = scores.card.to_numpy().astype(int)
    m = card_metrics(cards, true)
    return pd.DataFrame({"game_id": scores.game_id.to_numpy(), "player": scores.player.to_numpy(),
                         "point": scores.point.to_numpy(), "top1": m.top1.to_numpy(),
                         "top1_explanation": explanation_top1(probs, card_of, true),
                         "log_loss": m.log_loss.to_numpy(), "gain": UNIFORM_LOSS - m.log_loss.to_numpy(),
                         "confidence": cards.max(axis=1)})


def per_family_loss(scores: pd.DataFrame, card_of: np.ndarray) -> pd.DataFrame:
    """Mean log loss of each setting on each family (games weighted equally, checkpoints pooled)."""
    m = row_metrics(scores, card_of).assign(family=scores.family.to_numpy(), setting=scores.setting.to_numpy())
    per_game = m.groupby(["family", "setting", "point", "game_id"]).log_loss.mean()
    return per_game.groupby(["family", "setting"]).mean().unstack("family")


def training_families(families: tuple[Family, ...], held_out: str) -> list[str]:
    """The riskcore families that run none of `held_out`'s agents' code (all of them for a foreign family)."""
    held = next((f for f in all_families(families) if f.name == held_out), None)
    lineage = held.lineage if held is not None else frozenset()
    return [f.name for f in families if f.name != held_out and not f.lineage & lineage]


def fitting_families(families: tuple[Family, ...], held_out: str) -> tuple[list[str], bool]:
    """The families settings are chosen on for `held_out`, and whether that holds it out: a family that shares
    code with every other one is scored with the settings chosen on all the others (in-house)."""
    training = training_families(families, held_out)
    if training:
        return training, True
    return [f.name for f in families if f.name != held_out], False


def choose(losses: pd.DataFrame, training: list[str], grids: dict[str, list[str]] | None = None) -> dict[str, str]:
    """Per grid, the setting with the lowest mean log loss over the `training` families; for the `CAUTIOUS`
    grids, among the settings no worse than uniform on every one of them (if none is, the setting whose worst
    family is least above uniform)."""
    out = {}
    for grid, specs in (grids or GRIDS).items():
        table = losses.loc[[Recogniser.from_spec(s).setting for s in specs], training]
        mean = table.mean(axis=1)
        if grid in CAUTIOUS:
            worst = table.max(axis=1)
            safe = worst <= UNIFORM_LOSS
            out[grid] = mean[safe].idxmin() if safe.any() else worst.idxmin()
        else:
            out[grid] = mean.idxmin()
    return out


def choose_named(losses: pd.DataFrame, families: tuple[Family, ...], grids: dict[str, list[str]] | None = None
                 ) -> tuple[str, pd.DataFrame]:
    """riskcore's recogniser: the `NAMED_CANDIDATES` grid with the lowest leave-one-lineage-out log loss over
    the riskcore families that can be held out (each scored at the point chosen on its training families). Foreign
    families never enter. Returns the grid and the table behind the choice."""
    rows = []
    for fam in families:
        training = training_families(families, fam.name)
        if not training:
            continue
        chosen = choose(losses, training, {g: (grids or GRIDS)[g] for g in NAMED_CANDIDATES})
        rows += [{"grid": g, "family": fam.name, "setting": s, "log_loss": float(losses.loc[s, fam.name])}
                 for g, s in chosen.items()]
    cv = pd.DataFrame(rows)
    mean = cv.groupby("grid").log_loss.mean()
    return str(mean.idxmin()), cv.assign(chosen=cv.grid == mean.idxmin())


def fit_temperature(scores: pd.DataFrame, card_of: np.ndarray) -> float:
    """The temperature that minimises the mean log loss of `scores`' card probabilities (rows pooled)."""
    probs = explanation_probs(scores)
    true = scores.card.to_numpy().astype(int)
    of_true = card_of[None, :] == true[:, None]

    def loss(log_t: float) -> float:
        q = calibrated(probs, float(np.exp(log_t)), card_of)
        return float(-np.log(np.clip((q * of_true).sum(axis=1), 1e-15, 1)).mean())

    return float(np.exp(minimize_scalar(loss, bounds=(-3, 3), method="bounded").x))
