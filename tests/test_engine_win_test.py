"""The two win tests (`GameConfig.win_test`) on hand-made positions: "any_seat" (the default: after every action of
a turn, every living seat once anyone is out) and "mover" (the program Domination's: the mover alone, after its
placements, occupations and fortifications, all territories first); each position played by the reference and by
the kernel's branches of `step` alike."""

import json

import numpy as np
import pytest

from riskcore.engine import OVER, REINFORCE, SETUP, step
from riskcore.engine.actions import Attack, EndAttack, EndTurn, Fortify, Occupy, Place, Trade
from riskcore.engine.chance import RngChance
from riskcore.engine.config import ConfigError, GameConfig
from riskcore.engine.missions import compile_missions
from tests.helpers import position
from tests.test_compiled_play import _fields
from tests.test_kernel_step import _kernel_step

BOTH = ("any_seat", "mover")


def _with_missions(state, names):
    catalogue = {m.name: m for m in compile_missions(state.board)}
    state.missions = [catalogue[name] for name in names]
    state.owners_changed()  # drop mission checks cached under the scripted deal's missions
    return state


def _chance():
    """Chance the kernel draws too (it plays whole battles and card draws from a generator)."""
    return RngChance(np.random.default_rng(7))


def _play(state, actions, engine):
    """Apply `actions` with the reference's `step` or the kernel's branch of it; stop at the game's end."""
    for action in actions:
        if state.phase == OVER:
            break
        step(state, action) if engine == "reference" else _kernel_step(state, action)
    return state


@pytest.fixture(params=["reference", "kernel"])
def engine(request):
    return request.param


def _third_seat_position(classic, win_test):
    """Seat 0 can take seat 1's last territory; seat 2, whose mission is to destroy seat 1, holds 24 territories."""
    new_guinea, east_australia = classic.index("New Guinea"), classic.index("Eastern Australia")
    owner = np.zeros(42, dtype=int)
    owner[[t for t in range(42) if t not in (new_guinea, east_australia)][:24]] = 2
    owner[east_australia] = 1
    armies = np.ones(42, dtype=int)
    armies[new_guinea] = 30  # a whole battle against one army: the territory falls
    s = position(classic, owner, armies, n_players=3, chance=_chance(), win_test=win_test)
    return _with_missions(s, ["24 territories", "24 territories", "destroy blue"]), new_guinea, east_australia


@pytest.mark.parametrize("win_test", BOTH)
def test_a_destroy_mission_whose_target_falls_to_a_third_seat_wins_on_its_holders_own_move(classic, win_test,
                                                                                           engine):
    s, src, dst = _third_seat_position(classic, win_test)
    _play(s, [Attack(src, dst, None, 0), Occupy(3)], engine)
    if win_test == "any_seat":  # every seat is tested after the elimination: seat 2 wins on seat 0's move
        assert (s.phase, s.winner, s.end_reason) == (OVER, 2, "mission")
        return
    assert s.phase != OVER and not s.alive[1]
    _play(s, [EndAttack(), EndTurn()], engine)
    assert (s.current, s.phase, s.winner) == (2, REINFORCE, -1)  # its turn begins: no test yet
    _play(s, [Place(0, 1)], engine)
    assert (s.phase, s.winner, s.end_reason) == (OVER, 2, "mission")


@pytest.mark.parametrize("win_test", BOTH)
def test_taking_every_territory_wins_by_domination_first_under_the_mover_test(classic, win_test, engine):
    owner = np.zeros(42, dtype=int)
    owner[classic.index("Eastern Australia")] = 1
    armies = np.ones(42, dtype=int)
    armies[classic.index("New Guinea")] = 30
    s = position(classic, owner, armies, chance=_chance(), win_test=win_test)
    _with_missions(s, ["24 territories", "24 territories"])  # met by the same conquest
    _play(s, [Attack(classic.index("New Guinea"), classic.index("Eastern Australia"), None, 0), Occupy(3)], engine)
    assert (s.winner, s.end_reason) == (0, "mission" if win_test == "any_seat" else "domination")


