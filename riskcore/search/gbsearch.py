"""GB: goal-based game-tree search (after Lisy, Bosansky, Jakob & Pechoucek, AAMAS 2009, GBSearch).

The tree branches only where a player must choose a goal: at the start of its turn it may take any applicable
goal (`goals.applicable_goals`); the chosen goal's algorithm is then simulated action by action, without
branching, until the goal ends (with the turn). Players move in a fixed order and values are per player (max^n):
each player picks the goal whose subtree maximises its own value. Every simulated state counts as a node.

Which goals each player may choose at each turn, whether the root turn is goal-based or exhaustive, and how a
`strike` ends its turn are one `policy.GoalPolicy`. The learned end scorer (`endscore.EndScorer`) is an optional
input, needed by the policies that rank whole turns or end strikes where it picks.

Tree-size estimate (our reading of the paper's formulas 1-3, for a look-ahead of L turns):
    (1) AB nodes  N_AB(L) = sum_{k=1..L} b^k,  b the mean number of atomic-action sequences per turn
    (2) GB nodes  N_GB(L) = sum_{k=1..L} g^k (m + 1),  g goals per choice, m atomic actions per goal
    (3) the share of the tree GB explores = N_GB(L) / N_AB(L)
"""

from __future__ import annotations

import numpy as np

from riskcore.search.abstract import AState, Model, first_best, maxn_better, maxn_search, turn_sequences
from riskcore.search.endscore import EndScorer, turn_ends
from riskcore.search.exhaustive import MaxN
from riskcore.search.goals import Goal, applicable_goals
from riskcore.search.policy import GoalPolicy


