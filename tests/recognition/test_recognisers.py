import numpy as np
import pytest
import pyarrow as pa

from riskcore.cli import main
from riskcore.engine.config import GameConfig
from riskcore.db import DataError, query
from riskcore.recognition.features import load_features
from riskcore.recognition.inverse import inverse_posterior, load_candidates
from riskcore.recognition.scoring import Scorer
from riskcore.recognition.pipeline import ensure_features
from riskcore.recognition.recognisers import Recogniser
from riskcore.simulate import RunSpec, simulate


@pytest.fixture(scope="module")
def focused(tmp_path_factory):
    """Two runs of constrained mission play with different seeds: one to train on, one to test on."""
    data = tmp_path_factory.mktemp("focused")
    for name, seed in (("train", 1), ("test", 2)):
        simulate(RunSpec(name, 60, GameConfig(), ("mission:focus=1",), seed), data, workers=1, progress=False)
        ensure_features(name, "cards6", data, workers=1, progress=False)
    return data


def _top1_at_end(f, post):
    last = np.r_[np.flatnonzero(np.diff(f.obs.game_id * 8 + f.obs.player)), f.n - 1]
    truth = f.truth.set_index(["game_id", "player"]).card
    cards = truth.reindex(list(zip(f.obs.game_id[last], f.obs.player[last]))).to_numpy()
    ok = cards >= 0
    return float((f.hyp.card_probs(post[last]).argmax(axis=1)[ok] == cards[ok]).mean())


@pytest.mark.parametrize("rec", [Recogniser.from_spec("inverse"), Recogniser.from_spec("goal"),
                                 Recogniser.from_spec("classifier:train=train")])
def test_recognisers_beat_chance_on_constrained_play(focused, rec):
    f = load_features("test", "cards6", focused)
    assert _top1_at_end(f, rec.posterior(f, "test", focused)) > 1 / 6 + 0.15


def test_unknown_recogniser_or_parameter_is_rejected():
    with pytest.raises(ValueError, match="unknown recogniser 'oracle'"):
        Recogniser.from_spec("oracle")
    with pytest.raises(ValueError, match="no parameter"):
        Recogniser.from_spec("inverse:gamma=1")
    with pytest.raises(ValueError, match="needs train=RUN"):
        Recogniser.from_spec("classifier")
    with pytest.raises(ValueError, match="beta=true.*must be float"):
        Recogniser.from_spec("inverse:beta=true")
    with pytest.raises(ValueError, match="unknown action kind 'sneak'"):
        Recogniser.from_spec("phatt:sneak.i=0.5")


@pytest.mark.parametrize("text,mapping", [
    ("phatt:scheme=simple:i=0.9:attack_won.i=0.7", {"name": "phatt", "attack_won.i": 0.7, "i": 0.9}),
    ("inverse:eps=0.05:beta=20", {"name": "inverse", "beta": 20}),
    ("classifier:train=a,b", {"name": "classifier", "train": ["a", "b"], "C": 1}),
])
def test_a_setting_has_one_canonical_text_whatever_the_form_it_was_given_in(text, mapping):
    a, b = Recogniser.from_spec(text), Recogniser.from_spec(mapping)
    assert a == b and a.setting == b.setting and Recogniser.from_spec(a.setting) == a


def test_recognize_and_evaluate_commands(focused, capsys):
    data = ["--data-dir", str(focused)]
    for args in (["--recogniser", "uniform"], ["--recogniser", "phatt:scheme=simple"],
                 ["--recogniser", "inverse:beta=10"]):
        assert main(["recognize", "--run", "test", "--quiet"] + args + data) == 0
    recognize_out = capsys.readouterr().out
    assert "top1" in recognize_out and "log_loss" in recognize_out and "0.5" in recognize_out
    assert main(["evaluate", "--run", "test", "--bootstrap", "200"] + data) == 0
    out = capsys.readouterr().out
    assert "inverse:beta=10:focus=-1:eps=0.05" in out and "uniform" in out
    m = query("SELECT * FROM recognition_metrics WHERE run = 'test' AND metric = 'top1' AND subset = 'all'",
              data_dir=focused)
    assert set(m.point.round(2)) == {0.1, 0.3, 0.5, 0.7, 1.0}
    assert (m[m.setting == "uniform"].value.round(6) == round(1 / 6, 6)).all()
    assert not query("SELECT * FROM recognition_paired WHERE run = 'test'", data_dir=focused).empty
    # re-running a setting replaces its rows
    before = query("SELECT count(*) AS n FROM posteriors WHERE run = 'test'", data_dir=focused).n[0]
    main(["recognize", "--run", "test", "--quiet", "--recogniser", "uniform"] + data)
    assert query("SELECT count(*) AS n FROM posteriors WHERE run = 'test'", data_dir=focused).n[0] == before
    turns = "SELECT count(*) AS n FROM posteriors WHERE run = 'test' AND setting = 'uniform' AND point_kind = 'turn'"
    assert query(turns, data_dir=focused).n[0] == 0
    assert main(["recognize", "--run", "test", "--quiet", "--recogniser", "uniform", "--turns"] + data) == 0
    assert query(turns, data_dir=focused).n[0] > 0  # after every turn, on request


