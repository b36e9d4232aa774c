"""Play one seeded game and return its record.

Seeds: a game's integer seed feeds `SeedSequence(seed).spawn(1 + n_players)`: stream 0 is chance (deal, missions,
dice, cards) and stream 1 + p belongs to the agent in seat p, so changing an agent never changes the dice.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from riskcore.engine.actions import Action, Attack, IllegalAction
from riskcore.agents import PlayerView, make_agent
from riskcore.agents.heuristic import KERNEL_AGENTS
from riskcore.engine.board import Board, load_board
from riskcore.engine.chance import RngChance
from riskcore.engine.config import GameConfig
from riskcore.engine import GameState, new_game, step
from riskcore.trace import GameRecord


def game_streams(seed: int, n_players: int) -> list[np.random.Generator]:
    """[chance, agent 0, agent 1, ...] generators from one recorded seed."""
    return [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(1 + n_players)]


def play_game(config: GameConfig, agent_specs: list[str], seed: int, board: Board | None = None,
              max_actions: int = 1_000_000,
              observer: Callable[[GameState, Action], None] | None = None, compiled: bool = True,
              as_rows: bool = False) -> GameRecord:
    """Play a full game with the given agent spec per seat; illegal agent actions raise `IllegalAction`.

    `observer(state, action)` is called before each action is applied (tests use it to check invariants). A game
    whose seats are all plain `mission` or `domination` agents runs on the compiled kernel (`agents/compiled.py`:
    the same events, snapshots and outcome) unless there is an observer or `compiled` is False. With `as_rows` the
    kernel's events and snapshots stay arrays (`GameRecord.more_events`, `more_snapshots`: what a trace is written
    from) instead of joining the state's log.
    """
    board = board or load_board(config.board)
    if len(agent_specs) != config.n_players:
        raise ValueError(f"{len(agent_specs)} agent specs for {config.n_players} players")
    chance_rng, *agent_rngs = game_streams(seed, config.n_players)
    state = new_game(board, config, RngChance(chance_rng))
    agents = [make_agent(spec, p, agent_rngs[p]) for p, spec in enumerate(agent_specs)]
    views = [PlayerView(state, p) for p in range(config.n_players)]
    n_actions, rows = 0, None
    on_kernel = compiled and observer is None and config.deal == "random" and all(type(a) in KERNEL_AGENTS
                                                                                     for a in agents)
    if on_kernel:
        from riskcore.agents.compiled import play_out  # numba: loaded by the games that use it

        n_actions, rows = play_out(state, agents, agent_rngs, chance_rng, as_rows)
    while not state.is_terminal:
        me = state.current
        action = agents[me].act(views[me])
        defender_dice = None
        if isinstance(action, Attack) and action.stop_at is None and 0 <= action.dst < board.n_territories:
            victim = int(state.owner[action.dst])
            if victim >= 0 and victim != me:
                dice = action.dice or min(3, int(state.armies[action.src]) - 1)
                defender_dice = agents[victim].defend_dice(views[victim], action.src, action.dst, dice)
        if observer is not None:
            observer(state, action)
        try:
            step(state, action, defender_dice)
        except IllegalAction as exc:
            raise IllegalAction(f"agent {agent_specs[me]!r} (seat {me}, game seed {seed}): {exc}") from None
        n_actions += 1
        if n_actions > max_actions:
            raise RuntimeError(f"game seed {seed} exceeded {max_actions} actions")
    missions = [m.index for m in state.missions] if config.mode == "mission" else []
    record = GameRecord(seed=seed, agents=list(agent_specs), state=state, actions=n_actions, missions=missions,
                        compiled=on_kernel)
    if rows is not None:
        record.more_events, record.more_snapshots = rows
    return record
