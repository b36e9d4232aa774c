"""`expert`: rule-based play in the style of strong human heuristics.

- Continent focus: target the continent with the best ratio of own to enemy strength (territories and armies)
  among those not yet held; its territories are worth most, breaking an opponent's continent is worth a lot too.
- Card timing: hold cards until a trade is forced, is worth at least `min_trade` armies, or is needed to reach a
  strong attack; trade a set showing an owned territory first (for the +2 bonus).
- Border consolidation: fortify toward the most threatened border of the continents held (threat / armies).
"""

from __future__ import annotations

import numpy as np

from riskcore.engine.actions import Action, EndTurn, Fortify, Place, Trade
from riskcore.agents.base import PlayerView
from riskcore.agents.heuristic import HeuristicAgent, distance_to_enemy, continent_shares
from riskcore.engine.cards import find_sets


class ExpertAgent(HeuristicAgent):
    name = "expert"

    def __init__(self, player: int, rng: np.random.Generator, min_trade: int = 8, threshold: float = 0.55,
                 mission_weight: float = 0.0):
        super().__init__(player, rng, threshold=threshold, mission_weight=mission_weight)
        self.min_trade = int(min_trade)

    def target_continent(self, view: PlayerView) -> int:
        board, owner, armies = view.board, view.owner, view.armies
        mine = owner == self.player
        held = view.held_continents()
        best, best_score = 0, -np.inf
        for c in range(board.n_continents):
            if held[c]:
                continue
            members = board.continent_mask[c]
            own = armies[members & mine].sum() + 2 * (members & mine).sum()
            enemy = armies[members & ~mine].sum() + 1
            score = own / enemy + 0.1 * board.continent_bonus[c] / members.sum()
            if score > best_score:
                best, best_score = c, score
        return best

    def values(self, view: PlayerView) -> np.ndarray:
        board = view.board
        value = np.full(board.n_territories, 0.3)
        value[board.continent_mask[self.target_continent(view)]] = 1.0
        for p in range(view.n_players):
            if p != self.player and view.alive[p]:
                value = value + 0.6 * view.held_continents(p)[board.continent_of]
        share = continent_shares(view, self.player)
        return value + 0.2 * share[board.continent_of]

    def act(self, view: PlayerView) -> Action:
        if view.phase == "reinforce":
            sets = find_sets(view.hand, view.board.card_symbol)
            if sets:
                best = max(sets, key=lambda s: sum(c < view.board.n_territories and view.owner[c] == self.player
                                                   for c in s))
                if view.forced_trade or view.next_trade_value(best) >= self.min_trade:
                    return Trade(best)
            return Place(self._staging(view, view.reserve), view.reserve)
        if view.phase == "fortify":
            return self._consolidate(view)
        return super().act(view)

    def _consolidate(self, view: PlayerView) -> Action:
        board, owner, armies = view.board, view.owner, view.armies
        mine = owner == self.player
        enemy_armies = np.where(mine, 0, armies)
        threat = board.adjacency.astype(np.int64) @ enemy_armies
        held = view.held_continents()[board.continent_of]
        pressure = np.where(mine & (threat > 0), threat / armies * (1 + held), -np.inf)
        if not np.isfinite(pressure).any():
            return EndTurn()
        target = int(np.argmax(pressure))
        dist = distance_to_enemy(board, owner, self.player)
        donors = [int(t) for t in np.flatnonzero(mine & (armies >= 2) & (dist > 1)) if board.adjacency[t, target]]
        if donors:
            src = max(donors, key=lambda t: armies[t])
            return Fortify(src, target, int(armies[src]) - 1)
        return super()._fortify(view)
