import numpy as np

from riskcore.experiments.tournament import bradley_terry, lineups, run_tournament


def test_bradley_terry_recovers_the_order_of_true_strengths():
    rng = np.random.default_rng(0)
    strength = {"a": 4.0, "b": 2.0, "c": 1.0}
    winners, seats = [], []
    for _ in range(3000):
        x, y = rng.choice(list(strength), size=2, replace=False)
        p = strength[x] / (strength[x] + strength[y])
        winners.append(x if rng.random() < p else y)
        seats.append([x, y])
    bt = bradley_terry(winners, seats)
    assert list(bt.sort_values(ascending=False).index) == ["a", "b", "c"]
    assert abs(bt["a"] / bt["c"] - 4.0) < 0.8


def test_round_robin_lineups():
    assert lineups(["a", "b", "c"], 2) == [("a", "b"), ("a", "c"), ("b", "c")]
    assert lineups(["a", "b"], 4) == [("a", "b")]


def test_tournament_table_has_wilson_intervals_and_ratings(tmp_path, monkeypatch):
    monkeypatch.setenv("RISKCORE_REPORTS", str(tmp_path / "reports"))
    table = run_tournament("t", ["random", "domination", "mission"], 2, 6, data_dir=tmp_path, workers=1,
                           progress=False)
    assert set(table.agent) == {"random", "domination", "mission"}
    assert (table.games == 12).all()
    assert ((table.ci_low <= table.win_rate) & (table.win_rate <= table.ci_high)).all()
