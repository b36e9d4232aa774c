"""The learned recogniser's training population, the naming protocol, and the committed models against the code
that fits them."""

import json

import numpy as np
import pandas as pd
import pytest

from riskcore import paths
from riskcore.experiments.recognition import population as pop
from riskcore.experiments.recognition import training as tr
from riskcore.recognition import evidence as ev

COMMITTED = paths.project_root() / "models"


def test_the_population_covers_every_setting_and_both_lineages():
    cells = pop.population(10_000)
    assert {(c.n_players, c.cards, c.borders) for c in cells} == {
        (n, k, b) for n in pop.PLAYERS for k in pop.CARDS for b in pop.MAPS}
    assert {c.lineage for c in cells} == {"heuristic", "random"}
    assert abs(sum(c.games for c in cells) - 10_000) < len(cells)
    share = sum(c.games for c in cells if c.lineage == "random") / sum(c.games for c in cells)
    assert share == pytest.approx(pop.RANDOM_SHARE, abs=0.01)
    for c in cells:
        assert len(c.agents) == c.n_players and c.config.n_players == c.n_players
        kinds = [pop.lineage(a) for a in c.agents]
        assert kinds.count("random") == (2 if c.lineage == "random" else 0)
    assert {a for c in cells for a in c.agents} >= set(pop.HEURISTIC_FOLLOWING) | set(pop.RANDOM_FOLLOWING)


def test_the_population_and_its_recipe_are_a_function_of_size_and_seed():
    assert pop.population(5_000) == pop.population(5_000)
    assert pop.recipe(5_000) == pop.recipe(5_000)
    assert pop.population(5_000, seed=1) != pop.population(5_000)
    assert pop.population(5_000)[2 * (pop.MIXES + 1)].config.board == "classic-domination-81"  # the third map


def test_lineage_is_decision_code():
    assert pop.lineage("random:tilt=0.8") == pop.lineage("random") == "random"
    assert {pop.lineage(a) for a in ("mission:focus=1", "domination", "expert", "bsr:mission_weight=1")} == {
        "heuristic"}


def test_candidates_are_compared_only_where_none_of_them_shares_code():
    assert tr.naming_folds({"heuristic", "random"}) == ["random"]
    assert tr.naming_folds({"heuristic"}) == []


def _rows(n_games: int, rng: np.random.Generator, lineage: str, signal: float, mixture_good: bool) -> tr.Rows:
    """Synthetic rows: the first base feature carries `signal` on the true card; the mixture's column is the truth
    (or noise)."""
    cards = 6
    truth = rng.integers(0, cards, n_games * 2)
    x = rng.normal(size=(len(truth), cards, len(ev.BASE_FEATURES) + len(ev.STACKED_FEATURES))).astype(np.float32)
    x[np.arange(len(truth)), truth, 0] += signal
    mixture = np.full((len(truth), cards), 0.02)
    mixture[np.arange(len(truth)), truth if mixture_good else rng.integers(0, cards, len(truth))] = 0.9
    meta = pd.DataFrame({"run": f"r-{lineage}", "game_id": np.repeat(np.arange(n_games), 2), "player": 0,
                         "point": 1.0, "agent": lineage, "lineage": lineage, "n_players": 4})
    return tr.Rows(x, truth, np.zeros((len(truth), cards), bool), mixture, meta)


def test_the_named_candidate_is_chosen_on_the_lineage_held_out_from_every_candidate():
    rng = np.random.default_rng(0)
    # the mixture reads heuristic play perfectly (in-model there) and random play not at all
    rows = tr.Rows.concat([_rows(300, rng, "heuristic", 2.0, True), _rows(300, rng, "random", 2.0, False)])
    scores, choice, named = tr.lolo(rows, rng, n_boot=200)
    assert named in ("evidence", "evidence-stacked")
    assert set(choice.folds) == {"random"}
    mix = scores[(scores.candidate == "mixture")]
    assert mix[mix.held_out == "heuristic"].in_model.all() and not mix[mix.held_out == "random"].in_model.any()
    row = choice.set_index("candidate").loc["mixture"]
    assert row.ci_high < 0 and row.log_loss_held_heuristic < row.log_loss_held_random


def test_fitting_twice_writes_the_same_bytes():
    rng = np.random.default_rng(1)
    rows = _rows(200, rng, "heuristic", 1.0, True)
    a = tr.fit(rows, "evidence", {"seed": 1}).to_json()
    b = tr.fit(rows, "evidence", {"seed": 1}).to_json()
    assert a == b


@pytest.mark.parametrize("model", sorted(tr.MODELS))
def test_the_committed_models_load_and_were_trained_on_the_declared_population(model):
    fitted = ev.load_model(model)
    protocol = tr.load_protocol(COMMITTED)
    assert fitted.features == tr.MODELS[model]
    assert fitted.training["population"] == pop.recipe(protocol["games"], protocol["seed"])
    assert protocol["models"][model] == fitted.digest
    assert protocol["seed"] == pop.SEED


def test_the_committed_protocol_names_one_declared_candidate_and_its_spec():
    from riskcore.recognition.recognisers import Recogniser

    protocol = tr.load_protocol(COMMITTED)
    assert protocol["candidates"] == tr.CANDIDATES and protocol["named"] in tr.CANDIDATES
    named = [r for r in protocol["choice"] if r["named"]]
    assert len(named) == 1 and named[0]["candidate"] == protocol["named"]
    assert all(r["log_loss"] >= named[0]["log_loss"] for r in protocol["choice"])
    spec = Recogniser.from_spec(protocol["spec"])
    assert spec.name == ("mixture" if protocol["named"] == "mixture" else "evidence")
    json.dumps(protocol)  # plain JSON


