from riskcore.bench import run_bench


def test_bench_writes_its_table(tmp_path):
    df = run_bench(games=3, out_dir=tmp_path)
    assert len(df) == 3 and (df.games_per_s > 0).all() and (df.us_per_action > 0).all()
    text = (tmp_path / "engine.md").read_text()
    assert "mission agents, 4p mission" in text and "games_per_s" in text
