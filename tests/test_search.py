"""Goal-based search against exhaustive max^n on the abstract model."""

import numpy as np
import pandas as pd
import pytest

from riskcore.engine.board import load_board
from riskcore.search.abstract import END, AState, Model, first_best
from riskcore.search.exhaustive import MaxN
from riskcore.search.gbsearch import GBSearch, estimate_ab, estimate_gb, estimate_share
from dataclasses import replace

from riskcore.experiments.search import (GOAL_ROOTED, REFERENCES, SEARCHES, accuracy_table, estimate_table, judge,
                                         measure, policy_search, positions)
from riskcore.search.goals import Goal, applicable_goals
from riskcore.search.policy import GoalPolicy, expand


N1, N2, N3, E1, S3 = 0, 1, 2, 3, 9  # small board: North is N1-N3; N3 borders E1, N1 borders S3


def _north_vs_rest(armies: dict[int, int]) -> AState:
    owner = np.ones(10, dtype=np.int64)
    owner[[N1, N2, N3]] = 0
    a = np.ones(10, dtype=np.int64)
    for t, n in armies.items():
        a[t] = n
    return AState(owner, a, 0)


class OptimalGoal(Goal):
    """A goal whose algorithm is the AB optimum for the rest of the look-ahead (turns left per player)."""

    def __init__(self, turns_left: dict):
        object.__setattr__(self, "kind", "optimal")
        object.__setattr__(self, "target", -1)
        object.__setattr__(self, "turns_left", turns_left)

    def applicable(self, m, s, p):
        return True

    def next_action(self, m, s, p):
        search = MaxN(m)
        turns = self.turns_left[p]
        return max(m.actions(s), key=lambda a: (search.value(m.apply(s, a), turns - (a == END))[p],
                                                -m.actions(s).index(a)))


def listed(goals, **settings) -> GoalPolicy:
    """A goal policy whose every turn chooses among `goals` (goal objects made by a test)."""
    class Listed(GoalPolicy):
        def turn_goals(self, model):
            return list(goals)
    return Listed(**settings)


def _position(players=2, seed=0):
    rng = np.random.default_rng(seed)
    owner = rng.integers(0, players, 10)
    owner[:players] = np.arange(players)
    return AState(owner, rng.integers(1, 6, 10), 0)


@pytest.mark.parametrize("seed", range(3))
def test_gb_equals_ab_when_each_player_has_one_goal_that_is_the_ab_optimum(seed):
    model = Model(load_board("small"), 2, max_attacks=2)
    state = _position(2, seed)
    turns = 2
    goal = OptimalGoal({0: 2, 1: 1})  # player 0 moves first with two turns to go, then player 1 with one
    gb = GBSearch(model, 0, listed([goal]))
    _, actions, gb_value = gb.decide(state, turns)
    ab = MaxN(model)
    ab_best = max(v[0] for v in ab.root(state, turns).values())
    assert gb_value[0] == pytest.approx(ab_best, abs=1e-12)


def test_gb_explores_far_fewer_nodes_than_ab():
    model = Model(load_board("small"), 2, max_attacks=2)
    state = _position(2, 1)
    ab, gb = MaxN(model), GBSearch(model, 0)
    ab.root(state, 2)
    gb.decide(state, 2)
    assert gb.nodes < 0.05 * ab.nodes


def test_node_counts_are_deterministic_for_a_seed():
    a = [r["nodes"] for p in positions(3, 3, 5) for r in measure(p, 3, 2, 2, "small")]
    b = [r["nodes"] for p in positions(3, 3, 5) for r in measure(p, 3, 2, 2, "small")]
    assert a == b and len(a) == 3 * (2 + 1 + 2 + len(SEARCHES) * 2)  # AB, random and GB searches at 1 and 2 turns, AB shallower at 2


def test_restricted_opponents_prune_the_all_goals_tree():
    rows = pd.DataFrame([{**r, "position": i} for i, p in enumerate(positions(4, 3, 11))
                         for r in measure(p, 3, 2, 2, "small")])
    gb = rows[rows.search != "AB"].pivot(index="position", columns=["search", "lookahead"], values="nodes")
    assert (gb["GB-restricted"] <= gb["GB"]).all().all()
    assert (gb["GB-restricted"] < gb["GB"]).any().any()  # the restriction bites somewhere


