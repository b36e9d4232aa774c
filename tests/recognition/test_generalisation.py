"""The generalisation protocol: leave one family out, nothing fitted on the held-out play, the corpus ceiling."""

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
from riskcore.recognition.recognisers import Recogniser, calibrated


def _losses(families: list[str], seed: int = 0) -> pd.DataFrame:
    settings = [Recogniser.from_spec(s).setting for grid in g.GRIDS.values() for s in grid]
    rng = np.random.default_rng(seed)
    return pd.DataFrame(rng.uniform(1, 1.7, (len(settings), len(families))), index=settings, columns=families)


def test_a_held_out_family_never_chooses_its_grid_point():
    losses = _losses(["a", "b", "c"])
    best_for_c = Recogniser.from_spec(g.GRIDS["mixture"][0]).setting
    losses.loc[best_for_c, "c"] = 0.0  # only the held-out family likes it
    assert g.choose(losses, ["a", "b"])["mixture"] != best_for_c
    assert g.choose(losses, ["b", "c"])["mixture"] == best_for_c  # seen when c is a training family


def test_the_open_goal_mixture_never_chooses_a_point_worse_than_uniform_on_a_training_family():
    losses = _losses(["a", "b"])
    bold, cautious = (Recogniser.from_spec(s).setting for s in g.GRIDS["open"][:2])
    losses.loc[bold] = [0.1, np.log(6) + 0.01]  # the best mean, but above uniform on b
    losses.loc[cautious] = [0.9, 0.9]
    assert g.choose(losses, ["a", "b"])["open"] == cautious
    losses[:] = np.log(6) + 0.5  # none is safe: the least worst
    losses.loc[bold, "b"] = np.log(6) + 0.1
    assert g.choose(losses, ["a", "b"])["open"] == bold


def test_training_families_run_none_of_the_held_out_familys_agent_code():
    names = lambda held: set(g.training_families(g.FAMILIES, held))  # noqa: E731
    lineage = {"domination", "domination-blind", "bsr", "bsr-blind", "minimax", "mcs", "gb", "mixed"}
    for held in lineage - {"mixed"}:
        assert names(held) == {"mission", "expert", "aware", "expert-blind"}, held
    assert not {"aware", "mixed"} & names("mission") and not {"mission", "mixed"} & names("aware")
    assert not {"expert-blind", "mixed"} & names("expert")
    assert names("mixed") == set()  # it runs every lineage's code: nothing can be held out against it
    assert g.fitting_families(g.FAMILIES, "mixed") == ([f.name for f in g.FAMILIES if f.name != "mixed"], False)
    for foreign in g.FOREIGN:
        assert names(foreign.name) == {f.name for f in g.FAMILIES}


def test_the_named_recogniser_is_chosen_on_riskcore_families_alone():
    families = tuple(f for f in g.FAMILIES if f.name in ("mission", "domination", "expert"))
    losses = _losses([f.name for f in families] + [f.name for f in g.FOREIGN])
    for s in g.GRIDS["inverse"]:
        losses.loc[Recogniser.from_spec(s).setting, [f.name for f in families]] = 1.0
    for s in g.GRIDS["open"]:  # the best everywhere foreign, which must not matter
        losses.loc[Recogniser.from_spec(s).setting, [f.name for f in g.FOREIGN]] = 0.0
    grid, cv = g.choose_named(losses, families)
    assert grid == "inverse" and set(cv.family) == {f.name for f in families}
    assert cv[cv.chosen].grid.unique().tolist() == ["inverse"]


def test_calibration_keeps_the_card_ranking_and_each_cards_split():
    card_of = np.array([0, 0, 0, 0, 1, 2])
    probs = np.array([[0.1, 0.1, 0.1, 0.1, 0.35, 0.25]])  # card 0 leads (0.4) though its explanations are small
    for t in (0.5, 2.0, 5.0):
        q = calibrated(probs, t, card_of)
        cards = np.array([q[0, :4].sum(), q[0, 4], q[0, 5]])
        assert cards.argmax() == 0 and np.allclose(q[0, :4], cards[0] / 4) and q.sum() == pytest.approx(1)
    assert np.allclose(calibrated(probs, 1.0, card_of), probs)


def test_a_temperature_fitted_on_overconfident_rows_is_above_one():
    rng = np.random.default_rng(0)
    card_of = np.arange(6)
    true = rng.integers(0, 6, 2000)
    guess = np.where(rng.random(2000) < 0.4, true, rng.integers(0, 6, 2000))  # right 50% of the time
    probs = np.full((2000, 6), 0.02)
    probs[np.arange(2000), guess] = 0.9  # but 90% sure
    scores = pd.DataFrame(probs, columns=[f"e{k}" for k in range(6)]).assign(card=true)
    t = g.fit_temperature(scores, card_of)
    assert t > 1.5
    before = g.row_metrics(scores.assign(game_id=0, player=0, point=1.0), card_of).log_loss.mean()
    after = g.row_metrics(scores.assign(game_id=0, player=0, point=1.0), card_of, t).log_loss.mean()
    assert after < before
    assert (calibrated(probs, t, card_of).argmax(axis=1) == probs.argmax(axis=1)).all()


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


@pytest.fixture(scope="module")
def experiment(tmp_path_factory):
    data = tmp_path_factory.mktemp("gen-data")
    out = tmp_path_factory.mktemp("gen-reports")
    families = tuple(f for f in g.FAMILIES if f.name in ("mission", "bsr", "domination-blind"))
    logs = {f.name: g.foreign_logs(f)[:3] for f in g.FOREIGN}
    report = g.run_experiment(games=6, seed=11, data_dir=data, workers=1, progress=False, n_boot=50, out=out,
                              families=families, logs=logs)
    return data, report, families


