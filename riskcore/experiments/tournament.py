"""`riskcore tournament`: seat-rotated matches of any agent mix, win rates with Wilson 95% intervals and a
Bradley-Terry rating.

With as many agents as seats, one run plays them all, seats rotated across games. With more agents than seats,
every combination of `players` agents plays `games` games (a round robin), each as its own run `NAME--kNN`.
Ratings: each game counts as its winner beating each other player; Bradley-Terry strengths are fitted by the MM
algorithm (Hunter 2004) and shown on the Elo scale (400 log10 strength, mean 0). Results go to the
`tournament_results` table (notebook 05 draws the round robin).
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd

from riskcore.engine.config import GameConfig
from riskcore.db import query, store_frames
from riskcore.simulate import RunSpec, simulate_many
from riskcore.stats import wilson_interval
from riskcore.storage import check_name


def bradley_terry(winners: list[str], players: list[list[str]], iters: int = 500, tol: float = 1e-10
                  ) -> pd.Series:
    """Strengths from multiplayer results (winner beats each other seat); MM updates, normalised to mean 1."""
    names = sorted({a for game in players for a in game})
    idx = {a: i for i, a in enumerate(names)}
    k = len(names)
    wins = np.zeros(k)
    pairs = np.zeros((k, k))
    for w, game in zip(winners, players):
        for other in game:
            if other != w:
                wins[idx[w]] += 1
                pairs[idx[w], idx[other]] += 1
                pairs[idx[other], idx[w]] += 1
    p = np.ones(k)
    wins_adj = wins + 0.5  # a half win each keeps winless agents finite
    for _ in range(iters):
        denom = (pairs / (p[:, None] + p[None, :])).sum(axis=1) + 1.0 / (p + 1.0)
        new = wins_adj / denom
        new /= np.exp(np.log(new).mean())
        if np.abs(new - p).max() < tol:
            p = new
            break
        p = new
    return pd.Series(p, index=names, name="bt_strength")


def lineups(agents: list[str], players: int) -> list[tuple[str, ...]]:
    if len(agents) < 2:
        raise ValueError("a tournament needs at least two agents")
    if len(agents) <= players:
        return [tuple(agents)]
    return list(itertools.combinations(agents, players))


def run_tournament(name: str, agents: list[str], players: int, games: int, seed: int = 0, mode: str = "mission",
                   turn_cap: int = 300, data_dir: Path | None = None, workers: int | None = None,
                   dask: str | None = None, progress: bool = True) -> pd.DataFrame:
    check_name("tournament", name)
    config = GameConfig(n_players=players, mode=mode, turn_cap=turn_cap)
    groups = lineups(agents, players)
    specs = [RunSpec(name if len(groups) == 1 else f"{name}--k{k:02d}", games, config, lineup, seed + k)
             for k, lineup in enumerate(groups)]
    simulate_many(specs, data_dir, workers, dask, progress, desc=f"tournament {name}")
    runs = [s.run for s in specs]
    return summarise(name, runs, data_dir)


def summarise(name: str, runs: list[str], data_dir: Path | None = None) -> pd.DataFrame:
    marks = ", ".join("?" for _ in runs)
    pl = query(f"SELECT run, game_id, agent, won FROM players WHERE run IN ({marks})", runs, data_dir)
    games = query(f"SELECT run, game_id, winner FROM games WHERE run IN ({marks})", runs, data_dir)
    table = pl.groupby("agent").agg(games=("won", "size"), wins=("won", "sum")).reset_index()
    table["win_rate"] = table.wins / table.games
    table["ci_low"], table["ci_high"] = wilson_interval(table.wins, table.games)
    decided = games[games.winner >= 0].merge(pl, on=["run", "game_id"])
    grouped = decided.groupby(["run", "game_id"])
    winners = [g[g.won].agent.iloc[0] for _, g in grouped]
    seats = [list(g.agent) for _, g in grouped]
    bt = bradley_terry(winners, seats) if winners else pd.Series(dtype=float, name="bt_strength")
    table = table.join(bt, on="agent")
    table["bt_elo"] = 400 * np.log10(table.bt_strength)
    table["draws"] = table.agent.map(
        games[games.winner < 0].merge(pl, on=["run", "game_id"]).groupby("agent").size()).fillna(0).astype(int)
    table.insert(0, "tournament", name)
    table = table.sort_values("bt_elo", ascending=False).reset_index(drop=True)
    store_frames({"tournament_results": table}, "tournaments", {"tournament": name}, data_dir)
    return table


def belief_sweep(name: str, weights: list[float], games: int, opponents: str = "mission", seed: int = 0,
                 data_dir: Path | None = None, workers: int | None = None, dask: str | None = None,
                 progress: bool = True) -> pd.DataFrame:
    """Win rate of one `aware` agent against three `opponents` as a function of `belief_weight`."""
    config = GameConfig(n_players=4, mode="mission")
    specs = [RunSpec(f"{name}--bw{k:02d}", games, config, (f"aware:belief_weight={w:g}", opponents, opponents,
                                                           opponents), seed) for k, w in enumerate(weights)]
    simulate_many(specs, data_dir, workers, dask, progress, desc=f"belief sweep {name}")
    rows = []
    for w, spec in zip(weights, specs):
        pl = query("SELECT won FROM players WHERE run = ? AND agent LIKE 'aware%'", [spec.run], data_dir)
        rows.append({"tournament": name, "belief_weight": w, "games": len(pl), "wins": int(pl.won.sum())})
    df = pd.DataFrame(rows)
    df["win_rate"] = df.wins / df.games
    df["ci_low"], df["ci_high"] = wilson_interval(df.wins, df.games)
    store_frames({"aware_sweep": df}, "tournaments", {"tournament": name}, data_dir)
    return df