def _refuse(constant: str):
    raise ValueError(f"not strict JSON: {constant}")


def test_the_committed_protocol_is_strict_json_and_its_learning_curve_has_intervals():
    protocol = json.loads((COMMITTED / tr.PROTOCOL_FILE).read_text(), parse_constant=_refuse)
    curve = pd.DataFrame(protocol["learning_curve"])
    assert set(curve.games) == {g for g in tr.CURVE_SIZES if g <= protocol["games"]}
    for metric, low, high in (("gain", "gain_ci_low", "gain_ci_high"), ("top1_at_100", "top1_ci_low", "top1_ci_high"),
                              ("log_loss", "log_loss_ci_low", "log_loss_ci_high"),
                              ("gain_less_smallest", "gain_less_smallest_ci_low", "gain_less_smallest_ci_high")):
        assert (curve[low] <= curve[metric] + 1e-12).all() and (curve[metric] <= curve[high] + 1e-12).all(), metric
    smallest = curve[curve.games == curve.games.min()]
    assert np.allclose(smallest.gain_less_smallest, 0)
    assert np.allclose(curve.log_loss + curve.gain, np.log(6))


def test_the_learning_curve_pairs_each_size_with_the_smallest_on_the_same_games():
    rng = np.random.default_rng(3)
    rows = tr.Rows.concat([_rows(120, rng, "heuristic", 1.5, True)])
    dev = {"dev": _rows(40, rng, "heuristic", 1.5, True)}
    cells = {c.run: c.games for c in pop.population(1000)}
    # the population's runs stand in for the synthetic rows' run: every game is within the first 1,000
    rows.meta["run"] = next(iter(cells))
    curve = tr.learning_curve(rows, (500, 1000), 1000, dev, rng=np.random.default_rng(4), n_boot=100)
    assert len(curve) == 2 * len(tr.MODELS)
    assert (curve.dev_games == 40).all() and (curve.log_loss_ci_low <= curve.log_loss).all()
    big = curve[curve.games == 1000].set_index("model")
    small = curve[curve.games == 500].set_index("model")
    assert np.allclose(big.gain_less_smallest, big.gain - small.gain)


def test_the_protocol_writer_refuses_nothing_and_writes_a_missing_number_as_null():
    assert tr._strict({"a": float("nan"), "b": [np.float64(1.5), np.int64(2)], "c": np.bool_(True)}) == \
        {"a": None, "b": [1.5, 2], "c": True}


def test_the_committed_model_reads_fresh_mission_play_better_than_uniform(tmp_path):
    """A small refit's worth of fresh play: the committed model, applied to new games of the population, must gain
    over uniform (it could fail if the features drifted from what it was trained on)."""
    from riskcore.simulate import RunSpec, simulate

    cell = next(c for c in pop.population(10_000, seed=pop.SEED + 1)
                if c.n_players == 4 and c.borders == 82 and c.lineage == "heuristic")
    simulate(RunSpec("fresh", 40, cell.config, cell.agents, 99, chunk=20), tmp_path, workers=1, progress=False)
    from riskcore.recognition.pipeline import ensure_features

    ensure_features("fresh", "cards6", tmp_path, workers=1, progress=False)
    rows = tr.collect({"fresh": None}, tmp_path, workers=1, progress=False)
    last = rows.select(rows.meta.point.to_numpy() == 1.0)
    scores = tr.row_scores(last, tr.card_probs(last, "evidence", ev.load_model("evidence")))
    assert scores.gain.mean() > 0.05, scores.gain.mean()


def test_the_population_rows_are_kept_and_read_back_as_they_were(tmp_path, monkeypatch):
    rows = _rows(50, np.random.default_rng(4), "heuristic", 1.0, True)
    calls = []
    monkeypatch.setattr(tr, "collect", lambda *a, **k: calls.append(1) or rows)
    first = tr.population_rows(1_000, pop.SEED, tmp_path, 1, None, False)
    again = tr.population_rows(1_000, pop.SEED, tmp_path, 1, None, False)
    assert len(calls) == 1
    for a, b in ((first, rows), (again, rows)):
        assert np.array_equal(a.x, b.x) and np.array_equal(a.card, b.card)
        assert np.array_equal(a.ruled_out, b.ruled_out) and np.array_equal(a.mixture, b.mixture)
        assert a.meta.astype(str).equals(b.meta.astype(str))


def test_reuse_refuses_a_population_that_is_not_there(tmp_path):
    with pytest.raises(ValueError, match=r"--reuse: 1?\d+ run\(s\) of the 1,000-game population .*train-"):
        tr.features_of_population(1_000, pop.SEED, tmp_path, 1, None, False)


def test_reuse_builds_the_features_a_run_of_the_population_lacks(tmp_path, monkeypatch):
    asked = []
    monkeypatch.setattr(tr, "runs_already_there", lambda specs, data_dir: {s.run for s in specs})
    monkeypatch.setattr(tr, "ensure_features_many", lambda runs, hyp, *a, **k: asked.append((list(runs), hyp)))
    tr.features_of_population(1_000, pop.SEED, tmp_path, 1, None, False)
    assert asked == [([c.run for c in pop.population(1_000, pop.SEED)], "cards6")]
