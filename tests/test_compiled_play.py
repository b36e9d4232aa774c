"""Games on the compiled kernel (`agents/compiled.py`) are the Python engine's games: whole games of the heuristic
agents give the same events, snapshots and outcome, and playouts end in the same state with the generator in the
same place, under several rule variants."""

import numpy as np
import pytest

from riskcore.agents.compiled import FIRST_EVENTS, FIRST_SNAPSHOTS, battle_rolls, play_on, play_on_reference
from riskcore.engine.kernel import battle_cumulative, sample_full_battle
from riskcore.engine.battle import _battle_table, sample_battle
from riskcore.engine.chance import RngChance
from riskcore.engine.config import GameConfig
from riskcore.game import play_game
from riskcore.simulate import game_seeds

CONFIGS = [GameConfig(n_players=4, mode="mission"), GameConfig(n_players=3, mode="domination", card_cap=10),
           GameConfig(n_players=5, mode="mission", card_values="fixed", trade_bonus="every_trade",
                      card_recycle="at_once")]


def _states(config: GameConfig, seeds: range, every: int = 20) -> list:
    seen, actions = [], [0]

    def keep(state, action):
        actions[0] += 1
        if state.turn > 0 and actions[0] % every == 0:
            seen.append(state.clone())

    for seed in seeds:
        play_game(config, ["mission"] * config.n_players, seed, observer=keep)
    return seen


def _fields(s) -> tuple:
    return (s.owner.tolist(), s.armies.tolist(), s.hands, s.deck, s.discard, s.phase, s.current, s.turn, s.reserve,
            s.conquered, s.trade_bonus_used, s.trades, s.occupy, s.winner, s.end_reason, s.alive,
            s.eliminated_by.tolist())


@pytest.mark.parametrize("config", CONFIGS, ids=["mission-4", "domination-3-capped", "mission-5-domination-cards"])
def test_compiled_playouts_end_as_the_engine_does(config):
    endings = set()
    states = _states(config, range(2))
    assert len(states) > 20
    for i, state in enumerate(states):
        for rounds in (1, 40):
            python, compiled = state.clone(), state.clone()
            rng_python, rng_compiled = np.random.default_rng(i), np.random.default_rng(i)
            python.chance, compiled.chance = RngChance(rng_python), RngChance(rng_compiled)
            stop = state.turn + rounds * state.n_players
            play_on_reference(python, rng_python, stop)
            play_on(compiled, rng_compiled, stop)
            assert _fields(compiled) == _fields(python), f"state {i}, {rounds} rounds"
            assert rng_compiled.bit_generator.state == rng_python.bit_generator.state
            endings.add(python.end_reason or "unfinished")
            endings.add("elimination" if not all(python.alive) else "all alive")
    # the comparison met finished games and eliminations, not only quiet turns
    assert {"unfinished", "elimination"} <= endings and endings & {"mission", "domination"}


GAMES = [(GameConfig(n_players=4, mode="mission"), ["mission"] * 4),
         (GameConfig(n_players=3, mode="domination", card_cap=10), ["domination"] * 3),
         (GameConfig(n_players=5, mode="mission", card_values="fixed", trade_bonus="every_trade",
                     card_recycle="at_once", setup_batch=3),
          ["mission:focus=1", "domination:mission_weight=0.5", "mission:threshold=0.7", "domination",
           "mission:focus=0.3"]),
         (GameConfig(n_players=2, mode="mission", turn_cap=30), ["mission", "domination"]),
         (GameConfig(n_players=6, mode="mission", setup_start="after_deal"), ["mission:focus=1"] * 6),
         (GameConfig(n_players=3, mode="mission", turn_cap=300), ["mission:threshold=1", "domination:threshold=1",
                                                                  "mission:threshold=0.99"])]


def _snapshots(state) -> list:
    return [(turn, player, owner.tolist(), armies.tolist()) for turn, player, owner, armies in state.snapshots]


@pytest.mark.parametrize("config,agents", GAMES, ids=["mission-4", "domination-3-capped", "mixed-5-variants",
                                                      "turn-cap-2", "constrained-6", "passive-3"])
def test_compiled_games_are_the_engines_games(config, agents):
    reasons = set()
    for seed in game_seeds(1, 6):
        python = play_game(config, agents, seed, compiled=False)
        compiled = play_game(config, agents, seed)
        assert compiled.compiled and not python.compiled
        assert compiled.state.log == python.state.log, f"seed {seed}"
        assert _snapshots(compiled.state) == _snapshots(python.state)
        assert (compiled.actions, compiled.state.turn) == (python.actions, python.state.turn)
        assert _fields(compiled.state) == _fields(python.state)
        reasons.add(python.state.end_reason)
    assert reasons


def test_a_game_longer_than_the_kernels_first_buffers_is_logged_whole():
    config, agents = GAMES[-1]
    record = play_game(config, agents, 0)  # passive seats: this game runs to the turn cap
    assert len(record.state.log) > FIRST_EVENTS and len(record.state.snapshots) > FIRST_SNAPSHOTS
    assert record.state.log == play_game(config, agents, 0, compiled=False).state.log


def test_an_observer_sees_every_action_of_the_same_game():
    config = GameConfig(n_players=3, mode="mission")
    seen = []
    play_game(config, ["mission"] * 3, 4, observer=lambda state, action: seen.append(action))
    assert len(seen) == play_game(config, ["mission"] * 3, 4).actions


