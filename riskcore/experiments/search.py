"""`riskcore experiment search`: goal-based search (GB) against exhaustive max^n (AB), measured the way the
paper did, to answer one question: how close does goal-based search get to exhaustive search, and at what share
of its tree?

1. Nodes explored against look-ahead (turns) for GB and AB, averaged over seeded positions.
2. Accuracy at every look-ahead AB finishes: the share of positions where a search's first decision has the same
   AB value as AB's best, and the mean relative loss (AB best - value of the choice) / (value range of the root
   actions). The searches (`SEARCHES`, each a `search.policy.GoalPolicy`):
   - `GB`: the paper's search; every player chooses among all its goals.
   - `GB-restricted`: the goal-restricting opponent model (opponents consider only `secure` and the continent
     each is closest to holding).
   - `GB+learned strikes`: the best goal-rooted search: every player may also `strike` (all reinforcements on one
     front territory, then the turn's best attacks); a strike with turns still to follow ends where the learned end
     scorer picks, and the root player's own strikes one turn before the horizon end where exact search over the
     scorer's five best ends picks.
   - `AB turn + GB`: the best hybrid: the root player's turn is searched over every action sequence (so its first
     decision is not goal-based), GB's tree below each end; the first reply may also strike or play one of the four
     whole turns the scorer ranks best, the second-last turn chooses among the scorer's eight best whole turns and
     the last plays the mover's exact best turn (`grab`).
   Two yardsticks are judged the same way: AB's own choice one turn shallower, and a placement drawn uniformly at
   random.
3. The tree-size estimate (formulas in `search.gbsearch`) against measured node counts (goal-rooted searches).
4. Scalability: GB nodes against players and the goal kinds on the classic board; a GB agent's win rate against
   `mission` agents.
Positions: the start of a turn in seeded small-board games of `domination` agents (2 and 3 players).
"""

from __future__ import annotations

import time
from itertools import product
from pathlib import Path

import numpy as np
import pandas as pd

from riskcore import paths
from riskcore.engine.board import load_board
from riskcore.engine.config import GameConfig
from riskcore.db import query, store_frames
from riskcore.experiments import search_cache
from riskcore.experiments.search_cache import entry_key
from riskcore.game import play_game
from riskcore.parallel import run_tasks
from riskcore.search import endfeatures, endscore
from riskcore.search.abstract import AState, Model, first_best
from riskcore.search.endscore import load_scorer, to_json
from riskcore.search.exhaustive import MaxN
from riskcore.search.gbsearch import GBSearch, estimate_ab, estimate_gb
from riskcore.search.policy import BASE_KINDS, GoalPolicy
from riskcore.simulate import RunSpec, game_seeds, simulate_many
from riskcore.stats import wilson_interval


def positions(n: int, players: int, seed: int, board: str = "small") -> list[AState]:
    """`n` turn-start positions from seeded games (at most 3 per game, spread over each game)."""
    out: list[AState] = []
    for s in game_seeds(seed, 10 * n):
        rec = play_game(GameConfig(board=board, n_players=players, mode="domination", turn_cap=60),
                        ["domination"] * players, s)
        snaps = [x for x in rec.state.snapshots if len(np.unique(x[2])) > 1]
        rng = np.random.default_rng(s)
        for k in rng.choice(len(snaps), size=min(3, len(snaps)), replace=False) if snaps else []:
            turn, player, owner, armies = snaps[int(k)]
            out.append(AState(owner.copy(), armies.copy(), int(player)))
            if len(out) == n:
                return out
    return out