def test_accuracy_is_reported_per_gb_search():
    rows = [("AB", 0, 1, 100, 60, None, None), ("GB", 0, 1, 10, 20, 1.0, 0.0),
            ("GB-restricted", 0, 1, 5, 10, 0.0, 1.0)]
    nodes = pd.DataFrame(rows, columns=["search", "position", "lookahead", "nodes", "generated", "optimal",
                                        "relative_loss"]).assign(players=3)
    table = accuracy_table(nodes).set_index("search")
    assert table.loc["GB"].optimal == 1.0 and table.loc["GB-restricted"].optimal == 0.0
    assert table.loc["GB-restricted"].node_share == pytest.approx(0.05)


def test_estimate_formulas_on_hand_computed_cases():
    assert estimate_ab(10, 1) == 10 and estimate_ab(10, 2) == 110 and estimate_ab(3, 3) == 39
    assert estimate_gb(2, 4, 1) == 10 and estimate_gb(2, 4, 2) == 30  # (2 + 4) x 5
    assert estimate_share(10, 2, 4, 2) == pytest.approx(30 / 110)


def test_goals_emit_legal_abstract_actions():
    model = Model(load_board("small"), 3, max_attacks=3)
    for state in positions(10, 3, 11):
        gb = GBSearch(model, state.to_move)
        for goal in gb.choices(state):
            s = state
            for _ in range(10):
                a = goal.next_action(model, s, s.to_move)
                assert a in model.actions(s), (goal.name, a)
                s = model.apply(s, a)
                if a == END:
                    break


@pytest.mark.parametrize("settings,message", [
    ({"opponents": "psychic"}, "opponents must be one of"), ({"root": "psychic"}, "root must be one of"),
    ({"kinds": ("secure", "bluff")}, "unknown goal kind 'bluff'"), ({"shortlist": 3}, "shortlist needs"),
    ({"horizon": (("ranked:x",),)}, "unknown goal kind 'ranked:x'")])
def test_a_bad_goal_policy_is_rejected_by_name(settings, message):
    with pytest.raises(ValueError, match=message):
        GoalPolicy(**settings)


def test_a_policy_that_needs_the_end_scorer_refuses_to_search_without_it():
    model = Model(load_board("small"), 2)
    for name, policy in SEARCHES.items():
        if policy.needs_scorer:
            with pytest.raises(ValueError, match="end_scorer"):
                GBSearch(model, 0, policy)


def test_an_exhaustive_root_turn_is_ab_at_one_turn_and_plays_its_value_below():
    model = Model(load_board("small"), 3, max_attacks=2)
    for state in positions(5, 3, 23):
        p = state.to_move
        one_turn = MaxN(model).root(state, 1)
        _, actions, v = GBSearch(model, p, GoalPolicy(root="exhaustive")).decide(state, 1)
        assert v[p] == pytest.approx(max(x[p] for x in one_turn.values()), abs=1e-12)
        assert actions[0] == first_best({a: x[p] for a, x in one_turn.items()}) and actions[-1] == END
        # deeper: the value is GB's tree below the end of the chosen turn; every goal's turn is one of the
        # sequences searched, so the value is at least the goal-based root's
        hybrid, goals = GBSearch(model, p, GoalPolicy(root="exhaustive")), GBSearch(model, p)
        _, actions, v = hybrid.decide(state, 2)
        s = state
        for a in actions:
            s = model.apply(s, a)
        assert GBSearch(model, p).value(s, 1) == pytest.approx(v, abs=1e-12)
        assert v[p] >= goals.decide(state, 2)[2][p] - 1e-12

        def tree(x, p):  # every state of the turn and GB's tree below every end, transposed ends included
            n = 0
            for a in model.actions(x):
                y = model.apply(x, a)
                if a == END or model.terminal(y):
                    below = GBSearch(model, p)
                    below.value(y, 1)
                    n += 1 + below.nodes
                else:
                    n += 1 + tree(y, p)
            return n
        assert hybrid.nodes == 1 + tree(state, p)


class ChoiceLog(GBSearch):
    def choices(self, s, turns=None):
        options = super().choices(s, turns)
        self.log.append((turns, {g.kind for g in options}))
        return options


@pytest.mark.parametrize("root", ["goals", "exhaustive"])
def test_reply_kinds_widen_the_goals_of_the_first_reply_only(root):
    model = Model(load_board("small"), 3, max_attacks=2)
    for state in positions(4, 3, 31):
        p = state.to_move
        gb = ChoiceLog(model, p, GoalPolicy(root=root, reply=("grab",)))
        gb.log = []
        gb.decide(state, 3)
        with_grab = {turns for turns, kinds in gb.log if "grab" in kinds}
        assert with_grab == {2}  # the first reply, and only it
        assert any(kinds - {"secure"} for turns, kinds in gb.log if turns == 1)  # the second reply: all goals


