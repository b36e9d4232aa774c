"""The game explorer and the dataset tour (notebooks/07-explore.py) on a small simulated and an imported run."""

import json

import numpy as np
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


def synthetic_posteriors(run: str, setting: str, data, seed: int = 0, turns: bool = True) -> int:
    """Posteriors of `setting` for every player of `run`, random but valid (each row set sums to one): at the 5%
    grid of the window and, with `turns`, after every turn of the game; stored as a recogniser stores them.
    Returns the rows written. A few million rows take seconds, where a recogniser would take minutes."""
    import pyarrow as pa

    from riskcore import ENGINE_VERSION
    from riskcore.db import query
    from riskcore.recognition.pipeline import store_posteriors

    seats = query("SELECT p.game_id, p.player, g.turns FROM players p JOIN games g USING (run, game_id) "
                  "WHERE run = ? ORDER BY ALL", [run], data)
    rng = np.random.default_rng(seed)
    parts = []
    kinds = [("fraction", np.round(np.arange(21) * 0.05, 2))] + ([("turn", None)] if turns else [])
    for kind, grid in kinds:
        points = [grid if grid is not None else np.arange(1, t + 1) for t in seats.turns]
        n = np.array([len(p) for p in points])
        game, player = np.repeat(seats.game_id.to_numpy(), n), np.repeat(seats.player.to_numpy(), n)
        point = np.concatenate(points)
        probs = rng.dirichlet(np.ones(12), size=len(point))
        rows = len(point) * 12
        parts.append(pa.table({
            "run": pa.array([run] * rows).dictionary_encode(),
            "setting": pa.array([setting] * rows).dictionary_encode(),
            "hypotheses": pa.array(["cards6"] * rows).dictionary_encode(),
            "game_id": pa.array(np.repeat(game, 12), pa.int32()), "player": pa.array(np.repeat(player, 12), pa.int8()),
            "point_kind": pa.array([kind] * rows).dictionary_encode(),
            "point": pa.array(np.repeat(point, 12), pa.float32()), "n_seen": pa.array(np.zeros(rows), pa.int32()),
            "explanation": pa.array(np.tile(np.arange(12), len(point)), pa.int8()),
            "prob": pa.array(probs.ravel(), pa.float64()),
            "engine_version": pa.array([ENGINE_VERSION] * rows).dictionary_encode()}))
    table = pa.concat_tables(parts)
    store_posteriors(run, setting, table, data)
    return table.num_rows


def build_bulk_data(data, games: int = 700):
    """`build_explore_data` and beside it a run of `games` four-player games with millions of posterior rows
    (synthetic, two recognisers, per turn and on the window's grid): large enough that a query loading the
    posteriors whole into pandas takes gigabytes, where the notebooks' aggregates take little."""
    build_explore_data(data)
    simulate(RunSpec("bulk", games, GameConfig(), ("mission",) * 4, 17), data, workers=2, progress=False)
    return data, sum(synthetic_posteriors("bulk", s, data, seed) for seed, s in
                     enumerate(("uniform", "goal:temperature=0.1")))


def shared_bulk_data(tmp_path_factory) -> tuple:
    """`build_bulk_data` once per test session, whichever pytest-xdist worker asks first (the others wait for it):
    (data directory, posterior rows written). Tests only read it."""
    import os
    import time

    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")  # the workers of one run share their base folder's parent
    root = tmp_path_factory.getbasetemp().parent / f"bulk-{run}" if run else tmp_path_factory.getbasetemp() / "bulk"
    data, rows = root / "data", root / "rows"
    try:
        root.mkdir(parents=True)  # the one that creates the folder builds the data
    except FileExistsError:
        deadline = time.monotonic() + 900
        while not rows.exists():
            if (root / "failed").exists() or time.monotonic() > deadline:
                raise RuntimeError(f"another worker did not build {data}")
            time.sleep(1)
        return data, int(rows.read_text())
    data.mkdir()
    try:
        _, n = build_bulk_data(data)
    except BaseException:
        (root / "failed").touch()
        raise
    rows.write_text(str(n))
    return data, n


@pytest.fixture(scope="module")
def explore_data(tmp_path_factory):
    return build_explore_data(tmp_path_factory.mktemp("explore"))


def test_moving_the_slider_redraws_the_board_and_the_posteriors(explore_data):
    from riskcore.explore import GameExplorer

    ex = GameExplorer("explore", 1, data_dir=explore_data)
    assert ex.setting_box.value  # a recogniser's posteriors were found
    board, beliefs = ex.board_image.value, ex.beliefs.value
    ex.move(1)
    assert ex.slider.value == 1 and ex.board_image.value != board
    ex.slider.value = ex.slider.max
    assert ex.beliefs.value != beliefs  # a later turn: other beliefs
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
    assert ex.slider.max > 10
    ex.move(5)
    assert ex.slider.value == 5
    with pytest.raises(Exception, match="run"):
        GameExplorer(data_dir=tmp_path / "empty")