def test_bad_weights_are_named(focused, capsys):
    data = ["--data-dir", str(focused)]
    assert main(["recognize", "--run", "test", "--recogniser", "phatt:attak_won.i=0.5"] + data) == 2
    assert "unknown action kind 'attak_won'" in capsys.readouterr().err


def test_missing_run_and_missing_features_are_clear(focused, tmp_path):
    with pytest.raises(DataError, match="no run 'ghost'"):
        ensure_features("ghost", "cards6", focused)
    simulate(RunSpec("plain", 2, GameConfig(), ("mission",), 3), tmp_path, workers=1, progress=False)
    with pytest.raises(DataError, match="no recognition features for run 'plain'"):
        load_features("plain", "cards6", tmp_path)


def test_corrupt_features_are_detected(focused, tmp_path):
    simulate(RunSpec("c", 3, GameConfig(), ("mission",), 3), tmp_path, workers=1, progress=False)
    ensure_features("c", "cards6", tmp_path, workers=1, progress=False)
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    part = next((tmp_path / "recognition" / "run=c" / "rec_pending").glob("*.parquet"))
    table = pq.read_table(part)
    pq.write_table(table.filter(pc.not_equal(table["obs"], 3)), part)  # pending rows of observation 3 lost
    with pytest.raises(Exception, match="corrupt"):
        load_features("c", "cards6", tmp_path)


def test_lapse_rate_near_one_makes_every_choice_uniform(focused):
    from riskcore.recognition.inverse import inverse_loglik

    f = load_features("test", "cards6", focused)
    c = load_candidates(f, "test", focused)
    ll = inverse_loglik(f, c, beta=10, focus=1.0, eps=1 - 1e-12)
    decided = np.abs(ll).sum(axis=1) > 0
    n_cands = np.diff(c.decision_start)
    rows = c.obs_row
    assert decided.sum() > 100
    assert np.allclose(ll[rows], -np.log(n_cands)[:, None], atol=1e-9)


def test_marginal_focus_is_not_overconfident_when_players_ignore_their_mission(tmp_path):
    """On the turns of the game; setup placements, one army at a time on one staging territory, are strongly
    repeated choices that a model of independent decisions over-counts (the mixtures' `temper` discounts them)."""
    simulate(RunSpec("f0", 60, GameConfig(), ("mission:focus=0",), 9), tmp_path, workers=1, progress=False)
    ensure_features("f0", "cards6", tmp_path, workers=1, progress=False)
    f = load_features("f0", "cards6", tmp_path, "turns")
    c = load_candidates(f, "f0", tmp_path)
    scorer = Scorer(f)
    fixed = scorer.score(inverse_posterior(f, c, scorer.starts, 10, 1.0, 0.0)).log_loss.mean()
    marginal = scorer.score(inverse_posterior(f, c, scorer.starts, 10, -1.0, 0.05)).log_loss.mean()
    assert marginal < fixed and marginal < np.log(6) + 0.15


def test_full_deck_hypotheses_cover_every_card(focused):
    from riskcore.engine.board import load_board
    from riskcore.recognition.hypotheses import build_hypotheses

    hyp = build_hypotheses(load_board("classic"), "deck14")
    assert len(hyp.cards) == 14 and hyp.size == 20 and np.isclose(hyp.prior.sum(), 1)
    owner = np.zeros(42, dtype=int)
    owner[:5] = 2
    destroy_green = [i for i, e in enumerate(hyp.explanations) if e.name == "destroy green"][0]
    assert hyp.membership(owner)[destroy_green].sum() == 5  # the territories green holds now
    ensure_features("test", "deck14", focused, workers=1, progress=False)
    f = load_features("test", "deck14", focused)
    post = Recogniser.from_spec("phatt:scheme=simple").posterior(f, "test", focused)
    assert post.shape == (f.n, 20) and np.allclose(post.sum(axis=1), 1)
    assert (f.truth.card >= 0).all()  # every player's card is a hypothesis now


