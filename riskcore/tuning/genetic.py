"""Genetic tuning of the minimax agent's 4 leaf weights (the reference procedure; every size is a parameter).

Population of `population` genes, each 4 weights drawn uniformly from [0, `high`]. Each generation the population
is shuffled into `tournaments` groups of `tournament_size` genes; in each group every pair plays
`games_per_pair` games with seats rotated, and fitness = wins / games. The top `top_k` of each group are the
parents; `children` children average the weights of random parent pairs (crossover) and `mutants` copies of
random parents get one weight redrawn (mutation); these new genes replace the weakest genes, so the population
size is kept. Seeded (every draw from one SeedSequence), resumable (each finished generation is checkpointed as
Parquet and a rerun continues from the last one), parallel across games (local processes or Dask).
"""

from __future__ import annotations

import itertools
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from riskcore.engine.config import GameConfig
from riskcore.game import play_game
from riskcore.parallel import run_tasks
from riskcore.storage import write_parquet

N_WEIGHTS = 4


@dataclass(frozen=True)
class GAConfig:
    population: int = 100
    generations: int = 4
    tournaments: int = 10
    tournament_size: int = 10
    games_per_pair: int = 2
    top_k: int = 3
    children: int = 12
    mutants: int = 3
    high: float = 10.0
    players: int = 2
    mode: str = "domination"  # two-player mission games often end at once (24-territory fallback), so no signal
    turn_cap: int = 200
    depth: int = 2
    width: int = 4
    seed: int = 0

    def __post_init__(self) -> None:
        if self.tournaments * self.tournament_size > self.population:
            raise ValueError(f"{self.tournaments} tournaments of {self.tournament_size} exceed the population "
                             f"of {self.population}")
        if self.children + self.mutants > self.population - self.tournaments * self.top_k:
            raise ValueError("more new genes per generation than genes that may be replaced")
        if self.top_k < 2 or self.top_k > self.tournament_size:
            raise ValueError(f"top_k must be in 2..tournament_size, got {self.top_k}")
        if self.games_per_pair < 1 or self.generations < 1:
            raise ValueError("games_per_pair and generations must be at least 1")


def agent_spec(weights: np.ndarray, cfg: GAConfig) -> str:
    w = ":".join(f"w{i + 1}={x:.6f}" for i, x in enumerate(weights))
    return f"minimax:{w}:depth={cfg.depth}:width={cfg.width}"


# ---- operators ------------------------------------------------------------------------------------------------
def initial_population(cfg: GAConfig, rng: np.random.Generator) -> np.ndarray:
    return rng.uniform(0, cfg.high, size=(cfg.population, N_WEIGHTS))


