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