class GBSearch:
    def __init__(self, model: Model, root_player: int, policy: GoalPolicy = GoalPolicy(),
                 end_scorer: EndScorer | None = None):
        if policy.needs_scorer and end_scorer is None:
            raise ValueError("this goal policy ranks turns or ends strikes by the learned end scorer: give end_scorer")
        self.model, self.root_player, self.policy, self.end_scorer = model, root_player, policy, end_scorer
        self.goals = policy.turn_goals(model)
        self.reply_goals = policy.reply_goals(model)
        self.horizon_goals = policy.horizon_goals(model)
        self.nodes = 0
        self._root_turns = 0
        self._ranked: dict[tuple, list[tuple[AState, list[tuple]]]] = {}

    def choices(self, s: AState, turns: int | None = None) -> list[Goal]:
        """The goals the mover may choose with `turns` turns left (None: at the root)."""
        p = s.to_move
        goals = self.goals
        if turns is not None and turns <= len(self.horizon_goals):
            goals = self.horizon_goals[turns - 1]
        elif turns == self._root_turns - 1 and self.reply_goals is not None:
            goals = self.reply_goals
        plain = [g for g in goals if g.kind != "ranked"]
        found = set(applicable_goals(self.model, s, p, plain)) if plain else set()
        if len(plain) < len(goals):  # ranked goals: as many as the turn has distinct ends
            n = len(self.ranked_turns(s, (self._root_turns if turns is None else turns) - 1))
            found |= {g for g in goals if g.kind == "ranked" and g.target < n}
        options = [g for g in goals if g in found]
        if p != self.root_player and self.policy.opponents == "restricted":
            share = (self.model.board.continent_mask & (s.owner == p)[None, :]).sum(axis=1) / \
                self.model.board.continent_mask.sum(axis=1)
            held = share >= 1
            best = int(np.argmax(np.where(held, -1, share)))
            options = [g for g in options if g.kind == "secure" or (g.kind == "conquer" and g.target == best)]
        return options or [Goal("secure")]

    def ranked_turns(self, s: AState, after: int) -> list[tuple[AState, list[tuple]]]:
        """The distinct ends of the mover's whole turn from `s` (placement included), each with the actions to it,
        best first by the end scorer when `after` turns follow (by the mover's own value at the end when none
        does); ties keep the walk's order. Walked and scored once per state: its states count as generated."""
        key = (s.key(), after)
        if key not in self._ranked:
            ends, _ = turn_ends(self.model, s)
            if after > 0:
                scores = self.end_scorer.end_scores(self.model, ends, s.to_move, after)
            else:
                scores = np.array([self.model.evaluate(z)[s.to_move] for z, _ in ends])
            self._ranked[key] = [ends[i] for i in np.argsort(-scores, kind="stable")]
        return self._ranked[key]

    def simulate(self, s: AState, goal: Goal, after: int = 0) -> tuple[AState, list[tuple]]:
        """Follow a goal to the end of the turn (`after` turns follow it); returns the state after and the actions
        taken."""
        p, actions = s.to_move, []
        if goal.kind == "ranked":  # each state on the way to the chosen end a node, as a learned strike's
            end, actions = self.ranked_turns(s, after)[goal.target]
            self.nodes += len(actions)
            return end, list(actions)
        exact = 0 < after <= self.policy.exact_own_ends and p == self.root_player
        if goal.kind == "strike" and after > 0 and (exact or self.policy.strike_ends == "learned"):
            place = ("place", goal.target)
            placed = self.model.apply(s, place)
            if exact:
                self.nodes += 1
                end, actions = self._exact_end(placed, after)
            else:
                end, actions = self.end_scorer.best_end(self.model, placed, p, after)
                self.nodes += 1 + len(actions)
            return end, [place, *actions]
        if goal.searched:
            plan = goal.plan(self.model, s, p)
            self.nodes += len(plan)
            return plan[-1][1], [a for a, _ in plan]
        s, actions = goal.follow(self.model, s)
        self.nodes += len(actions)
        return s, actions

    def _exact_end(self, s: AState, after: int) -> tuple[AState, list[tuple]]:
        """The end of the mover's turn from `s` (placement done) that exact max^n over the `after` turns following
        it values most for the mover (first of the best in the walk's order), and the actions to it; with a
        shortlist, among the scorer's best ends only. Every state of the turn's walk and every node of the exact
        trees counts."""
        (ends, made), p, ab = turn_ends(self.model, s), s.to_move, MaxN(self.model)
        self.nodes += made
        candidates = range(len(ends))
        if self.policy.shortlist:
            scores = self.end_scorer.end_scores(self.model, ends, p, after)
            candidates = sorted(np.argsort(-scores, kind="stable")[:self.policy.shortlist].tolist())
        pick = first_best({i: float(ab.value(ends[i][0], after)[p]) for i in candidates})
        self.nodes += ab.nodes
        return ends[pick]

    def _count(self) -> None:
        self.nodes += 1

    def _children(self, s: AState, turns: int):
        for goal in self.choices(s, turns):
            yield self.simulate(s, goal, turns - 1)[0], turns - 1

    def _sequences(self, s: AState) -> list[tuple[tuple, AState]]:
        """`abstract.turn_sequences` of the mover's turn, each state made a node."""
        sequences, made = turn_sequences(self.model, s)
        self.nodes += made
        return sequences

    def value(self, s: AState, turns: int) -> np.ndarray:
        return maxn_search(self.model, s, turns, self._children, self._count)

    def _exhaustive_turn(self, s: AState, turns: int) -> tuple[list[tuple], np.ndarray]:
        """Every action sequence of the mover's turn, depth first in the model's order (ties keep the earlier,
        as in AB), each end valued by GB's tree below it; the best sequence and its value vector. Attack orders
        often transpose: an end met again is not searched again, its value and tree size are reused."""
        p, best = s.to_move, None
        ends: dict[tuple, tuple[np.ndarray, int]] = {}
        for actions, y in self._sequences(s):
            key = y.key()
            if key in ends:
                self.nodes += ends[key][1]
            else:
                before = self.nodes
                ends[key] = (self.value(y, turns - 1), self.nodes - before)
            if maxn_better(ends[key][0], None if best is None else best[1], p):
                best = (list(actions), ends[key][0])
        return best

    def decide(self, s: AState, turns: int) -> tuple[Goal | None, list[tuple], np.ndarray]:
        """The root player's best goal (None for an exhaustive root turn), the actions it takes this turn, and
        the value vector."""
        self.nodes += 1
        self._root_turns = turns
        if self.policy.root == "exhaustive":
            return None, *self._exhaustive_turn(s, turns)
        best = None
        for goal in self.choices(s):
            after, actions = self.simulate(s, goal, turns - 1)
            v = self.value(after, turns - 1)
            if maxn_better(v, None if best is None else best[2], s.to_move):
                best = (goal, actions, v)
        return best


def estimate_ab(b: float, turns: int) -> float:
    """Formula (1): nodes of exhaustive search over `turns` turns with `b` action sequences per turn."""
    return float(sum(b**k for k in range(1, turns + 1)))


def estimate_gb(g: float, m: float, turns: int) -> float:
    """Formula (2): nodes of goal-based search with `g` goals per choice and `m` actions per goal."""
    return float(sum(g**k * (m + 1) for k in range(1, turns + 1)))


def estimate_share(b: float, g: float, m: float, turns: int) -> float:
    """Formula (3): the share of the exhaustive tree that goal-based search explores."""
    return estimate_gb(g, m, turns) / estimate_ab(b, turns)
