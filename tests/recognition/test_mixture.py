"""The open-goal mixture: a mission-blind twin of the goal-directed models that pursues goals of its own."""

from types import SimpleNamespace

import numpy as np
import pytest

from riskcore.engine.board import load_board
from riskcore.recognition.features import load_features
from riskcore.recognition.hypotheses import Explanation, Hypotheses, build_hypotheses
from riskcore.recognition.inverse import load_candidates
from riskcore.recognition.mixture import (FREE_GOALS, FREE_MODELS, GOAL_FOCUS, goal_sets, mixture_from_logliks,
                                          mixture_posterior, target_continents)
from riskcore.recognition.pipeline import ensure_features
from riskcore.recognition.posterior import group_starts
from riskcore.recognition.recognisers import Recogniser

N, E = 20, 12


def test_goal_sets_are_every_set_of_one_to_n_continents():
    sets = goal_sets(6, 3)
    assert len(sets) == 6 + 15 + 20
    assert set(sets.sum(axis=1)) == {1, 2, 3}
    assert len({tuple(row) for row in sets}) == len(sets)


def test_a_target_continent_is_read_back_from_its_explanation_bits():
    hyp = build_hypotheses(load_board("classic"), "cards6")
    member = hyp.membership(np.zeros(hyp.board.n_territories, dtype=int))  # (E, territories)
    bits = (member.astype(np.int64) << np.arange(hyp.size)[:, None]).sum(axis=0)
    assert (target_continents(hyp, np.r_[bits, 0]) == np.r_[hyp.board.continent_of, -1]).all()


def test_hypotheses_that_cannot_tell_two_continents_apart_are_refused():
    board = load_board("classic")
    hyp = Hypotheses("joint", board, (Explanation("a+b", "a+b", "continents", (0, 1)),), np.ones(1), ("a+b",),
                     np.zeros(1, dtype=np.int64))
    with pytest.raises(ValueError, match="cannot tell continents"):
        target_continents(hyp, np.array([1]))


def _logliks(mission_best: float, goal_best: float) -> list[tuple[str, np.ndarray]]:
    """Per-observation likelihoods: the goal-directed models favour explanation 0 (`mission_best` against 0.3),
    the free-goal model's best goal explains each choice with `goal_best`, the other mission-blind models 0.2."""
    mission = np.full((N, E), np.log(0.3))
    mission[:, 0] = np.log(mission_best)
    out = [(f"mission focus {x:g}", mission) for x in GOAL_FOCUS]
    out += [(m, np.full((N, 1), np.log(0.2))) for m in FREE_MODELS]
    goals = np.full((N, 4 * 41), np.log(0.2))
    goals[:, 7] = np.log(goal_best)
    return out + [(FREE_GOALS, goals)]


def _posterior(logliks, complete: int | None = None):
    """The last row's posterior; with `complete`, explanation `complete`'s territories are all owned."""
    hyp = build_hypotheses(load_board("classic"), "cards6")
    owned, size = np.zeros((N, E)), np.full((N, E), 10.0)
    if complete is not None:
        owned[:, complete] = 10
    f = SimpleNamespace(n=N, hyp=hyp, owned_in=owned, member_size=size)
    return mixture_from_logliks(f, logliks, np.array([0, N]), rho=0.5)[-1], hyp.prior


def test_a_player_heading_for_continents_no_card_names_leaves_the_posterior_at_the_prior():
    without, prior = _posterior(_logliks(0.5, 0.9)[:-1])
    with_goals, _ = _posterior(_logliks(0.5, 0.9))
    assert without[0] > 0.9  # the card-only reading is confident
    assert np.abs(with_goals - prior).max() < 0.01


def test_a_player_heading_for_a_cards_continents_is_read_but_not_with_certainty():
    without, prior = _posterior(_logliks(0.5, 0.2)[:-1])
    occam, _ = _posterior(_logliks(0.5, 0.5))  # a free goal explains the play exactly as well as explanation 0
    assert prior[0] < occam[0] < without[0]


def test_a_card_the_player_has_completed_is_ruled_out_whatever_the_model_of_play():
    hyp = build_hypotheses(load_board("classic"), "cards6")
    post, _ = _posterior(_logliks(0.5, 0.2), complete=0)  # the models favour explanation 0 ...
    card = hyp.card_of == hyp.card_of[0]
    assert (post[card] == 0).all()  # ... but it would have won
    assert np.isclose(post.sum(), 1)


def test_the_open_goal_mixture_runs_on_a_real_run(small_run):
    ensure_features("mixed", "cards6", small_run, workers=1)
    f = load_features("mixed", "cards6", small_run)
    c = load_candidates(f, "mixed", small_run)
    post = mixture_posterior(f, c, group_starts(f), 5, 0.05, 0.5, goals=2)
    assert post.shape == (f.n, f.hyp.size) and np.allclose(post.sum(axis=1), 1)
    rec = Recogniser.from_spec("mixture:beta=5:goals=2")
    assert np.allclose(rec.posterior(f, "mixed", small_run), post)
    with pytest.raises(ValueError, match="goals"):
        mixture_posterior(f, c, group_starts(f), 5, 0.05, 0.5, goals=7)


def test_a_placement_that_holds_reads_the_territory_itself_one_that_stages_the_odds_it_creates():
    """One placement decision between two candidates: an interior territory inside explanation 0 (no odds, its
    own bits 0b01) and a border territory inside explanation 1 threatening a target of explanation 1 (odds 0.5).
    The player places on the interior one: staging sees no reason for it under explanation 0 (both candidates
    threaten nothing of 0: a coin toss) and a poor choice under 1; holding sees the territory it values under 0."""
    from riskcore.recognition.inverse import Candidates, choice_loglik

    c = Candidates(odds=np.array([0.0, 0.5]), bits=np.array([0, 0b10]), self_bits=np.array([0b01, 0b10]),
                   continent=np.zeros(2), self_continent=np.array([0.9, 0.2]), chosen=np.array([True, False]),
                   cand_start=np.array([0, 1, 2]),
                   decision_start=np.array([0, 2]), obs_row=np.array([0]))
    staging = choice_loglik(1, c, *c.candidate_scores(1.0, 2), 10.0, 0.0)[0]
    holding = choice_loglik(1, c, *c.holding_scores(1.0, 2), 10.0, 0.0)[0]
    assert np.isclose(staging[0], np.log(0.5)) and staging[1] < np.log(0.01)
    assert holding[0] > np.log(0.99) and holding[1] < np.log(0.01)  # holding: inside 0 scores 1, outside 0
    attack = Candidates(odds=np.array([0.9]), bits=np.array([0b01]), self_bits=np.array([0]), continent=np.zeros(1),
                        self_continent=np.zeros(1), chosen=np.array([True]), cand_start=np.array([0, 1]),
                        decision_start=np.array([0, 1]), obs_row=np.array([0]))
    assert np.allclose(attack.holding_scores(0.5, 2)[0], attack.candidate_scores(0.5, 2)[0])  # attacks alike
    # the mission-blind twins: holding, every placement alike, or valued by its own continent
    assert c.free_scores("greedy holding")[0].ravel().tolist() == [1.0, 1.0]
    assert np.allclose(c.free_scores("continent holding")[0].ravel(), [0.9, 0.2])
    assert np.allclose(attack.free_scores("continent holding")[0], attack.free_scores("continent")[0])
