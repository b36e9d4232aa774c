"""The learned choice of a turn's end: features, scorer, training, and the searches that use it (learned strike
ends, ranked turns)."""

import json

import numpy as np
import pytest

from riskcore.engine.board import load_board
from riskcore.search.abstract import END, AState, Model, first_best
from riskcore.search.endfeatures import FEATURES, end_features
from dataclasses import replace

from riskcore.experiments.scorer import train_scorer
from riskcore.experiments.search import SEARCHES, _policy_key, policy_search, positions
from riskcore.search.endscore import EndScorer, from_json, load_scorer, scorer_path, to_json, turn_ends
from riskcore.search.endtrain import RECIPE, agreement, fit, store_scorer
from riskcore.search.exhaustive import MaxN
from riskcore.search.gbsearch import GBSearch
from riskcore.search.goals import Goal
from riskcore.search.policy import BASE_KINDS, GoalPolicy

N1, N2, N3, E1, S3 = 0, 1, 2, 3, 9  # small board: North (bonus 2) is N1-N3; N3 borders E1, N1 borders S3
F = {name: i for i, name in enumerate(FEATURES)}
OWN_VALUE = EndScorer({1: (np.eye(len(FEATURES))[0], np.zeros(len(FEATURES)), np.ones(len(FEATURES)))})
STRIKES = (*BASE_KINDS, "strike")


def ranked_goals(n):
    return [Goal("ranked", i) for i in range(n)]


def _north_vs_rest(armies: dict[int, int], to_move: int = 1) -> AState:
    """Player 0 holds North (one army each unless given), player 1 the rest; player 0 has just ended its turn."""
    owner = np.ones(10, dtype=np.int64)
    owner[[N1, N2, N3]] = 0
    a = np.ones(10, dtype=np.int64)
    for t, n in armies.items():
        a[t] = n
    return AState(owner, a, to_move)


def logged_choices(gb: GBSearch) -> list[tuple[int | None, list[Goal]]]:
    """Record every goal list `gb` chooses from, with the turns left, in the returned list as it searches."""
    log, choose = [], gb.choices
    gb.choices = lambda s, turns=None: log.append((turns, choose(s, turns))) or log[-1][1]
    return log


def test_end_features_on_a_hand_made_position():
    m = Model(load_board("small"), 2, 2)
    f = end_features(m, _north_vs_rest({E1: 5}), 0)  # 14 armies; E1 (5) conquers N3 (1), S3 (1) cannot attack
    expected = {"territory_share": 0.3, "army_share": 3 / 14, "held_bonus": 2 / 6, "exposed_territories": 1 / 10,
                "exposed_armies": 1 / 14, "exposed_held_bonus": 2 / 6, "open_territories": 0.0,
                "bonus_one_short": 0.0, "border_share": 2 / 10, "border_ratio_mean": (1 / 2 + 1 / 6) / 2,
                "border_ratio_min": 1 / 6, "largest_border_stack": 1 / 14, "rival_held_bonus": 4 / 6,
                "next_reserve": 7 / 14, "value": (0.3 + 3 / 14 + 2 / 6) / 3,
                "best_rival_value": (0.7 + 11 / 14 + 4 / 6) / 3}  # player 1: 3 + bonus 4 reinforcements
    for name, value in expected.items():
        assert f[F[name]] == pytest.approx(value, abs=1e-12), name
    assert f[F["reply_drop"]] > 0 and f[F["strike_gain"]] > 0  # E1 reinforced breaks North; N1 takes S3
    assert f[F["value_after_reply"]] == pytest.approx(f[F["value"]] - f[F["reply_drop"]])


def test_a_border_too_strong_to_break_leaves_no_reply_drop_and_probes_count_as_generated():
    m = Model(load_board("small"), 2, 2)
    before = m.generated
    f = end_features(m, _north_vs_rest({E1: 5, N1: 40, N3: 40}), 0)
    assert f[F["reply_drop"]] == 0.0 and f[F["exposed_territories"]] == 0.0
    assert m.generated > before  # the reply and strike probes made states


