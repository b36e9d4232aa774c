"""The compiled kernels against the plain-numpy model they replace: the same values, decisions, node counts and
states made, bit for bit, on seeded positions."""

import numpy as np
import pytest

from riskcore.engine.board import load_board
from riskcore.experiments.search import SEARCHES, positions
from riskcore.search.abstract import Model, PlainModel, turn_sequences
from riskcore.search.endfeatures import end_features
from riskcore.search.endscore import load_scorer
from riskcore.search.exhaustive import MaxN
from riskcore.search.gbsearch import GBSearch
from riskcore.search import goal_kernels as gk
from riskcore.search.goals import all_goals


def pair(players: int, board: str = "small", **settings):
    b = load_board(board)
    return Model(b, players, 2, **settings), PlainModel(b, players, 2, **settings)


@pytest.mark.parametrize("players", [2, 3])
def test_compiled_and_plain_exhaustive_search_agree_exactly(players):
    fast, plain = pair(players)
    for s in positions(4, players, 300 + players):
        for turns in (1, 2, 3):
            a, b = MaxN(fast), MaxN(plain)
            va, vb = a.root(s, turns), b.root(s, turns)
            assert list(va) == list(vb) and all(np.array_equal(va[k], vb[k]) for k in va)
            assert a.nodes == b.nodes and fast.generated == plain.generated


@pytest.mark.parametrize("players", [2, 3])
def test_compiled_and_plain_goal_based_searches_agree_exactly(players):
    fast, plain = pair(players)
    for s in positions(2, players, 310 + players):
        for name, policy in SEARCHES.items():
            scorer = load_scorer(players) if policy.needs_scorer else None
            for turns in (1, 2, 3):
                a, b = GBSearch(fast, s.to_move, policy, scorer), GBSearch(plain, s.to_move, policy, scorer)
                (ga, xa, va), (gb, xb, vb) = a.decide(s, turns), b.decide(s, turns)
                assert (ga, xa, a.nodes) == (gb, xb, b.nodes) and np.array_equal(va, vb), (name, turns)
                assert fast.generated == plain.generated, (name, turns)


def test_compiled_model_steps_agree_with_the_plain_model_on_the_classic_board_with_targets():
    targets = {0: np.arange(42) < 9}
    fast, plain = pair(4, "classic", targets=targets, target_weight=3.0)
    for s in positions(5, 4, 320, board="classic"):
        assert fast.actions(s) == plain.actions(s) and np.array_equal(fast.evaluate(s), plain.evaluate(s))
        walk_a, made_a = turn_sequences(fast, fast.apply(s, fast.actions(s)[0]))
        walk_b, made_b = turn_sequences(plain, plain.apply(s, plain.actions(s)[0]))
        assert made_a == made_b and [x for x, _ in walk_a] == [x for x, _ in walk_b]
        assert all(y.key() == z.key() for (_, y), (_, z) in zip(walk_a, walk_b))


@pytest.mark.parametrize("players", [2, 3])
def test_compiled_principal_variation_is_the_plain_one(players):
    fast, plain = pair(players)
    for s in positions(4, players, 340 + players):
        for start in (s, fast.apply(s, fast.actions(s)[-1])):
            for turns in (1, 2):
                a, b = MaxN(fast), MaxN(plain)
                before = (fast.generated, plain.generated)
                pa, pb = a.principal_variation(start, turns), b.principal_variation(start, turns)
                assert [x for x, _ in pa] == [x for x, _ in pb] and len(pa) > 0
                assert all(y.key() == z.key() for (_, y), (_, z) in zip(pa, pb))
                assert a.nodes == b.nodes and fast.generated - before[0] == plain.generated - before[1]


@pytest.mark.parametrize("board,players,max_attacks", [("small", 2, 2), ("small", 3, 3), ("classic", 4, 3)])
def test_compiled_goals_play_the_plain_goals_turns(board, players, max_attacks):
    b = load_board(board)
    fast, plain = Model(b, players, max_attacks), PlainModel(b, players, max_attacks)
    followed = 0
    for s in positions(12, players, 330 + players, board=board):
        for start in (s, fast.apply(s, fast.actions(s)[0])):  # from the placement and from the attacks
            for goal in all_goals(fast):
                if goal.kind in ("break", "eliminate") and goal.target == start.to_move:
                    continue
                p = start.to_move
                assert goal.applicable(fast, start, p) == goal.applicable(plain, start, p)
                if start.phase == "place":  # the placement's two rankings, element by element
                    code, probes = gk.KIND_CODES[goal.kind], np.zeros(1, dtype=np.int64)
                    assert np.array_equal(gk._defence_scores(code, goal.target, start.owner, start.armies, p,
                                                             fast.tables, probes), goal._defence_scores(plain, start, p))
                    if goal.kind != "secure":
                        assert np.array_equal(gk._entry_scores(code, goal.target, start.owner, start.armies, p,
                                                               fast.tables), goal._entry_scores(plain, start, p))
                before = (fast.generated, plain.generated)
                (end_a, acts_a), (end_b, acts_b) = goal.follow(fast, start), goal.follow(plain, start)
                assert acts_a == acts_b and end_a.key() == end_b.key(), (goal.name, start.key())
                assert fast.generated - before[0] == plain.generated - before[1], goal.name
                followed += len(acts_a) > 2
    assert followed > 0  # some goals attacked: the comparison covered more than placing and ending


def test_compiled_end_features_are_the_plain_ones_bit_for_bit():
    fast, plain = pair(3)
    for s in positions(4, 3, 330):
        for a in fast.placements(s):
            for _, z in turn_sequences(fast, fast.apply(s, a))[0][:6]:
                assert np.array_equal(end_features(fast, z, s.to_move), end_features(plain, z, s.to_move))


@pytest.mark.parametrize("players", [2, 3])
def test_a_full_transposition_table_changes_the_work_but_never_the_values_plans_or_tree_size(players):
    fast, _ = pair(players)
    smallest_mb = 1024 * 8 * (4 + players) / 2**20  # the smallest table: 1,024 slots, at its bound at once
    replaced = 0
    for s in positions(3, players, 330 + players):
        free, tight = MaxN(fast), MaxN(fast, table_mb=smallest_mb)
        va, vb = free.root(s, 3), tight.root(s, 3)
        assert list(va) == list(vb) and all(np.array_equal(va[k], vb[k]) for k in va)
        assert free.nodes == tight.nodes and tight.distinct >= free.distinct
        pa, pb = MaxN(fast).principal_variation(s, 3), MaxN(fast, table_mb=smallest_mb).principal_variation(s, 3)
        assert [a for a, _ in pa] == [a for a, _ in pb]
        replaced += tight.replaced
        assert free.replaced == 0
    assert replaced > 0  # the bound was reached: the comparison above tested replacement


def test_a_transposition_table_below_the_smallest_size_is_refused():
    fast, _ = pair(2)
    with pytest.raises(ValueError, match="0.01 MB"):
        MaxN(fast, table_mb=0.01)