def crossover(parents: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """`n` children, each the average of two distinct random parents."""
    pairs = np.array([rng.choice(len(parents), size=2, replace=False) for _ in range(n)])
    return (parents[pairs[:, 0]] + parents[pairs[:, 1]]) / 2


def mutate(parents: np.ndarray, n: int, rng: np.random.Generator, high: float) -> np.ndarray:
    """`n` copies of random parents with one random weight redrawn from [0, high]."""
    out = parents[rng.integers(len(parents), size=n)].copy()
    which = rng.integers(N_WEIGHTS, size=n)
    out[np.arange(n), which] = rng.uniform(0, high, size=n)
    return out


def replace_weakest(population: np.ndarray, fitness: np.ndarray, newcomers: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Put `newcomers` in place of the weakest genes; returns the new population and which rows are new."""
    weakest = np.argsort(fitness, kind="stable")[: len(newcomers)]
    pop = population.copy()
    pop[weakest] = newcomers
    fresh = np.zeros(len(pop), dtype=bool)
    fresh[weakest] = True
    return pop, fresh


# ---- one generation ----------------------------------------------------------------------------------------------
def _play(cfg: GAConfig, specs: list[str], seed: int) -> int:
    config = GameConfig(n_players=cfg.players, mode=cfg.mode, turn_cap=cfg.turn_cap)
    return play_game(config, specs, seed).winner


def _play_chunk(cfg: GAConfig, games: list[tuple[list[str], int]]) -> list[int]:
    return [_play(cfg, specs, seed) for specs, seed in games]


def evaluate_generation(population: np.ndarray, cfg: GAConfig, rng: np.random.Generator, generation: int,
                        workers: int | None = None, dask: str | None = None, progress: bool = False
                        ) -> tuple[np.ndarray, np.ndarray]:
    """(fitness per gene, tournament of each gene) after every group's round robin."""
    order = rng.permutation(len(population))
    groups = [order[i * cfg.tournament_size:(i + 1) * cfg.tournament_size] for i in range(cfg.tournaments)]
    group_of = np.full(len(population), -1)
    games, meta = [], []
    game_seeds = np.random.SeedSequence([cfg.seed, generation]).generate_state(100_000, np.uint32)
    k = 0
    for g, members in enumerate(groups):
        group_of[members] = g
        for a, b in itertools.combinations(members, 2):
            for r in range(cfg.games_per_pair):
                seats = [a, b] if r % 2 == 0 else [b, a]  # seats rotated
                specs = [agent_spec(population[i], cfg) for i in seats]
                specs += [specs[-1]] * (cfg.players - 2)  # extra seats (players > 2) repeat the second gene
                games.append((specs, int(game_seeds[k % len(game_seeds)]) + k))
                meta.append(seats + [seats[-1]] * (cfg.players - 2))
                k += 1
    wins = np.zeros(len(population))
    played = np.zeros(len(population))
    chunk = max(1, len(games) // 32)
    tasks = [(cfg, games[i:i + chunk]) for i in range(0, len(games), chunk)]
    for t, winners in run_tasks(_play_chunk, tasks, workers, dask, desc=f"generation {generation}",
                                progress=progress):
        for j, winner in enumerate(winners):
            seats = meta[t * chunk + j]
            for s in set(seats):
                played[s] += 1
            if winner >= 0:
                wins[seats[winner]] += 1
    fitness = np.divide(wins, played, out=np.zeros_like(wins), where=played > 0)
    fitness[group_of < 0] = -1.0  # genes outside every tournament this generation rank last
    return fitness, group_of


def next_generation(population: np.ndarray, fitness: np.ndarray, group_of: np.ndarray, cfg: GAConfig,
                    rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    parents = []
    for g in range(cfg.tournaments):
        members = np.flatnonzero(group_of == g)
        best = members[np.argsort(-fitness[members], kind="stable")[: cfg.top_k]]
        parents.append(population[best])
    parents = np.vstack(parents)
    newcomers = np.vstack([crossover(parents, cfg.children, rng), mutate(parents, cfg.mutants, rng, cfg.high)])
    return replace_weakest(population, fitness, newcomers)


# ---- the run, with checkpoints -------------------------------------------------------------------------------------
def _table(population, fitness, generation, fresh) -> pa.Table:
    return pa.table({"generation": pa.array([generation] * len(population), pa.int32()),
                     "gene": pa.array(np.arange(len(population)), pa.int32()),
                     **{f"w{i + 1}": population[:, i] for i in range(N_WEIGHTS)},
                     "fitness": fitness, "new": fresh})


def run_ga(cfg: GAConfig, checkpoint_dir: Path, workers: int | None = None, dask: str | None = None,
           progress: bool = True) -> pd.DataFrame:
    """Run (or resume) the GA; returns every generation's population with its fitness.

    Generation g's file holds the population that played in generation g and its fitness; the population after
    the last generation is stored with generation = `generations` and no fitness.
    """
    checkpoint_dir = Path(checkpoint_dir)
    meta = checkpoint_dir / "config.json"
    import json

    if meta.exists() and json.loads(meta.read_text()) != asdict(cfg):
        raise ValueError(f"checkpoint {checkpoint_dir} belongs to another GA configuration; use another directory")
    checkpoint_dir.mkdir(parents=True, exist_ok=True)
    meta.write_text(json.dumps(asdict(cfg)))
    rng_init, *gen_rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(cfg.seed).spawn(1 + cfg.generations)]
    population, fresh = initial_population(cfg, rng_init), np.ones(cfg.population, dtype=bool)
    done = sorted(int(p.stem.split("-")[1]) for p in checkpoint_dir.glob("generation-*.parquet"))
    for g in range(cfg.generations):
        path = checkpoint_dir / f"generation-{g:03d}.parquet"
        if g in done:
            t = pq.read_table(path).to_pandas()
            population = t[[f"w{i + 1}" for i in range(N_WEIGHTS)]].to_numpy()
            fitness = t.fitness.to_numpy()
            # replay the generation's draws so the next one continues the same random stream
            order = gen_rngs[g].permutation(len(population))
            groups = [order[i * cfg.tournament_size:(i + 1) * cfg.tournament_size] for i in range(cfg.tournaments)]
            group_of = np.full(len(population), -1)
            for k, members in enumerate(groups):
                group_of[members] = k
        else:
            fitness, group_of = evaluate_generation(population, cfg, gen_rngs[g], g, workers, dask, progress)
            write_parquet(_table(population, fitness, g, fresh), path)
        population, fresh = next_generation(population, fitness, group_of, cfg, gen_rngs[g])
    final = checkpoint_dir / f"generation-{cfg.generations:03d}.parquet"
    write_parquet(_table(population, np.full(len(population), np.nan), cfg.generations, fresh), final)
    return pd.concat([pq.read_table(checkpoint_dir / f"generation-{g:03d}.parquet").to_pandas()
                      for g in range(cfg.generations + 1)], ignore_index=True)


def best_gene(history: pd.DataFrame) -> np.ndarray:
    """The fittest gene of the last evaluated generation that survived into the final population."""
    last = history[history.generation == history.generation.max() - 1]
    row = last.sort_values("fitness", ascending=False, kind="stable").iloc[0]
    return row[[f"w{i + 1}" for i in range(N_WEIGHTS)]].to_numpy(float)
