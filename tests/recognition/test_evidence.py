"""The learned evidence recogniser (what each piece of evidence is worth) and the rule every recogniser may use: a
card the player's territories already complete is not theirs."""

from types import SimpleNamespace

import numpy as np
import pytest

from riskcore.engine.board import load_board
from riskcore.recognition import evidence as ev
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


def _planted(rows: int, rng: np.random.Generator, strength: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows whose true card has the first feature raised by `strength`, the others noise."""
    x = rng.normal(size=(rows, len(HYP.cards), 4))
    truth = rng.integers(0, len(HYP.cards), rows)
    x[np.arange(rows), truth, 0] += strength
    return x, np.zeros((rows, len(HYP.cards)), dtype=bool), truth


def test_the_fit_finds_a_planted_signal_and_its_softmax_reads_it_back():
    x, out, truth = _planted(3000, np.random.default_rng(0), 2.0)
    model = ev.fit_model(x, truth, out, ("a", "b", "c", "d"))
    assert model.weights[0] > 5 * max(abs(w) for w in model.weights[1:])
    probs = model.card_posterior(x, out)
    assert np.allclose(probs.sum(axis=1), 1) and (probs.argmax(axis=1) == truth).mean() > 0.6
    noise, _, noise_truth = _planted(3000, np.random.default_rng(1), 0.0)
    blind = ev.fit_model(noise, noise_truth, out, ("a", "b", "c", "d")).card_posterior(noise, out)
    assert np.abs(blind - 1 / 6).max() < 0.05  # nothing to learn: close to uniform, not confident


def test_a_ruled_out_card_gets_no_probability_and_a_true_card_ruled_out_is_refused():
    x, out, truth = _planted(500, np.random.default_rng(2), 1.0)
    out[:, 5] = truth != 5  # card 5 ruled out wherever it is not the truth
    model = ev.fit_model(x, truth, out, ("a", "b", "c", "d"))
    assert (model.card_posterior(x, out)[out] == 0).all()
    out[0, truth[0]] = True
    with pytest.raises(ValueError, match="ruled out"):
        ev.fit_model(x, truth, out, ("a", "b", "c", "d"))


def test_a_model_file_round_trips_and_refuses_an_edit_or_other_features(tmp_path):
    x, out, truth = _planted(400, np.random.default_rng(3), 1.0)
    x = np.concatenate([x, np.zeros(x.shape[:2] + (len(ev.BASE_FEATURES) - 4,))], axis=2)
    model = ev.fit_model(x, truth, out, ev.BASE_FEATURES, training={"seed": 7})
    text = model.to_json()
    back = ev.EvidenceModel.from_json(text)
    assert back == model and back.to_json() == text
    assert np.array_equal(back.card_posterior(x, out), model.card_posterior(x, out))
    with pytest.raises(ValueError, match="digest"):
        ev.EvidenceModel.from_json(text.replace(f"{model.intercept!r}", f"{model.intercept + 1!r}", 1))
    other = ev.fit_model(x[:, :, :5], truth, out, ev.BASE_FEATURES[:5])
    with pytest.raises(ValueError, match="refit"):
        ev.EvidenceModel.from_json(other.to_json())
    with pytest.raises(ValueError, match="not an evidence model"):
        ev.EvidenceModel.from_json("{}")


def test_continent_counts_are_recovered_exactly_from_the_explanations(small_run):
    ensure_features("mixed", "cards6", small_run, workers=1)
    f = load_features("mixed", "cards6", small_run)
    owned = ev.continent_owned(f)
    assert np.array_equal(owned.sum(axis=1), f.obs.n_owned.to_numpy())
    member = np.zeros((HYP.size, HYP.board.n_continents))
    for i, e in enumerate(HYP.explanations):
        member[i, list(e.continents)] = 1
    assert np.array_equal(owned @ member.T, f.owned_in)


def test_the_features_are_shares_and_the_count_guess_is_the_counts(small_run):
    from riskcore.recognition.baselines import placement_posterior

    ensure_features("mixed", "cards6", small_run, workers=1)
    f = load_features("mixed", "cards6", small_run)
    x = ev.card_features(f)
    assert x.shape == (f.n, len(HYP.cards), len(ev.BASE_FEATURES))
    shares = [i for i, n in enumerate(ev.BASE_FEATURES) if n.startswith(("share_", "recent_", "progress",
                                                                         "territory_share", "third_")) and "_x_" not in n]
    assert (x[:, :, shares] >= 0).all() and (x[:, :, shares] <= 1 + 1e-12).all()
    guess = x[:, :, ev.BASE_FEATURES.index("count_guess")]
    assert np.allclose(guess, HYP.card_probs(placement_posterior(f)))
    rows = np.arange(0, f.n, 7)
    assert np.array_equal(ev.card_features(f, rows), x[rows])  # a row's features do not depend on the others


def test_the_recogniser_runs_on_a_real_run_and_never_names_a_completed_card(small_run, tmp_path, monkeypatch):
    from riskcore.recognition.recognisers import Recogniser

    ensure_features("mixed", "cards6", small_run, workers=1)
    f = load_features("mixed", "cards6", small_run)
    truth = f.truth.set_index(["game_id", "player"]).card.reindex(list(zip(f.obs.game_id, f.obs.player))).to_numpy()
    rows = np.flatnonzero(truth >= 0)
    model = ev.fit_model(ev.card_features(f, rows), truth[rows], ev.ruled_out_cards(f, rows), ev.BASE_FEATURES)
    (tmp_path / "tiny.json").write_text(model.to_json())
    monkeypatch.setenv("RISKCORE_MODELS", str(tmp_path))
    post = Recogniser.from_spec("evidence:model=tiny").posterior(f, "mixed", small_run)
    assert post.shape == (f.n, f.hyp.size) and np.allclose(post.sum(axis=1), 1)
    assert (post[completed_cards(f)] == 0).all()
    with pytest.raises(FileNotFoundError, match="recogniser-model"):
        Recogniser.from_spec("evidence:model=missing").posterior(f, "mixed", small_run)
    with pytest.raises(ValueError, match="models folder"):
        Recogniser.from_spec("evidence:model=../x").posterior(f, "mixed", small_run)
