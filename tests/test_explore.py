"""The game explorer and the dataset tour (notebooks/07-explore.py) on a small simulated and an imported run."""

import json

import pytest

from riskcore import paths
from riskcore.engine.config import GameConfig
from riskcore.domination import import_logs
from riskcore.recognition.pipeline import ensure_features, recognize_many
from riskcore.recognition.recognisers import Recogniser
from riskcore.simulate import RunSpec, simulate


def build_explore_data(data):
    """A simulated mission run with posteriors of two recognisers, and the shared Domination logs imported."""
    simulate(RunSpec("explore", 6, GameConfig(), ("mission", "expert", "bsr", "domination"), 3), data, workers=1,
             progress=False)
    # first by name and without posteriors: the explorer must not open on it
    simulate(RunSpec("a-plain", 2, GameConfig(), ("mission",), 5), data, workers=1, progress=False)
    ensure_features("explore", "cards6", data, workers=1)
    recognize_many([("explore", Recogniser.from_spec(s)) for s in ("goal", "inverse")], "cards6", data, workers=1,
                   progress=False, turns=True)
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
        recognize_many([(run, Recogniser.from_spec("uniform"))], "cards6", explore_data, workers=1, progress=False,
                       turns=True)
    p = true_card_probability(explore_data)
    assert set(p.run) >= {"explore", "explore-twin"} and p.p_true.between(0, 1).all()
    uniform = p[p.setting == "uniform"]
    assert len(uniform.run.unique()) == 2 and abs(uniform.p_true - 1 / 6).max() < 1e-9


def test_switching_game_at_the_end_of_a_longer_one_clamps_before_drawing(explore_data):
    from riskcore.db import query
    from riskcore.explore import GameExplorer

    events = query("SELECT game_id, count(*) AS n FROM events WHERE run = 'explore' GROUP BY game_id ORDER BY n",
                   data_dir=explore_data)
    shortest, longest = int(events.game_id.iat[0]), int(events.game_id.iat[-1])
    ex = GameExplorer("explore", longest, data_dir=explore_data)
    ex.slider.value = ex.slider.max
    ex.game_box.value = shortest
    assert ex.error.value == "", ex.error.value
    assert ex.frames.game_id == shortest and ex.slider.max == int(events.n.iat[0]) - 1
    assert ex.slider.value == ex.slider.max
    assert f"game {shortest}:" in ex.picture.title.get_text()


def test_an_error_in_a_callback_is_shown_in_the_widget(explore_data, monkeypatch):
    import riskcore.explore.widget as widget
    from riskcore.explore import GameExplorer

    ex = GameExplorer("explore", 0, data_dir=explore_data)

    def broken(*args, **kwargs):
        raise RuntimeError("the trace of this game is damaged")

    monkeypatch.setattr(widget, "load_frames", broken)
    ex.game_box.value = 1
    assert "the trace of this game is damaged" in ex.error.value
    monkeypatch.undo()
    ex.game_box.value = 2
    assert ex.error.value == "" and ex.frames.game_id == 2


def test_it_opens_on_a_run_with_posteriors_and_says_which_runs_have_them(explore_data):
    from riskcore.explore import GameExplorer, runs_with_posteriors

    # another test may add a twin run with posteriors to the shared folder
    with_posteriors = runs_with_posteriors(explore_data)
    assert "explore" in with_posteriors and "a-plain" not in with_posteriors
    ex = GameExplorer(data_dir=explore_data)  # "a-plain" comes first by name but has none
    assert ex.run_box.value == "explore" and ex.setting_box.value is not None
    runs = len(ex.run_box.options)
    assert f"{len(with_posteriors)} of {runs} runs have posteriors" in ex.note.value
    assert dict(ex.run_box.options)["explore (posteriors)"] == "explore"


def test_the_event_log_speaks_in_names(explore_data):
    from riskcore.explore import load_frames
    from riskcore.explore.event_log import describe, event_log

    f = load_frames("explore", 0, explore_data)
    k = int((f.events.kind == "attack").to_numpy().argmax())
    attack = f.events.iloc[k]
    text = describe(f, attack)
    names = f.board.territories
    assert text.startswith(f"attacks {names[int(attack.dst)]} from {names[int(attack.src)]}")
    trade = f.events[f.events.kind == "draw_card"].iloc[0]
    assert describe(f, trade).startswith("draws ") and "(" in describe(f, trade)
    log = event_log(f, k)
    assert f.player_name(int(attack.player)) in log and "overflow-y:auto" in log and "src" not in log


