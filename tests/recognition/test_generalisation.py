"""The generalisation protocol: leave one family out, nothing fitted on the held-out play, the corpus ceiling."""

import numpy as np
import pandas as pd
import pytest

from riskcore import paths
from riskcore.db import query
from riskcore.experiments import generalisation as g
from riskcore.recognition.features import load_features
from riskcore.recognition.inverse import load_candidates
from riskcore.recognition.mixture import mixture_posterior
from riskcore.recognition.pipeline import ensure_features
from riskcore.recognition.posterior import group_starts
from riskcore.recognition.recognisers import Recogniser


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


def test_training_families_share_no_agent_with_the_held_out_one():
    names = lambda held: g.training_families(g.FAMILIES, held)  # noqa: E731
    assert not {"domination-blind", "mixed"} & set(names("domination"))
    assert not {"domination", "mixed"} & set(names("domination-blind"))
    assert {"domination", "domination-blind"} <= set(names("bsr-blind"))
    assert not {"expert-blind", "mixed"} & set(names("expert"))
    assert set(names(g.CORPUS)) == {f.name for f in g.FAMILIES}


def test_every_agent_played_blind_is_also_played_following_its_mission():
    single = [f for f in g.FAMILIES if len(f.agents) == 1]
    blind = {a for f in single if not f.follows_mission for a in f.agent_names}
    following = {a for f in single if f.follows_mission for a in f.agent_names}
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
    logs = sorted((paths.datasets_dir() / "domination" / "logs").glob("*fixed*.log"))
    report = g.run_experiment(games=6, seed=11, data_dir=data, workers=1, progress=False, n_boot=50, out=out,
                              families=families, logs=logs)
    return data, report, families


def test_every_family_and_the_corpus_get_every_recogniser_at_every_checkpoint(experiment):
    data, report, families = experiment
    m = query("SELECT * FROM generalisation_metrics WHERE run = ?", [g.KEY], data)
    names = [f.name for f in families] + [g.CORPUS]
    assert sorted(m.family.unique()) == sorted(names)
    top1 = m[m.metric == "top1"]
    for family in names:
        d = top1[top1.family == family]
        assert {"uniform", "play-style mixture", "open-goal mixture", "classifier", "inverse planning"} <= set(
            d.recogniser)
        assert set(d.point.round(2)) == {0.1, 0.3, 0.5, 0.7, 1.0}
    assert ((top1.value >= 0) & (top1.value <= 1)).all()
    uniform = m[(m.recogniser == "uniform") & (m.metric == "log_loss")]
    assert np.allclose(uniform.value, np.log(6))
    ceiling = m[m.recogniser.str.startswith("corpus ceiling")]
    assert set(ceiling.family) == {g.CORPUS}  # the ceiling is fitted on the corpus, and only shown there
    assert "## Top-1 at 100% observed" in report.read_text()


def test_the_fits_differ_only_by_the_held_out_family(experiment):
    data, _, families = experiment
    fits = query("SELECT * FROM generalisation_fits WHERE run = ?", [g.KEY], data)
    assert set(fits.held_out) == {f.name for f in families} | {g.CORPUS}
    assert set(fits.grid) == set(g.GRIDS)
    training = fits.drop_duplicates("held_out").set_index("held_out").training
    assert training["domination-blind"] == "mission, bsr"
    assert training[g.CORPUS] == "mission, bsr, domination-blind"
    cal = query("SELECT * FROM generalisation_calibration WHERE run = ?", [g.KEY], data)
    per = cal.groupby(["family", "recogniser"])["count"].sum()
    assert (per > 0).all() and cal.confidence.between(1 / 6 - 1e-9, 1).all()


def test_every_family_and_the_corpus_get_their_mission_lean(experiment):
    data, report, families = experiment
    lean = query("SELECT * FROM generalisation_lean WHERE run = ?", [g.KEY], data)
    assert sorted(lean.family.unique()) == sorted([f.name for f in families] + [g.CORPUS])
    assert set(lean.kind) == set(g.LEAN_KINDS) and lean.value.between(-1, 1).all()
    assert (lean.ci_low <= lean.value + 1e-12).all() and (lean.value <= lean.ci_high + 1e-12).all()
    text = report.read_text()
    assert "## How much of its mission each family's play shows" in text and "mission lean" in text
