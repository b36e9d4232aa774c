"""Rules under fuzzing: random configurations (hypothesis) and seeded batches, every game checked event by event
by a checker that shares nothing with the engine but the board's static facts."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from riskcore.engine.board import load_board
from riskcore.engine.config import GameConfig
from riskcore.experiments.fuzz import F, Violation, check_game, fuzz_game, run_fuzz, same_in_python
from riskcore.game import play_game

configs = st.builds(
    lambda board, players, mode, deal, batch, values, cap, fortify, cap_turns, win_test: GameConfig(
        board=board, n_players=players if board == "classic" else min(players, 3), mode=mode, deal=deal,
        setup_batch=batch, card_values=values, card_cap=cap, fortify=fortify, turn_cap=cap_turns, win_test=win_test),
    st.sampled_from(["classic", "small"]), st.integers(2, 6), st.sampled_from(["mission", "domination"]),
    st.sampled_from(["random", "claim"]), st.integers(1, 6), st.sampled_from(["escalating", "fixed"]),
    st.sampled_from([None, 12, 30]), st.sampled_from(["adjacent", "connected"]), st.integers(20, 150),
    st.sampled_from(["any_seat", "mover"]))
agents = st.lists(st.sampled_from(["random", "random:p_end=0.05", "mission", "mission:focus=1", "domination",
                                   "expert", "bsr"]), min_size=6, max_size=6)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(config=configs, seats=agents, seed=st.integers(0, 2**32))
def test_every_configuration_keeps_the_rules(config, seats, seed):
    rec = play_game(config, seats[:config.n_players], seed)
    check_game(load_board(config.board), config, rec.missions, rec.state.log)
    if rec.compiled:
        same_in_python(config, seats[:config.n_players], seed, rec.state.log)


def _game(**options):
    config = GameConfig(n_players=3, turn_cap=80, **options)
    rec = play_game(config, ["mission", "random", "domination"], 11)
    return config, rec


def _tampered(rows, kind, change):
    """The rows with the first event of `kind` changed by `change(list_of_fields)`."""
    out = list(rows)
    i = next(i for i, r in enumerate(out) if r[F["kind"]] == kind)
    fields = list(out[i])
    change(fields)
    out[i] = tuple(fields)
    return out


@pytest.mark.parametrize("kind,change,message", [
    ("reinforce", lambda r: r.__setitem__(F["armies"], r[F["armies"]] + 5), "reinforcement of"),
    ("attack", lambda r: r.__setitem__(F["defender_losses"], r[F["defender_losses"]] + 1), "losses|conquest flag"),
    ("attack", lambda r: r.__setitem__(F["attacker_dice"], 4), "dice"),
    ("fortify", lambda r: r.__setitem__(F["armies"], 999), "fortifying"),
    ("draw_card", lambda r: r.__setitem__(F["cards"], "999"), "not in the deck"),
    ("win", lambda r: r.__setitem__(F["opponent"], (r[F["opponent"]] + 1) % 3), "without meeting its mission"),
])
def test_the_checker_catches_a_broken_rule(kind, change, message):
    config, rec = _game()
    rows = rec.state.log
    check_game(load_board(config.board), config, rec.missions, rows)  # the real game passes
    with pytest.raises(Violation, match=message):
        check_game(load_board(config.board), config, rec.missions, _tampered(rows, kind, change))


def _renumbered(rows):
    return [r[:F["seq"]] + (k,) + r[F["seq"] + 1:] for k, r in enumerate(rows)]


def test_under_the_mover_win_test_a_game_that_goes_on_after_a_winning_move_is_a_violation():
    config, rec = _game(win_test="mover")
    rows, board = rec.state.log, load_board(config.board)
    assert rows[-1][F["kind"]] == "win"
    check_game(board, config, rec.missions, rows)  # the real game passes
    on = list(rows[:-1]) + [rows[-2]]  # the winning move again instead of the win
    with pytest.raises(Violation, match="won with its last move, but the game goes on"):
        check_game(board, config, rec.missions, _renumbered(on))
    with pytest.raises(Violation, match="ends without its win"):
        check_game(board, config, rec.missions, rows[:-1])


def test_under_the_mover_win_test_a_win_that_no_move_of_the_winner_earned_is_a_violation():
    config, rec = _game(win_test="mover")
    rows, board = rec.state.log, load_board(config.board)
    i = next(i for i, r in enumerate(rows) if r[F["kind"]] == "end_attack")
    win, mover = list(rows[-1]), rows[i][F["player"]]
    win[F["turn"]], win[F["player"]], win[F["opponent"]] = rows[i][F["turn"]], mover, mover
    with pytest.raises(Violation, match="no move of its own just won the game"):  # a win after ending attacks
        check_game(board, config, rec.missions, _renumbered(rows[:i + 1] + [tuple(win)] + rows[i + 1:]))
    with pytest.raises(Violation, match="no move of its own just won the game"):  # another seat's win
        check_game(board, config, rec.missions, _tampered(rows, "win", lambda r: r.__setitem__(
            F["opponent"], (r[F["opponent"]] + 1) % 3)))


def test_a_compiled_game_that_strays_from_the_python_loop_is_a_violation():
    config, agents = GameConfig(n_players=3, board="small"), ["mission", "domination", "mission:focus=1"]
    rows = play_game(config, agents, 8).state.log
    same_in_python(config, agents, 8, rows)  # the real game passes
    with pytest.raises(Violation, match="event 40"):
        same_in_python(config, agents, 8, _tampered_at(rows, 40))
    with pytest.raises(Violation, match="events"):
        same_in_python(config, agents, 8, rows[:-1])


def _tampered_at(rows, i):
    out = list(rows)
    out[i] = out[i][:1] + (out[i][1] + 1,) + out[i][2:]
    return out


@pytest.mark.parametrize("games", [1000, pytest.param(5000, marks=pytest.mark.slow)])  # CI: the thousand
def test_a_seeded_batch_of_games_over_random_configurations_keeps_the_rules(tmp_path, games):
    df = run_fuzz(games, seed=3, workers=2, progress=False, out_dir=tmp_path)
    assert (df.violation == "").all(), df[df.violation != ""].violation.tolist()[:3]
    assert df[["board", "players", "mode", "deal"]].drop_duplicates().shape[0] > 20
    assert df.compiled.sum() > games // 30  # games of the compiled kernel (about 6%), checked against the Python loop
    assert "violations" in (tmp_path / "fuzz.md").read_text()


def test_a_fuzzed_game_is_reproducible_from_its_seed():
    assert fuzz_game(12345) == fuzz_game(12345)
    assert np.unique([fuzz_game(s)["board"] for s in range(20)]).size == 2


def test_the_checker_accepts_the_retreats_of_a_recorded_game_and_refuses_a_stray_one():
    from riskcore.domination import ImportSummary, Replayer, read_lines, split_games
    from riskcore.paths import datasets_dir

    log = datasets_dir() / "domination" / "corpus" / "dom-000-3p.log.gz"
    game = Replayer(log, split_games(read_lines(log))[0], ImportSummary(), None, False,
                    "classic-domination-81").play().record
    config, rows = game.state.config, game.state.log
    assert sum(r[F["kind"]] == "retreat" for r in rows) > 0
    check_game(load_board(config.board), config, game.missions, rows)
    i = next(i for i, r in enumerate(rows) if r[F["kind"]] == "retreat")
    stray = rows[:i + 1] + [rows[i]] + rows[i + 1:]  # a second retreat: no battle is open any more
    stray = [r[:F["seq"]] + (k,) + r[F["seq"] + 1:] for k, r in enumerate(stray)]
    with pytest.raises(Violation, match="no open battle of single rolls precedes"):
        check_game(load_board(config.board), config, game.missions, stray)
