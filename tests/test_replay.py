import pytest

from riskcore.chance import TraceError
from riskcore.db import DataError, query
from riskcore.replay import load_game, replay, verify_game


def test_every_game_replays_without_rng_to_the_recorded_states(small_run):
    games = query("SELECT game_id FROM games WHERE run = 'mixed'", data_dir=small_run).game_id
    assert len(games) == 12
    for g in games:
        assert verify_game("mixed", int(g), small_run) > 0


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
