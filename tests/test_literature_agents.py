"""Agents from the literature: legality over seeded games, BSR arithmetic, alpha-beta vs minimax, determinisation."""

import numpy as np
import pytest

from riskcore.agents.drafting import border_security, bsr_allocation
from riskcore.agents.mcs import determinise
from riskcore.engine.board import load_board
from riskcore.engine.config import GameConfig
from riskcore.game import play_game
from riskcore.agents.minimax_search import Search, SearchNode, features
from riskcore.engine.battle import expected_battle
from riskcore.simulate import game_seeds
from tests.test_conformance import InvariantChecker

N1, N2, N3, E1, E2, E3, E4, S1, S2, S3 = range(10)


@pytest.mark.parametrize("agent,games", [("bsr", 40), ("expert", 40), ("aware:belief_weight=2", 15),
                                         ("minimax:depth=2:width=4", 15), ("mc-rl:episodes=3000", 20),
                                         ("mcs:playouts=4:candidates=2", 4), ("gb", 10),
                                         ("gb:mission_weight=0:max_attacks=3", 4),
                                         ("gb:mode=eager:lookahead=1", 6)])
def test_agent_only_plays_legal_actions(agent, games):
    for i, seed in enumerate(game_seeds(77, games)):
        seats = [agent, "mission", "domination", "random"]
        seats = seats[i % 4:] + seats[:i % 4]
        checker = InvariantChecker(check_legal_every=5 if i < 3 else 0)
        rec = play_game(GameConfig(turn_cap=150), seats, seed, observer=checker)
        checker.finish(rec.state)


def test_border_security_ratio_on_a_hand_made_position():
    board = load_board("small")
    owner = np.array([0, 0, 0, 1, 1, 1, 1, 1, 1, 1])
    armies = np.array([2, 5, 4, 3, 1, 1, 6, 1, 1, 7])
    borders, bsr = border_security(board, owner, armies, 0)
    # N1 borders S3 (7 enemy armies), N3 borders E1 (3); N2 is interior
    assert borders.tolist() == [N1, N3]
    assert bsr.tolist() == [7 / 2, 3 / 4]
    # top half of 2 borders = N1 only: everything goes there
    assert bsr_allocation(board, owner, armies, 0, 5) == {N1: 5}


def test_bsr_shares_in_proportion_over_the_top_half():
    board = load_board("small")
    owner = np.array([0, 1, 0, 0, 1, 0, 1, 0, 1, 1])  # five borders for player 0: the top three are kept
    armies = np.array([1, 4, 2, 1, 2, 1, 3, 2, 6, 1])
    borders, bsr = border_security(board, owner, armies, 0)
    assert len(borders) == 5
    alloc = bsr_allocation(board, owner, armies, 0, 10)
    top = borders[np.argsort(-bsr, kind="stable")[:3]]
    assert set(alloc) == set(top.tolist()) and sum(alloc.values()) == 10
    ratio = bsr[np.argsort(-bsr, kind="stable")[:3]]
    expected = 10 * ratio / ratio.sum()
    assert all(abs(alloc[int(t)] - e) < 1 for t, e in zip(top, expected))


def test_expected_battle_is_deterministic_and_sensible():
    assert expected_battle(10, 2)[0] is True
    assert expected_battle(1, 5)[0] is False
    conquered, left, _ = expected_battle(10, 2)
    assert 1 <= left <= 10


def test_alphabeta_equals_minimax_and_visits_fewer_nodes():
    board = load_board("small")
    total_ab = total_mm = 0
    for seed in range(6):
        rng = np.random.default_rng(seed)
        owner = rng.integers(0, 3, size=10)
        owner[:3] = [0, 1, 2]
        armies = rng.integers(1, 8, size=10)
        weights = rng.uniform(0, 10, size=4)
        node = SearchNode(owner, armies, 0)
        ab = Search(board, 0, weights, 3, depth=4, width=4)
        mm = Search(board, 0, weights, 3, depth=4, width=4)
        assert ab.alphabeta(node, 4, -np.inf, np.inf) == pytest.approx(mm.plain_minimax(node, 4), abs=1e-12)
        assert ab.nodes <= mm.nodes
        total_ab, total_mm = total_ab + ab.nodes, total_mm + mm.nodes
    assert total_ab < total_mm


def test_leaf_features_lie_in_unit_interval():
    board = load_board("classic")
    rng = np.random.default_rng(0)
    for _ in range(20):
        owner = rng.integers(0, 4, size=42)
        armies = rng.integers(1, 20, size=42)
        f = features(board, owner, armies, int(rng.integers(4)))
        assert ((0 <= f) & (f <= 1)).all()


def test_determinised_copy_hides_only_what_the_player_cannot_see():
    rec = play_game(GameConfig(), ["mission"] * 4, 12)
    state = rec.state
    state.hands = [[0, 1], [2, 3, 4], [], [5]]
    copy = determinise(state, 0, np.random.default_rng(1))
    assert copy.hands[0] == [0, 1] and copy.missions[0] == state.missions[0]
    assert [len(h) for h in copy.hands] == [2, 3, 0, 1]
    assert all(m.index != state.missions[0].index for m in copy.missions[1:])
    assert np.array_equal(copy.owner, state.owner) and np.array_equal(copy.armies, state.armies)
    assert sorted(copy.deck + [c for h in copy.hands for c in h]) == sorted(state.deck + [c for h in state.hands
                                                                                          for c in h])


@pytest.mark.parametrize("spec", ["gb:max_attacks=0", "gb:mission_weight=-1", "gb:lookahead=0", "gb:mode=dreamy"])
def test_gb_agent_rejects_bad_parameters(spec):
    from riskcore.agents import make_agent

    with pytest.raises(ValueError, match="gb"):
        make_agent(spec, 0, np.random.default_rng(0))