def test_turn_ends_are_distinct_and_each_replays_from_its_actions():
    m = Model(load_board("small"), 3, 2)
    for s in positions(4, 3, 5):
        x = m.apply(s, m.placements(s)[0])
        ends, _ = turn_ends(m, x)
        assert len({z.key() for z, _ in ends}) == len(ends)
        for z, actions in ends:
            y = x
            for a in actions:
                assert a in m.actions(y)
                y = m.apply(y, a)
            assert y.key() == z.key() and (actions[-1] == END or m.terminal(z))


def test_an_own_value_scorer_makes_the_learned_strike_search_exactly_gb_strike():
    m = Model(load_board("small"), 2, 2)
    for s in positions(3, 2, 8):
        plain = GBSearch(m, s.to_move, GoalPolicy(kinds=STRIKES))
        scored = GBSearch(m, s.to_move, GoalPolicy(kinds=STRIKES, strike_ends="learned"), OWN_VALUE)
        goal, actions, v = plain.decide(s, 3)
        goal2, actions2, v2 = scored.decide(s, 3)
        assert (goal, actions) == (goal2, actions2) and np.array_equal(v, v2) and plain.nodes == scored.nodes


def _first_strike(gb: GBSearch, s: AState):
    return next(g for g in gb.choices(s) if g.kind == "strike")


def test_exact_own_ends_take_the_end_exact_search_values_most_and_count_its_whole_tree():
    m = Model(load_board("small"), 2, 2)
    for s in positions(3, 2, 8):
        p = s.to_move
        gb = GBSearch(m, p, GoalPolicy(kinds=STRIKES, exact_own_ends=1), OWN_VALUE)
        goal = _first_strike(gb, s)
        end, actions = gb.simulate(s, goal, after=1)
        x = m.apply(s, ("place", goal.target))
        before = m.generated
        ends, _ = turn_ends(m, x)
        walk = m.generated - before
        trees = [MaxN(m) for _ in ends]
        values = {i: float(ab.value(z, 1)[p]) for i, (ab, (z, _)) in enumerate(zip(trees, ends))}
        pick = first_best(values)
        assert end.key() == ends[pick][0].key() and actions == [("place", goal.target), *ends[pick][1]]
        assert gb.nodes == 1 + walk + sum(ab.nodes for ab in trees)


def test_exact_own_ends_leave_the_opponents_and_the_last_turn_alone():
    m = Model(load_board("small"), 2, 2)
    for s in positions(3, 2, 8):
        goal = _first_strike(GBSearch(m, s.to_move, GoalPolicy(kinds=STRIKES)), s)
        for root, after in ((1 - s.to_move, 1), (s.to_move, 0), (s.to_move, 2)):
            plain = GBSearch(m, root, GoalPolicy(kinds=STRIKES, strike_ends="learned"), OWN_VALUE)
            exact = GBSearch(m, root, GoalPolicy(kinds=STRIKES, exact_own_ends=1, strike_ends="learned"), OWN_VALUE)
            end, actions = plain.simulate(s, goal, after)
            end2, actions2 = exact.simulate(s, goal, after)
            assert end.key() == end2.key() and actions == actions2 and plain.nodes == exact.nodes


