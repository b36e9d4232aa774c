"""Rules on hand-made positions. Small board indices: N1..N3 = 0..2, E1..E4 = 3..6, S1..S3 = 7..9."""

import numpy as np
import pytest

from riskcore.engine.actions import Attack, EndAttack, EndTurn, Fortify, IllegalAction, Occupy, Place, Retreat, Trade
from riskcore.engine.config import ConfigError, GameConfig
from riskcore.engine import ATTACK, FORTIFY, OCCUPY, OVER, REINFORCE, legal_actions, step
from riskcore.engine.reference import _begin_turn
from tests.helpers import ScriptedChance, position

N1, N2, N3, E1, E2, E3, E4, S1, S2, S3 = range(10)


def test_reinforcement_is_territories_over_three_with_minimum_three(classic):
    owner = np.ones(42, dtype=int)
    owner[[classic.index(t) for t in ("Alaska", "Ural", "Egypt", "Peru", "Iceland", "Siam", "India", "Japan",
                                      "China", "Congo", "Ontario")]] = 0
    s = position(classic, owner, np.ones(42))
    assert s.reinforcements(0) == 3  # 11 territories
    assert s.reinforcements(1) == 31 // 3 + 2  # 31 territories, all of Australia and no other continent
    owner[:] = 1
    owner[:8] = 0
    assert position(classic, owner, np.ones(42)).reinforcements(0) == 3  # 8 territories: the minimum


def test_continent_bonuses_add_up(classic):
    owner = np.ones(42, dtype=int)
    australia = [classic.index(t) for t in ("Indonesia", "New Guinea", "Western Australia", "Eastern Australia")]
    south = [classic.index(t) for t in ("Venezuela", "Peru", "Brazil", "Argentina")]
    owner[australia + south] = 0
    s = position(classic, owner, np.ones(42))
    assert s.reinforcements(0) == 3 + 2 + 2
    held = dict(zip(classic.continent_names, s.held_continents(1)))
    assert held == {"North America": True, "South America": False, "Europe": True, "Africa": True, "Asia": True,
                    "Australia": False}
    assert s.reinforcements(1) == 34 // 3 + 5 + 5 + 3 + 7


def test_small_board_north_bonus(small):
    s = position(small, [0, 0, 0, 1, 1, 1, 1, 1, 1, 1], np.ones(10))
    assert s.reinforcements(0) == 3 + 2
    assert s.reinforcements(1) == 3 + 3 + 1


def test_attacker_dice_limited_by_armies(small):
    s = position(small, [0, 0, 0, 1, 1, 1, 1, 1, 1, 1], [1, 1, 3, 2, 1, 1, 1, 1, 1, 1])
    with pytest.raises(IllegalAction, match=r"attacker may roll 1..2 dice"):
        step(s, Attack(N3, E1, dice=3))
    with pytest.raises(IllegalAction, match="at least 2 armies"):
        step(s, Attack(N1, S3))
    with pytest.raises(IllegalAction, match="adjacent enemy"):
        step(s, Attack(N3, E2))


def test_defender_dice_limited_by_armies(small):
    s = position(small, [0, 0, 0, 1, 1, 1, 1, 1, 1, 1], [1, 1, 4, 1, 1, 1, 1, 1, 1, 1],
                 chance=ScriptedChance(battles=[(0, 1)]))
    with pytest.raises(IllegalAction, match=r"defender player 1 may roll 1..1 dice"):
        step(s, Attack(N3, E1, dice=3), defender_dice=2)


def test_conquest_requires_moving_between_dice_rolled_and_all_but_one(small):
    s = position(small, [0, 0, 0, 1, 1, 1, 1, 1, 1, 1], [1, 1, 6, 1, 1, 1, 1, 1, 1, 1],
                 chance=ScriptedChance(battles=[(0, 1)]))
    step(s, Attack(N3, E1, dice=2))
    assert s.phase == OCCUPY and s.owner[E1] == 0 and s.armies[E1] == 0
    with pytest.raises(IllegalAction, match="between 2 and 5"):
        step(s, Occupy(1))
    with pytest.raises(IllegalAction, match="between 2 and 5"):
        step(s, Occupy(6))
    step(s, Occupy(5))
    assert s.armies[N3] == 1 and s.armies[E1] == 5 and s.phase == ATTACK


