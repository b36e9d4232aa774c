"""The generalisation experiment: riskcore's recogniser as the training protocol named it, beside the count and
the reference on the same players; foreign play is a development set, riskcore's families in-model."""

import numpy as np
import pandas as pd
import pytest

from riskcore.db import query
from riskcore.experiments.recognition import generalisation as g
from riskcore.recognition.features import load_features
from riskcore.recognition.inverse import load_candidates
from riskcore.recognition.mixture import mixture_posterior
from riskcore.recognition.pipeline import ensure_features
from riskcore.recognition.posterior import group_starts
from riskcore.recognition.recognisers import calibrated


def test_every_riskcore_family_runs_code_the_training_population_runs():
    from riskcore.experiments.recognition.population import HEURISTIC_FOLLOWING, RANDOM_FOLLOWING, lineage

    trained = {lineage(a) for a in HEURISTIC_FOLLOWING + RANDOM_FOLLOWING}
    for fam in g.FAMILIES:
        assert fam.lineage and fam.lineage <= trained, fam.name
    assert all(f.foreign and not f.lineage for f in g.FOREIGN)


def test_calibration_keeps_the_card_ranking_and_each_cards_split():
    card_of = np.array([0, 0, 0, 0, 1, 2])
    probs = np.array([[0.1, 0.1, 0.1, 0.1, 0.35, 0.25]])  # card 0 leads (0.4) though its explanations are small
    for t in (0.5, 2.0, 5.0):
        q = calibrated(probs, t, card_of)
        cards = np.array([q[0, :4].sum(), q[0, 4], q[0, 5]])
        assert cards.argmax() == 0 and np.allclose(q[0, :4], cards[0] / 4) and q.sum() == pytest.approx(1)
    assert np.allclose(calibrated(probs, 1.0, card_of), probs)


def test_every_agent_played_blind_is_also_played_following_its_mission():
    single = [f for f in g.FAMILIES if len(f.agents) == 1]
    blind = {a.split(":")[0] for f in single if not f.follows_mission for a in f.agents}
    following = {a.split(":")[0] for f in single if f.follows_mission for a in f.agents}
    assert blind and blind <= following


def test_tempering_moves_the_mixture_posterior_towards_the_prior(small_run):
    ensure_features("mixed", "cards6", small_run, workers=1)
    f = load_features("mixed", "cards6", small_run)
    c = load_candidates(f, "mixed", small_run)
    starts = group_starts(f)
    prior = f.hyp.prior
    full = mixture_posterior(f, c, starts, 10, 0.05, 0.5, temper=1.0)
    half = mixture_posterior(f, c, starts, 10, 0.05, 0.5, temper=0.25)

    def distance(post):  # mean KL(post || prior)
        return np.mean(np.sum(post * (np.log(np.clip(post, 1e-300, 1)) - np.log(prior)), axis=1))

    assert distance(half) < distance(full)
    with pytest.raises(ValueError, match="temper"):
        mixture_posterior(f, c, starts, 10, 0.05, 0.5, temper=1.5)


def test_card_probabilities_summed_past_one_by_rounding_are_clipped():
    card_of = np.array([0, 0, 1])
    scores = pd.DataFrame({"e0": [0.6000000000000001], "e1": [0.4000000000000001], "e2": [0.0], "card": [0],
                           "game_id": [0], "player": [0], "point": [1.0], "n_players": [4]})
    m = g.row_metrics(scores, card_of)
    assert m.confidence.iloc[0] <= 1.0 and m.log_loss.iloc[0] >= 0.0


@pytest.fixture(scope="module")
def experiment(tmp_path_factory):
    data = tmp_path_factory.mktemp("gen-data")
    out = tmp_path_factory.mktemp("gen-reports")
    families = tuple(f for f in g.FAMILIES if f.name in ("mission", "domination-blind", "tilted random"))
    logs = {f.name: g.foreign_logs(f, data, 6)[:4] for f in g.FOREIGN if f.source != "peer"}
    report = g.run_experiment(games=6, seed=11, data_dir=data, workers=1, progress=False, n_boot=50, out=out,
                              families=families, logs=logs)
    return data, report, families, [f for f in g.FOREIGN if f.name in logs]