def test_a_shortlist_searches_only_the_scorers_best_ends_exactly():
    m = Model(load_board("small"), 2, 2)
    narrowed = 0
    for s in positions(4, 2, 8):
        p = s.to_move
        goal = _first_strike(GBSearch(m, p, GoalPolicy(kinds=STRIKES)), s)
        x = m.apply(s, ("place", goal.target))
        ends, _ = turn_ends(m, x)
        own = [end_features(m, z, p)[0] for z, _ in ends]
        top = sorted(sorted(range(len(ends)), key=lambda i: -own[i])[:2])  # stable: ties keep the walk's order
        trees = {i: MaxN(m) for i in top}
        pick = first_best({i: float(trees[i].value(ends[i][0], 1)[p]) for i in top})
        short = GBSearch(m, p, GoalPolicy(kinds=STRIKES, exact_own_ends=1, shortlist=2), OWN_VALUE)
        end, actions = short.simulate(s, goal, after=1)
        assert end.key() == ends[pick][0].key() and actions == [("place", goal.target), *ends[pick][1]]
        full = GBSearch(m, p, GoalPolicy(kinds=STRIKES, exact_own_ends=1), OWN_VALUE)
        full.simulate(s, goal, after=1)
        all_trees = [MaxN(m) for _ in ends]
        for ab, (z, _) in zip(all_trees, ends):
            ab.value(z, 1)
        walk = full.nodes - 1 - sum(ab.nodes for ab in all_trees)  # the walk counts once, whatever the shortlist
        assert short.nodes == 1 + walk + sum(ab.nodes for ab in trees.values())
        narrowed += len(ends) > 2
        wide = GBSearch(m, p, GoalPolicy(kinds=STRIKES, exact_own_ends=1, shortlist=len(ends)), OWN_VALUE)
        assert wide.simulate(s, goal, after=1)[1] == full.simulate(s, goal, after=1)[1]
    assert narrowed  # some position had more ends than the shortlist keeps


@pytest.mark.parametrize("settings, message", [
    ({"exact_own_ends": -1}, "exact_own_ends must be >= 0, got -1"),
    ({"exact_own_ends": 1, "shortlist": -2}, "shortlist must be >= 0, got -2"),
    ({"shortlist": 3}, "a shortlist needs exact_own_ends > 0"),
    ({"strike_ends": "best"}, "strike_ends must be one of .* got 'best'")])
def test_bad_end_options_are_rejected_by_name(settings, message):
    with pytest.raises(ValueError, match=message):
        GoalPolicy(**settings)


@pytest.mark.parametrize("settings", [{"exact_own_ends": 1, "shortlist": 3}, {"kinds": ("ranked:2",)},
                                      {"horizon": (("grab",), ("ranked:1",))}, {"strike_ends": "learned"}])
def test_policies_that_rank_or_learn_ends_need_the_scorer(settings):
    with pytest.raises(ValueError, match="end_scorer"):
        GBSearch(Model(load_board("small"), 2, 2), 0, GoalPolicy(**settings))


def test_the_scorer_picks_the_first_best_scored_end():
    m = Model(load_board("small"), 2, 2)
    s = positions(1, 2, 3)[0]
    x = m.apply(s, m.placements(s)[0])
    w = np.zeros(len(FEATURES))
    w[F["border_ratio_min"]] = 1.0
    scorer = EndScorer({2: (w, np.zeros(len(FEATURES)), np.ones(len(FEATURES)))})
    end, actions = scorer.best_end(m, x, s.to_move, 5)  # 5 turns after: the deepest model (k = 2)
    ends, _ = turn_ends(m, x)
    ratios = {i: end_features(m, z, s.to_move)[F["border_ratio_min"]] for i, (z, _) in enumerate(ends)}
    assert end.key() == ends[first_best(ratios)][0].key() and actions == ends[first_best(ratios)][1]


def test_fit_learns_which_feature_marks_the_best_end_and_is_deterministic():
    rng = np.random.default_rng(0)

    def groups(n):
        out = []
        for _ in range(n):
            f = rng.random((6, len(FEATURES)))
            out.append((f, np.stack([f[:, 4], f[:, 4]], axis=1)))  # exact value: feature 4, not `value` (0)
        return out

    train, valid = groups(200), groups(100)
    recipe = {**RECIPE, "steps": 300}
    model = fit(train, 1, **recipe)
    assert all(np.array_equal(a, b) for a, b in zip(model, fit(train, 1, **recipe)))
    learned = EndScorer({2: model})
    assert agreement(valid, 1, lambda f: learned.scores(f, 2)) > 0.9 > 0.5 > agreement(valid, 1, lambda f: f[:, 0])


