"""Procedural knowledge for RISK: goals a player can pursue for a turn, each with an initiation condition and a
deterministic algorithm that emits the next atomic action of the abstract model (after Lisy et al. 2009).

Goals and their targets (enemy territories the goal attacks):
- `conquer:C` the enemy territories of continent C. Initiated when C is not held and the player borders a target.
- `break:P` P's territories in the continents P holds. Initiated when P holds one.
- `eliminate:P` every territory of P. Initiated when P is alive and adjacent.
- `secure` none. Always initiated.
- `grab` none: the turn that leaves the player with the highest value at its end, found by exhaustive search over
  the player's own turn (its states count as probes). Always initiated.
- `strike:T` none: all reinforcements on the player's territory T, then the attacks that leave the player best off
  at the end of the turn (exhaustive over the rest of its own turn, probes counted). Initiated when T faces an
  enemy (a placement choice). `grab` is the best `strike` by the turn's own value.
- `ranked:i` none: the mover's whole turn (placement and attacks) that a learned end scorer ranks i-th (0 the
  best) among the distinct ends of all its placements (`search.endscore`; GB search plays it, as it holds the
  scorer). Initiated when the turn has more than i distinct ends.
`grab`, `strike` and `ranked` are not in `all_goals`: a goal policy (`search.policy`) adds them to the turns it
names.

Algorithm, shared by all goals:
- Placement: on the entry point (own territory next to a target) where the reserve newly makes a conquest
  possible (expected battle), then where most conquests become possible, then on the smaller stack (a large
  stack needs no help). When the reserve enables no conquest (always for `secure`), it defends instead: it plans
  the turn's attacks without the reserve and places on the territory those attacks leave most exposed, first one
  the reserve saves from an adjacent enemy stack's expected conquest, then by enemy armies adjacent per own army.
- Attacks: greedily the attack on a target that most raises the player's value, while one raises it; then any
  attack that raises it (conquests on the way); then the end of the turn. `secure` does not attack.
The candidate states these rules look at are "probes": `Model.generated` counts them with the searched states.
A goal ends with the turn; a new one is chosen at the player's next turn. The rules were developed on positions
from seeds other than the experiment's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from riskcore.search import goal_kernels as gk
from riskcore.search.abstract import END, AState, Model, PlainModel, first_best, kernel_action, kernel_state
from riskcore.search.endscore import turn_ends
from riskcore.search.exhaustive import MaxN
from riskcore.engine.battle import expected_battle


@dataclass(frozen=True)
class Goal:
    kind: str  # conquer | break | eliminate | secure | grab | strike | ranked
    target: int = -1  # continent (conquer), player (break, eliminate), own territory (strike) or rank (ranked)

    @property
    def name(self) -> str:
        return self.kind if self.target < 0 else f"{self.kind}:{self.target}"

    def targets(self, m: Model, s: AState, p: int) -> np.ndarray:
        """Bool mask of the enemy territories this goal attacks."""
        enemy = s.owner != p
        if self.kind == "conquer":
            return enemy & m.board.continent_mask[self.target]
        if self.kind == "break":
            held = m.board.held_continents(s.owner == self.target)
            return enemy & (s.owner == self.target) & m.board.continent_mask[held].any(axis=0)
        if self.kind == "eliminate":
            return s.owner == self.target
        return np.zeros(len(s.owner), dtype=bool)

    def applicable(self, m: Model, s: AState, p: int) -> bool:
        if self.kind in ("secure", "grab"):
            return True
        if self.kind == "strike":
            return s.phase == "place" and ("place", self.target) in m.placements(s)
        if self.kind == "ranked":  # GB search counts the ends once for all ranks (`GBSearch.choices`)
            return s.phase == "place" and len(turn_ends(m, s)[0]) > self.target
        if self.kind in gk.KIND_CODES and not isinstance(m, PlainModel):
            return bool(gk.goal_applicable(gk.KIND_CODES[self.kind], self.target, s.owner, p, m.tables))
        t = self.targets(m, s, p)
        near = (m.board.adjacency[:, t].any(axis=1) & (s.owner == p)).any()
        return bool(t.any() and near)

    def _entry_scores(self, m: Model, s: AState, p: int) -> np.ndarray:
        """Entry points ranked by the target conquests the reserve newly makes possible, then by the
        conquests possible after placing, then by fewer armies (a big stack needs no help)."""
        adj, t, r = m.board.adjacency, self.targets(m, s, p), m.reserve(s, p)
        score = np.full(len(s.owner), -np.inf)
        for x in np.flatnonzero(s.owner == p):
            ys = np.flatnonzero(adj[x] & t)
            if len(ys) == 0:
                continue
            before = sum(s.armies[x] >= 2 and expected_battle(int(s.armies[x]) - 1, int(s.armies[y]))[0] for y in ys)
            after = sum(expected_battle(int(s.armies[x] + r) - 1, int(s.armies[y]))[0] for y in ys)
            score[x] = (after - before) * 10_000 + after * 100 - min(int(s.armies[x]), 99)
        return score

    def _defence_scores(self, m: Model, s: AState, p: int) -> np.ndarray:
        """Own territories ranked by enemy armies adjacent per own army, in the position after this turn's
        attacks (planned without the reserve, which then goes where those attacks leave the worst gap)."""
        after = AState(s.owner, s.armies, p, "attack", 0)
        while (a := self.next_action(m, after, p)) != END:
            after = m.apply(after, a)
        mine = np.zeros(len(s.owner), dtype=bool)
        mine[[a[1] for a in m.placements(s)]] = True
        mine &= after.owner == p
        adj, r = m.board.adjacency, m.reserve(s, p)
        threat = adj.astype(np.int64) @ np.where(after.owner == p, 0, after.armies)
        score = np.where(mine, threat / after.armies, -np.inf)
        for x in np.flatnonzero(mine):
            enemies = [int(after.armies[y]) - 1 for y in np.flatnonzero(adj[x] & (after.owner != p))]
            saved = any(e >= 1 and expected_battle(e, int(after.armies[x]))[0] and
                        not expected_battle(e, int(after.armies[x]) + r)[0] for e in enemies)
            score[x] += 10_000 * saved
        return score

    @property
    def searched(self) -> bool:
        """The goal's turn comes from exhaustive search (`plan`), not from the rules."""
        return self.kind in ("grab", "strike")

    def plan(self, m: Model, s: AState, p: int) -> list[tuple[tuple, AState]]:
        """The rest of the turn of a searched goal, each action with the state it leads to: one exhaustive
        search over the own turn (after the strike's placement), followed along its principal variation."""
        if self.kind == "ranked":
            raise ValueError(f"goal {self.name} needs the learned end scorer: GB search plays it")
        if not self.searched:
            raise ValueError(f"goal {self.name} follows rules, not a plan: use next_action")
        head = []
        if self.kind == "strike" and s.phase == "place":
            s = m.apply(s, ("place", self.target))
            head = [(("place", self.target), s)]
        return head + MaxN(m).principal_variation(s, 1)

    def follow(self, m: Model, s: AState) -> tuple[AState, list[tuple]]:
        """A rule-following goal played by its mover to the end of the turn (or of the game): the state after and
        the actions taken; every state made counts in `m.generated`."""
        p, actions = s.to_move, []
        if self.kind in gk.KIND_CODES and not isinstance(m, PlainModel):
            counter = np.zeros(1, dtype=np.int64)
            codes, owner, armies, to_move, phase, attacks = gk.goal_turn(
                gk.KIND_CODES[self.kind], self.target, s.owner, s.armies, p, int(s.phase != "place"), s.attacks,
                m.tables, counter)
            m.generated += int(counter[0])
            actions = [kernel_action(c, len(s.owner), m.tables) for c in codes.tolist()]
            return kernel_state(owner, armies, to_move, phase, attacks), actions
        while True:
            a = self.next_action(m, s, p)
            s = m.apply(s, a)
            actions.append(a)
            if a == END or m.terminal(s):
                return s, actions

    def next_action(self, m: Model, s: AState, p: int) -> tuple:
        if self.kind == "ranked":
            raise ValueError(f"goal {self.name} needs the learned end scorer: GB search plays it")
        if self.kind == "strike" and s.phase == "place":
            return ("place", self.target)
        if self.searched:  # one step of `plan`, for callers that act a step at a time
            return first_best({a: v[p] for a, v in MaxN(m).root(s, 1).items()})
        if s.phase == "place":
            score = None if self.kind == "secure" else self._entry_scores(m, s, p)
            if score is None or score.max() < 10_000:  # the reserve enables no conquest: defend instead
                score = self._defence_scores(m, s, p)
            if not np.isfinite(score).any():
                return m.placements(s)[0]
            return ("place", int(np.argmax(score)))
        if self.kind == "secure" or s.attacks >= m.max_attacks:
            return END
        for allowed in (self.targets(m, s, p), s.owner != p):  # the goal's targets first, then any other enemy
            a = m.greedy_attack(s, p, allowed)
            if a != END:
                return a
        return END


def all_goals(m: Model) -> list[Goal]:
    goals = [Goal("secure")]
    goals += [Goal("conquer", c) for c in range(m.board.n_continents)]
    goals += [Goal(kind, q) for kind in ("break", "eliminate") for q in range(m.n_players)]
    return goals


def applicable_goals(m: Model, s: AState, p: int, goals: list[Goal] | None = None) -> list[Goal]:
    return [g for g in (goals or all_goals(m)) if not (g.kind in ("break", "eliminate") and g.target == p)
            and g.applicable(m, s, p)]
