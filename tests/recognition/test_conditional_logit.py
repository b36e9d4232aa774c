"""The conditional logit (shared weights on each mission's own features) and the rule every recogniser may use:
a card the player's territories already complete is not theirs."""

from types import SimpleNamespace

import numpy as np
import pytest

from riskcore.engine.board import load_board
from riskcore.recognition import conditional_logit as cl
from riskcore.recognition.features import load_features
from riskcore.recognition.hypotheses import build_hypotheses
from riskcore.recognition.pipeline import ensure_features
from riskcore.recognition.posterior import completed_cards

HYP = build_hypotheses(load_board("classic"), "cards6")


def _state(complete: list[int]) -> SimpleNamespace:
    """One observation after which the explanations `complete` are fully owned (the others half)."""
    size = HYP.membership(np.full(HYP.board.n_territories, -1)).sum(axis=1).astype(float)[None, :]
    owned = np.floor(size / 2)
    owned[0, complete] = size[0, complete]
    return SimpleNamespace(n=1, hyp=HYP, owned_in=owned, member_size=size)


def test_a_completed_explanation_rules_out_every_explanation_of_its_card():
    third = [e for e, x in enumerate(HYP.explanations) if len(x.continents) == 3]
    card = HYP.card_of[third[0]]
    out = completed_cards(_state([third[0]]))[0]
    assert out[HYP.card_of == card].all() and (HYP.card_of == card).sum() > 1  # every third continent
    assert not out[HYP.card_of != card].any()
    assert not completed_cards(_state([]))[0].any()


def test_a_state_completing_every_card_rules_nothing_out():
    assert not completed_cards(_state(list(range(HYP.size)))).any()


def test_no_player_ever_holds_their_own_completed_card(small_run):
    ensure_features("mixed", "cards6", small_run, workers=1)
    f = load_features("mixed", "cards6", small_run)
    truth = f.truth.set_index(["game_id", "player"]).card
    cards = truth.reindex(list(zip(f.obs.game_id, f.obs.player))).to_numpy()
    scored = np.flatnonzero(cards >= 0)
    out = completed_cards(f)
    assert len(scored) and out.any()  # the rule fires on these games ...
    first = np.array([np.flatnonzero(HYP.card_of == c)[0] for c in range(len(HYP.cards))])
    own = out[scored, first[cards[scored]]]
    assert not own.any()  # ... and never on the player's own card


def _planted(rows: int, rng: np.random.Generator, strength: float):
    """Rows whose true card's first explanation has feature 0 raised by `strength`."""
    x = rng.normal(size=(rows, HYP.size, 3))
    truth = rng.integers(0, len(HYP.cards), rows)
    first = np.array([np.flatnonzero(HYP.card_of == c)[0] for c in truth])
    x[np.arange(rows), first, 0] += strength
    return x, np.zeros((rows, HYP.size), dtype=bool), truth


def test_the_fit_recovers_a_planted_signal_and_reads_it_back():
    rng = np.random.default_rng(np.random.SeedSequence(5))
    x, out, truth = _planted(3000, rng, 2.0)
    w = cl.fit_conditional_logit(x, out, truth, HYP.card_of, HYP.prior)
    assert w[0] > 1.0 and abs(w[1]) < 0.2 and abs(w[2]) < 0.2
    s = x @ w + np.log(HYP.prior)
    top = HYP.card_probs(np.exp(s - s.max(axis=1, keepdims=True))).argmax(axis=1)
    assert (top == truth).mean() > 0.5  # chance is 1/6


def test_the_gradient_is_the_loss_derivative(monkeypatch):
    rng = np.random.default_rng(np.random.SeedSequence(6))
    x, out, truth = _planted(50, rng, 1.0)
    out[truth != HYP.card_of[1], 1] = True  # ruled-out explanations take part as they do in a fit
    captured = {}

    def spy(fun, w0, jac, method):
        captured["fun"] = fun
        return SimpleNamespace(x=w0)

    monkeypatch.setattr(cl, "minimize", spy)
    cl.fit_conditional_logit(x, out, truth, HYP.card_of, HYP.prior)
    w = np.array([0.3, -0.2, 0.5])
    _, grad = captured["fun"](w)
    numeric = [(captured["fun"](w + d)[0] - captured["fun"](w - d)[0]) / 2e-6 for d in np.eye(3) * 1e-6]
    assert np.allclose(grad, numeric, atol=1e-6)


def test_a_true_card_that_is_complete_is_refused():
    rng = np.random.default_rng(np.random.SeedSequence(7))
    x, out, truth = _planted(10, rng, 1.0)
    out[0, HYP.card_of == truth[0]] = True
    with pytest.raises(ValueError, match="own card is complete"):
        cl.fit_conditional_logit(x, out, truth, HYP.card_of, HYP.prior)


def test_the_model_runs_on_a_real_run_and_never_names_a_completed_card(small_run):
    ensure_features("mixed", "cards6", small_run, workers=1)
    f = load_features("mixed", "cards6", small_run)
    w = cl.fit([f])
    post = cl.conditional_logit_posterior(w, f)
    assert post.shape == (f.n, f.hyp.size) and np.allclose(post.sum(axis=1), 1)
    assert (post[completed_cards(f)] == 0).all()
    with pytest.raises(ValueError, match="no training rows"):
        cl.fit_conditional_logit(np.zeros((0, f.hyp.size, 7)), np.zeros((0, f.hyp.size), bool),
                                 np.zeros(0, int), f.hyp.card_of, f.hyp.prior)