def test_every_family_gets_every_recogniser_at_every_checkpoint(experiment):
    data, report, families, foreign = experiment
    m = query("SELECT * FROM generalisation_metrics WHERE run = ?", [g.KEY], data)
    names = [f.name for f in families] + [f.name for f in foreign]
    assert sorted(m.family.unique()) == sorted(names)
    top1 = m[m.metric == "top1"]
    for family in names:
        d = top1[top1.family == family]
        assert {"uniform", "placement count", "the reference's recogniser", g.NAMED, "play-style mixture",
                "learned evidence weights", "learned weights, stacked"} <= set(d.recogniser)
        assert set(d.point.round(2)) == {0.1, 0.3, 0.5, 0.7, 1.0}
    assert m[m.metric.isin(["top1", "top1_explanation"])].value.between(0, 1).all()
    uniform = m[(m.recogniser == "uniform") & (m.metric == "log_loss")]
    assert np.allclose(uniform.value, np.log(6))
    gain = m[m.metric == "gain"].set_index(["family", "recogniser", "point"]).value
    loss = m[m.metric == "log_loss"].set_index(["family", "recogniser", "point"]).value
    assert np.allclose(gain, np.log(6) - loss.reindex(gain.index))
    for end in ("low", "high"):  # one quantity, one interval: the gain's is the log loss's, mirrored
        mirror = {"low": "high", "high": "low"}[end]
        g_end = m[m.metric == "gain"].set_index(["family", "recogniser", "point"])[f"ci_{end}"]
        l_end = m[m.metric == "log_loss"].set_index(["family", "recogniser", "point"])[f"ci_{mirror}"]
        assert np.allclose(g_end, np.log(6) - l_end.reindex(g_end.index))
    text = report.read_text()
    assert "As applied to play it has not seen (every riskcore family trains): `" in text
    assert "## Gain over uniform" in text and "## Against the count and the reference" in text
    assert text.index("## Gain over uniform") < text.index("## Against the count")


def test_riskcore_is_compared_with_the_count_and_the_reference_on_the_same_players(experiment):
    data, _, families, foreign = experiment
    paired = query("SELECT * FROM generalisation_paired WHERE run = ?", [g.KEY], data)
    m = query("SELECT * FROM generalisation_metrics WHERE run = ?", [g.KEY], data)
    whole = paired[paired.n_players.isna() & (paired.point == 1)]
    value = lambda name, fam, metric: m[(m.recogniser == name) & (m.family == fam) & (m.metric == metric)  # noqa
                                        & (m.point == 1)].value.iloc[0]
    for fam in [f.name for f in families + tuple(foreign)]:
        count = whole[(whole.family == fam) & (whole.b == "placement count") & (whole.metric == "top1")].iloc[0]
        assert count.difference == pytest.approx(value(g.NAMED, fam, "top1") - value("placement count", fam, "top1"))
        reading = whole[(whole.family == fam) & (whole.b == "the reference's recogniser")
                        & (whole.metric == "top1_vs_reading")].iloc[0]
        assert reading.difference == pytest.approx(value(g.NAMED, fam, "top1")
                                                   - value("the reference's recogniser", fam, "top1_explanation"))
        assert count.ci_low <= count.difference <= count.ci_high
    by = paired[paired.n_players.notna()]
    assert set(by.metric) == {"top1", "top1_vs_reading"} and (by.point == 1).all()
    reference = whole[whole.b == "the reference's recogniser"].set_index(["family", "metric"])
    assert np.allclose(reference.xs("gain", level="metric").ci_low, -reference.xs("log_loss", level="metric").ci_high)
    # every candidate not named, against the named one on the same players (gain over uniform at 100%)
    others = whole[whole.b.isin(["play-style mixture", "learned evidence weights", "learned weights, stacked"])]
    assert len(others) == 2 * len(families + tuple(foreign)) and set(others.metric) == {"gain"}
    assert (others.ci_low <= others.difference + 1e-12).all() and (others.difference <= others.ci_high + 1e-12).all()


def test_the_named_recogniser_is_the_protocols(experiment):
    from riskcore.experiments.recognition.training import load_protocol

    data, *_ = experiment
    named = query("SELECT * FROM riskcore_recogniser WHERE run = ?", [g.KEY], data)
    protocol = load_protocol()
    assert named.candidate.iloc[0] == protocol["named"]
    m = query("SELECT * FROM generalisation_metrics WHERE run = ?", [g.KEY], data)
    same = m[m.recogniser == g.NAMED].set_index(["family", "point", "metric"]).value
    other = m[m.recogniser == g.RECOGNISER_NAMES[protocol["named"]]].set_index(["family", "point", "metric"]).value
    assert np.allclose(same, other.reindex(same.index))


def test_every_family_gets_its_mission_lean(experiment):
    data, report, families, foreign = experiment
    lean = query("SELECT * FROM generalisation_lean WHERE run = ?", [g.KEY], data)
    assert sorted(lean.family.unique()) == sorted([f.name for f in families] + [f.name for f in foreign])
    assert set(lean.kind) == set(g.LEAN_KINDS) == {"place", "reinforce", "attack_won"}
    assert lean.value.between(-1, 1).all()
    assert (lean.ci_low <= lean.value + 1e-12).all() and (lean.value <= lean.ci_high + 1e-12).all()
    assert "## Mission lean" in report.read_text()