def test_the_explorer_refuses_a_run_the_database_does_not_hold(explore_data):
    from riskcore.explore import GameExplorer

    with pytest.raises(ValueError, match="no run 'rec-test-f9'.*explore"):
        GameExplorer("rec-test-f9", 0, data_dir=explore_data)


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

    df = bench_explore("explore", moves=10, switches=3, data_dir=explore_data, out_dir=tmp_path)
    row = df.iloc[0]
    assert row.redraws >= 9 and 0 < row.median_redraw_seconds <= row.max_redraw_seconds
    assert row.game_switches == 3 and 0 < row.median_switch_seconds <= row.max_switch_seconds
    longest = query_longest(explore_data)
    assert row.game == longest and row.events_in_game == longest_events(explore_data)
    assert "switch" in (tmp_path / "explore.md").read_text()


def query_longest(data) -> int:
    from riskcore.db import query

    return int(query("SELECT game_id FROM games WHERE run = 'explore' ORDER BY turns DESC, game_id LIMIT 1",
                     data_dir=data).game_id[0])


def longest_events(data) -> int:
    from riskcore.db import query

    return int(query("SELECT count(*) AS n FROM events WHERE run = 'explore' AND game_id = ?", [query_longest(data)],
                     data_dir=data).n[0])


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
    assert ex.run_box.value == "explore" and ex.setting_box.value
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


def test_the_event_log_tells_a_whole_battle_from_a_single_roll(explore_data):
    from riskcore.explore import load_frames
    from riskcore.explore.event_log import describe

    battle = load_frames("explore", 0, explore_data)  # riskcore's agents attack in whole battles
    row = battle.events[(battle.events.kind == "attack") & battle.events.stop_at.notna()].iloc[0]
    assert "a whole battle" in describe(battle, row) and "in all" in describe(battle, row)
    assert " v " not in describe(battle, row)  # a battle's dice are only its first roll's
    rolled = load_frames("imported", 0, explore_data)  # Domination's logs record single rolls
    row = rolled.events[(rolled.events.kind == "attack") & rolled.events.stop_at.isna()].iloc[0]
    assert f": one roll, {int(row.attacker_dice)} v {int(row.defender_dice)} dice, loses" in describe(rolled, row)


def test_the_current_event_sits_outside_the_logs_scrolling_boxes(explore_data):
    import re

    from riskcore.explore import load_frames
    from riskcore.explore.event_log import event_log

    f = load_frames("explore", 0, explore_data)
    for k in (0, 40, f.n_events - 1):
        log = event_log(f, k)
        current = re.search(r'<div class="riskcore-log-current">(.*?)</div>', log).group(1)
        assert "#ffe08a" in current and f">{k}</td>" in current
        boxes = re.findall(r'<div class="riskcore-log-(?:before|after)"[^>]*>(.*?)</div>', log)
        assert all("#ffe08a" not in box for box in boxes)
        assert (k > 0) == ('class="riskcore-log-before"' in log)  # the events before it, when there are any
        assert (k < f.n_events - 1) == ('class="riskcore-log-after"' in log)


def test_every_players_true_card_is_boxed_even_outside_the_hypotheses(explore_data):
    import re

    from riskcore.explore import load_frames
    from riskcore.explore.belief_table import BeliefTable

    f = load_frames("explore", 0, explore_data)
    f.players.loc[0, "mission"] = "destroy blue"  # a card the six continent cards do not hold
    table = BeliefTable(f, "goal:temperature=0.1", explore_data)
    own = table.rows.index("destroy blue")
    assert own >= len(table.cards)  # a row below the hypotheses' cards
    page = table.show(f.n_events - 1)
    rows = re.findall(r"<tr>(.*?)</tr>", page)[1:]
    assert len(rows) == len(table.rows) and "destroy blue" in rows[own] and "(not a hypothesis)" in rows[own]
    boxed = [(r, len(re.findall(r"<t[dh]", row[:m.start()])) - 1) for r, row in enumerate(rows)
             for m in re.finditer(r"<td[^>]*outline:2px", row)]
    assert sorted(p for _, p in boxed) == list(range(len(f.players)))  # one box per player
    assert (own, 0) in boxed  # player 0's box on its card's row
    numbers = [float(x) for x in re.findall(r">(\d\.\d\d)<", page)]
    assert numbers and all(0 <= x <= 1 for x in numbers)
    colours = {re.search(r"background:rgba\((\d+,\d+,\d+)", re.findall(r"<td[^>]*>", rows[0])[p]).group(1)
               for p in range(len(f.players))}
    assert len(colours) == len(f.players)  # each player's cells in its own colour


