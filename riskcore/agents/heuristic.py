"""Heuristic players built on one skeleton: a value for holding each territory drives every decision.

- `mission` pursues its secret mission. A territory's value blends a mission term (1 on the mission's targets:
  its continents, plus the most advanced optional continent, or the colour it must destroy) and a territory term
  (every territory alike), as `focus * mission + (1 - focus) * territory`. `focus=1` is constrained play: only
  mission targets are ever attacked, and armies are placed inside the mission's continents whenever possible.
- `domination` values territories by continent: progress toward holding a continent and breaking enemy ones.

Decisions: reinforce the owned territory from which the most valuable enemy neighbour is likeliest to fall (exact
conquest odds, `riskcore.engine.battle.win_probability_table`); attack while the best value-weighted exact odds beat
`threshold`; move everything forward after a conquest unless the source is still a front; fortify the strongest
interior stack toward the front; trade cards as soon as a set is held.
"""

from __future__ import annotations

import numpy as np

from riskcore.engine.actions import Action, Attack, Claim, EndAttack, EndTurn, Fortify, Occupy, Place, Trade
from riskcore.agents.base import Agent, PlayerView
from riskcore.agents.random_agent import border_edges
from riskcore.engine.battle import win_probability_table
from riskcore.engine.cards import find_sets

CONQUER_TABLE = win_probability_table(64)  # [attacking armies, defending armies], both capped at 63
_CAP = CONQUER_TABLE.shape[0] - 1
_P_ROWS = CONQUER_TABLE.tolist()  # Python floats: scalar look-ups in decision loops
DEFAULT_THRESHOLD = 0.6  # attack while the best value-weighted odds beat this


def conquer_odds(attackers: np.ndarray, defenders: np.ndarray) -> np.ndarray:
    """Exact conquest probability with `attackers` rolling armies, from the table (armies capped at 63)."""
    return CONQUER_TABLE[np.minimum(attackers, _CAP), np.minimum(defenders, _CAP)]