@pytest.mark.parametrize("win_test", BOTH)
def test_a_trade_bonus_that_meets_the_mission_wins_at_once_or_at_the_next_placement(classic, win_test, engine):
    owner = np.ones(42, dtype=int)
    owner[:18] = 0
    armies = np.full(42, 2)
    armies[0] = 1  # 17 territories with two armies: the traded card's +2 on territory 0 makes 18
    s = position(classic, owner, armies, phase=REINFORCE, chance=_chance(), win_test=win_test,
                 trade_bonus="every_trade")
    _with_missions(s, ["18 territories x2", "24 territories"])
    s.hands[0] = [0, 3, 6]  # three infantry, territory 0's card first
    s.reserve = 3
    _play(s, [Trade((0, 3, 6))], engine)
    assert s.armies[0] == 3
    if win_test == "any_seat":
        assert (s.phase, s.winner) == (OVER, 0)
        return
    assert s.phase == REINFORCE
    _play(s, [Place(5, 1)], engine)
    assert (s.phase, s.winner, s.end_reason) == (OVER, 0, "mission")


def _last_setup_placements(classic, win_test, left):
    """Seat 0 holds North America and Australia (its mission) with `left` setup armies of seat 1 still to place."""
    owner = np.ones(42, dtype=int)
    owner[[t for t in range(42) if classic.continent_names[classic.continent_of[t]] in ("North America",
                                                                                        "Australia")]] = 0
    s = position(classic, owner, np.ones(42), phase=SETUP, chance=_chance(), win_test=win_test)
    _with_missions(s, ["North America+Australia", "24 territories"])
    s.turn, s.reserve, s.setup_left = 0, 1, [1, left]
    return s


@pytest.mark.parametrize("win_test", BOTH)
def test_a_mission_held_when_setup_ends_wins_at_the_last_placement_under_the_mover_test(classic, win_test, engine):
    s = _play(_last_setup_placements(classic, win_test, left=0), [Place(0, 1)], engine)
    if win_test == "mover":
        assert (s.phase, s.winner, s.turn) == (OVER, 0, 0)
    else:  # won by the holder's first action of its first turn
        assert (s.phase, s.turn, s.current) == (REINFORCE, 1, 0)
        _play(s, [Place(0, 1)], engine)
        assert (s.phase, s.winner, s.turn) == (OVER, 0, 1)


def test_no_mission_is_won_before_the_setup_placements_are_over(classic, engine):
    s = _play(_last_setup_placements(classic, "mover", left=1), [Place(0, 1)], engine)
    assert (s.phase, s.current, s.winner) == (SETUP, 1, -1)


@pytest.mark.parametrize("win_test", BOTH)
def test_a_fortify_that_meets_the_mission_ends_the_game_before_the_turn_ends(classic, win_test, engine):
    owner = np.ones(42, dtype=int)
    owner[:18] = 0
    armies = np.full(42, 2)
    armies[0], armies[1] = 1, 3  # Alaska and Northwest Territory border each other
    s = position(classic, owner, armies, phase="fortify", chance=_chance(), win_test=win_test)
    _with_missions(s, ["18 territories x2", "24 territories"])
    s.conquered = True  # a card would be drawn at the turn's end
    _play(s, [Fortify(1, 0, 1)], engine)
    assert (s.phase, s.winner, s.turn, s.hands[0]) == (OVER, 0, 1, [])


def test_the_kernel_and_the_reference_agree_action_by_action(classic):
    for win_test in BOTH:
        (reference, src, dst), (kernel, _, _) = (_third_seat_position(classic, win_test) for _ in range(2))
        for action in (Attack(src, dst, None, 0), Occupy(3), EndAttack(), EndTurn(), Place(0, 1)):
            if reference.phase == OVER:
                break
            step(reference, action)
            _kernel_step(kernel, action)
            assert _fields(kernel) == _fields(reference), (win_test, action)
            assert kernel.log == reference.log


def test_an_unknown_win_test_is_refused_naming_the_field():
    with pytest.raises(ConfigError, match="win_test='everyone'"):
        GameConfig(win_test="everyone")


def test_the_default_win_test_is_left_out_of_the_recorded_config_and_read_back_as_the_default():
    assert "win_test" not in json.loads(GameConfig().to_json())
    assert json.loads(GameConfig(win_test="mover").to_json())["win_test"] == "mover"
    for config in (GameConfig(), GameConfig(win_test="mover", n_players=3)):
        assert GameConfig.from_dict(json.loads(config.to_json())) == config


def test_a_simulated_run_of_the_default_rules_records_its_config_as_before():
    from riskcore.simulate import RunSpec

    spec = json.loads(RunSpec("r", 1, GameConfig(), ("mission",), 0).to_json())
    assert "win_test" not in spec["config"]
    assert json.loads(RunSpec("r", 1, GameConfig(win_test="mover"), ("mission",), 0).to_json())["config"][
        "win_test"] == "mover"