def _turn_ends(model, x):
    """Every end of the mover's turn from `x`, transposed ends included, in the model's order."""
    out = []
    for a in model.actions(x):
        y = model.apply(x, a)
        out += [y] if a == END or model.terminal(y) else _turn_ends(model, y)
    return out


def _turn_size(model, x):
    """States of the mover's turn below `x`, each end once."""
    return sum(1 + (0 if a == END or model.terminal(y) else _turn_size(model, y))
               for a in model.actions(x) for y in [model.apply(x, a)])


def test_transposition_table_keeps_the_plain_tree_size_and_values():
    model = Model(load_board("small"), 3, max_attacks=2)
    for state in positions(3, 3, 4):
        fast, plain = MaxN(model), MaxN(model, transpositions=False)
        a, b = fast.root(state, 2), plain.root(state, 2)
        assert fast.nodes == plain.nodes and fast.distinct < plain.distinct
        assert all(np.array_equal(a[k], b[k]) for k in b)


def test_reserve_goes_where_it_newly_makes_a_conquest_possible_not_onto_the_big_stack():
    model = Model(load_board("small"), 2)
    state = _north_vs_rest({N1: 10, N3: 1, E1: 2, S3: 2})  # N1 already takes S3; N3 + 5 takes E1
    assert Goal("eliminate", 1).next_action(model, state, 0) == ("place", N3)


def test_secure_places_where_the_reserve_saves_a_territory_before_the_worst_ratio():
    model = Model(load_board("small"), 2)
    state = _north_vs_rest({N1: 1, N3: 2, S3: 40, E1: 5})  # N1 is lost whatever; 5 more armies save N3
    assert Goal("secure").next_action(model, state, 0) == ("place", N3)


def test_every_attack_a_goal_makes_raises_its_players_value_and_secure_never_attacks():
    model = Model(load_board("small"), 3, max_attacks=3)
    for state in positions(8, 3, 21):
        p = state.to_move
        for goal in GBSearch(model, p).choices(state):
            s = model.apply(state, goal.next_action(model, state, p))
            while (a := goal.next_action(model, s, p)) != END:
                assert goal.kind != "secure"
                after = model.apply(s, a)
                assert model.evaluate(after)[p] > model.evaluate(s)[p]
                s = after


def test_target_territories_change_only_their_players_value():
    board = load_board("small")
    state = _north_vs_rest({E1: 4})
    plain = Model(board, 2).evaluate(state)
    north = board.continent_mask[0]
    valued = Model(board, 2, targets={0: north}, target_weight=3.0).evaluate(state)
    assert valued[1] == plain[1]
    assert valued[0] == pytest.approx((3 * plain[0] + 3.0) / 6)  # player 0 holds all of its targets


def test_accuracy_compares_gb_with_ab_on_the_same_positions_only():
    rows = [("AB", 0, 1, 100, 60, None, None), ("GB", 0, 1, 10, 20, 1.0, 0.0),
            ("AB", 1, 1, 300, 90, None, None), ("GB", 1, 1, 30, 40, 0.0, 0.5),
            ("GB", 2, 1, 99, 99, 1.0, 0.0)]  # position 2 has no AB row: left out
    nodes = pd.DataFrame(rows, columns=["search", "position", "lookahead", "nodes", "generated", "optimal",
                                        "relative_loss"]).assign(players=2)
    row = accuracy_table(nodes).iloc[0]
    assert row.positions == 2 and row.optimal == 0.5 and row.relative_loss == 0.25
    assert row.node_share == pytest.approx(20 / 200) and row.generated_share == pytest.approx(30 / 75)
    assert row.median_node_share == pytest.approx((10 / 100 + 30 / 300) / 2)