def test_every_players_true_card_is_boxed_even_outside_the_hypotheses(explore_data):
    from matplotlib.patches import Rectangle

    from riskcore.explore import load_frames
    from riskcore.explore.posterior_picture import PosteriorPicture

    f = load_frames("explore", 0, explore_data)
    f.players.loc[0, "mission"] = "destroy red"  # a card the six continent cards do not hold
    picture = PosteriorPicture(f, "goal:temperature=0.1", explore_data)
    boxes = [p for p in picture.ax.patches if isinstance(p, Rectangle) and not p.get_fill()]
    assert len(boxes) == len(f.players)
    labels = [t.get_text() for t in picture.ax.get_yticklabels()]
    assert labels[-1] == "destroy red (not a hypothesis)"
    assert boxes[0].get_y() == pytest.approx(len(labels) - 1 - 0.46)
    assert picture.show(5.0)[:4] == b"\x89PNG"
    colours = {picture.cells[(p, 0)][0].get_facecolor()[:3] for p in range(len(f.players))}
    assert len(colours) == len(f.players)  # each player's cells in its own colour


def test_top_runs_pools_the_rest():
    import pandas as pd

    from riskcore.explore import top_runs

    names = top_runs(pd.Series({"a": 5, "b": 50, "c": 7, "d": 1}), 2)
    assert names == {"a": "other runs", "b": "b", "c": "c", "d": "other runs"}


def test_a_notebook_run_by_hand_writes_to_the_scratch_folder(monkeypatch, tmp_path):
    import sys
    import types

    monkeypatch.setenv("RISKCORE_ROOT", str(tmp_path))
    monkeypatch.delenv("RISKCORE_REPORTS", raising=False)
    assert paths.notebook_output_dir() == paths.reports_dir()  # a script or the command line: the reports
    fake = types.ModuleType("IPython")  # inside a Jupyter kernel: the running shell has a kernel
    fake.get_ipython = lambda: types.SimpleNamespace(kernel=object())
    monkeypatch.setitem(sys.modules, "IPython", fake)
    assert paths.notebook_output_dir() == tmp_path.resolve() / "scratch" / "reports"
    monkeypatch.setenv("RISKCORE_REPORTS", str(tmp_path / "r"))  # `make report` says where
    assert paths.notebook_output_dir() == (tmp_path / "r").resolve()


def test_an_attack_across_the_maps_edge_points_off_the_edge_not_across_the_map():
    from riskcore.engine.board import load_board
    from riskcore.render import arrow_ends

    board = load_board("classic")
    alaska, kamchatka, alberta = (board.index(t) for t in ("Alaska", "Kamchatka", "Alberta"))
    (x1, _), (x2, _) = arrow_ends(board.positions, alaska, kamchatka)
    assert x2 < x1 and x1 - x2 < 10  # from Alaska leftwards, off the map's west edge
    (x1, _), (x2, _) = arrow_ends(board.positions, kamchatka, alaska)
    assert x2 > x1 and x2 - x1 < 10
    assert arrow_ends(board.positions, alaska, alberta)[1] == tuple(board.positions[alberta])


def test_a_notebook_run_by_hand_reads_what_another_wrote_by_hand_before_the_reports(monkeypatch, tmp_path):
    import sys
    import types

    import pandas as pd

    from riskcore.notebook import load_table, save_table

    monkeypatch.setenv("RISKCORE_ROOT", str(tmp_path))
    monkeypatch.delenv("RISKCORE_REPORTS", raising=False)
    (tmp_path / "reports" / "tables").mkdir(parents=True)
    (tmp_path / "reports" / "tables" / "t.md").write_text("| x |\n|---|\n| 1 |\n")
    (tmp_path / "reports" / "tables" / "u.md").write_text("| y |\n|---|\n| 2 |\n")
    fake = types.ModuleType("IPython")
    fake.get_ipython = lambda: types.SimpleNamespace(kernel=object())
    monkeypatch.setitem(sys.modules, "IPython", fake)
    save_table(pd.DataFrame({"x": [7]}), "t")  # by hand: to scratch
    assert load_table("t").x[0] == 7 and load_table("u").y[0] == 2  # its own first, else the report's
    assert (tmp_path / "reports" / "tables" / "t.md").read_text().endswith("| 1 |\n")  # the report's untouched