@pytest.mark.parametrize("attackers,defenders", [(1, 1), (2, 1), (3, 2), (7, 4), (12, 30), (60, 45)])
def test_the_kernels_battle_table_is_the_engines(attackers, defenders):
    _, _, cum = _battle_table(attackers, defenders, 0)
    compiled = battle_cumulative(attackers, defenders, *battle_rolls())
    widths = np.diff(np.concatenate([[0.0], compiled]))
    assert compiled[widths > 0].tolist() == cum


def test_the_kernels_battles_draw_as_the_engines():
    rng_python, rng_compiled = np.random.default_rng(3), np.random.default_rng(3)
    for attackers, defenders in [(1, 1), (5, 3), (3, 9), (20, 20), (2, 14)] * 40:
        assert sample_full_battle(rng_compiled, attackers, defenders, *battle_rolls()) == \
            sample_battle(rng_python, attackers, defenders, 0)


def test_the_kernel_refuses_a_game_dealt_by_claims():
    from riskcore.engine.board import load_board
    from riskcore.engine import new_game

    state = new_game(load_board("classic"), GameConfig(n_players=3, deal="claim"), RngChance(np.random.default_rng(0)))
    with pytest.raises(ValueError, match="claim"):
        play_on(state, np.random.default_rng(0), 10)


def test_mcs_plays_the_same_game_with_either_playout(monkeypatch):
    config, agents = GameConfig(n_players=3, mode="mission"), ["mcs:playouts=4", "mission", "mcs:playouts=3:horizon=2"]
    compiled = play_game(config, agents, 5).state.log
    monkeypatch.setattr("riskcore.agents.mcs.play_on", play_on_reference)
    assert play_game(config, agents, 5).state.log == compiled


def test_compiled_games_store_the_same_trace_tables():
    from riskcore.trace import records_to_tables

    config, seeds = GameConfig(n_players=4), list(game_seeds(2, 3))
    compiled = records_to_tables("r", [0, 1, 2], [play_game(config, ["mission"] * 4, s) for s in seeds])
    python = records_to_tables("r", [0, 1, 2], [play_game(config, ["mission"] * 4, s, compiled=False) for s in seeds])
    assert all(compiled[name].equals(python[name]) for name in python)


def test_a_seat_without_a_legal_move_is_an_error_on_both_paths():
    from riskcore.engine.actions import IllegalAction

    state = next(s for s in _states(CONFIGS[0], range(1), every=1) if s.phase == "reinforce")
    state.reserve, state.hands[state.current] = 0, []  # nothing to place and nothing to trade
    for play in (play_on, play_on_reference):
        broken = state.clone()
        broken.chance = RngChance(np.random.default_rng(0))
        with pytest.raises(IllegalAction):
            play(broken, np.random.default_rng(0), state.turn + 4)


@pytest.mark.parametrize("config", CONFIGS, ids=["mission-4", "domination-3-capped", "mission-5-domination-cards"])
def test_the_kernels_trace_rows_are_its_log(config):
    # simulate writes traces from the kernel's arrays; they must hold what the engine's tuples hold
    from riskcore.trace import EventRows

    for seed in range(3):
        agents = ["mission", "domination", "mission:focus=1", "domination", "mission"][:config.n_players]
        tuples = play_game(config, agents, seed)
        rows = play_game(config, agents, seed, as_rows=True)
        assert rows.more_events is not None and len(rows.more_snapshots) and not rows.state.snapshots
        whole, head = EventRows.from_log(tuples.state.log), EventRows.from_log(rows.state.log)
        assert whole.to_log() == tuples.state.log  # and back
        assert np.array_equal(whole.rows, np.concatenate([head.rows, rows.more_events.rows]))
        start = len(head.rows)
        assert whole.cards == {**head.cards, **{start + r: t for r, t in rows.more_events.cards.items()}}
        assert any(" " in t for t in whole.cards.values())  # trades and draws were compared
        n = tuples.state.board.n_territories
        assert np.array_equal(np.array([np.concatenate([[t, p], o, a]) for t, p, o, a in tuples.state.snapshots]),
                              rows.more_snapshots) and rows.more_snapshots.shape[1] == 2 + 2 * n


def test_a_negative_event_field_is_refused_not_written_as_none():
    from riskcore.trace import EventRows

    event = (0, 1, 0, "reinforce", "reinforce", None, 5, -2, None, None, None, None, None, None, None, None)
    with pytest.raises(ValueError, match="armies -2"):
        EventRows.from_log([event])


def test_event_names_are_gathered_as_arrow_takes_them_and_an_unknown_code_is_refused():
    import pyarrow as pa

    from riskcore.trace import GATHER_ROWS, _names

    names, codes = ("setup", "reinforce", "", "attack"), np.array([3, 0, 2, 1, 1, 3, 0])
    assert _names(names, codes, "kind").equals(pa.array(names).take(pa.array(codes)))
    many = np.resize(codes, GATHER_ROWS + 1)  # gathered by Arrow: the same column
    assert _names(names, many, "kind").equals(pa.array(names).take(pa.array(many)))
    assert _names(names, many[:-2], "kind").equals(pa.array(names).take(pa.array(many[:-2])))
    assert _names(names, codes[:0], "kind").equals(pa.array([], pa.string()))
    with pytest.raises(ValueError, match="event field kind holds a code outside 0..3"):
        _names(names, np.array([0, 4]), "kind")


def test_an_event_field_beyond_its_column_type_is_refused():
    from riskcore.trace import records_to_tables

    record = play_game(GameConfig(), ["mission"] * 4, 0, as_rows=True)
    record.more_events.rows[5, 2] = 300  # the player column holds int8
    with pytest.raises(ValueError, match="player holds 300"):
        records_to_tables("r", [0], [record])