def test_decisive_accuracy_leaves_out_positions_where_every_placement_is_optimal():
    rows = [("AB", 0, 1, 100, 60, None, None), ("GB", 0, 1, 10, 20, 1.0, 0.0), (REFERENCES[1], 0, 1, 0, 0, 1.0, 0.0),
            ("AB", 1, 1, 300, 90, None, None), ("GB", 1, 1, 30, 40, 0.0, 0.5), (REFERENCES[1], 1, 1, 0, 0, 0.5, 0.25)]
    nodes = pd.DataFrame(rows, columns=["search", "position", "lookahead", "nodes", "generated", "optimal",
                                        "relative_loss"]).assign(players=2)
    row = accuracy_table(nodes).set_index("search").loc["GB"]
    assert row.optimal == 0.5 and row.decisive_positions == 1 and row.optimal_decisive == 0.0
    without_chance = accuracy_table(nodes[nodes.search != REFERENCES[1]]).iloc[0]
    assert np.isnan(without_chance.decisive_positions) and np.isnan(without_chance.optimal_decisive)


def test_decisive_positions_are_those_whose_ab_values_differ():
    model = Model(load_board("small"), 2, max_attacks=2)
    states = positions(8, 2, 11)
    rows = pd.DataFrame([{**r, "position": i, "players": 2} for i, s in enumerate(states)
                         for r in measure(s, 2, 2, 2, "small")])
    differ = sum(np.ptp([v[s.to_move] for v in MaxN(model).root(s, 2).values()]) > 1e-9 for s in states)
    table = accuracy_table(rows).set_index(["search", "lookahead"])
    assert (table.xs(2, level="lookahead").decisive_positions == differ).all()
    for _, r in table.xs(2, level="lookahead").iterrows():  # elsewhere every decision is optimal
        assert r.optimal * r.positions == pytest.approx(
            r.positions - r.decisive_positions + (r.optimal_decisive * r.decisive_positions if differ else 0))


def test_median_node_share_is_per_position_not_a_ratio_of_means():
    rows = [("AB", 0, 1, 1000, 1, None, None), ("GB", 0, 1, 1, 1, 1.0, 0.0),
            ("AB", 1, 1, 10, 1, None, None), ("GB", 1, 1, 5, 1, 1.0, 0.0),
            ("AB", 2, 1, 10, 1, None, None), ("GB", 2, 1, 4, 1, 1.0, 0.0)]
    nodes = pd.DataFrame(rows, columns=["search", "position", "lookahead", "nodes", "generated", "optimal",
                                        "relative_loss"]).assign(players=3)
    row = accuracy_table(nodes).iloc[0]
    assert row.node_share == pytest.approx(10 / 1020) and row.median_node_share == pytest.approx(0.4)


def test_judge_and_first_best_on_hand_made_values():
    values = {"a": 0.2, "b": 0.5, "c": 0.5, "d": 0.0}
    assert first_best(values) == "b"  # the earlier of two best, as max^n keeps it
    assert judge(values, "c") == {"optimal": 1.0, "relative_loss": 0.0}
    assert judge(values, "a") == {"optimal": 0.0, "relative_loss": pytest.approx(0.6)}
    assert judge({"a": 0.3, "b": 0.3}, "b") == {"optimal": 1.0, "relative_loss": 0.0}


def test_references_are_judged_against_ab_at_the_same_lookahead():
    model = Model(load_board("small"), 3, max_attacks=2)
    for state in positions(3, 3, 11):
        rows = pd.DataFrame(measure(state, 3, 2, 2, "small")).set_index(["search", "lookahead"])
        assert (REFERENCES[0], 1) not in rows.index  # nothing is shallower than one turn
        assert rows.loc[(REFERENCES[0], 2), "nodes"] == rows.loc[("AB", 1), "nodes"]
        one, two = (MaxN(model).root(state, L) for L in (1, 2))
        best = max(v[state.to_move] for v in two.values())
        shallow_pick = first_best({a: v[state.to_move] for a, v in one.items()})
        assert rows.loc[(REFERENCES[0], 2), "optimal"] == float(two[shallow_pick][state.to_move] >= best - 1e-9)
        share = np.mean([v[state.to_move] >= best - 1e-9 for v in two.values()])
        assert rows.loc[(REFERENCES[1], 2), "optimal"] == pytest.approx(share)
        assert rows.loc[(REFERENCES[1], 2), "nodes"] == 0


def test_references_are_left_out_of_the_estimate_and_kept_in_the_accuracy_table():
    rows = pd.DataFrame([{**r, "position": i, "players": 2} for i, p in enumerate(positions(3, 2, 11))
                         for r in measure(p, 2, 2, 2, "small")])
    assert set(estimate_table(rows).search) == {"AB", *GOAL_ROOTED} and set(GOAL_ROOTED) < set(SEARCHES)
    table = accuracy_table(rows)
    assert set(table.search) == {*SEARCHES, *REFERENCES}
    assert (table[table.search == REFERENCES[1]].node_share == 0).all()


