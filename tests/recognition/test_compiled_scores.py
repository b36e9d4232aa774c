"""The compiled candidate scores equal the array reference, for explanations and free goals, in both styles; so do
the compiled choice likelihoods."""

import numpy as np
import pytest

from riskcore.recognition.features import load_features
from riskcore.recognition.inverse import load_candidates
from riskcore.recognition.mixture import goal_sets, target_continents
from riskcore.recognition.pipeline import ensure_features


@pytest.fixture(scope="module")
def candidates(small_run):
    ensure_features("mixed", "cards6", small_run, workers=1, progress=False)
    f = load_features("mixed", "cards6", small_run)
    return f, load_candidates(f, "mixed", small_run)


@pytest.mark.parametrize("holding", [False, True])
@pytest.mark.parametrize("focus", [0.0, 0.5, 1.0])
def test_the_compiled_scores_are_the_array_references(candidates, holding, focus):
    f, c = candidates
    bit = (1 << np.arange(f.hyp.size)).astype(np.int64)
    explanations = lambda b: (b[:, None] & bit) != 0  # noqa: E731
    sets = np.c_[goal_sets(6, 3), np.zeros(41, dtype=bool)]
    goals = lambda b: sets[:, target_continents(f.hyp, b)].T  # noqa: E731
    assert (c.self_bits > 0).any() and (c.self_bits == 0).any()  # placements and attacks both
    for key, member in ((("explanations", 12), explanations), (("goals", 3), goals)):
        fast, _ = c.goal_scores(key, focus, member, holding)
        assert np.allclose(fast, c.goal_scores_reference(focus, member, holding), rtol=0, atol=1e-15)


@pytest.mark.parametrize("beta, eps", [(5.0, 0.2), (10.0, 0.0), (0.0, 0.0)])
def test_the_compiled_choice_likelihoods_are_the_array_references(candidates, beta, eps):
    from riskcore.recognition.inverse import choice_loglik, choice_loglik_reference

    f, c = candidates
    for score, chosen in (c.candidate_scores(0.5, f.hyp.size), c.free_scores("continent")):
        fast = choice_loglik(f.n, c, score, chosen, beta, eps)
        assert (fast != 0).any(axis=1).sum() > 100  # decisions read
        assert np.allclose(fast, choice_loglik_reference(f.n, c, score, chosen, beta, eps), rtol=0, atol=1e-12)