class HeuristicAgent(Agent):
    name = "heuristic"

    def __init__(self, player: int, rng: np.random.Generator, threshold: float = DEFAULT_THRESHOLD,
                 mission_weight: float = 0.0):
        super().__init__(player, rng)
        if not 0 <= threshold <= 1:
            raise ValueError(f"{self.name}: threshold must be in [0, 1], got {threshold}")
        if not mission_weight >= 0:
            raise ValueError(f"{self.name}: mission_weight must be non-negative, got {mission_weight}")
        self.threshold = threshold
        self.mission_bias = float(mission_weight)
        self._stamp, self._mission = -1, None
        self._cached: tuple = ()
        self._front: list | None = None

    def _ownership_facts(self, view: PlayerView) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """(front sources, front targets, territory values), recomputed only when ownership changes: agents
        decide hundreds of times between two conquests. Values are cached only when `values` follows ownership
        alone (the classes in `_OWNERSHIP_VALUES`); else None and `valued` is called each time."""
        state = view._s
        if state.stamp != self._stamp or state.missions[self.player] is not self._mission:
            me, owner = self.player, view.owner
            src, dst = border_edges(view.board)
            front = (owner[src] == me) & (owner[dst] != me)
            value = None
            if type(self).values in _OWNERSHIP_VALUES:
                value = self.valued(view)
                value.flags.writeable = False
            self._stamp, self._mission = state.stamp, state.missions[self.player]
            self._cached = (src[front], dst[front], value)
            self._front = None
        return self._cached

    def _front_list(self, view: PlayerView) -> list[tuple[int, int, float]] | None:
        """The front as (source, target, target's value) in border order, for decisions that walk it in Python
        (faster than numpy on a few dozen borders); None when values do not follow ownership alone."""
        src, dst, value = self._ownership_facts(view)
        if value is None:
            return None
        if self._front is None:
            self._front = list(zip(src.tolist(), dst.tolist(), value[dst].tolist()))
        return self._front

    def _decision_front(self, view: PlayerView) -> list[tuple[int, int, float]]:
        """`_front_list`, or for agents whose values change with more than ownership (armies, turn) the front
        valued now, for this decision only."""
        front = self._front_list(view)
        if front is None:
            src, dst, _ = self._ownership_facts(view)
            front = list(zip(src.tolist(), dst.tolist(), self._values_now(view)[dst].tolist()))
        return front

    def _values_now(self, view: PlayerView) -> np.ndarray:
        value = self._ownership_facts(view)[2]
        return self.valued(view) if value is None else value

    def values(self, view: PlayerView) -> np.ndarray:
        raise NotImplementedError

    def valued(self, view: PlayerView) -> np.ndarray:
        """The agent's own territory values plus `mission_weight` on its mission's targets: a mission-following
        variant of an agent written for domination play."""
        value = self.values(view)
        if self.mission_bias:
            targets = mission_targets(view)
            if targets is not None:
                value = value + self.mission_bias * targets
        return value

    def preferred_places(self, view: PlayerView) -> np.ndarray | None:
        """Optional mask of territories where placing armies is preferred (constrained play)."""
        return None

    # ---- decisions ------------------------------------------------------------------------------------------------
    def act(self, view: PlayerView) -> Action:
        phase = view.phase
        if phase == "attack":
            return self._attack(view)
        if phase == "reinforce":
            sets = find_sets(view.hand, view.board.card_symbol)
            if sets:
                return Trade(sets[0])
            return Place(self._staging(view, view.reserve), view.reserve)
        if phase == "occupy":
            return self._occupy(view)
        if phase == "fortify":
            return self._fortify(view)
        if phase == "setup":
            return Place(self._staging(view, 1), view.reserve)
        return Claim(self._claim(view))

    def _noise(self, n: int) -> np.ndarray:
        return self.rng.random(n) * 1e-6  # tie-breaks only

    def _staging(self, view: PlayerView, extra: int) -> int:
        """The owned territory from which `extra` more armies best threaten a valuable enemy territory."""
        front = self._decision_front(view)
        # territory by territory in Python floats: faster than numpy on a few dozen borders
        me, owner, armies = self.player, view.owner.tolist(), view.armies.tolist()
        n = len(owner)
        score = [0.0] * n
        for s, d, v in front:
            a, b = armies[s] + extra - 1, armies[d]
            gain = v * _P_ROWS[a if a < _CAP else _CAP][b if b < _CAP else _CAP]
            if gain > score[s]:
                score[s] = gain
        noise = self._noise(n).tolist()
        score = [x + e for x, e in zip(score, noise)]
        mine = [o == me for o in owner]
        preferred = self.preferred_places(view)
        if preferred is not None:
            keep = [m and bool(p) for m, p in zip(mine, preferred.tolist())]
            if any(k and x > 1e-6 for k, x in zip(keep, score)):
                mine = keep
        best, best_score = -1, -np.inf
        for t in range(n):
            if mine[t] and score[t] > best_score:
                best, best_score = t, score[t]
        if best < 0 or best_score <= 1e-6:
            # nothing worth attacking: strengthen the most threatened front
            threat = [0.0] * n
            for s, d, _ in front:
                threat[s] += armies[d]
            noise = self._noise(n).tolist()
            best, best_score = -1, -np.inf
            for t in range(n):
                if owner[t] == me:
                    x = threat[t] - armies[t] + noise[t]
                    if x > best_score:
                        best, best_score = t, x
            return max(best, 0)
        return best

    def _attack(self, view: PlayerView) -> Action:
        front = self._decision_front(view)
        armies = view.armies.tolist()
        ready = [(s, d, v) for s, d, v in front if armies[s] >= 2]
        if not ready:
            return EndAttack()
        # one border at a time in Python floats (the first best wins ties); before the first conquest a card is at
        # stake: any favourable attack is worth a little
        bonus = 0.0 if view.conquered_this_turn else 0.25
        noise = self._noise(len(ready)).tolist()
        best, best_score, best_odds = 0, -np.inf, 0.0
        for i, (s, d, v) in enumerate(ready):
            a, b = armies[s] - 1, armies[d]
            odds = _P_ROWS[a if a < _CAP else _CAP][b if b < _CAP else _CAP]
            score = (v + (bonus if v > 0 else 0.0)) * odds + noise[i]
            if score > best_score:
                best, best_score, best_odds = i, score, odds
        s, d, v = ready[best]
        if best_odds < self.threshold or v <= 0:
            return EndAttack()
        return Attack(s, d, None, 0)

    def _occupy(self, view: PlayerView) -> Action:
        src, dst, low = view.occupy
        me, owner, armies, board = self.player, view.owner, view.armies, view.board
        movable = int(armies[src]) - 1
        src_front = any(owner[n] != me for n in board.neighbours[src])
        dst_front = any(owner[n] != me for n in board.neighbours[dst])
        if not dst_front:
            return Occupy(low)
        if src_front:
            return Occupy(max(low, (movable * 2) // 3))
        return Occupy(movable)

    def _fortify(self, view: PlayerView) -> Action:
        me, owner, armies, board = self.player, view.owner.tolist(), view.armies.tolist(), view.board
        dist = _distances(board.neighbours, owner, me)
        best, best_key = None, None
        for t in range(len(owner)):
            if owner[t] != me or armies[t] < 2 or dist[t] <= 1:
                continue
            for n in board.neighbours[t]:
                if owner[n] == me and dist[n] < dist[t]:
                    key = (armies[t], -dist[n])
                    if best_key is None or key > best_key:
                        best, best_key = (t, n), key
        if best is None:
            return EndTurn()
        return Fortify(best[0], best[1], armies[best[0]] - 1)

    def _claim(self, view: PlayerView) -> int:
        free = view.owner == -1
        adj_mine = view.board.adjacency[:, view.owner == self.player].any(axis=1)
        score = self.valued(view) + 0.5 * adj_mine + self._noise(len(free))
        score[~free] = -np.inf
        return int(np.argmax(score))


def distance_to_enemy(board, owner: np.ndarray, me: int) -> np.ndarray:
    """Graph distance from each territory to the nearest enemy territory (multi-source BFS)."""
    return np.array(_distances(board.neighbours, owner.tolist(), me))


def _distances(neighbours, owner: list[int], me: int) -> list[int]:
    """`distance_to_enemy` on Python lists (agents call it every turn)."""
    n = len(owner)
    dist = [n + 1] * n
    frontier = [t for t in range(n) if owner[t] != me]
    for t in frontier:
        dist[t] = 0
    d = 0
    while frontier:
        d += 1
        nxt = []
        for u in frontier:
            for v in neighbours[u]:
                if dist[v] > d:
                    dist[v] = d
                    nxt.append(v)
        frontier = nxt
    return dist


def continent_shares(view: PlayerView, player: int) -> np.ndarray:
    """Share of each continent's territories that `player` owns."""
    return view.continent_counts()[player] / view.board.continent_sizes


def mission_targets(view: PlayerView) -> np.ndarray | None:
    """Bool mask of the territories the player's mission asks for, or None when any territory serves."""
    m, board = view.mission, view.board
    if m is None:
        return None
    if m.kind == "continents":
        conts = list(m.continents)
        if m.extra_continents:
            share = continent_shares(view, view.player)
            others = [c for c in np.argsort(-share, kind="stable") if c not in conts]
            conts += [int(c) for c in others[: m.extra_continents]]
        return board.continent_mask[conts].any(axis=0)
    if m.kind == "destroy" and not m.destroy_fallback(view.player, view.n_players, view.eliminated_by):
        return view.owner == m.colour
    return None


class MissionAgent(HeuristicAgent):
    name = "mission"

    def __init__(self, player: int, rng: np.random.Generator, focus: float = 0.8, threshold: float = 0.6):
        super().__init__(player, rng, threshold=threshold)
        if not 0 <= focus <= 1:
            raise ValueError(f"mission agent: focus must be in [0, 1], got {focus}")
        self.focus = focus

    def values(self, view: PlayerView) -> np.ndarray:
        targets = mission_targets(view)
        general = np.ones(view.board.n_territories)
        if targets is None:
            return general
        return self.focus * targets + (1 - self.focus) * general

    def preferred_places(self, view: PlayerView) -> np.ndarray | None:
        if self.focus < 1:
            return None
        return mission_targets(view)


_DOMINATION_VALUES: dict = {}
_MEMO_SIZE = 20_000


class DominationAgent(HeuristicAgent):
    name = "domination"

    def values(self, view: PlayerView) -> np.ndarray:
        # a pure function of the continent counts and who is alive, which recur across a searching agent's
        # playouts; read-only, since agents share them
        key = (view.board, self.player, view.continent_counts().tobytes(), view.alive)
        value = _DOMINATION_VALUES.get(key)
        if value is None:
            value = self._continent_values(view)
            value.flags.writeable = False
            if len(_DOMINATION_VALUES) >= _MEMO_SIZE:
                _DOMINATION_VALUES.clear()
            _DOMINATION_VALUES[key] = value
        return value

    def _continent_values(self, view: PlayerView) -> np.ndarray:
        board, me = view.board, self.player
        # per continent in Python floats (the operations numpy would do, in its order), then spread over territories
        sizes, bonus = board.continent_sizes_list, board.continent_bonus_list
        top = max(bonus)
        alive, mine, holds = view.alive, view.continent_counts()[me].tolist(), view.continents_held()
        # break continents an opponent holds whole (one opponent at most holds a given continent)
        held = [False] * len(sizes)
        for p in range(view.n_players):
            if p != me and alive[p]:
                held = [h or x for h, x in zip(held, holds[p])]
        per_continent = np.array([0.5 + n / size * b / top + (0.5 if h else 0.0)
                                  for n, size, b, h in zip(mine, sizes, bonus, held)])
        value = per_continent[board.continent_of]
        return value / value.max()


# `values` of these classes read ownership, eliminations and the agent's own mission only (not armies or turn)
_OWNERSHIP_VALUES = (MissionAgent.values, DominationAgent.values)
# the agents whose games run on the compiled kernel (`agents/compiled.py`), subclasses excepted
KERNEL_AGENTS = (MissionAgent, DominationAgent)