def test_training_is_reproducible_from_its_seeds(tmp_path):
    scorer, record = train_scorer(2, (91,), 93, 2, workers=1, progress=False)
    again, record2 = train_scorer(2, (91,), 93, 2, workers=2, progress=False)
    assert to_json(scorer) == to_json(again) and record == record2
    assert record["groups"]["train"] > 0 and set(record["agreement"]) == {"1", "2"}
    path = tmp_path / "scorer.json"
    store_scorer(scorer, record, 2, path)
    store_scorer(scorer, record, 3, path)  # another player count is added, the first kept
    assert to_json(load_scorer(2, path)) == to_json(scorer)
    assert set(json.loads(path.read_text())["scorers"]) == {"2", "3"}


def test_the_stored_scorers_record_their_recipe_and_beat_the_own_value_rule_on_validation():
    for players in (2, 3):
        scorer = load_scorer(players)
        assert set(scorer.models) == {1, 2}
    stored = json.loads(scorer_path().read_text())
    assert stored["features"] == list(FEATURES)
    for record in stored["scorers"].values():
        assert record["recipe"] == RECIPE and record["validation_seed"] not in record["seeds"]
        for checks in record["agreement"].values():
            assert checks["learned_validation"] > checks["own_value_validation"]


@pytest.mark.parametrize("text, message", [("{", "not JSON"), ('{"scorers": {}}', "no end scorer for 2"),
                                           ('{"scorers": {"2": {"models": {"1": {"weights": [1]}}}}}', "malformed"),
                                           ('{"scorers": {"2": {"models": {"1": {"weights": [1], "mean": [0], '
                                            '"scale": [1]}}}}}', "needs 21")])
def test_a_bad_scorer_file_is_rejected_by_name(tmp_path, text, message):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(ValueError, match=message) as e:
        load_scorer(2, path)
    assert "bad.json" in str(e.value)


def test_the_learned_searches_are_deterministic_and_keyed_on_the_stored_weights(monkeypatch):
    m = Model(load_board("small"), 2, 2)
    s = positions(1, 2, 12)[0]
    runs = [policy_search(Model(load_board("small"), 2, 2), s.to_move, SEARCHES["GB+learned strikes"]).decide(s, 3)
            for _ in range(2)]
    assert runs[0][:2] == runs[1][:2] and np.array_equal(runs[0][2], runs[1][2])
    keys = {name: _policy_key(m, s, 3, v) for name, v in SEARCHES.items()}
    monkeypatch.setattr("riskcore.experiments.search.load_scorer", lambda players: OWN_VALUE)
    learned = {name for name, v in SEARCHES.items() if v.needs_scorer}
    assert learned == {"GB+learned strikes", "AB turn + GB"}
    assert {name for name, v in SEARCHES.items() if _policy_key(m, s, 3, v) != keys[name]} == learned


def test_from_json_round_trips():
    assert to_json(from_json(to_json(OWN_VALUE), "test")) == to_json(OWN_VALUE)


@pytest.mark.slow
def test_retraining_reproduces_the_stored_two_player_weights():
    stored = json.loads(scorer_path().read_text())["scorers"]["2"]
    scorer, record = train_scorer(2, tuple(stored["seeds"]), stored["validation_seed"], stored["positions_per_seed"],
                                  progress=False)
    for k, (w, mu, sd) in load_scorer(2).models.items():
        assert np.allclose(scorer.models[k][0], w, rtol=0, atol=1e-9)
    for k, checks in stored["agreement"].items():
        assert record["agreement"][k] == pytest.approx(checks)


def test_ranked_turns_are_every_distinct_end_of_the_whole_turn_best_scored_first():
    m = Model(load_board("small"), 3, 2)
    for s in positions(3, 3, 14):
        p = s.to_move
        ends, _ = turn_ends(m, s)  # from the placement: the whole turn
        gb = GBSearch(m, p, GoalPolicy(kinds=(f"ranked:{len(ends) + 2}",)), OWN_VALUE)
        options = gb.choices(s, 3)
        assert options == ranked_goals(len(ends))  # as many ranked turns as the turn has distinct ends
        own = [m.evaluate(z)[p] for z, _ in ends]
        order = sorted(range(len(ends)), key=lambda i: -own[i])  # stable: ties keep the walk's order
        for goal, i in zip(options, order):
            before = gb.nodes
            end, actions = gb.simulate(s, goal, after=2)
            assert end.key() == ends[i][0].key() and actions == ends[i][1]
            assert actions[0][0] == "place" and gb.nodes - before == len(actions)  # a node per state on the way