@pytest.fixture(scope="module")
def streamed(tmp_path_factory):
    data = tmp_path_factory.mktemp("streamed")
    simulate(RunSpec("s", 30, GameConfig(), ("mission:focus=1",), 5), data, workers=1, progress=False)
    ensure_features("s", "cards6", data, workers=1, progress=False)
    return data


def test_recognize_writes_its_posteriors_as_it_computes_them_and_they_are_the_whole_runs(streamed, monkeypatch):
    import pyarrow.parquet as pq

    import riskcore.recognition.pipeline as pipeline

    rec = Recogniser.from_spec("goal")
    whole = pipeline.posterior_table("s", rec, data_dir=streamed)
    monkeypatch.setattr(pipeline, "CHUNK_GAMES", 7)  # several parts, each written before the next is computed
    pipeline.recognize("s", rec, data_dir=streamed, workers=1, progress=False)
    stored = query(f"SELECT * FROM posteriors WHERE run = 's' AND setting = '{rec.setting}'", data_dir=streamed)
    key, kept = ["game_id", "player", "point_kind", "point", "explanation"], ["n_seen", "prob"]
    ordered = [t.astype({"point_kind": str}).sort_values(key).reset_index(drop=True)  # a chunk lists its own rows
               for t in (stored, whole.to_pandas())]
    assert len(stored) == whole.num_rows and ordered[0][key].equals(ordered[1][key])
    assert np.array_equal(ordered[0][kept].to_numpy(float), ordered[1][kept].to_numpy(float))
    file = next((streamed / "posteriors" / "run=s" / "posteriors").glob("*.parquet"))
    assert pq.ParquetFile(file).num_row_groups == 5  # 30 games, 7 at a time


def test_the_recognize_summary_read_in_parts_is_the_mean_over_every_player(streamed, monkeypatch):
    import riskcore.recognition.pipeline as pipeline

    rec = Recogniser.from_spec("goal")
    pipeline.recognize("s", rec, data_dir=streamed, workers=1, progress=False)
    per = pipeline.player_metrics("s", streamed, settings=[rec.setting])
    at_once = per[per.point.isin(pipeline.CHECKPOINTS)].groupby("point")[["top1", "log_loss"]].mean()
    monkeypatch.setattr(pipeline, "SUMMARY_GAMES", 13)
    in_parts = pipeline.mean_metrics("s", rec.setting, streamed, ("top1", "log_loss"))
    assert np.allclose(in_parts.to_numpy(), at_once.to_numpy()) and list(in_parts.index) == list(at_once.index)
    assert at_once.top1.nunique() > 1  # metrics that differ by point: a summary of the wrong rows would show


def test_player_metrics_at_some_points_are_those_rows_of_every_point(streamed):
    import riskcore.recognition.pipeline as pipeline

    rec = Recogniser.from_spec("goal")
    pipeline.recognize("s", rec, data_dir=streamed, workers=1, progress=False)
    every = pipeline.player_metrics("s", streamed, settings=[rec.setting])
    some = pipeline.player_metrics("s", streamed, settings=[rec.setting], games=(3, 20), points=(0.1, 0.55, 1.0))
    expected = every[every.point.isin((0.1, 0.55, 1.0)) & every.game_id.between(3, 20)].drop(columns="convergence")
    assert len(some) > 0 and "convergence" not in some
    assert some.reset_index(drop=True).equals(expected[list(some.columns)].reset_index(drop=True))


def test_posteriors_after_every_turn_only_on_request(streamed):
    import riskcore.recognition.pipeline as pipeline

    rec = Recogniser.from_spec("goal")
    sql = ("SELECT point_kind, game_id, player, point, explanation, prob FROM posteriors WHERE run = 's' AND "
           "setting = ? ORDER BY point_kind, game_id, player, point, explanation")
    pipeline.recognize("s", rec, data_dir=streamed, workers=1, progress=False)
    plain = query(sql, [rec.setting], streamed).astype({"point_kind": str})
    pipeline.recognize("s", rec, data_dir=streamed, workers=1, progress=False, turns=True)
    with_turns = query(sql, [rec.setting], streamed).astype({"point_kind": str})
    assert set(plain.point_kind) == {"fraction", "game"} and "turn" in set(with_turns.point_kind)
    kept = with_turns[with_turns.point_kind != "turn"].reset_index(drop=True)
    assert kept.equals(plain)  # the checkpoints are the same either way


