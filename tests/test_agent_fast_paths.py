"""The heuristic agents decide in Python floats where numpy was slower on a few dozen borders: every fast path must
pick what its numpy form picks and draw the same random numbers, on states from real games."""

import numpy as np
import pytest

from riskcore.agents import PlayerView
from riskcore.agents.heuristic import DominationAgent, MissionAgent
from fractions import Fraction

from riskcore.engine.battle import _absorbing, _battle_table, roll_outcomes, sample_battle
from riskcore.engine.config import GameConfig
from riskcore.game import play_game


def _reference_domination_values(view: PlayerView, me: int) -> np.ndarray:
    """The continent-seeking valuation written with whole arrays."""
    board = view.board
    share = view.continent_counts()[me] / board.continent_sizes
    value = (0.5 + share * board.continent_bonus / board.continent_bonus.max())[board.continent_of]
    held = view.continent_counts() == board.continent_sizes
    for p in range(view.n_players):
        if p != me and view.alive[p]:
            value = value + 0.5 * held[p][board.continent_of]
    return value / value.max()


def _reference_staging(agent, view: PlayerView, extra: int) -> int:
    """The staging decision written with whole arrays: the best value-weighted conquest odds from an owned
    territory with `extra` more armies, else the most threatened front."""
    from riskcore.agents.heuristic import conquer_odds

    me, owner, armies = agent.player, view.owner, view.armies
    front_src, front_dst, _ = agent._ownership_facts(view)
    value = agent._values_now(view)
    n = view.board.n_territories
    score = np.zeros(n)
    if len(front_src):
        gain = value[front_dst] * conquer_odds(armies[front_src] + extra - 1, armies[front_dst])
        np.maximum.at(score, front_src, gain)
    score += agent._noise(n)
    mine = owner == me
    preferred = agent.preferred_places(view)
    if preferred is not None and (preferred & mine & (score > 1e-6)).any():
        mine = mine & preferred
    score[~mine] = -np.inf
    if not np.isfinite(score).any() or score.max() <= 1e-6:
        threat = np.zeros(n)
        np.add.at(threat, front_src, armies[front_dst])
        threat = threat - armies + agent._noise(n)
        threat[~(owner == me)] = -np.inf
        return int(np.argmax(threat))
    return int(np.argmax(score))


def _reference_attack(agent, view: PlayerView):
    """The attack decision written with whole arrays: the best value-weighted conquest odds over the front, if
    they beat the agent's threshold."""
    from riskcore.agents.heuristic import conquer_odds
    from riskcore.engine.actions import Attack, EndAttack

    armies = view.armies
    front_src, front_dst, _ = agent._ownership_facts(view)
    ok = armies[front_src] >= 2
    if not ok.any():
        return EndAttack()
    s, d = front_src[ok], front_dst[ok]
    odds = conquer_odds(armies[s] - 1, armies[d])
    value = agent._values_now(view)[d]
    bonus = 0.0 if view.conquered_this_turn else 0.25
    score = (value + bonus * (value > 0)) * odds + agent._noise(len(s))
    i = int(np.argmax(score))
    if odds[i] < agent.threshold or value[i] <= 0:
        return EndAttack()
    return Attack(int(s[i]), int(d[i]), None, 0)


def _states(mode: str, players: int, seeds: range):
    seen = []

    def keep(state, action):
        if state.turn > 0 and len(seen) < 400 and state.phase in ("attack", "reinforce", "setup"):
            seen.append(state.clone())

    for seed in seeds:
        play_game(GameConfig(n_players=players, mode=mode), ["mission" if mode == "mission" else "domination"]
                  * players, seed, observer=keep)
    return seen


def _pair(cls, player, **params):
    return cls(player, np.random.default_rng(7), **params), cls(player, np.random.default_rng(7), **params)


@pytest.mark.parametrize("mode,cls,params", [("mission", MissionAgent, {}), ("mission", MissionAgent, {"focus": 1.0}),
                                             ("domination", DominationAgent, {})])