def test_the_first_ranked_turn_with_no_turn_after_is_grabs_turn():
    m = Model(load_board("small"), 3, 2)
    weights = np.zeros(len(FEATURES))
    weights[F["border_ratio_min"]] = 1.0  # a scorer that never looks at the value: unused on the last turn
    other = EndScorer({1: (weights, np.zeros(len(FEATURES)), np.ones(len(FEATURES)))})
    for s in positions(4, 3, 15):
        p = s.to_move
        gb = GBSearch(m, p, GoalPolicy(kinds=("ranked:1",)), other)
        ranked, _ = gb.simulate(s, Goal("ranked", 0), after=0)
        grabbed, _ = GBSearch(m, p).simulate(s, Goal("grab"))
        assert m.evaluate(ranked)[p] == pytest.approx(m.evaluate(grabbed)[p], abs=1e-12)


def test_a_ranked_turn_is_walked_and_scored_once_per_state():
    m = Model(load_board("small"), 2, 2)
    s = positions(1, 2, 16)[0]
    gb = GBSearch(m, s.to_move, GoalPolicy(kinds=("ranked:3",)), OWN_VALUE)
    gb.choices(s, 2)
    before = m.generated
    gb.choices(s, 2)
    gb.simulate(s, Goal("ranked", 1), after=1)
    assert m.generated == before


def test_horizon_goals_replace_the_goal_lists_of_the_last_turns_only():
    m = Model(load_board("small"), 3, 2)
    for s in positions(3, 3, 17):
        gb = GBSearch(m, s.to_move, GoalPolicy(root="exhaustive", reply=("strike",), horizon=(("grab",), ("ranked:2",))),
                      OWN_VALUE)
        log = logged_choices(gb)
        gb.decide(s, 4)
        kinds = {turns: {g.kind for _, goals in [(t, g) for t, g in log if t == turns] for g in goals}
                 for turns in (1, 2, 3)}
        assert kinds[1] == {"grab"} and kinds[2] == {"ranked"} and "strike" in kinds[3]
        assert all(len(goals) <= 2 for turns, goals in log if turns == 2)


def test_a_ranked_goal_outside_gb_search_says_it_needs_the_scorer():
    m = Model(load_board("small"), 2, 2)
    s = positions(1, 2, 16)[0]
    assert Goal("ranked", 0).applicable(m, s, s.to_move)
    assert not Goal("ranked", len(turn_ends(m, s)[0])).applicable(m, s, s.to_move)
    for call in (Goal("ranked", 0).plan, Goal("ranked", 0).next_action):
        with pytest.raises(ValueError, match="ranked:0 needs the learned end scorer"):
            call(m, s, s.to_move)


def test_the_ranked_reply_adds_the_four_best_ranked_turns_to_the_first_reply_only():
    m = Model(load_board("small"), 3, 2)
    ranked = SEARCHES["AB turn + GB"]
    base = replace(ranked, reply=("strike",))
    assert ranked.reply == ("strike", "ranked:4")
    with_ranked, without = policy_search(m, 0, ranked), policy_search(m, 0, base)
    assert with_ranked.reply_goals == without.reply_goals + ranked_goals(4)
    assert with_ranked.goals == without.goals and with_ranked.horizon_goals == without.horizon_goals
    for s in positions(2, 3, 19):
        gb = policy_search(m, s.to_move, ranked)
        log = logged_choices(gb)
        gb.decide(s, 4)
        reply = [g for turns, goals in log if turns == 3 for g in goals]
        assert reply and {g.kind for g in reply} >= {"ranked", "strike"}
        assert {turns for turns, goals in log for g in goals if g.kind == "ranked"} == {2, 3}  # reply, second-last
