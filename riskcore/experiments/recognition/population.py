"""The play the learned recogniser (`recognition.evidence`) is trained on: simulated games whose missions are
known, from a population wide enough to hold the styles it will meet.

Settings: 3 to 6 players; fixed and escalating card values; the classic map with classic rules, and the
Domination program's 82- and 81-border maps with its card and trade rules (`domination.program_rules`; riskcore's
turn cap and win test). Seats, drawn per run
from the pools below with the run's own seed:

- mission-following play from the heuristic agents' code (`HEURISTIC_FOLLOWING`): the `mission` agent over focus
  0.25 to 1 and the `domination` agent with its mission's continents valued `mission_weight` = 1 to 100 times (as
  Domination's own AI multiplies them: 4 upstream, 100 in the reference study's first runs);
- mission-following play from code that shares nothing with them (`RANDOM_FOLLOWING`): the random agent tilted
  towards its mission (`random:tilt`);
- mission-blind seats (`BLIND_SHARE` of seats): the `domination` agent and the plain random agent.

Lineage is shared decision code: every heuristic agent places and attacks with `HeuristicAgent`'s code, so the
population holds two lineages, `heuristic` and `random`; the random lineage's games run in Python (no compiled
kernel plays it), so it is `RANDOM_SHARE` of the games. The naming protocol holds each lineage out in turn
(`training.lolo`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import product

import numpy as np

from riskcore.engine.config import GameConfig

HEURISTIC_FOLLOWING = ("mission:focus=0.25", "mission:focus=0.5", "mission:focus=0.75", "mission:focus=1",
                       "domination:mission_weight=1", "domination:mission_weight=2", "domination:mission_weight=4",
                       "domination:mission_weight=10", "domination:mission_weight=30",
                       "domination:mission_weight=100")
RANDOM_FOLLOWING = ("random:tilt=0.5", "random:tilt=0.8", "random:tilt=0.95")
BLIND = {"heuristic": "domination", "random": "random"}
BLIND_SHARE = 0.15  # of seats: mission-blind play mixed in, as human tables and other programs have it
RANDOM_SHARE = 0.05  # of games: the random lineage (played in Python, about a hundredth of the compiled speed)
PLAYERS = (3, 4, 5, 6)
CARDS = ("escalating", "fixed")
MAPS = (83, 82, 81)  # borders: riskcore's classic map, the reference study's and Domination's
MIXES = 4  # seat draws per setting in the heuristic lineage (one in the random lineage)
SEED = 20261128


def lineage(agent: str) -> str:
    """The decision code an agent's seat runs: `random` for the random agent, `heuristic` for every other one."""
    return "random" if agent.split(":")[0] == "random" else "heuristic"


@dataclass(frozen=True)
class Cell:
    """One run of the population: its setting, its seats' agents (cycled over seats by `simulate`) and seed."""

    run: str
    n_players: int
    cards: str
    borders: int
    agents: tuple[str, ...]
    seed: int
    games: int

    @property
    def lineage(self) -> str:
        """The lineage the run was drawn for (a random-lineage run also seats heuristic opponents)."""
        return "random" if any(lineage(a) == "random" for a in self.agents) else "heuristic"

    @property
    def config(self) -> GameConfig:
        if self.borders == 83:
            return GameConfig(n_players=self.n_players, mode="mission", card_values=self.cards)
        from riskcore.domination import BORDERS, program_rules

        # the program's map, card and trade rules, with riskcore's turn cap (a recorded game needs none; a
        # simulated one does) and riskcore's win test (the program's differs only when a third seat eliminates a
        # destroy mission's target, and no continent card is scored on such a seat)
        default = GameConfig()
        return replace(program_rules(self.n_players, "mission", self.cards, BORDERS[self.borders]),
                       turn_cap=default.turn_cap, win_test=default.win_test)


def seats(rng: np.random.Generator, n_players: int, lineage_name: str) -> tuple[str, ...]:
    """A run's agents. Heuristic lineage: each seat mission-blind (`domination`) with probability `BLIND_SHARE`,
    else drawn from `HEURISTIC_FOLLOWING`. Random lineage: two random seats (a tilted one, and a second tilted or,
    with probability `BLIND_SHARE`, plain), the others heuristic as above (opponents need not share the scored
    seats' code)."""
    def heuristic_seat() -> str:
        if rng.random() < BLIND_SHARE:
            return BLIND["heuristic"]
        return HEURISTIC_FOLLOWING[int(rng.integers(len(HEURISTIC_FOLLOWING)))]

    def random_seat(may_be_blind: bool) -> str:
        if may_be_blind and rng.random() < BLIND_SHARE:
            return BLIND["random"]
        return RANDOM_FOLLOWING[int(rng.integers(len(RANDOM_FOLLOWING)))]

    if lineage_name == "heuristic":
        return tuple(heuristic_seat() for _ in range(n_players))
    return (random_seat(False), random_seat(True)) + tuple(heuristic_seat() for _ in range(n_players - 2))


def population(games: int, seed: int = SEED) -> tuple[Cell, ...]:
    """The population's runs for about `games` games in all: every setting (players x cards x map) with `MIXES`
    heuristic runs and one random-lineage run, games split as `RANDOM_SHARE` says (at least one per run)."""
    settings = list(product(PLAYERS, CARDS, MAPS))
    heuristic_games = max(1, round(games * (1 - RANDOM_SHARE) / (len(settings) * MIXES)))
    random_games = max(1, round(games * RANDOM_SHARE / len(settings)))
    cells = []
    for k, (n, cards, borders) in enumerate(settings):
        for m in range(MIXES + 1):
            name = "heuristic" if m < MIXES else "random"
            rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(k, m)))
            cells.append(Cell(f"train-{n}p-{cards[:3]}-{borders}-{m}", n, cards, borders, seats(rng, n, name),
                              seed + 1000 * k + m, heuristic_games if name == "heuristic" else random_games))
    return tuple(cells)


def recipe(games: int, seed: int = SEED) -> dict:
    """What a model trained on `population(games, seed)` records of its training play."""
    return {"games": games, "seed": seed, "runs": [{"run": c.run, "agents": list(c.agents), "games": c.games,
                                                    "seed": c.seed, "config": c.config.to_json()}
                                                   for c in population(games, seed)]}