SEARCHES = {
    "GB": GoalPolicy(),
    "GB-restricted": GoalPolicy(opponents="restricted"),
    "GB+learned strikes": GoalPolicy(kinds=(*BASE_KINDS, "strike"), strike_ends="learned", exact_own_ends=1,
                                     shortlist=5),
    "AB turn + GB": GoalPolicy(root="exhaustive", reply=("strike", "ranked:4"), horizon=(("grab",), ("ranked:8",))),
}
# the searches that choose goals at every level, the only ones formula (2) of the tree-size estimate describes
GOAL_ROOTED = [name for name, policy in SEARCHES.items() if policy.root == "goals"]
# Yardsticks for the accuracy of a first decision, judged like GB's against AB at the same look-ahead: AB's own
# choice one turn shallower, and a placement drawn uniformly (its expectation, so no dice are needed).
REFERENCES = ("AB one turn shorter", "random placement")
CACHE_NAME = "search.parquet"  # in the data directory's cache folder
SAVE_SECONDS = 600  # a running experiment saves the searches it has done this often


def policy_search(model: Model, player: int, policy: GoalPolicy) -> GBSearch:
    """The GB search of `policy` for `player`, with the stored end scorer when the policy needs it."""
    return GBSearch(model, player, policy, load_scorer(model.n_players) if policy.needs_scorer else None)


def judge(values: dict[tuple, float], chosen: tuple) -> dict:
    """Is `chosen` one of AB's best root actions, and its loss as a share of the root actions' value range."""
    best, worst = max(values.values()), min(values.values())
    loss = 0.0 if best - worst < 1e-12 else (best - values[chosen]) / (best - worst)
    return {"optimal": float(values[chosen] >= best - 1e-9), "relative_loss": loss}


def _policy_key(model: Model, state: AState, lookahead: int, policy: GoalPolicy) -> str:
    """A GB search's cache key: its policy, and for a policy that consults the learned end scorer the scorer's code
    and stored weights."""
    code, definition = (), (repr(policy),)
    if policy.needs_scorer:
        code += (endfeatures, endscore)
        definition += (to_json(load_scorer(model.n_players)),)
    return entry_key(model, state, lookahead, definition, code)


def measure(state: AState, players: int, lookahead: int, max_attacks: int, board: str,
            cache: dict | None = None) -> list[dict]:
    """AB, the `SEARCHES` and the `REFERENCES` at every look-ahead from 1 to `lookahead` on one position. `nodes`: the search tree's
    size; `generated`: the states the search made (AB: distinct subtrees, the transposition table's work; GB: its
    tree plus the goals' probes; the shallower AB: AB's at one turn less; random placement: none).
    `cache` (a dict of `search_cache` entries): searches found there are not run again; new ones are added."""
    cache = {} if cache is None else cache
    model = Model(load_board(board), players, max_attacks)
    p = state.to_move
    rows, values, cost = [], {}, {}
    for L in range(1, lookahead + 1):
        key = entry_key(model, state, L)
        if key not in cache:
            ab, before = MaxN(model), model.generated
            cache[key] = {"values": [[list(a), float(v[p])] for a, v in ab.root(state, L).items()],
                          "nodes": ab.nodes, "generated": model.generated - before}
        values[L] = {tuple(a): v for a, v in cache[key]["values"]}
        cost[L] = {"nodes": cache[key]["nodes"], "generated": cache[key]["generated"]}
        rows.append({"search": "AB", "lookahead": L, **cost[L]})
        if L > 1:
            rows.append({"search": REFERENCES[0], "lookahead": L, **cost[L - 1],
                         **judge(values[L], first_best(values[L - 1]))})
        each = [judge(values[L], a) for a in values[L]]
        rows.append({"search": REFERENCES[1], "lookahead": L, "nodes": 0, "generated": 0,
                     **{k: float(np.mean([j[k] for j in each])) for k in ("optimal", "relative_loss")}})
    for (name, policy), L in product(SEARCHES.items(), range(1, lookahead + 1)):
        key = _policy_key(model, state, L, policy)
        if key not in cache:
            gb, before = policy_search(model, p, policy), model.generated
            goal, actions, _ = gb.decide(state, L)
            # an exhaustive root turn has no root goal: formula (2) does not describe it, so no g to measure
            cache[key] = {"nodes": gb.nodes, "generated": model.generated - before,
                          "goal": goal.name if goal else "", "actions_per_goal": len(actions),
                          "goals_at_root": len(gb.choices(state)) if goal else None, "first": list(actions[0])}
        e = cache[key]
        row = {"search": name, "lookahead": L, "nodes": e["nodes"], "generated": e["generated"], "goal": e["goal"],
               "actions_per_goal": e["actions_per_goal"],
               "goals_at_root": float("nan") if e["goals_at_root"] is None else e["goals_at_root"]}
        row.update(judge(values[L], tuple(e["first"])))
        rows.append(row)
    return rows