def test_fast_decisions_equal_the_numpy_ones(mode, cls, params):
    checked = 0
    for state in _states(mode, 4, range(3)):
        me = state.current
        view = PlayerView(state, me)
        fast, slow = _pair(cls, me, **params)
        if state.phase == "attack":
            assert fast._attack(view) == _reference_attack(slow, view)
        else:
            for extra in (1, 3, 9):
                assert fast._staging(view, extra) == _reference_staging(slow, view, extra)
        # the same numbers drawn: later decisions stay in step
        assert fast.rng.random() == slow.rng.random()
        checked += 1
    assert checked > 100


def test_domination_values_equal_the_array_form():
    for state in _states("domination", 5, range(2)):
        view = PlayerView(state, state.current)
        got = DominationAgent(state.current, np.random.default_rng(0)).values(view)
        assert got.tobytes() == _reference_domination_values(view, state.current).tobytes()


def _absorbing_by_dictionary(attackers, defenders, stop_at, one, convert):
    """The absorbing chain as first written, one dictionary entry per state: the reference for its bits."""
    mass, final = {(attackers, defenders): one}, {}
    for total in range(attackers + defenders, -1, -1):
        for a in range(min(attackers, total), -1, -1):
            d = total - a
            p = mass.pop((a, d), None)
            if p is None:
                continue
            if d == 0 or a <= stop_at:
                final[(a, d)] = p
                continue
            for (al, dl), q in roll_outcomes(min(3, a), min(2, d)).items():
                key = (a - al, d - dl)
                mass[key] = mass.get(key, 0) + p * convert(q)
    return final


@pytest.mark.parametrize("attackers,defenders,stop_at", [(1, 1, 0), (7, 3, 0), (12, 30, 2), (40, 25, 5), (3, 9, 3)])
def test_float_battle_chain_has_the_bits_of_the_dictionary_one(attackers, defenders, stop_at):
    reference = _absorbing_by_dictionary(attackers, defenders, stop_at, 1.0, float)
    flat = _absorbing(attackers, defenders, stop_at, 1.0, float)
    assert list(reference) == list(flat)
    assert all(reference[k].hex() == flat[k].hex() for k in reference)
    exact = _absorbing(attackers, defenders, stop_at, Fraction(1), lambda q: q)
    assert exact == _absorbing_by_dictionary(attackers, defenders, stop_at, Fraction(1), lambda q: q)


def test_battle_draws_fall_where_searchsorted_puts_them():
    rng, ref = np.random.default_rng(3), np.random.default_rng(3)
    for attackers, defenders, stop_at in [(5, 4, 0), (20, 11, 3), (2, 1, 0)] * 200:
        fa, fd, cum = _battle_table(attackers, defenders, stop_at)
        i = int(np.searchsorted(np.asarray(cum), ref.random(), side="right"))
        a = int(fa[i])
        assert sample_battle(rng, attackers, defenders, stop_at) == (attackers - a, defenders - int(fd[i]),
                                                                     min(3, max(a, 1)))


class _Idle(MissionAgent):
    """Values nothing: staging always falls back to strengthening the most threatened front."""

    def values(self, view):
        return np.zeros(view.board.n_territories)


def test_fast_fallback_staging_equals_the_numpy_one(monkeypatch):
    from riskcore.agents import heuristic

    monkeypatch.setattr(heuristic, "_OWNERSHIP_VALUES", heuristic._OWNERSHIP_VALUES + (_Idle.values,))
    for state in _states("mission", 4, range(2)):
        view = PlayerView(state, state.current)
        fast, slow = _pair(_Idle, state.current)
        assert fast._staging(view, 2) == _reference_staging(slow, view, 2)
        assert fast.rng.random() == slow.rng.random()


def test_decisions_by_values_that_change_with_armies_equal_the_numpy_forms():
    from riskcore.agents.expert import ExpertAgent

    checked = 0
    for state in _states("mission", 4, range(2)):
        view = PlayerView(state, state.current)
        fast, slow = _pair(ExpertAgent, state.current)
        if fast._front_list(view) is not None:
            continue
        if state.phase == "attack":
            assert fast._attack(view) == _reference_attack(slow, view)
        for extra in (1, 5):
            assert fast._staging(view, extra) == _reference_staging(slow, view, extra)
        assert fast.rng.random() == slow.rng.random()
        checked += 1
    assert checked > 20