def test_full_battle_stops_at_stop_at(small):
    s = position(small, [0, 0, 0, 1, 1, 1, 1, 1, 1, 1], [1, 1, 8, 5, 1, 1, 1, 1, 1, 1],
                 chance=ScriptedChance(battles=[(5, 2)]))
    step(s, Attack(N3, E1, None, stop_at=2))
    assert s.armies[N3] == 3 and s.armies[E1] == 3 and s.phase == ATTACK
    row = s.log[-1]
    assert row[4] == "attack" and row[-1] == 2 and row[12] is False


def test_full_battle_may_end_one_below_stop_at_but_not_mid_battle(small):
    s = position(small, [0, 0, 0, 1, 1, 1, 1, 1, 1, 1], [1, 1, 4, 5, 1, 1, 1, 1, 1, 1],
                 chance=ScriptedChance(battles=[(2, 0)]))
    step(s, Attack(N3, E1, None, stop_at=2))  # 3 rolling armies lose two in one roll: down to 1
    assert s.armies[N3] == 2
    s = position(small, [0, 0, 0, 1, 1, 1, 1, 1, 1, 1], [1, 1, 8, 5, 1, 1, 1, 1, 1, 1],
                 chance=ScriptedChance(battles=[(1, 1)]))
    with pytest.raises(IllegalAction, match="impossible"):
        step(s, Attack(N3, E1, None, stop_at=2))


def test_a_retreat_ends_the_battle_of_single_rolls_the_last_action_left_open(small):
    s = position(small, [0, 0, 0, 1, 1, 1, 1, 1, 1, 1], [1, 1, 8, 5, 1, 1, 1, 1, 1, 1],
                 chance=ScriptedChance(battles=[(1, 1), (2, 0)]))
    assert Retreat() not in legal_actions(s)
    with pytest.raises(IllegalAction, match="a retreat ends a battle of single rolls"):
        step(s, Retreat())
    step(s, Attack(N3, E1, dice=2))
    assert Retreat() in legal_actions(s)
    step(s, Retreat())
    assert s.log[-1][4:7] == ("retreat", N3, E1) and s.log[-1][13] == 1  # the defender
    assert (s.armies[N3], s.armies[E1], s.phase) == (7, 4, ATTACK)
    with pytest.raises(IllegalAction, match="a retreat ends"):
        step(s, Retreat())  # no battle open any more
    step(s, Attack(N3, E1, None, stop_at=5))  # a whole battle ends itself
    assert Retreat() not in legal_actions(s)
    s = position(small, [0, 0, 0, 1, 1, 1, 1, 1, 1, 1], [1, 1, 3, 5, 1, 1, 1, 1, 1, 1],
                 chance=ScriptedChance(battles=[(2, 0)]))
    step(s, Attack(N3, E1, dice=2))  # down to one army: the battle is over
    assert Retreat() not in legal_actions(s)


def test_elimination_transfers_cards_and_forces_trade_at_six(small):
    owner = [0, 0, 0, 1, 1, 1, 1, 1, 1, 2]
    s = position(small, owner, [5, 1, 1, 1, 1, 1, 1, 1, 1, 1], chance=ScriptedChance(battles=[(0, 1)]))
    s.hands = [[0, 3, 6], [], [1, 4, 7]]  # card i shows territory i; symbols cycle inf, cav, art
    step(s, Attack(N1, S3, dice=3))
    assert not s.alive[2] and s.eliminated_by[2] == 0
    assert sorted(s.hands[0]) == [0, 1, 3, 4, 6, 7] and s.hands[2] == []
    step(s, Occupy(3))
    assert s.phase == REINFORCE
    with pytest.raises(IllegalAction, match="must trade before placing"):
        step(s, Place(N1, 1))
    step(s, Trade((0, 3, 6)))  # three infantry
    assert len(s.hands[0]) == 3 and s.reserve == 4
    step(s, Place(N1, 4))
    assert s.phase == ATTACK


