import pytest

from riskcore.engine.chance import TraceError
from riskcore.db import DataError, query
from riskcore.publish import seal
from riskcore.replay import RunTraces, load_game, replay, verify_game


def test_every_game_replays_without_rng_to_the_recorded_states(small_run):
    traces = RunTraces("mixed", small_run)
    assert traces.game_ids() == list(range(12))
    for g in traces.game_ids():
        assert verify_game(traces, g) > 0


def test_replay_reaches_the_recorded_winner(small_run):
    events, missions, config, _ = load_game("mixed", 0, small_run)
    state = replay(events, missions, config)
    winner = query("SELECT winner FROM games WHERE run = 'mixed' AND game_id = 0", data_dir=small_run).winner[0]
    assert state.winner == winner


def test_corrupt_dice_outcome_is_caught_naming_the_event(small_run):
    events, missions, config, _ = load_game("mixed", 1, small_run)
    i = events.index[(events.kind == "attack") & (events.defender_losses == 0)][0]
    events.loc[i, "defender_losses"] = 5
    with pytest.raises(TraceError, match=rf"event {events.seq[i]} \(attack\)"):
        replay(events, missions, config, label="game 1")


def test_truncated_trace_is_caught(small_run):
    events, missions, config, _ = load_game("mixed", 2, small_run)
    with pytest.raises(TraceError, match="ends before the game"):
        replay(events.iloc[: len(events) // 2], missions, config)


def test_missing_run_and_game_give_clear_errors(small_run):
    with pytest.raises(DataError, match="no run 'nope'"):
        load_game("nope", 0, small_run)
    with pytest.raises(DataError, match="no events for game 999"):
        load_game("mixed", 999, small_run)


def test_missing_database_gives_clear_error(tmp_path):
    with pytest.raises(DataError, match="no database"):
        load_game("mixed", 0, tmp_path)


def _copy_run(src, dst):
    import shutil

    shutil.copytree(src / "traces" / "run=mixed", dst / "traces" / "run=mixed")


def _rewrite(path, change):
    import pyarrow.parquet as pq

    table = pq.read_table(path).to_pandas()
    change(table)
    pq.write_table(__import__("pyarrow").Table.from_pandas(table, preserve_index=False), path)


@pytest.mark.parametrize("table,change,message", [
    ("games", lambda t: t.__setitem__("winner", t.winner.where(t.game_id != 0, (t.winner + 1) % 4)),
     "games row differs"),
    ("players", lambda t: t.__setitem__("won", t.won.where(t.game_id != 0, ~t.won)), "players row"),
    ("players", lambda t: t.__setitem__("mission_index", t.mission_index.where(t.game_id != 0, 13)), "event|players row"),
])
def test_replay_checks_the_games_and_players_tables_against_the_rebuilt_game(small_run, tmp_path, table, change,
                                                                             message):
    _copy_run(small_run, tmp_path)
    part = sorted((tmp_path / "traces" / "run=mixed" / table).glob("*.parquet"))[0]
    _rewrite(part, change)
    with pytest.raises(TraceError, match=f"{part}: "):  # the file is not the one recorded
        RunTraces("mixed", tmp_path)
    seal(tmp_path / "traces" / "run=mixed", "traces", {"run": "mixed"})  # as if it had been written so
    with pytest.raises(TraceError, match=message):
        verify_game(RunTraces("mixed", tmp_path), 0)


def test_replay_names_a_corrupt_trace_file(small_run, tmp_path):
    _copy_run(small_run, tmp_path)
    part = sorted((tmp_path / "traces" / "run=mixed" / "events").glob("*.parquet"))[1]
    part.write_bytes(part.read_bytes()[:100])
    with pytest.raises(TraceError, match=f"{part}: 100 bytes, its record says"):
        RunTraces("mixed", tmp_path)


def _tamper_snapshot(table, what: str):
    import numpy as np

    first = table.index[table.game_id == 0][3]
    if what == "army":
        armies = np.array(table.at[first, "army_counts"])
        armies[5] += 1
        table.at[first, "army_counts"] = armies
    else:  # a turn recorded twice
        table.loc[len(table)] = table.loc[first]


@pytest.mark.parametrize("what,message", [("army", "snapshot of turn .* differs"), ("twice", "snapshots recorded")])
def test_replay_checks_every_turn_snapshot(small_run, tmp_path, what, message):
    _copy_run(small_run, tmp_path)
    part = sorted((tmp_path / "traces" / "run=mixed" / "snapshots").glob("*.parquet"))[0]
    _rewrite(part, lambda t: _tamper_snapshot(t, what))
    seal(tmp_path / "traces" / "run=mixed", "traces", {"run": "mixed"})
    with pytest.raises(TraceError, match=message):
        verify_game(RunTraces("mixed", tmp_path), 0)


def test_snapshots_a_row_per_territory_as_engines_before_0_4_wrote_them_still_replay(small_run, tmp_path):
    """A row a turn with lists by territory since 0.4.0; the row per territory of an older run reads the same."""
    import duckdb

    _copy_run(small_run, tmp_path)
    for part in sorted((tmp_path / "traces" / "run=mixed" / "snapshots").glob("*.parquet")):
        duckdb.sql(f"""COPY (SELECT run, game_id, turn, player, CAST(t - 1 AS SMALLINT) AS territory,
                               owners[t] AS owner, army_counts[t] AS armies, engine_version
                        FROM read_parquet('{part}'), range(1, len(owners) + 1) AS r(t)
                        ORDER BY game_id, turn, territory) TO '{part}.old' (FORMAT parquet)""")
        part.with_name(part.name + ".old").replace(part)
    seal(tmp_path / "traces" / "run=mixed", "traces", {"run": "mixed"})
    traces = RunTraces("mixed", tmp_path)
    assert "territory" in traces.df("SELECT * FROM snapshots LIMIT 1").columns
    assert all(verify_game(traces, g) > 0 for g in traces.game_ids())
