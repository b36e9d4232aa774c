from riskcore.experiments.summary import win_rates, write_summary


def test_win_rates_have_wilson_intervals_around_the_rate(small_run):
    df = win_rates("mixed", "agent", small_run)
    assert df.games.sum() == 12 * 4
    assert ((df.ci_low <= df.win_rate) & (df.win_rate <= df.ci_high)).all()


def test_summary_writes_figure_and_table(small_run, tmp_path):
    md = write_summary("mixed", small_run, tmp_path)
    text = md.read_text()
    assert "Win rate by agent" in text and "summary-mixed.png" in text
    assert (tmp_path / "figures" / "summary-mixed.png").read_bytes()[:4] == b"\x89PNG"