def compile_kernels() -> None:
    """Compile the search kernels into numba's on-disk cache (run once at install: `make venv`), by measuring
    one position of each player count at look-ahead 2: every kernel the experiment and the search agents use."""
    for players in (2, 3):
        measure(positions(1, players, 7)[0], players, 2, 2, "small")


def _measure_chunk(states, players, lookahead, max_attacks, board, offset, deep, cache):
    """The rows of `states`, and the cache entries their searches added to the `cache` given."""
    known, out = set(cache), []
    for i, s in enumerate(states):
        out += [{**r, "position": offset + i, "players": players} for r in
                measure(s, players, lookahead + (offset + i < deep), max_attacks, board, cache)]
    return out, {k: v for k, v in cache.items() if k not in known}


def _entry_keys(state: AState, model: Model, lookahead: int) -> list[str]:
    """Every cache key `measure` may look up for `state` up to `lookahead`."""
    keys = [entry_key(model, state, L) for L in range(1, lookahead + 1)]
    return keys + [_policy_key(model, state, L, policy) for policy, L in product(SEARCHES.values(),
                                                                                  range(1, lookahead + 1))]


def scalability(players_list=(2, 3, 4), turns: int = 3, n: int = 20, seed: int = 9) -> pd.DataFrame:
    """GB nodes on the classic board against players and the goal kinds allowed."""
    rows = []
    kinds_sets = {"secure": ("secure",), "+conquer": ("secure", "conquer"),
                  "+break": ("secure", "conquer", "break"), "all": ("secure", "conquer", "break", "eliminate")}
    for players in players_list:
        model = Model(load_board("classic"), players, 3)
        for s in positions(n, players, seed, board="classic"):
            for label, kinds in kinds_sets.items():
                gb = GBSearch(model, s.to_move, GoalPolicy(kinds=kinds))
                gb.decide(s, turns)
                rows.append({"players": players, "goal_kinds": label, "n_goals": len(gb.goals), "nodes": gb.nodes})
    return pd.DataFrame(rows)


def run_search_experiment(n_positions: int = 200, lookahead: int = 4, deep_positions: int = 20, max_attacks: int = 2,
                          agent_games: int = 200, seed: int = 2009, data_dir: Path | None = None,
                          workers: int | None = None, dask: str | None = None, progress: bool = True,
                          use_cache: bool = True) -> dict[str, pd.DataFrame]:
    """Every search to `lookahead` turns on `n_positions` positions per player count, and one turn deeper on the
    first `deep_positions` of them (AB's trees grow about a hundredfold a turn: at five turns from a second to a
    minute a position, and a few GB of transposition table).
    `use_cache`: read and extend the cache of searches (`search_cache`, `CACHE_NAME` in the data directory's cache)."""
    cache_path = paths.cache_dir(data_dir) / CACHE_NAME
    cached = search_cache.load(cache_path) if use_cache else {}
    tasks = search_tasks(n_positions, lookahead, deep_positions, max_attacks, seed, cached)
    parts = run_saving(tasks, cached, cache_path if use_cache else None, workers, dask, progress)
    # task order: the notebook's seeded bootstraps resample rows in the order stored
    nodes = pd.DataFrame([r for i in sorted(parts) for r in parts[i]])
    scal = scalability(n=min(20, n_positions))  # 20 classic-board positions per player count; fewer in a quick run
    agent = agent_table(agent_games, seed, data_dir, workers, dask, progress)
    tables = {"search_nodes": nodes, "search_accuracy": accuracy_table(nodes), "search_scalability": scal,
              "search_agent": agent, "search_estimate": estimate_table(nodes)}
    _store(tables, data_dir)
    return tables


