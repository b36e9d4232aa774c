"""`mcs`: flat Monte Carlo search over the turn's candidate attacks (Browne et al. 2012, flat MC).

At each attack decision the candidates are ending the attack phase and the `candidates` best attacks by the
`domination` heuristic's value-weighted odds. Each candidate gets an equal share of a budget of `playouts`: the
game is determinised from what this player knows (other players' missions and cards resampled from the unseen
ones), the candidate is played, and `domination` agents play on for `horizon` rounds with chance drawn from this
agent's own generator (the real game's dice stream is never touched); the playouts run compiled
(`agents/compiled.py`), with the Python engine's and agents' very outcomes. A playout scores 1 for a win, 0 for a
loss, else this player's share of territories and armies; the best mean wins. Other decisions follow the heuristic.
"""

from __future__ import annotations

import numpy as np

from riskcore.engine.actions import Action, Attack, EndAttack
from riskcore.agents.base import PlayerView
from riskcore.agents.heuristic import DominationAgent, conquer_odds
from riskcore.agents.compiled import play_on
from riskcore.engine.chance import RngChance
from riskcore.engine import GameState, step
from riskcore.engine.missions import compile_missions


def determinise(state: GameState, player: int, rng: np.random.Generator) -> GameState:
    """A copy consistent with what `player` knows: others' missions and hands are resampled."""
    s = state.clone()
    s.chance = RngChance(rng)
    if s.config.mode == "mission":
        own = s.missions[player].index
        pool = [m for m in compile_missions(s.board) if m.index != own]
        picks = rng.choice(len(pool), size=s.n_players - 1, replace=False)
        others = [p for p in range(s.n_players) if p != player]
        for p, k in zip(others, picks):
            s.missions[p] = pool[int(k)]
    hidden = list(s.deck) + [c for p in range(s.n_players) if p != player for c in s.hands[p]]
    rng.shuffle(hidden)
    for p in range(s.n_players):
        if p != player:
            n = len(s.hands[p])
            s.hands[p], hidden = hidden[:n], hidden[n:]
    s.deck = sorted(hidden)
    return s


class McsAgent(DominationAgent):
    name = "mcs"

    def __init__(self, player: int, rng: np.random.Generator, playouts: int = 24, horizon: int = 1,
                 candidates: int = 3, threshold: float = 0.6, mission_weight: float = 0.0):
        super().__init__(player, rng, threshold=threshold, mission_weight=mission_weight)
        if playouts < 1 or horizon < 1 or candidates < 1:
            raise ValueError("mcs: playouts, horizon and candidates must be at least 1")
        self.playouts, self.horizon, self.candidates = int(playouts), int(horizon), int(candidates)

    def _candidates(self, view: PlayerView) -> list[Action]:
        armies = view.armies
        front_src, front_dst, _ = self._ownership_facts(view)
        ok = armies[front_src] >= 2
        if not ok.any():
            return [EndAttack()]
        s, d = front_src[ok], front_dst[ok]
        score = self._values_now(view)[d] * conquer_odds(armies[s] - 1, armies[d])
        best = np.argsort(-score, kind="stable")[: self.candidates]
        return [EndAttack()] + [Attack(int(s[i]), int(d[i]), None, 0) for i in best if score[i] > 0]

    def _playout(self, view: PlayerView, action: Action) -> float:
        s = determinise(view._s, self.player, self.rng)
        step(s, action)
        play_on(s, self.rng, s.turn + self.horizon * s.n_players)
        if s.is_terminal and s.winner >= 0:
            return 1.0 if s.winner == self.player else 0.0
        mine = s.owner == self.player
        return 0.5 * mine.mean() + 0.5 * s.armies[mine].sum() / s.armies.sum()

    def act(self, view: PlayerView) -> Action:
        if view.phase != "attack":
            return super().act(view)
        options = self._candidates(view)
        if len(options) == 1:
            return options[0]
        per = max(1, self.playouts // len(options))
        means = [np.mean([self._playout(view, a) for _ in range(per)]) for a in options]
        return options[int(np.argmax(means))]
