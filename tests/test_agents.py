import numpy as np
import pytest

from riskcore.agents import AgentSpecError, PlayerView, make_agent, parse_spec
from riskcore.engine.config import GameConfig
from riskcore.game import play_game


def test_view_shows_own_mission_and_hand_only():
    rec = play_game(GameConfig(), ["mission"] * 4, 8)
    view = PlayerView(rec.state, 2)
    assert view.mission is rec.state.missions[2]
    assert view.hand == tuple(rec.state.hands[2])
    assert view.card_counts == tuple(len(h) for h in rec.state.hands)
    assert not hasattr(view, "missions") and not hasattr(view, "hands") and not hasattr(view, "deck")


def test_view_arrays_are_read_only_but_follow_the_game():
    rec = play_game(GameConfig(), ["mission"] * 4, 8)
    view = PlayerView(rec.state, 0)
    with pytest.raises(ValueError):
        view.armies[0] = 99
    rec.state.armies[0] += 1
    assert view.armies[0] == rec.state.armies[0]


def test_spec_parsing():
    assert parse_spec("mission:focus=0.8:threshold=0.7").kwargs == {"focus": 0.8, "threshold": 0.7}
    assert parse_spec({"name": "mission", "focus": 0.8}) == parse_spec("mission:focus=0.8")
    with pytest.raises(AgentSpecError, match="name=value"):
        parse_spec("mission:focus")
    with pytest.raises(AgentSpecError, match="unknown parameter 'speed'"):
        make_agent("mission:speed=2", 0, np.random.default_rng(0))
    with pytest.raises(AgentSpecError, match="focus=true.* must be float"):
        make_agent("mission:focus=true", 0, np.random.default_rng(0))
    with pytest.raises(AgentSpecError, match="playouts=2.5.* must be int"):
        make_agent("mcs:playouts=2.5", 0, np.random.default_rng(0))


def _seat0_attacks_on_targets(spec: str, seeds: int) -> list[bool]:
    """Whether each attack of seat 0 (playing `spec` against three mission agents) aims at its mission's
    targets, over games with seeds 0 .. seeds-1 (missions that name no territories are skipped)."""
    from riskcore.engine.actions import Attack
    from riskcore.agents.heuristic import mission_targets

    seen = []

    def watch(state, action):
        if isinstance(action, Attack) and state.current == 0:
            targets = mission_targets(PlayerView(state, 0))
            if targets is not None:
                seen.append(bool(targets[action.dst]))

    for seed in range(seeds):
        play_game(GameConfig(), [spec, "mission", "mission", "mission"], seed, observer=watch)
    return seen


def test_constrained_mission_agent_attacks_only_mission_targets():
    seen = _seat0_attacks_on_targets("mission:focus=1", 15)
    assert seen and all(seen)


@pytest.mark.parametrize("agent", ["bsr", "expert", "domination"])
def test_a_mission_weight_turns_a_domination_agent_towards_its_mission(agent):
    def share_on_targets(spec: str) -> float:
        return float(np.mean(_seat0_attacks_on_targets(spec, 8)))

    blind, following = share_on_targets(agent), share_on_targets(f"{agent}:mission_weight=2")
    assert following > blind + 0.05, (blind, following)


def test_a_negative_mission_weight_is_refused():
    with pytest.raises((AgentSpecError, ValueError), match="mission_weight"):
        make_agent("bsr:mission_weight=-1", 0, np.random.default_rng(0))


@pytest.mark.parametrize("spec", ["mission", "expert:mission_weight=1", "domination:mission_weight=1", "bsr"])
def test_a_setup_army_is_placed_as_a_reinforcement_would_be(spec):
    """Every placement of setup, one army at a time, is the agent's reinforcement rule for a reserve of one (its
    twin, in the same state with the same random stream, asked to reinforce)."""
    import copy

    from riskcore.engine.board import load_board
    from riskcore.engine.chance import RngChance
    from riskcore.engine import REINFORCE, SETUP, new_game, step

    config = GameConfig()
    state = new_game(load_board(config.board), config, RngChance(np.random.default_rng(3)))
    agents = [make_agent(s, p, np.random.default_rng(10 + p)) for p, s in enumerate([spec] + ["mission"] * 3)]
    checked = []
    while state.phase == SETUP:
        me = state.current
        if me == 0:
            twin, as_reinforcement = copy.deepcopy(agents[0]), state.clone()
            as_reinforcement.phase = REINFORCE
            action = agents[0].act(PlayerView(state, 0))
            checked.append(twin.act(PlayerView(as_reinforcement, 0)) == action)
        else:
            action = agents[me].act(PlayerView(state, me))
        step(state, action)
    assert len(checked) >= 15 and all(checked)


def test_a_tilted_random_agent_attacks_its_mission_targets_more_often():
    blind = np.mean(_seat0_attacks_on_targets("random", 6))
    tilted = np.mean(_seat0_attacks_on_targets("random:tilt=0.9", 6))
    assert tilted > blind + 0.1, (blind, tilted)


def test_a_tilt_of_zero_is_the_plain_random_agent():
    plain = play_game(GameConfig(), ["random", "mission", "mission", "mission"], 5)
    zero = play_game(GameConfig(), ["random:tilt=0", "mission", "mission", "mission"], 5)
    assert plain.state.log == zero.state.log


def test_a_tilt_outside_zero_to_one_is_refused():
    with pytest.raises((AgentSpecError, ValueError), match="tilt"):
        make_agent("random:tilt=1.5", 0, np.random.default_rng(0))