def test_every_family_gets_every_recogniser_at_every_checkpoint(experiment):
    data, report, families = experiment
    m = query("SELECT * FROM generalisation_metrics WHERE run = ?", [g.KEY], data)
    names = [f.name for f in families] + [f.name for f in g.FOREIGN]
    assert sorted(m.family.unique()) == sorted(names)
    top1 = m[m.metric == "top1"]
    for family in names:
        d = top1[top1.family == family]
        assert {"uniform", "placement count (yardstick)", "the reference's recogniser (khan2013)", g.NAMED,
                "play-style mixture", "open-goal mixture", "classifier", "inverse planning"} <= set(d.recogniser)
        assert set(d.point.round(2)) == {0.1, 0.3, 0.5, 0.7, 1.0}
    assert m[m.metric.isin(["top1", "top1_explanation"])].value.between(0, 1).all()
    uniform = m[(m.recogniser == "uniform") & (m.metric == "log_loss")]
    assert np.allclose(uniform.value, np.log(6))
    gain = m[m.metric == "gain"].set_index(["family", "recogniser", "point"]).value
    loss = m[m.metric == "log_loss"].set_index(["family", "recogniser", "point"]).value
    assert np.allclose(gain, np.log(6) - loss.reindex(gain.index))
    ceiling = m[m.recogniser == g.CEILING]
    assert set(ceiling.family) == {f.name for f in g.FOREIGN}  # fitted on a foreign family, shown only there
    text = report.read_text()
    assert "## Against the reference on the same players" in text and "## What setup placements" in text


def test_the_fits_differ_only_by_the_held_out_family(experiment):
    data, _, families = experiment
    fits = query("SELECT * FROM generalisation_fits WHERE run = ?", [g.KEY], data)
    assert set(fits.held_out) == {f.name for f in families} | {f.name for f in g.FOREIGN}
    assert set(g.GRIDS) <= set(fits.grid)
    training = fits.drop_duplicates("held_out").set_index("held_out").training
    assert training["domination-blind"] == "mission"  # bsr runs the domination agent's code
    assert training["fork-ai w4"] == "mission, bsr, domination-blind"
    named = fits[fits.grid.str.startswith(g.NAMED)]
    assert set(named.grid) == {f"{g.NAMED} (full)", f"{g.NAMED} (turns)"} and (named.temperature > 0).all()
    assert named[named.grid.str.endswith("(turns)")].setting.str.endswith(":view=turns").all()
    cal = query("SELECT * FROM generalisation_calibration WHERE run = ?", [g.KEY], data)
    per = cal.groupby(["family", "recogniser"])["count"].sum()
    assert (per > 0).all() and cal.confidence.between(1 / 6 - 1e-9, 1).all()


def test_riskcore_and_the_reference_are_compared_on_the_same_players(experiment):
    data, _, _ = experiment
    paired = query("SELECT * FROM generalisation_paired WHERE run = ?", [g.KEY], data)
    m = query("SELECT * FROM generalisation_metrics WHERE run = ?", [g.KEY], data)
    d = paired[(paired.b == "the reference's recogniser (khan2013)") & (paired.metric == "top1") & (paired.point == 1)]
    for r in d.itertuples():
        value = lambda name: m[(m.recogniser == name) & (m.family == r.family) & (m.metric == "top1")  # noqa: E731
                               & (m.point == 1)].value.iloc[0]
        assert r.difference == pytest.approx(value(g.NAMED) - value("the reference's recogniser (khan2013)"))
        assert r.ci_low <= r.difference <= r.ci_high


def test_every_family_gets_its_mission_lean(experiment):
    data, report, families = experiment
    lean = query("SELECT * FROM generalisation_lean WHERE run = ?", [g.KEY], data)
    assert sorted(lean.family.unique()) == sorted([f.name for f in families] + [f.name for f in g.FOREIGN])
    assert set(lean.kind) == set(g.LEAN_KINDS) == {"place", "reinforce", "attack_won"}
    assert lean.value.between(-1, 1).all()
    assert (lean.ci_low <= lean.value + 1e-12).all() and (lean.value <= lean.ci_high + 1e-12).all()
    assert "## Mission lean" in report.read_text()


def test_a_choice_on_a_grids_edge_widens_the_grid_beyond_it():
    from riskcore.experiments.recognition.protocol import axis_values

    grids = {g_: list(specs) for g_, specs in g.GRIDS.items()}
    low_beta = next(s for s in grids["mixture"] if axis_values("mixture", s) == {"beta": 2.5, "temper": 0.5})
    top_temper = next(s for s in grids["mixture"] if axis_values("mixture", s) == {"beta": 5.0, "temper": 1.0})
    inside = next(s for s in grids["inverse"] if axis_values("inverse", s) == {"beta": 10.0, "eps": 0.2})
    top_i = next(s for s in grids["phatt-simple"] if axis_values("phatt-simple", s) == {"i": 0.98})
    wider = g.widen(grids, [("mixture", low_beta), ("mixture", top_temper), ("inverse", inside),
                            ("phatt-simple", top_i)])
    added = {grid: [axis_values(grid, s) for s in wider[grid] if s not in grids[grid]] for grid in grids}
    assert added["mixture"] == [{"beta": 1.25, "temper": 0.5}]  # temper 1 is a bound it may take: it stays
    assert added["inverse"] == [] and added["goal"] == []
    assert added["phatt-simple"] == [{"i": 0.99}]  # half-way to the weight's bound, 1
