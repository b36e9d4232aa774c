"""One game replayed into arrays (owners and armies after every event), and the names its pictures use."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from riskcore.engine.board import CARD_SYMBOLS, Board, load_board
from riskcore.db import query, reading
from riskcore.render import player_colour
from riskcore.replay import iter_replay, load_game


@dataclass
class GameFrames:
    """One game replayed: the event rows and the owners and armies after every event."""

    run: str
    game_id: int
    board: Board
    events: pd.DataFrame
    owners: np.ndarray  # (events, territories)
    armies: np.ndarray
    players: pd.DataFrame  # player, agent, mission

    @property
    def n_events(self) -> int:
        return len(self.events)

    def player_name(self, player: int) -> str:
        """`red (mission)`: the seat's colour and agent, as the legend names it."""
        if not 0 <= player < len(self.players):
            return f"player {player}"
        return f"{self.board.colours[player]} ({self.players.agent.iat[player]})"

    def colour(self, player: int) -> str:
        return player_colour(self.board, player)

    def card_name(self, card: int) -> str:
        """A territory card by its territory and symbol, or a wild card."""
        if 0 <= card < self.board.n_territories:
            return f"{self.board.territories[card]} ({CARD_SYMBOLS[int(self.board.card_symbol[card])]})"
        return "wild"


def load_frames(run: str, game_id: int, data_dir=None) -> GameFrames:
    """Replay a recorded game once and keep every state (the explorer then only indexes). Its reads share one
    connection (an open costs tens of milliseconds, a game switch a few of them)."""
    with reading(data_dir):
        events, missions, config, _ = load_game(run, game_id, data_dir)
        players = query("SELECT player, agent, mission FROM players WHERE run = ? AND game_id = ? ORDER BY player",
                        [run, game_id], data_dir)
    board = load_board(config.board)
    owners = np.zeros((len(events), board.n_territories), dtype=np.int64)
    armies = np.zeros_like(owners)
    last = -1
    for seq, state in iter_replay(events, missions, config, label=f"run {run!r} game {game_id}"):
        owners[last + 1:seq + 1], armies[last + 1:seq + 1] = state.owner, state.armies
        last = seq
    return GameFrames(run, game_id, board, events, owners, armies, players)