def test_a_recogniser_computes_with_no_database_connection_held(streamed, monkeypatch):
    """Workers read while the experiments' main process writes: a connection held through the computation would
    keep the writer waiting."""
    import riskcore.recognition.pipeline as pipeline
    from riskcore import db

    rec = Recogniser.from_spec("goal")
    held = []
    real = Recogniser.posterior
    monkeypatch.setattr(Recogniser, "posterior", lambda self, *a, **k: held.append(dict(db._HELD.connections)) or
                        real(self, *a, **k))
    monkeypatch.setattr(pipeline, "CHUNK_GAMES", 10)
    assert pipeline.posterior_table("s", rec, data_dir=streamed).num_rows > 0
    assert len(held) == 3 and not any(held)


def test_posteriors_computed_on_several_workers_are_the_same_rows_in_the_same_order(streamed, monkeypatch):
    import riskcore.recognition.pipeline as pipeline

    monkeypatch.setattr(pipeline, "CHUNK_GAMES", 4)
    monkeypatch.setattr(pipeline, "TASK_CHUNKS", 2)  # four tasks over two workers
    rec = Recogniser.from_spec("mixture:beta=5:temper=0.5")
    one = pa.concat_tables(pipeline.posterior_parts("s", rec, data_dir=streamed, workers=1))
    two = pa.concat_tables(pipeline.posterior_parts("s", rec, data_dir=streamed, workers=2))
    assert one.num_rows > 0 and two.equals(one)


def test_recognize_many_writes_each_jobs_posteriors_in_parts_as_recognize_does(streamed, monkeypatch):
    import hashlib

    import pyarrow.parquet as pq

    import riskcore.recognition.pipeline as pipeline

    monkeypatch.setattr(pipeline, "CHUNK_GAMES", 4)
    monkeypatch.setattr(pipeline, "TASK_CHUNKS", 3)  # three tasks a job: no worker holds a whole job's rows
    recs = [Recogniser.from_spec(s) for s in ("goal", "phatt:scheme=simple")]
    sql = "SELECT * FROM posteriors WHERE run = 's' AND setting = ? ORDER BY point_kind, game_id, player, point, " \
          "explanation"
    alone = {}
    for rec in recs:
        pipeline.recognize("s", rec, data_dir=streamed, workers=1, progress=False)
        alone[rec.setting] = query(sql, [rec.setting], streamed)
    pipeline.recognize_many([("s", rec) for rec in recs], data_dir=streamed, workers=2, progress=False)
    for rec in recs:
        assert query(sql, [rec.setting], streamed).equals(alone[rec.setting])
    names = [hashlib.sha1(rec.setting.encode()).hexdigest()[:16] for rec in recs]  # a setting's file
    files = [streamed / "posteriors" / "run=s" / "posteriors" / f"{name}.parquet" for name in names]
    assert all(pq.ParquetFile(f).num_row_groups == 3 for f in files)


def test_recognize_many_with_a_run_without_features_fails_and_stops_its_workers(streamed):
    import riskcore.recognition.pipeline as pipeline

    with pytest.raises(DataError, match="nope"):
        pipeline.recognize_many([("nope", Recogniser.from_spec("goal"))], data_dir=streamed, workers=2,
                                progress=False)


def test_evaluate_of_given_settings_leaves_out_a_stale_setting_of_another_configuration(streamed):
    import riskcore.recognition.pipeline as pipeline
    from riskcore import db

    for spec in ("uniform", "goal", "placements"):
        pipeline.recognize("s", Recogniser.from_spec(spec), data_dir=streamed, workers=1, progress=False)
    with db.transaction(streamed) as con:  # as if computed before the run's games were last rewritten
        con.execute("UPDATE generations_posteriors SET source = 'earlier' WHERE run = 's' AND setting = 'placements'")
    stale = r"the posteriors of run 's' \(placements\) were derived from an earlier version"
    with pytest.raises(DataError, match=stale):
        pipeline.evaluate("s", streamed, n_boot=10)
    metrics = pipeline.evaluate("s", streamed, n_boot=10, settings=["uniform", Recogniser.from_spec("goal").setting])
    assert set(metrics.setting) == {"uniform", Recogniser.from_spec("goal").setting}
    with db.transaction(streamed) as con:
        con.execute("UPDATE generations_posteriors SET source = (SELECT generation FROM generations_traces "
                    "WHERE run = 's') WHERE run = 's' AND setting = 'placements'")