def test_must_trade_at_five_cards(small):
    s = position(small, [0, 0, 0, 1, 1, 1, 1, 1, 1, 1], np.ones(10), phase=REINFORCE)
    s.reserve = 3
    s.hands[0] = [3, 4, 5, 6, 7]
    with pytest.raises(IllegalAction, match="must trade"):
        step(s, Place(N1, 3))
    assert all(isinstance(a, Trade) for a in legal_actions(s))


def test_trade_values_escalate_and_owned_card_gives_two_once_per_turn(small):
    s = position(small, [0, 0, 0, 1, 1, 1, 1, 1, 1, 1], np.ones(10), phase=REINFORCE)
    s.reserve = 3
    s.hands[0] = [0, 1, 2, 3, 4, 5]  # N1..N3 cards (owned) and E1..E3 cards (not owned)
    step(s, Trade((3, 4, 5)))  # one of each, no owned territory
    assert s.reserve == 3 + 4 and s.armies.sum() == 10
    step(s, Trade((0, 1, 2)))
    assert s.reserve == 3 + 4 + 6 and s.armies[N1] == 1 + 2
    assert s.log[-1][4] == "trade" and s.log[-1][6] == N1 and s.log[-1][7] == 6


def test_fixed_card_values_option(small):
    s = position(small, [0, 0, 0, 1, 1, 1, 1, 1, 1, 1], np.ones(10), phase=REINFORCE, card_values="fixed")
    s.reserve = 3
    s.hands[0] = [3, 6, 9]  # three infantry
    step(s, Trade((3, 6, 9)))
    assert s.reserve == 3 + 4


def test_fortify_adjacent_and_leaves_one(small):
    s = position(small, [0, 0, 0, 1, 1, 1, 1, 1, 1, 1], [5, 1, 1, 1, 1, 1, 1, 1, 1, 1], phase=FORTIFY)
    with pytest.raises(IllegalAction, match="leaving at least one"):
        step(s, Fortify(N1, N2, 5))
    with pytest.raises(IllegalAction, match="your own"):
        step(s, Fortify(N1, S3, 1))
    step(s, Fortify(N1, N2, 4))
    assert s.armies[N1] == 1 and s.armies[N2] == 5 and s.current == 1 and s.phase == REINFORCE


def test_connected_fortify_option(small):
    owner = [0, 0, 0, 0, 0, 1, 1, 1, 1, 1]
    s = position(small, owner, [5, 1, 1, 1, 1, 1, 1, 1, 1, 1], phase=FORTIFY)
    with pytest.raises(IllegalAction, match="adjacent"):
        step(s, Fortify(N1, E2, 1))
    s = position(small, owner, [5, 1, 1, 1, 1, 1, 1, 1, 1, 1], phase=FORTIFY, fortify="connected")
    step(s, Fortify(N1, E2, 4))
    assert s.armies[E2] == 5


def test_card_drawn_only_after_a_conquest(small):
    s = position(small, [0, 0, 0, 1, 1, 1, 1, 1, 1, 1], [1, 1, 6, 1, 1, 1, 1, 1, 1, 1],
                 chance=ScriptedChance(battles=[(0, 1)], draws=[7]))
    step(s, EndAttack())
    step(s, EndTurn())
    assert s.hands[0] == []
    s = position(small, [0, 0, 0, 1, 1, 1, 1, 1, 1, 1], [1, 1, 6, 1, 1, 1, 1, 1, 1, 1],
                 chance=ScriptedChance(battles=[(0, 1)], draws=[7]))
    step(s, Attack(N3, E1, dice=3))
    step(s, Occupy(3))
    step(s, EndAttack())
    step(s, EndTurn())
    assert s.hands[0] == [7] and 7 not in s.deck


