"""`mc-rl`: dice choices from Monte Carlo control tables (`riskcore.learning.dice`); targets and everything else as
the `domination` heuristic. Attacks are single rolls with the learned number of dice (0 ends the attack phase);
as defender it rolls the learned number of dice. `tables=PATH` loads saved tables, else they are learned once per
process from `episodes` seeded battles.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from riskcore.engine.actions import Action, Attack, EndAttack
from riskcore.agents.base import PlayerView
from riskcore.agents.heuristic import DominationAgent
from riskcore.learning.dice import DiceTables, learn


@lru_cache(maxsize=8)
def _learned(episodes: int, seed: int) -> DiceTables:
    return learn(episodes, seed)[0]


class McRlAgent(DominationAgent):
    name = "mc-rl"

    def __init__(self, player: int, rng: np.random.Generator, tables: str = "", episodes: int = 20000,
                 seed: int = 0, threshold: float = 0.6):
        super().__init__(player, rng, threshold=threshold)
        self.tables = DiceTables.load(tables) if tables else _learned(int(episodes), int(seed))

    def act(self, view: PlayerView) -> Action:
        action = super().act(view)
        if not isinstance(action, Attack):
            return action
        dice = self.tables.attacker_choice(int(view.armies[action.src]), int(view.armies[action.dst]))
        return EndAttack() if dice == 0 else Attack(action.src, action.dst, dice)

    def defend_dice(self, view: PlayerView, src: int, dst: int, attacker_dice: int) -> int:
        return self.tables.defender_choice(int(view.armies[src]), int(view.armies[dst]), attacker_dice)
