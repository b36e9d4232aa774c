"""Head-to-head validation of two agents: seat-rotated two-player games, win rate with a Wilson interval."""

from __future__ import annotations

import numpy as np

from riskcore.config import GameConfig
from riskcore.game import play_game
from riskcore.parallel import run_tasks
from riskcore.simulate import game_seeds
from riskcore.stats import wilson_interval


def _chunk(a: str, b: str, config: GameConfig, items: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out = []
    for k, seed in items:
        seats = [a, b] if k % 2 == 0 else [b, a]
        winner = play_game(config, seats, seed).winner
        out.append((k, -1 if winner < 0 else (winner if k % 2 == 0 else 1 - winner)))
    return out


def head_to_head(a: str, b: str, games: int, cfg, seed: int = 0, workers: int | None = None) -> dict:
    """`a` against `b` over `games` games (seats alternate); win rate of `a` among all games, draws counted."""
    config = GameConfig(n_players=2, mode=cfg.mode, turn_cap=cfg.turn_cap)
    seeds = game_seeds(seed, games)
    items = list(enumerate(seeds))
    chunks = [items[i::max(1, min(games, 16))] for i in range(max(1, min(games, 16)))]
    results = [r for _, part in run_tasks(_chunk, [(a, b, config, c) for c in chunks], workers, progress=False)
               for r in part]
    winners = np.array([w for _, w in results])
    wins, draws = int((winners == 0).sum()), int((winners < 0).sum())
    low, high = wilson_interval(wins, games)
    return {"agent": a, "opponent": b, "games": games, "wins": wins, "draws": draws, "win_rate": wins / games,
            "ci_low": float(low), "ci_high": float(high)}