def search_tasks(n_positions: int, lookahead: int, deep_positions: int, max_attacks: int, seed: int,
                 cached: dict) -> list[tuple]:
    """The experiment's work in chunks of positions, each with the cached searches it can reuse."""
    tasks = []
    for players in (2, 3):
        states = positions(n_positions, players, seed + players)
        model = Model(load_board("small"), players, max_attacks)
        step = max(1, min(4, len(states) // 16))
        for i in range(0, len(states), step):
            chunk = states[i:i + step]
            subset = {k: cached[k] for s in chunk for k in _entry_keys(s, model, lookahead + 1) if k in cached}
            tasks.append((chunk, players, lookahead, max_attacks, "small", i, deep_positions, subset))
    return tasks


def run_saving(tasks: list[tuple], cached: dict, cache_path: Path | None, workers, dask, progress) -> dict:
    """The rows of every task by index. The searches the finished tasks added are saved to `cache_path` (None:
    not at all) every `SAVE_SECONDS` and when the run ends, also when it fails or is interrupted: a long run
    stopped near its end keeps the hours of searches it did."""
    parts, added, saved = {}, {}, time.monotonic()
    try:
        for i, (part, new) in run_tasks(_measure_chunk, tasks, workers, dask, desc="search positions",
                                        progress=progress):
            parts[i] = part
            added.update(new)
            if cache_path and time.monotonic() - saved > SAVE_SECONDS:
                search_cache.save(cache_path, {**cached, **added})
                saved = time.monotonic()
    finally:
        if cache_path and (added or not cache_path.exists()):
            search_cache.save(cache_path, {**cached, **added})
    return parts


LINEUPS = {"gb": "search-gb-vs-mission", "gb:mode=eager": "search-gb-eager-vs-mission",
           "gb:mission_weight=0": "search-gb-nomission-vs-mission", "mission": "search-mission-vs-mission"}


def agent_table(games: int, seed: int, data_dir: Path | None, workers: int | None, dask: str | None,
                progress: bool) -> pd.DataFrame:
    """Win rates against three `mission` agents on the classic board (seats rotate from game to game): the GB
    agent (which values its own mission's territories) in lazy mode (follows its plan for the turn) and eager
    mode (searches again before every attack), the GB agent blind to its mission, and, as the baseline,
    a `mission` agent (all four seats of the all-mission run). The lineups share the seed, so game k deals the
    same missions and dice stream to each."""
    specs = [RunSpec(run, games, GameConfig(), (agent, "mission", "mission", "mission"), seed)
             for agent, run in LINEUPS.items()]
    simulate_many(specs, data_dir, workers, dask, progress, desc="GB agent games")
    rows = []
    for agent, run in LINEUPS.items():
        pl = query("SELECT won FROM players WHERE run = ? AND agent = ?", [run, agent], data_dir)
        low, high = wilson_interval(int(pl.won.sum()), len(pl))
        # how it plays, not only whether it wins: attack rolls and conquests per seat and game
        acts = query("SELECT count(*) FILTER (WHERE e.kind = 'attack') AS attacks, "
                     "count(*) FILTER (WHERE e.kind = 'occupy') AS conquests FROM events e JOIN players p "
                     "ON e.run = p.run AND e.game_id = p.game_id AND e.player = p.player "
                     "WHERE e.run = ? AND p.agent = ?", [run, agent], data_dir).iloc[0]
        rows.append({"agent": agent, "opponents": "3 mission", "games": games, "seats": len(pl),
                     "wins": int(pl.won.sum()), "win_rate": float(pl.won.mean()), "ci_low": float(low),
                     "ci_high": float(high), "attack_rolls_per_game": acts.attacks / len(pl),
                     "conquests_per_game": acts.conquests / len(pl)})
    return pd.DataFrame(rows)


def accuracy_table(nodes: pd.DataFrame) -> pd.DataFrame:
    """GB (and the `REFERENCES`) against AB on the same positions, at every look-ahead AB finished: the share of
    optimal first decisions (Wilson 95% CI; for random placement the expected share, so the interval is only
    indicative), the mean relative loss (normal 95% CI over positions), and nodes and generated states as
    shares of AB's (`gb_nodes`: the
    compared search's mean tree).
    `node_share` is a ratio of means, which a few huge AB trees dominate; `median_node_share` is the median of
    the per-position shares, what a typical position costs.
    Many positions offer one placement, or several of equal value, where every decision is optimal:
    `optimal_decisive` is the share on the other `decisive_positions` (those where a random placement may be
    wrong; NaN without the random yardstick's rows)."""
    key = ["players", "position", "lookahead"]
    ab = nodes[nodes.search == "AB"][key + ["nodes", "generated"]]
    chance = nodes[nodes.search == REFERENCES[1]][key + ["optimal"]].rename(columns={"optimal": "chance"})
    both = nodes[nodes.search != "AB"].merge(ab, on=key, suffixes=("", "_ab")).merge(chance, on=key, how="left")
    rows = []
    for (search, players, L), d in both.groupby(["search", "players", "lookahead"]):
        low, high = wilson_interval(round(d.optimal.sum()), len(d))
        decisive = d.chance < 1  # a position's expected random share is 1 exactly when every placement is optimal
        known = d.chance.notna().all()
        rows.append({"search": search, "players": players, "lookahead": L, "positions": len(d),
                     "optimal": d.optimal.mean(), "optimal_low": low, "optimal_high": high,
                     "relative_loss": d.relative_loss.mean(),
                     "loss_low": d.relative_loss.mean() - 1.959964 * d.relative_loss.sem(ddof=1),
                     "loss_high": d.relative_loss.mean() + 1.959964 * d.relative_loss.sem(ddof=1),
                     "gb_nodes": d.nodes.mean(), "ab_nodes": d.nodes_ab.mean(),
                     "node_share": d.nodes.mean() / d.nodes_ab.mean(),
                     "median_node_share": (d.nodes / d.nodes_ab).median(),
                     "generated_share": d.generated.mean() / d.generated_ab.mean(),
                     "decisive_positions": int(decisive.sum()) if known else float("nan"),
                     "optimal_decisive": d.optimal[decisive].mean() if known and decisive.any() else float("nan")})
    return pd.DataFrame(rows)


def estimate_table(nodes: pd.DataFrame) -> pd.DataFrame:
    """Formulas (1)-(2) with b, g, m measured at look-ahead 1 (g and m per GB search), against measured means at
    every look-ahead. Only AB and the goal-rooted searches: the yardsticks are no searches, and formula (2)
    assumes goal choices at every level, which an exhaustive root turn does not make."""
    rows = []
    for players, d in nodes[nodes.search.isin(["AB", *GOAL_ROOTED])].groupby("players"):
        first = d[d.lookahead == 1].groupby("search")
        b = first.nodes.mean()["AB"]
        g, m = first.goals_at_root.mean(), first.actions_per_goal.mean()
        for (search, L), grp in d.groupby(["search", "lookahead"]):
            est = estimate_ab(b, L) if search == "AB" else estimate_gb(g[search], m[search], L)
            rows.append({"players": players, "search": search, "lookahead": L, "measured": grp.nodes.mean(),
                         "estimated": est})
    return pd.DataFrame(rows)


def _store(tables: dict[str, pd.DataFrame], data_dir: Path | None) -> None:
    store_frames({name: df.assign(run="search") for name, df in tables.items()}, "metrics", {"run": "search"},
                 data_dir)