def test_the_hybrid_variant_is_measured_like_ab_at_one_turn_and_has_no_root_goal():
    hybrids = {name for name, v in SEARCHES.items() if v.root == "exhaustive"}
    assert hybrids and not hybrids & set(GOAL_ROOTED)
    model = Model(load_board("small"), 3, max_attacks=2)
    for state in positions(4, 3, 29):
        rows = pd.DataFrame(measure(state, 3, 2, 2, "small")).set_index(["search", "lookahead"])
        for name in hybrids:
            assert rows.loc[(name, 1), "optimal"] == 1.0 and rows.loc[(name, 1), "relative_loss"] == 0.0
            assert rows.loc[(name, 2), "goal"] == "" and np.isnan(rows.loc[(name, 2), "goals_at_root"])
            twin = policy_search(model, state.to_move, replace(SEARCHES[name], root="goals"))
            twin.decide(state, 2)
            assert rows.loc[(name, 2), "nodes"] > twin.nodes  # every root turn, not g goals, above the same tree


def test_a_reply_widened_search_differs_from_its_base_only_below_the_root_turn():
    with_reply = [name for name, v in SEARCHES.items() if v.reply]
    assert with_reply
    model = Model(load_board("small"), 2, max_attacks=2)
    for state in positions(3, 2, 37):
        for name in with_reply:
            nodes = {}
            for L in (1, 2):
                # without horizon goals, which take the place of the reply's near the horizon
                widened = replace(SEARCHES[name], horizon=())
                for label, policy in (("reply", widened), ("base", replace(widened, reply=()))):
                    gb = policy_search(model, state.to_move, policy)
                    gb.decide(state, L)
                    nodes[label, L] = gb.nodes
            assert nodes["reply", 1] == nodes["base", 1]  # no reply within one turn
            assert nodes["reply", 2] > nodes["base", 2]  # more goals for the reply


def test_grab_plays_the_turn_that_exhaustive_one_turn_search_values_most():
    model = Model(load_board("small"), 3, max_attacks=2)
    for state in positions(6, 3, 21):
        p = state.to_move
        after, actions = GBSearch(model, p, GoalPolicy(kinds=("grab",))).simulate(state, Goal("grab"))
        best = max(v[p] for v in MaxN(model).root(state, 1).values())
        assert actions[-1] == END and model.evaluate(after)[p] == pytest.approx(best, abs=1e-12)


def test_a_searched_goal_plans_its_turn_once_and_takes_the_steps_stepwise_search_would():
    model = Model(load_board("small"), 3, max_attacks=3)
    for state in positions(4, 3, 22):
        p = state.to_move
        for goal in [Goal("grab"), *applicable_goals(model, state, p, expand(model, ("strike",)))[:3]]:
            before = model.generated
            planned = goal.plan(model, state, p)
            plan_cost, before = model.generated - before, model.generated
            s, stepped = state, []
            while not stepped or stepped[-1] != END:
                stepped.append(goal.next_action(model, s, p))
                s = model.apply(s, stepped[-1])
            assert [a for a, _ in planned] == stepped
            assert planned[-1][1].key() == s.key()
            if len(stepped) > 2:  # stepwise search repeats the tree below each later step
                assert plan_cost < model.generated - before
    with pytest.raises(ValueError, match="secure"):
        Goal("secure").plan(model, state, p)


def test_strike_goals_are_the_placements_each_followed_by_the_best_rest_of_the_turn():
    model = Model(load_board("small"), 3, max_attacks=2)
    for state in positions(6, 3, 21):
        p = state.to_move
        strikes = applicable_goals(model, state, p, expand(model, ("strike",)))
        assert [("place", g.target) for g in strikes] == model.placements(state)
        one_turn = MaxN(model).root(state, 1)
        for g in strikes:
            after, actions = GBSearch(model, p, GoalPolicy(kinds=("strike",))).simulate(state, g)
            assert actions[0] == ("place", g.target) and actions[-1] == END
            assert model.evaluate(after)[p] == pytest.approx(one_turn[actions[0]][p], abs=1e-12)
        best = max(one_turn.values(), key=lambda v: v[p])[p]  # grab is the best strike by the turn's own value
        grab_after, _ = GBSearch(model, p).simulate(state, Goal("grab"))
        assert model.evaluate(grab_after)[p] == pytest.approx(best, abs=1e-12)
