"""The generalisation experiment's protocol: its families, what is in-model and what is not, the recognisers it
scores and how it reads them (`riskcore.experiments.recognition.generalisation` runs it, `generalisation_report`
reads its tables). riskcore's recogniser itself is named by the training protocol
(`riskcore.experiments.recognition.training`), on simulated play alone, before anything here is scored.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from riskcore.recognition.metrics import card_metrics, explanation_top1
from riskcore.recognition.recognisers import EVIDENCE_LABELS, Recogniser, calibrated

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
        """The decision code the family's seats run (`population.lineage`; none for another program's play)."""
        from riskcore.experiments.recognition.population import lineage

        return frozenset(lineage(a) for a in self.agents) if not self.foreign else frozenset()


# riskcore's own play: every family runs decision code the training population runs (the heuristic agents'
# placement and attack code, or the random agent's), so on these the learned models are scored in-model
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
    # from here on: a family's games come from seed + its position, so the families above keep theirs
    Family("domination", ("domination:mission_weight=1",)),
    Family("tilted random", ("random:tilt=0.8",)),
)
# other programs' play: development sets (looked at while recognisers were built); nothing is fitted on them
FOREIGN = (
    Family(CORPUS, ("Domination AI, secret missions nearly ignored",), follows_mission=False, source="corpus"),
    Family("fork-ai w100", ("the reference's mission AI, weight 100",), source="fork-ai", weight=100),
    Family("fork-ai w4", ("the reference's mission AI, weight 4",), source="fork-ai", weight=4),
    Family("domination ai", ("Domination's own AI (ai hard), mission mode",), source="peer"),
)
BORDERS = {"corpus": 81, "fork-ai": 82, "peer": 81}  # the maps the foreign games were recorded on
LABELS = {"mixed": "mixed (one mission-blind seat of four)", "tilted random": "tilted random (random lineage)"}

REFERENCE = "phatt:scheme=khan2013"  # the reference's own recogniser, equal to its output
YARDSTICK = "placements"
NAMED = "riskcore's recogniser"
RECOGNISER_NAMES = {"uniform": "uniform", YARDSTICK: "placement count", REFERENCE: "the reference's recogniser",
                    **EVIDENCE_LABELS,
                    "mixture": "play-style mixture"}
CALIBRATION_BINS = 10


def slow_games(games: int) -> int:
    return max(2, round(games * 0.2))


def all_families(families: tuple[Family, ...] = FAMILIES) -> tuple[Family, ...]:
    return families + FOREIGN


def candidate_specs(protocol: dict) -> dict[str, str]:
    """The three candidates as scored here: the learned models as written, the mixture at the temperature the
    training protocol fitted on the whole population."""
    specs = dict(protocol["candidates"])
    t = float(f"{protocol['mixture_temperature']:.4g}")
    specs["mixture"] = Recogniser.from_spec(f"{specs['mixture']}:calibration={t:g}").setting
    return specs


# ---- rows ------------------------------------------------------------------------------------------------------

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
    cards = np.clip(cards, 0.0, 1.0)  # float sums of explanation shares may pass 1 by a rounding error
    true = scores.card.to_numpy().astype(int)
    m = card_metrics(cards, true)
    return pd.DataFrame({"game_id": scores.game_id.to_numpy(), "player": scores.player.to_numpy(),
                         "point": scores.point.to_numpy(), "n_players": scores.n_players.to_numpy(),
                         "top1": m.top1.to_numpy(), "top1_explanation": explanation_top1(probs, card_of, true),
                         "log_loss": m.log_loss.to_numpy(), "gain": UNIFORM_LOSS - m.log_loss.to_numpy(),
                         "confidence": cards.max(axis=1)})
