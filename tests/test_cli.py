import os
from pathlib import Path

import pytest

from riskcore.cli import main
from riskcore.db import query

SIM = ["simulate", "--run", "c", "--games", "6", "--chunk", "3", "--workers", "1", "--quiet"]


def test_unknown_option_is_rejected_by_name(capsys):
    with pytest.raises(SystemExit) as exc:
        main(SIM + ["--bogus", "1"])
    assert exc.value.code == 2
    assert "unrecognized arguments: --bogus" in capsys.readouterr().err


@pytest.mark.parametrize("args,needle", [
    (["--agents", "wizard"], "unknown agent 'wizard'"),
    (["--agents", "mission:focus=3"], "focus must be in [0, 1]"),
    (["--agents", "mission:speed=3"], "speed"),
    (["--run", "bad/name"], "bad run name 'bad/name'"),
    (["--players", "7"], "n_players=7"),
    (["--board", "nowhere.json"], "board 'nowhere.json' not found"),
])
def test_bad_arguments_get_clear_errors(tmp_path, capsys, args, needle):
    assert main(SIM + ["--data-dir", str(tmp_path)] + args) == 2
    assert needle in capsys.readouterr().err


def test_bad_board_file_is_named(tmp_path, capsys):
    board = tmp_path / "b.json"
    board.write_text('{"continents": [], "borders": [], "cards": {}}')
    assert main(SIM + ["--data-dir", str(tmp_path), "--board", str(board)]) == 2
    assert "needs at least two territories" in capsys.readouterr().err


def test_simulate_db_replay_show_round_trip(tmp_path, capsys):
    data = ["--data-dir", str(tmp_path)]
    assert main(SIM + data + ["--agents", "mission,random"]) == 0
    assert main(["db"] + data) == 0
    out = capsys.readouterr().out
    assert "events" in out and "snapshots" in out
    assert main(["replay", "--run", "c"] + data) == 0
    assert "replayed 6 game(s)" in capsys.readouterr().out
    png = tmp_path / "board.png"
    assert main(["show", "--run", "c", "--game", "2", "--seq", "100", "--out", str(png)] + data) == 0
    assert png.read_bytes()[:4] == b"\x89PNG"
    assert main(["show", "--run", "c", "--seq", "999999"] + data) == 2


def test_rerun_replaces_the_run_instead_of_appending(tmp_path):
    data = ["--data-dir", str(tmp_path)]
    main(SIM + data)
    main(SIM + data + ["--games", "4"])
    games = query("SELECT count(*) AS n FROM games WHERE run = 'c'", data_dir=tmp_path).n[0]
    assert games == 4
    assert len(list((tmp_path / "traces" / "run=c" / "games").glob("*.parquet"))) == 2


def test_interrupted_run_leaves_previous_data_intact(tmp_path, monkeypatch):
    data = ["--data-dir", str(tmp_path)]
    main(SIM + data)
    before = sorted(p.name for p in (tmp_path / "traces" / "run=c" / "events").iterdir())

    monkeypatch.setenv("RISKCORE_FAULT_AT", "new-placed:TERM")  # stopped with the new files in place, uncommitted
    assert main(SIM + data + ["--games", "9", "--seed", "4"]) == 130
    assert query("SELECT count(*) AS n FROM games WHERE run = 'c'", data_dir=tmp_path).n[0] == 6
    assert sorted(p.name for p in (tmp_path / "traces" / "run=c" / "events").iterdir()) == before
    assert [p.name for p in (tmp_path / "traces").iterdir()] == ["run=c"]  # no staging left behind


def test_rebuild_rederives_the_database_from_parquet(tmp_path, capsys):
    data = ["--data-dir", str(tmp_path)]
    main(SIM + data)
    (tmp_path / "riskcore.duckdb").unlink()
    assert main(["db", "--rebuild"] + data) == 0
    assert query("SELECT count(*) AS n FROM events WHERE run = 'c'", data_dir=tmp_path).n[0] > 0


def test_new_columns_are_added_to_an_existing_table(tmp_path):
    import pyarrow as pa

    from riskcore.db import register_tables, transaction
    from riskcore.storage import write_parquet

    old = tmp_path / "old"
    write_parquet(pa.table({"run": ["r1"], "diff": [1.0]}), old / "t" / "part.parquet")
    with transaction(tmp_path) as con:
        register_tables(con, "run", "r1", old)
    new = tmp_path / "new"
    write_parquet(pa.table({"run": ["r2"], "difference": [2.0]}), new / "t" / "part.parquet")
    with transaction(tmp_path) as con:
        register_tables(con, "run", "r2", new)
    rows = query("SELECT run, difference FROM t ORDER BY run", data_dir=tmp_path)
    assert rows.difference.isna().tolist() == [True, False]


def test_search_experiment_rejects_negative_deep_positions(tmp_path, capsys):
    args = ["experiment", "search", "--deep-positions", "-1", "--data-dir", str(tmp_path), "--quiet"]
    assert main(args) == 2
    assert "--deep-positions must be 0 or more, got -1" in capsys.readouterr().err


