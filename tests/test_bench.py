from riskcore.experiments.bench import run_bench


def test_bench_writes_its_table(tmp_path):
    df = run_bench(games=3, out_dir=tmp_path)
    assert len(df) == 3 and (df.games_per_s > 0).all() and (df.us_per_action > 0).all()
    text = (tmp_path / "engine.md").read_text()
    assert "mission agents, 4p mission" in text and "games_per_s" in text


def test_recognition_bench_scores_every_setting(small_run, tmp_path):
    from riskcore.experiments.bench import bench_recognition
    from riskcore.recognition.pipeline import ensure_features

    ensure_features("mixed", "cards6", small_run, workers=1, progress=False)
    df = bench_recognition("mixed", settings=6, workers=1, data_dir=small_run, out_dir=tmp_path)
    assert df.settings[0] == 6 and df.games[0] == 12
    assert "PHATT weight sweep" in (tmp_path / "recognition.md").read_text()


def test_search_bench_measures_compiled_and_plain_on_the_same_work(tmp_path):
    from riskcore.experiments.bench import bench_search

    df = bench_search(positions_per_count=1, lookahead=1, out_dir=tmp_path)
    pairs = df.pivot_table(index=["players", "search"], columns="model", values="states")
    assert (pairs.compiled == pairs.plain).all() and (df.states_per_s > 0).all()
    assert "speedup" in (tmp_path / "search.md").read_text() and "processor" in (tmp_path / "search.md").read_text()
