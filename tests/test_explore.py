"""The game explorer and the dataset tour (notebooks/07-explore.py) on a small simulated and an imported run."""

import json

import pytest

from riskcore import paths
from riskcore.config import GameConfig
from riskcore.domination import import_logs
from riskcore.recognition.pipeline import ensure_features, recognize_many
from riskcore.recognition.recognisers import Recogniser
from riskcore.simulate import RunSpec, simulate


def build_explore_data(data):
    """A simulated mission run with posteriors of two recognisers, and the shared Domination logs imported."""
    simulate(RunSpec("explore", 6, GameConfig(), ("mission", "expert", "bsr", "domination"), 3), data, workers=1,
             progress=False)
    ensure_features("explore", "cards6", data, workers=1)
    recognize_many([("explore", Recogniser.from_spec(s)) for s in ("goal", "inverse")], "cards6", data, workers=1,
                   progress=False)
    logs = sorted((paths.datasets_dir() / "domination" / "logs").glob("*fixed*.log"))
    import_logs(logs, "imported", data)
    return data


@pytest.fixture(scope="module")
def explore_data(tmp_path_factory):
    return build_explore_data(tmp_path_factory.mktemp("explore"))


def test_moving_the_slider_redraws_the_board_and_the_posteriors(explore_data):
    from riskcore.explore import GameExplorer

    ex = GameExplorer("explore", 1, data_dir=explore_data)
    assert ex.setting_box.value is not None  # a recogniser's posteriors were found
    board, posterior = ex.board_image.value, ex.posterior_image.value
    ex.move(1)
    assert ex.slider.value == 1 and ex.board_image.value != board
    ex.slider.value = ex.slider.max
    assert ex.posterior_image.value != posterior  # a later turn: other beliefs
    assert "<" in ex.log.value and len(ex.step_seconds) >= 3
    legend = ex.picture.fig.legends[0] if ex.picture.fig.legends else ex.picture.ax.get_legend()
    before = [t.get_text() for t in legend.get_texts()]
    ex.missions_box.value = True
    legend = ex.picture.fig.legends[0] if ex.picture.fig.legends else ex.picture.ax.get_legend()
    after = [t.get_text() for t in legend.get_texts()]
    assert after != before and any("mission" in t.lower() or "continent" in t.lower() for t in after)


def test_the_explorer_opens_an_imported_game_and_refuses_an_empty_database(explore_data, tmp_path):
    from riskcore.explore import GameExplorer

    ex = GameExplorer("imported", 0, data_dir=explore_data)
    assert ex.slider.max > 10 and ex.setting_box.value is None  # no posteriors for it: said in the dropdown
    ex.move(5)
    assert ex.slider.value == 5
    with pytest.raises(Exception, match="run"):
        GameExplorer(data_dir=tmp_path / "empty")


def test_the_explore_notebook_runs_the_tour_on_the_database(explore_data, tmp_path, monkeypatch):
    from riskcore.experiments.report import run_notebook

    monkeypatch.setenv("RISKCORE_REPORTS", str(tmp_path))
    out = run_notebook("07-explore", {"run": "explore", "game": 1}, explore_data)
    cells = json.loads(out.read_text())["cells"]
    outputs = [o for c in cells if c["cell_type"] == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(images) >= 5  # one plot per question
    widget = [o for o in outputs if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    assert widget, "the explorer widget is displayed"


def test_the_explorer_benchmark_writes_its_redraw_times(explore_data, tmp_path):
    from riskcore.experiments.bench import bench_explore

    df = bench_explore("explore", 1, moves=10, data_dir=explore_data, out_dir=tmp_path)
    row = df.iloc[0]
    assert row.redraws >= 9 and 0 < row.median_redraw_seconds <= row.max_redraw_seconds
    assert "redraw" in (tmp_path / "explore.md").read_text()


def test_the_tours_true_card_probability_keeps_runs_apart(explore_data):
    """Two runs share game ids: each run's mean probability of the true card stays a probability, and the
    uniform prior's is 1/6 (summing the runs' players together once gave values above 1)."""
    from riskcore.explore import true_card_probability

    simulate(RunSpec("explore-twin", 6, GameConfig(), ("mission",), 4), explore_data, workers=1, progress=False)
    for run in ("explore", "explore-twin"):
        ensure_features(run, "cards6", explore_data, workers=1)
        recognize_many([(run, Recogniser.from_spec("uniform"))], "cards6", explore_data, workers=1, progress=False)
    p = true_card_probability(explore_data)
    assert set(p.run) >= {"explore", "explore-twin"} and p.p_true.between(0, 1).all()
    uniform = p[p.setting == "uniform"]
    assert len(uniform.run.unique()) == 2 and abs(uniform.p_true - 1 / 6).max() < 1e-9