@pytest.mark.parametrize("args,needle", [
    (["--seeds", "91,93"], "validation seed 93 is also a training seed"),
    (["--seeds", "91,x"], "expected comma-separated integer seeds, got '91,x'"),
    (["--players", "4"], "invalid choice: 4"),
])
def test_train_scorer_rejects_bad_seeds_and_players_by_name(tmp_path, capsys, args, needle):
    argv = ["train-scorer", "--players", "2", "--positions", "1", "--out", str(tmp_path / "s.json"), "--quiet"]
    try:
        code = main(argv + args)
    except SystemExit as exc:  # argparse rejects bad values itself
        code = exc.code
    assert code == 2 and needle in capsys.readouterr().err
    assert not (tmp_path / "s.json").exists()


def test_train_scorer_writes_the_file_it_is_given(tmp_path, capsys):
    out = tmp_path / "s.json"
    argv = ["train-scorer", "--players", "2", "--seeds", "91", "--positions", "1", "--out", str(out), "--workers",
            "1", "--quiet"]
    assert main(argv) == 0
    assert str(out) in capsys.readouterr().out
    from riskcore.search.endscore import load_scorer
    assert set(load_scorer(2, out).models) == {1, 2}


@pytest.mark.parametrize("sql,needle", [("SELEC 1", "syntax error"), ("SELECT nope FROM games", "nope"),
                                        ("DROP TABLE games", "DROP statements are refused"),
                                        ("SELECT 1; SELECT 2", "one SQL statement")])
def test_db_sql_errors_are_one_line_without_a_traceback(tmp_path, capsys, sql, needle):
    data = ["--data-dir", str(tmp_path)]
    assert main(SIM + data) == 0
    capsys.readouterr()
    assert main(["db", "--sql", sql] + data) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1 and "Traceback" not in err
    assert query("SELECT count(*) AS n FROM games", data_dir=tmp_path).n[0] == 6  # nothing was dropped


def test_db_prints_each_table_with_its_rows_and_columns(tmp_path, capsys):
    data = ["--data-dir", str(tmp_path)]
    main(SIM + data)
    capsys.readouterr()
    assert main(["db"] + data) == 0
    out = capsys.readouterr().out
    assert "games (6 rows)" in out and "    run VARCHAR, game_id INTEGER" in out


def test_every_simulate_option_has_help_and_shows_its_default(capsys):
    with pytest.raises(SystemExit):
        main(["simulate", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for option, default in (("--players", "4"), ("--agents", "mission"), ("--seed", "0"), ("--board", "classic"),
                            ("--turn-cap", "400"), ("--chunk", "auto"), ("--fortify", "adjacent")):
        assert option in text and f"(default: {default})" in text, option


def test_a_data_dir_that_is_a_file_or_read_only_is_one_clear_line(tmp_path, capsys):
    afile = tmp_path / "file"
    afile.write_text("x")
    assert main(SIM + ["--data-dir", str(afile)]) == 2
    err = capsys.readouterr().err
    assert "is a file, not a directory" in err and err.count("\n") == 1
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o555)
    if os.access(locked, os.W_OK):  # root may write into it: take a place no one may write into
        locked = Path("/proc/self")
    assert main(SIM + ["--data-dir", str(locked / "data")]) == 2
    err = capsys.readouterr().err
    assert "is not writable" in err and err.count("\n") == 1


@pytest.mark.parametrize("change,needle", [
    (lambda b: b["continents"][0].__setitem__("bonus", True), "positive whole-number bonus, not True"),
    (lambda b: b.__setitem__("wild_cards", True), "wild_cards must be a non-negative whole number, not True"),
    (lambda b: b["continents"][0].__setitem__("territories", "N1"), "territories must be a list of names"),
    (lambda b: b["missions"][0].__setitem__("continents", "North"), "continents must be a non-empty list"),
    (lambda b: b["missions"].append({"name": "hold", "kind": "territories", "territories": "6"}),
     "mission #"),
])
def test_a_bad_board_field_names_the_board_and_the_field(tmp_path, capsys, change, needle):
    import json

    from riskcore.paths import BOARDS_DIR

    spec = json.loads((BOARDS_DIR / "small.json").read_text())
    change(spec)
    path = tmp_path / "odd.json"
    path.write_text(json.dumps(spec))
    assert main(SIM + ["--data-dir", str(tmp_path), "--board", str(path), "--players", "2"]) == 2
    err = capsys.readouterr().err
    assert needle in err and "odd.json" in err and err.count("\n") == 1


def test_more_players_than_territories_blames_the_board_not_an_agent(tmp_path, capsys):
    import json

    spec = {"continents": [{"name": "A", "bonus": 1, "territories": ["a", "b", "c"]}],
            "borders": [["a", "b"], ["b", "c"]], "cards": {"a": "infantry", "b": "cavalry", "c": "artillery"}}
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(spec))
    assert main(SIM + ["--data-dir", str(tmp_path), "--board", str(path), "--players", "4", "--mode",
                       "domination", "--agents", "random"]) == 2
    err = capsys.readouterr().err
    assert "has 3 territories for 4 players" in err and "agent" not in err