def test_a_destroy_card_of_the_holders_own_colour_says_it_falls_back_to_24_territories(explore_data):
    from riskcore.explore import load_frames
    from riskcore.explore.belief_table import BeliefTable

    f = load_frames("explore", 0, explore_data)
    own = f"destroy {f.board.colours[1]}"
    f.players.loc[1, "mission"] = own
    page = BeliefTable(f, "goal:temperature=0.1", explore_data).show(0)
    assert "→ 24 territories" in page and "is the holder&#x27;s own colour" in page
    f.players.loc[1, "mission"] = f"destroy {f.board.colours[0]}"  # another player's colour, still in play
    assert "→ 24 territories" not in BeliefTable(f, "goal:temperature=0.1", explore_data).show(0)


def test_the_belief_headers_name_each_agent_briefly_with_its_spec_on_hover(explore_data):
    from riskcore.explore import load_frames
    from riskcore.explore.belief_table import BeliefTable, short_agent

    assert short_agent("mission:focus=0.5") == ("mission", "focus 0.5")
    assert short_agent("mixture:beta=5:goals=3:rho=0.05:temper=1")[1].endswith("…")
    f = load_frames("explore", 0, explore_data)
    f.players.loc[0, "agent"] = "mission:focus=0.5"
    header = BeliefTable(f, "goal:temperature=0.1", explore_data).header
    assert 'title="mission:focus=0.5"' in header and "focus 0.5" in header


def test_the_board_is_shown_at_its_pictures_aspect_ratio(explore_data):
    import struct

    from riskcore.explore import GameExplorer

    ex = GameExplorer("explore", 0, data_dir=explore_data)
    width, height = struct.unpack(">II", ex.board_image.value[16:24])  # the PNG's own size (IHDR)
    shown = ex.board_image.layout
    assert (shown.width, shown.height) == (f"{width}px", f"{height}px") and shown.align_self == "flex-start"


def test_a_run_without_posteriors_says_how_to_add_them(explore_data):
    from riskcore.explore import GameExplorer

    ex = GameExplorer("imported", 0, data_dir=explore_data)
    shown = dict((value, text) for text, value in ex.setting_box.options)[ex.setting_box.value]
    assert shown == "no posteriors for this run: riskcore recognize --run imported"
    assert ex.setting_box.index == 0 and ex.setting_box.disabled
    assert "no recogniser's posteriors" in ex.beliefs.value
    ex.run_box.value = "explore"  # and back to a run with them: the box offers its recognisers
    assert ex.setting_box.value and not ex.setting_box.disabled and ex.error.value == ""


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


def test_the_battle_chart_counts_single_rolls_and_matches_their_exact_odds(explore_data):
    """The imported logs record single rolls; riskcore's agents whole battles, whose summed losses once made the
    chart read 2.02 / 2.40 for 3 v 2 against exact odds of 0.92 / 1.08."""
    from riskcore.db import query
    from riskcore.explore.tour import exact_roll_losses, single_roll_losses

    rolls, battles = single_roll_losses(explore_data)
    singles = query("SELECT count(*) AS n FROM events WHERE kind = 'attack' AND stop_at IS NULL "
                    "AND attacker_dice > 0 AND defender_dice > 0", data_dir=explore_data).n[0]
    assert battles > 0 and rolls.rolls.sum() == singles  # the whole battles are left out, every roll kept
    assert exact_roll_losses(3, 2) == pytest.approx((7161 / 7776, 8391 / 7776))  # 2,275 / 2,611 / 2,890 in 7,776
    common = rolls[rolls.rolls >= 200]
    assert len(common) >= 2
    for r in common.itertuples():
        for observed, exact in ((r.attacker_loss, r.exact_attacker_loss), (r.defender_loss, r.exact_defender_loss)):
            # losses per roll are at most two: their standard deviation is at most one
            assert abs(observed - exact) < 4 / r.rolls ** 0.5, (r.a, r.d, observed, exact)


