"""Procedural knowledge for RISK: goals a player can pursue for a turn, each with an initiation condition and a
deterministic algorithm that emits the next atomic action of the abstract model (after Lisy et al. 2009).

- `conquer:C` conquer continent C: place on the best entry point (own territory in or next to C facing the most
  enemy territories of C), then attack enemy territories of C (largest army advantage first) while the expected
  battle conquers. Initiated when C is not yet held and the player owns a territory in or next to C.
- `break:P` break player P's continent: as above against the continents P holds. Initiated when P holds one.
- `eliminate:P`: attack P's territories, weakest first. Initiated when P is alive and adjacent.
- `secure`: place on the most threatened border (enemy armies adjacent / own armies) and attack nothing.
  Always initiated.
A goal ends with the turn; a new one is chosen at the player's next turn.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from riskcore.search.abstract import END, AState, Model
from riskcore.search.simple import expected_battle


@dataclass(frozen=True)
class Goal:
    kind: str  # conquer | break | eliminate | secure
    target: int = -1  # continent (conquer) or player (break, eliminate)

    @property
    def name(self) -> str:
        return self.kind if self.target < 0 else f"{self.kind}:{self.target}"

    def targets(self, m: Model, s: AState, p: int) -> np.ndarray:
        """Bool mask of the enemy territories this goal attacks."""
        enemy = s.owner != p
        if self.kind == "conquer":
            return enemy & m.board.continent_mask[self.target]
        if self.kind == "break":
            owned = s.owner == self.target
            held = ~((m.board.continent_mask & ~owned[None, :]).any(axis=1))
            return enemy & (s.owner == self.target) & m.board.continent_mask[held].any(axis=0)
        if self.kind == "eliminate":
            return s.owner == self.target
        return np.zeros(len(s.owner), dtype=bool)

    def applicable(self, m: Model, s: AState, p: int) -> bool:
        if self.kind == "secure":
            return True
        t = self.targets(m, s, p)
        near = (m.board.adjacency[:, t].any(axis=1) & (s.owner == p)).any()
        return bool(t.any() and near)

    def next_action(self, m: Model, s: AState, p: int) -> tuple:
        adj = m.board.adjacency
        mine = s.owner == p
        if s.phase == "place":
            if self.kind == "secure":
                threat = adj.astype(np.int64) @ np.where(mine, 0, s.armies)
                score = np.where(mine, threat / s.armies, -np.inf)
            else:
                facing = adj.astype(np.int64) @ self.targets(m, s, p).astype(np.int64)
                score = np.where(mine & (facing > 0), facing * 100 + s.armies, -np.inf)
            if not np.isfinite(score).any():
                return m.placements(s)[0]
            return ("place", int(np.argmax(score)))
        if self.kind == "secure" or s.attacks >= m.max_attacks:
            return END
        t = self.targets(m, s, p)
        best, best_adv = END, None
        for src, dst in zip(*np.nonzero(adj)):
            if mine[src] and t[dst] and s.armies[src] >= 2 and expected_battle(int(s.armies[src]) - 1,
                                                                               int(s.armies[dst]))[0]:
                adv = int(s.armies[src] - s.armies[dst])
                if best_adv is None or adv > best_adv:
                    best, best_adv = ("attack", int(src), int(dst)), adv
        return best


def all_goals(m: Model) -> list[Goal]:
    goals = [Goal("secure")]
    goals += [Goal("conquer", c) for c in range(m.board.n_continents)]
    goals += [Goal(kind, q) for kind in ("break", "eliminate") for q in range(m.n_players)]
    return goals


def applicable_goals(m: Model, s: AState, p: int, goals: list[Goal] | None = None) -> list[Goal]:
    return [g for g in (goals or all_goals(m)) if (g.target != p or g.kind == "conquer")
            and g.applicable(m, s, p)]