def test_illegal_action_names_the_rule(small):
    s = position(small, [0, 0, 0, 1, 1, 1, 1, 1, 1, 1], np.ones(10), phase=ATTACK)
    with pytest.raises(IllegalAction, match=r"illegal Fortify.*fortifying happens only in the fortify phase"):
        step(s, Fortify(N1, N2, 1))


def test_domination_victory(small):
    s = position(small, [0, 0, 0, 0, 0, 0, 0, 0, 0, 1], [1, 1, 1, 1, 1, 1, 1, 1, 5, 1], mode="domination",
                 chance=ScriptedChance(battles=[(0, 1)]))
    step(s, Attack(S2, S3, dice=3))
    assert s.phase == OCCUPY  # the win counts once the armies have moved in
    step(s, Occupy(3))
    assert s.phase == OVER and s.winner == 0 and s.end_reason == "domination"
    assert (s.armies >= 1).all()


def test_turn_cap_ends_in_a_recorded_draw(small):
    s = position(small, [0, 0, 0, 1, 1, 1, 1, 1, 1, 1], np.ones(10), turn_cap=1)
    _begin_turn(s, 1)
    assert s.phase == OVER and s.winner == -1 and s.end_reason == "turn_cap" and s.log[-1][4] == "draw"


def test_bad_config_rejected_naming_the_field():
    with pytest.raises(ConfigError, match="n_players=7"):
        GameConfig(n_players=7)
    with pytest.raises(ConfigError, match="unknown game config field"):
        GameConfig.from_dict({"players": 4})


def test_deck_recycles_traded_cards_when_empty(small):
    s = position(small, [0, 0, 0, 1, 1, 1, 1, 1, 1, 1], [1, 1, 6, 1, 1, 1, 1, 1, 1, 1],
                 chance=ScriptedChance(battles=[(0, 1)], draws=[4]))
    s.deck, s.discard = [], [4, 5, 6]
    step(s, Attack(N3, E1, dice=3))
    step(s, Occupy(3))
    step(s, EndAttack())
    step(s, EndTurn())
    assert s.hands[0] == [4] and s.deck == [5, 6] and s.discard == []


@pytest.mark.parametrize("deal,batch", [("claim", 1), ("random", 1), ("claim", 5)])
def test_no_game_is_won_during_setup(deal, batch):
    # two-player mission games: claiming can complete a two-continent mission, setup placements an army mission
    from riskcore.game import play_game
    from riskcore.simulate import game_seeds

    config = GameConfig(n_players=2, deal=deal, setup_batch=batch)
    for seed in game_seeds(1, 120):
        state = play_game(config, ["mission", "mission"], seed).state
        assert state.turn >= 1 and not any(row[4] == "win" and row[1] == 0 for row in state.log), seed


def test_ownership_counts_and_cached_mission_checks_follow_every_action(classic):
    """The per-stamp counts (territories, continents held) and cached mission checks agree with a count from
    scratch after every action of whole games, clones included."""
    from riskcore.engine.reference import _mission_done
    from riskcore.game import play_game

    def check(state, action):
        territories, held = state.ownership()
        for p in range(state.n_players):
            mine = state.owner == p
            assert territories[p] == int(mine.sum())
            assert held[p] == classic.held_continents(mine).tolist()
            assert state.reinforcements(p) == classic.reinforcements(mine)
            if state.missions[p] is not None and state.turn:
                fresh = state.missions[p].complete(p, mine, state.armies, classic.held_continents(mine),
                                                   state.n_players, state.eliminated_by)
                assert _mission_done(state, p) == fresh
                assert _mission_done(state.clone(), p) == fresh

    for seed in (1, 2):
        play_game(GameConfig(n_players=4, mode="mission"), ["mission", "domination", "random", "mission"], seed,
                  observer=check)