def test_a_cards_summed_probability_is_clipped_at_a_long_games_last_event(explore_data):
    """Rounding left a card's sum at 1.0000000000000024 at the end of a long game, and the belief chart failed
    there: the explorer draws the last event of the run's longest game from posteriors summing so."""
    import pyarrow as pa

    from riskcore.db import query
    from riskcore.explore import GameExplorer
    from riskcore.explore.beliefs import game_beliefs
    from riskcore.recognition.pipeline import store_posteriors

    longest = int(query("SELECT game_id FROM games WHERE run = 'explore' ORDER BY turns DESC LIMIT 1",
                        data_dir=explore_data).game_id[0])
    rows = query("SELECT * FROM posteriors WHERE run = 'explore' AND setting = 'goal:temperature=0.1'",
                 data_dir=explore_data)
    last = (rows.game_id == longest) & (rows.point_kind == "turn") & (rows.point == rows[rows.game_id == longest]
                                                                       .point.max())
    rows.loc[last, "prob"] = 0.0
    rows.loc[last & (rows.explanation == 0), "prob"] = 0.6000000000000012  # card 0: two explanations
    rows.loc[last & (rows.explanation == 1), "prob"] = 0.4000000000000012
    setting = "goal:temperature=0.2"
    store_posteriors("explore", setting, pa.Table.from_pandas(rows.assign(setting=setting), preserve_index=False),
                     explore_data)
    _, table = game_beliefs("explore", setting, longest, explore_data)
    assert table.to_numpy().max() == 1.0 and 0.6000000000000012 + 0.4000000000000012 > 1.0

    ex = GameExplorer("explore", longest, setting, data_dir=explore_data)
    ex.slider.value = ex.slider.max
    assert ex.error.value == "" and ex.setting_box.value == setting
    assert ">1.00<" in ex.beliefs.value and f"event {ex.slider.max} of" in ex.picture.title.get_text()


def test_a_sum_off_by_more_than_rounding_is_an_error_naming_the_run():
    from riskcore.db import DataError
    from riskcore.explore.beliefs import checked_probabilities

    assert list(checked_probabilities([1 + 2e-15, -1e-17, 0.5], "x")) == [1.0, 0.0, 0.5]
    with pytest.raises(DataError, match="run 'r'.*1.5"):
        checked_probabilities([0.2, 1.5], "run 'r'")


def test_the_true_cards_probability_by_game_is_the_evaluations(explore_data):
    """Summed in DuckDB, the card-level top-1 and true card's probability equal `player_metrics`'s, ties split."""
    from riskcore.explore import true_card_by_game
    from riskcore.recognition.pipeline import player_metrics

    settings = sorted(query_settings(explore_data))
    mine = true_card_by_game("explore", settings, data_dir=explore_data)
    per = player_metrics("explore", explore_data, settings=settings)
    theirs = per.assign(p_true=np.exp(-per.log_loss)).groupby(["setting", "point", "game_id"])[["p_true", "top1"]] \
        .mean().reset_index()
    both = mine.merge(theirs, on=["setting", "point", "game_id"], suffixes=("", "_metrics"))
    assert len(both) == len(mine) == len(theirs) and set(both.setting) == set(settings)
    assert np.allclose(both.p_true, both.p_true_metrics, atol=1e-9)
    assert np.allclose(both.top1, both.top1_metrics, atol=1e-12)


def query_settings(data):
    from riskcore.db import query

    return list(query("SELECT DISTINCT setting FROM posteriors WHERE run = 'explore' AND setting IN "
                      "('goal:temperature=0.1', 'uniform') OR setting LIKE 'inverse%'", data_dir=data).setting)


def test_the_game_length_boxes_are_the_games_quantiles(explore_data):
    from riskcore.db import query
    from riskcore.explore.tour import game_length_quantiles, top_runs

    boxes = game_length_quantiles(1, explore_data).set_index("run")
    turns = query("SELECT run, turns FROM games", data_dir=explore_data)
    group = turns.run.map(top_runs(turns.run.value_counts().sort_index(), 1))
    assert list(boxes.index) == [*(set(group) - {"other runs"}), "other runs"]
    for name, t in turns.turns.groupby(group):
        assert boxes.games[name] == len(t)
        assert np.allclose(boxes.loc[name, ["q05", "q25", "q50", "q75", "q95"]].astype(float),
                           np.quantile(t, [0.05, 0.25, 0.5, 0.75, 0.95]))


def test_the_board_drawn_over_its_cached_map_looks_as_the_whole_figure_drawn(explore_data):
    """The borders and names are rendered once; each event's picture lays them with the armies as a whole draw
    of the figure stacks them (names over circles, the arrow over names)."""
    import io

    from PIL import Image

    from riskcore.explore import load_frames
    from riskcore.explore.board_picture import BoardPicture

    f = load_frames("explore", 0, explore_data)
    picture = BoardPicture(f)
    k = int((f.events.kind == "attack").to_numpy().nonzero()[0][-1])  # an arrow too
    fast = np.asarray(Image.open(io.BytesIO(picture.show(k))).convert("RGB"), dtype=float)
    whole = io.BytesIO()
    picture.fig.savefig(whole, format="png")
    whole = np.asarray(Image.open(whole).convert("RGB"), dtype=float)
    assert fast.shape == whole.shape and picture.arrow.get_visible()
    differ = np.abs(fast - whole).max(axis=2)
    assert differ.mean() < 0.5 and (differ > 40).mean() < 0.001, (differ.mean(), (differ > 40).mean())
