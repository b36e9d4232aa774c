"""`riskcore recognize` and `riskcore evaluate`: posteriors and metrics as Parquet registered in DuckDB.

Layout: `data/posteriors/run=NAME/posteriors/<setting>.parquet` (one file per recogniser setting, replaced whole)
and `data/metrics/run=NAME/{recognition_metrics,recognition_paired}/part-00000.parquet`.
"""

from __future__ import annotations

import hashlib
import sys
from functools import lru_cache
from pathlib import Path
from typing import Iterator

import numpy as np
import pandas as pd
import pyarrow as pa

from riskcore import ENGINE_VERSION, paths
from riskcore.db import (DamagedFile, DataError, StaleData, generation, query, reading, run_config, run_source,
                         sources_of, stale_sources, store_frames_many)
from riskcore.parallel import default_workers, in_order, run_tasks
from riskcore.params import parse
from riskcore.recognition.features import build_features, features_stale, load_features
from riskcore.recognition.metrics import (GRID, card_metrics, convergence_points, explanation_top1, paired,
                                          summarise)
from riskcore.recognition.posterior import checkpoint_offsets, evaluation_rows, group_starts
from riskcore.recognition.recognisers import Recogniser

CHECKPOINTS = (0.1, 0.3, 0.5, 0.7, 1.0)


def ensure_features(run: str, hyp_name: str, data_dir: Path | None, rebuild: bool = False, **kw) -> None:
    """Build the run's features unless they are there and were built from its current games (stale ones are
    rebuilt, saying so)."""
    have = False
    if not rebuild:
        try:
            have = not query(f"SELECT 1 FROM {run_source('rec_observations', run, data_dir)} "
                             "WHERE run = ? AND hypotheses = ? LIMIT 1", [run, hyp_name], data_dir).empty
        except Exception:  # the table does not exist yet
            have = False
        if have and features_stale(run, data_dir):
            print(f"riskcore: the recognition features of run {run!r} were built from an earlier version of its "
                  "games: rebuilding them", file=sys.stderr)
            have = False
    if not have:
        build_features(run, hyp_name, data_dir=data_dir, **kw)


def _features_of(run: str, hyp_name: str, data_dir: Path | None, rebuild: bool) -> str:
    ensure_features(run, hyp_name, data_dir, rebuild=rebuild, workers=1, progress=False)
    return run


def ensure_features_many(runs: list[str], hyp_name: str, data_dir: Path | None, rebuild: bool = False,
                         workers: int | None = None, dask_address: str | None = None, progress: bool = True) -> None:
    """`ensure_features` for several runs, one run per local process: a small run is one task, so building the
    runs side by side keeps every core busy (on Dask, each run's chunks are spread instead)."""
    if dask_address:
        for run in runs:
            ensure_features(run, hyp_name, data_dir, rebuild=rebuild, dask_address=dask_address, progress=progress)
        return
    for _ in run_tasks(_features_of, [(run, hyp_name, data_dir, rebuild) for run in runs], workers,
                       desc="features", progress=progress):
        pass


def _constant(value: str, n: int) -> pa.DictionaryArray:
    """A string column holding one value, dictionary-encoded (cheap to build and to store)."""
    return pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, dtype=np.int32)), pa.array([value]))


POINT_KINDS = ("fraction", "turn", "game")


def rows_at_turn_ends(f, turn_ends: pd.DataFrame) -> Iterator[tuple[int, int, np.ndarray]]:
    """Per (game, player) of `f`: the row of the player's last observation at or before each of the game's turn
    ends (-1: none yet), as (game, player, rows)."""
    obs = f.obs
    starts = group_starts(f)
    seqs = obs.seq.to_numpy()
    ends = {g: grp.seq.to_numpy() for g, grp in turn_ends.groupby("game_id")}
    for lo, hi in zip(starts[:-1], starts[1:]):
        g, p = int(obs.game_id.iat[lo]), int(obs.player.iat[lo])
        game_ends = ends.get(g)
        if game_ends is None or not len(game_ends):
            continue
        j = np.searchsorted(seqs[lo:hi], game_ends, side="right")
        yield g, p, np.where(j > 0, lo + j - 1, -1)


def game_clock_rows(f, turn_ends: pd.DataFrame, fractions: tuple[float, ...] = CHECKPOINTS) -> pd.DataFrame:
    """Rows at fractions of the game (the reference's "% of game"): after ceil(x K) of the game's K turn ends,
    setup turns included, each player's posterior after their last observation so far (row -1: none yet)."""
    starts = group_starts(f)
    lo, n = starts[:-1], np.diff(starts)
    game = f.obs.game_id.to_numpy().astype(np.int64)[lo]
    player = f.obs.player.to_numpy().astype(np.int64)[lo]
    ends = turn_ends.sort_values(["game_id", "seq"], kind="stable")
    end_games, end_seqs = ends.game_id.to_numpy(), ends.seq.to_numpy().astype(np.int64)
    first = np.searchsorted(end_games, game, side="left")
    count = np.searchsorted(end_games, game, side="right") - first
    group = np.flatnonzero(count > 0)  # a game without turn ends has no points
    lo, n, game, player, first, count = lo[group], n[group], game[group], player[group], first[group], count[group]
    k = len(fractions)
    target = end_seqs[first[:, None] + checkpoint_offsets(count, fractions)]  # the seq of each point's turn end
    # each player's last observation at or before it: one search over (player, seq) keys
    seqs = f.obs.seq.to_numpy().astype(np.int64)
    span = int(max(seqs.max(initial=0), end_seqs.max(initial=0))) + 1
    key = np.repeat(np.arange(len(starts) - 1), np.diff(starts)) * span + seqs
    rows = np.searchsorted(key, (group[:, None] * span + target).ravel(), side="right") - 1
    rows = np.where(rows >= np.repeat(lo, k), rows, -1)
    return pd.DataFrame({"game_id": np.repeat(game, k), "player": np.repeat(player, k), "point_kind": "game",
                         "point": np.tile(np.asarray(fractions, dtype=float), len(game)), "row": rows,
                         "n_obs": np.repeat(n, k)})


def turn_ends(run: str, data_dir: Path | None = None, games: tuple[int, int] | None = None) -> pd.DataFrame:
    """(game_id, seq) of every turn end after the deal, the reference's clock: each setup turn (a player's run of
    setup placements) and the last event of every later turn but the one the game was won in (the reference's
    output ends at the last turn end before the win). Only games `first`..`last` when `games` is given."""
    first, last = games if games is not None else (-1, 2**31 - 1)
    with reading(data_dir):
        events = run_source("events", run, data_dir, games)
        return query(f"""
            WITH mine AS (SELECT game_id, seq, turn, player, kind FROM {events}
                          WHERE run = ? AND game_id BETWEEN ? AND ?),
            won AS (SELECT game_id, turn AS won_in FROM mine WHERE kind = 'win'),
            e AS (SELECT game_id, seq, turn, player, kind,
                         lead(player) OVER w AS next_player, lead(kind) OVER w AS next_kind,
                         lead(turn) OVER w AS next_turn
                  FROM mine WHERE kind NOT IN ('deal', 'claim', 'win')
                  WINDOW w AS (PARTITION BY game_id ORDER BY seq))
            SELECT e.game_id, e.seq FROM e LEFT JOIN won USING (game_id)
            WHERE ((e.turn = 0 AND e.kind = 'place' AND (next_kind IS DISTINCT FROM 'place' OR next_player <> player))
                   OR (e.turn > 0 AND next_turn IS DISTINCT FROM e.turn))
              AND e.turn IS DISTINCT FROM won.won_in
            ORDER BY e.game_id, e.seq""", [run, int(first), int(last)], data_dir)


def posterior_rows(f, post: np.ndarray, setting: str, run: str, clock: pd.DataFrame | None = None,
                   prior: np.ndarray | None = None, turns: bool = False) -> pa.Table:
    """Long table of posteriors at the 5% grid of the window (what the evaluation reads), given the turn ends
    (`clock`) at the checkpoints of the game clock (before a player's first observation: `prior`) and, with
    `turns`, at every turn boundary (what the explorer draws)."""
    starts = group_starts(f)
    pts = evaluation_rows(f, starts, turns=turns, fractions=GRID)
    if clock is not None:
        pts = pd.concat([pts, game_clock_rows(f, clock)], ignore_index=True)
    e = f.hyp.size
    rows = pts.row.to_numpy()
    probs = post[np.maximum(rows, 0)]
    probs[rows < 0] = f.hyp.prior if prior is None else prior
    n = len(pts)
    seen = np.where(rows >= 0, rows - starts[np.searchsorted(starts, rows, side="right") - 1] + 1, 0)
    kinds = pts.point_kind.to_numpy()
    kind_codes = np.array([POINT_KINDS.index(k) for k in kinds], dtype=np.int32)
    return pa.table({
        "run": _constant(run, n * e), "setting": _constant(setting, n * e),
        "hypotheses": _constant(f.hyp.name, n * e),
        "game_id": pa.array(np.repeat(pts.game_id.to_numpy(), e), pa.int32()),
        "player": pa.array(np.repeat(pts.player.to_numpy(), e), pa.int8()),
        "point_kind": pa.DictionaryArray.from_arrays(pa.array(np.repeat(kind_codes, e)),
                                                     pa.array(list(POINT_KINDS))),
        "point": pa.array(np.repeat(pts.point.to_numpy(), e), pa.float32()),
        "n_seen": pa.array(np.repeat(seen, e), pa.int32()),
        "explanation": pa.array(np.tile(np.arange(e), n), pa.int8()),
        "prob": pa.array(probs.ravel(), pa.float64()),
        "engine_version": _constant(ENGINE_VERSION, n * e)})


CHUNK_GAMES = 50  # games a recogniser holds in memory at once: memory does not grow with the run
CHUNKS_KEPT = 8  # chunks a worker keeps for the next recogniser of the same run (bounded, whatever the run)


@lru_cache(maxsize=CHUNKS_KEPT)
def _chunk_features(run: str, hyp_name: str, data_dir: Path | None, view: str, games: tuple[int, int],
                    features: str | None):
    return load_features(run, hyp_name, data_dir, view, games)  # `features`: their generation, in the key


@lru_cache(maxsize=CHUNKS_KEPT)
def _chunk_clock(run: str, data_dir: Path | None, games: tuple[int, int], traces: str | None) -> pd.DataFrame:
    return turn_ends(run, data_dir, games)  # `traces`: the run's generation, in the key (a rewritten run is new)


def game_chunks(run: str, data_dir: Path | None, chunk: int | None = None) -> list[tuple[int, int]]:
    """(first, last) game ids of consecutive chunks of at most `chunk` (default `CHUNK_GAMES`) of the run's games."""
    chunk = chunk or CHUNK_GAMES
    ids = query("SELECT game_id FROM games WHERE run = ? ORDER BY game_id", [run], data_dir).game_id.to_numpy()
    return [(int(ids[i]), int(ids[min(i + chunk, len(ids)) - 1])) for i in range(0, len(ids), chunk)]


def posterior_parts(run: str, recogniser: Recogniser, hyp_name: str = "cards6", data_dir: Path | None = None,
                    turns: bool = False, workers: int | None = 1, dask_address: str | None = None
                    ) -> Iterator[pa.Table]:
    """One setting's posterior rows, `CHUNK_GAMES` games at a time, in game order (no writing: safe in worker
    processes): every recogniser reads each (game, player)'s observations alone, so a chunk's posteriors are the
    whole run's. With `turns`, also after every turn (`posterior_rows`). With several `workers` (or a cluster),
    `TASK_CHUNKS` chunks a task, computed in parallel and yielded in game order as they come."""
    chunks = game_chunks(run, data_dir)
    if (workers or default_workers()) == 1 and not dask_address:
        parts = _chunk_posteriors(run, recogniser, hyp_name, data_dir, turns, chunks)
    else:
        tasks = _posterior_tasks(run, recogniser, hyp_name, data_dir, turns, chunks)
        parts = in_order(run_tasks(_chunk_posterior_table, tasks, workers, dask_address, desc=f"recognise {run}",
                                   progress=False))
    yield from _some_parts(parts, run, hyp_name)


TASK_CHUNKS = 10  # chunks a parallel task computes: few enough tasks to keep the workers' caches warm


def _posterior_tasks(run: str, recogniser: Recogniser, hyp_name: str, data_dir: Path | None, turns: bool,
                     chunks: list[tuple[int, int]]) -> list[tuple]:
    """`_chunk_posterior_table`'s arguments for the run's chunks, `TASK_CHUNKS` a task. They name the data directory
    by its full path: a cluster's workers read the features from it (a disk they share), whatever their own default."""
    data_dir = paths.data_dir(data_dir)
    return [(run, recogniser, hyp_name, data_dir, turns, chunks[i:i + TASK_CHUNKS])
            for i in range(0, len(chunks), TASK_CHUNKS)]


def _some_parts(parts: Iterator[pa.Table | None], run: str, hyp_name: str) -> Iterator[pa.Table]:
    """The parts that hold rows (a task of chunks nobody acted in has none); none at all is an error."""
    found = False
    for part in parts:
        if part is not None:
            found = True
            yield part
    if not found:
        raise DataError(f"no recognition features for run {run!r} with hypotheses {hyp_name!r}")


def _chunk_posteriors(run: str, recogniser: Recogniser, hyp_name: str, data_dir: Path | None, turns: bool,
                      chunks: list[tuple[int, int]]) -> Iterator[pa.Table]:
    traces, built = generation("traces", run, data_dir), generation("recognition", run, data_dir)
    for games in chunks:
        # one connection for the chunk's reads, let go before the work on them: a writer waits for readers (in a
        # parallel task, the task's own connection serves instead)
        with reading(data_dir):
            try:
                f = _chunk_features(run, hyp_name, data_dir, recogniser.view, games, built)
            except (DamagedFile, StaleData):
                raise
            except DataError:
                continue  # no observation in these games (a chunk of games nobody acted in)
            clock = _chunk_clock(run, data_dir, games, traces)
        yield posterior_rows(f, recogniser.posterior(f, run, data_dir), recogniser.setting, run, clock,
                             recogniser.prior(f.hyp), turns)


def _chunk_posterior_table(run: str, recogniser: Recogniser, hyp_name: str, data_dir: Path | None, turns: bool,
                           chunks: list[tuple[int, int]]) -> pa.Table | None:
    """A parallel task: the posteriors of a few chunks as one table (None when nobody acted in them). Its reads
    share one connection: opening the database costs more as a run's views list more files (some 30-60 ms at
    10^4-10^6 games), once a chunk it was a large part of a big run's time. The task writes nothing, and a
    writer elsewhere waits for it (seconds) as it waits for any reader."""
    with reading(data_dir):
        parts = list(_chunk_posteriors(run, recogniser, hyp_name, data_dir, turns, chunks))
    return pa.concat_tables(parts).combine_chunks() if parts else None


def posterior_table(run: str, recogniser: Recogniser, hyp_name: str = "cards6", data_dir: Path | None = None,
                    turns: bool = False) -> pa.Table:
    """`posterior_parts` as one table."""
    return pa.concat_tables(list(posterior_parts(run, recogniser, hyp_name, data_dir, turns))).combine_chunks()


def store_posteriors(run: str, setting: str, table: pa.Table | Iterator[pa.Table], data_dir: Path | None = None,
                     sources: dict | None = None) -> dict[str, int]:
    """Write a setting's posteriors (a table, or tables as they are computed) and replace its rows in DuckDB in
    one transaction."""
    return store_posteriors_many([(run, setting, table)], data_dir, {run: sources} if sources else None)[0]


def store_posteriors_many(items: list[tuple[str, str, pa.Table | Iterator[pa.Table]]], data_dir: Path | None = None,
                          sources: dict[str, dict] | None = None) -> list[dict[str, int]]:
    """Several (run, setting, posteriors) at once, in one transaction; tables given as iterators are written as
    they come, each item's before the next item's. `sources`: per run, the generations of the games and features
    read before computing (`db.sources_of`; by default read now, before the iterators run)."""
    by_run: dict[str, list] = {}
    for run, setting, table in items:  # one publication per run: each records the trace generation it read
        by_run.setdefault(run, []).append(({"posteriors": table}, {"run": run, "setting": setting},
                                           hashlib.sha1(setting.encode()).hexdigest()[:16]))
    sources = {run: (sources or {}).get(run) or sources_of(run, "posteriors", data_dir) for run in by_run}
    counts = {}
    for run, parts in by_run.items():
        for (_, keys, _), c in zip(parts, store_frames_many(parts, "posteriors", data_dir, sources[run])):
            counts[keys["run"], keys["setting"]] = c
    return [counts[run, setting] for run, setting, _ in items]


def recognize(run: str, recogniser: Recogniser, hyp_name: str = "cards6", data_dir: Path | None = None,
              rebuild_features: bool = False, workers: int | None = None, dask_address: str | None = None,
              progress: bool = True, turns: bool = False) -> dict[str, int]:
    """Posteriors of one recogniser setting on a run (with `turns`, after every turn too)."""
    require_missions(run, data_dir)
    ensure_features(run, hyp_name, data_dir, rebuild_features, workers=workers, dask_address=dask_address,
                    progress=progress)
    sources = sources_of(run, "posteriors", data_dir)  # what is read, as it is before anything is computed
    # written as computed: memory does not grow with the run
    return store_posteriors(run, recogniser.setting, posterior_parts(run, recogniser, hyp_name, data_dir, turns,
                                                                      workers, dask_address), data_dir, sources)


def require_missions(run: str, data_dir: Path | None = None) -> None:
    """Refuse, in one line, a run whose players have no missions (a domination run): nothing to recognise."""
    mode = run_config(run, data_dir).mode
    if mode != "mission":
        raise DataError(f"run {run!r} is a {mode} run: its players have no secret missions to recognise "
                        "(recognition and its evaluation need a mission run)")


def recognize_many(jobs: list[tuple[str, Recogniser]], hyp_name: str = "cards6", data_dir: Path | None = None,
                   workers: int | None = None, dask_address: str | None = None, progress: bool = True,
                   turns: bool = False) -> None:
    """Many (run, recogniser) jobs: posteriors computed in parallel, `TASK_CHUNKS` chunks a task, and written by
    this process alone as they come, in job and game order, one publication per run: memory does not grow with
    the runs or the jobs."""
    by_run: dict[str, list[Recogniser]] = {}
    for run, rec in jobs:  # a run's jobs together: its publication takes them one after another
        by_run.setdefault(run, []).append(rec)
    tasks, counts = [], {}
    sources = {run: sources_of(run, "posteriors", data_dir) for run in by_run}  # before any task computes
    for run, recs in by_run.items():
        chunks = game_chunks(run, data_dir)
        for rec in recs:
            job = _posterior_tasks(run, rec, hyp_name, data_dir, turns, chunks)
            counts[run, rec.setting] = len(job)
            tasks += job
    results = run_tasks(_chunk_posterior_table, tasks, workers, dask_address, desc="recognise", progress=progress)
    stream = in_order(results)

    def job_parts(run: str, setting: str) -> Iterator[pa.Table]:  # the stream's next tasks: this job's
        return _some_parts((next(stream) for _ in range(counts[run, setting])), run, hyp_name)

    try:
        for run, recs in by_run.items():
            store_posteriors_many([(run, rec.setting, job_parts(run, rec.setting)) for rec in recs], data_dir,
                                  sources)
    finally:
        results.close()  # an error part way stops the workers now


CLOCKS = {"window": "fraction", "game": "game"}  # checkpoint definitions -> the posterior rows they read
SUMMARY_GAMES = 2000  # games a summary reads at once


def mean_metrics(run: str, setting: str, data_dir: Path | None = None,
                 metrics: tuple[str, ...] = ("top1", "top3", "log_loss", "brier")) -> pd.DataFrame:
    """Each metric's mean over players at every checkpoint of the observation window, read `SUMMARY_GAMES`
    games at a time (memory does not grow with the run): the summary `riskcore recognize` prints."""
    sums, counts = None, None
    read = sources_of(run, "metrics", data_dir, [setting])  # the chunks are read apart: all of one state, or none
    for games in game_chunks(run, data_dir, SUMMARY_GAMES):
        try:
            with reading(data_dir):  # one connection for a chunk's reads
                per = player_metrics(run, data_dir, settings=[setting], games=games, points=CHECKPOINTS)
        except (DamagedFile, StaleData):
            raise
        except DataError:
            continue  # no posteriors in these games
        part, n = per.groupby("point")[list(metrics)].sum(), per.groupby("point").size()
        sums = part if sums is None else sums.add(part, fill_value=0)
        counts = n if counts is None else counts.add(n, fill_value=0)
    if sums is None:
        raise DataError(f"no posteriors for run {run!r} and setting {setting!r}")
    if sources_of(run, "metrics", data_dir, [setting]) != read:
        raise DataError(f"run {run!r} or its posteriors of {setting} were replaced while the summary read them: "
                        "no summary; run the command again")
    return sums.div(counts, axis=0)


def player_metrics(run: str, data_dir: Path | None = None, settings: list[str] | None = None,
                   clock: str = "window", games: tuple[int, int] | None = None,
                   points: tuple[float, ...] | None = None) -> pd.DataFrame:
    """Card-level metrics per (setting, game, player, point), with truth, winner flag and agent. `clock`: points
    are fractions of the player's observation window (5% grid) or of the game's turn ends (checkpoints); `games`:
    only the games first..last (each game's metrics are its own); `points`: only those points, and no
    `convergence` (the first point from which the top card stays right needs every point)."""
    if clock not in CLOCKS:
        raise ValueError(f"unknown checkpoint clock {clock!r}; known: {sorted(CLOCKS)}")
    where = "" if not settings else f" AND setting IN ({', '.join('?' for _ in settings)})"
    where += "" if games is None else " AND game_id BETWEEN ? AND ?"
    where += "" if points is None else f" AND round(point::DOUBLE, 2) IN ({', '.join('?' for _ in points)})"
    source = run_source("posteriors", run, data_dir, games, settings)
    post = query(f"SELECT setting, hypotheses, game_id, player, point, explanation, prob FROM {source} "
                 "WHERE run = ? AND point_kind = ?" + where +
                 " ORDER BY setting, game_id, player, point, explanation",
                 [run, CLOCKS[clock]] + (settings or []) + list(games or ()) + list(points or ()), data_dir)
    if post.empty:
        raise DataError(f"no posteriors for run {run!r}: run `riskcore recognize --run {run}` first")
    stale = stale_sources("posteriors", run, data_dir)
    stale = stale[stale.setting.isin(post.setting.unique())] if len(stale) else stale
    if len(stale):
        raise StaleData("; ".join(stale.line))
    from riskcore.engine.board import load_board
    from riskcore.recognition.hypotheses import build_hypotheses

    board = load_board(run_config(run, data_dir).board)
    # the games asked for alone: a summary of a million games reads them 2,000 at a time
    truth = query("SELECT game_id, player, agent, mission, won FROM players WHERE run = ?"
                  + ("" if games is None else " AND game_id BETWEEN ? AND ?"), [run] + list(games or ()), data_dir)
    out = []
    for (setting, hyp_name), grp in post.groupby(["setting", "hypotheses"], sort=True):
        hyp = build_hypotheses(board, hyp_name)
        e = hyp.size
        keys = grp.iloc[::e][["game_id", "player", "point"]].reset_index(drop=True)
        keys["point"] = keys.point.astype(float).round(2)  # stored as float32
        explanations = grp.prob.to_numpy().reshape(-1, e)
        probs = hyp.card_probs(explanations)
        keys = keys.merge(truth, on=["game_id", "player"], how="left")
        keys["card"] = keys.mission.map({c: i for i, c in enumerate(hyp.cards)}).fillna(-1).astype(int)
        ok = keys.card.to_numpy() >= 0
        keys, probs = keys[ok].reset_index(drop=True), probs[ok]
        m = card_metrics(probs, keys.card.to_numpy())
        m["top1_explanation"] = explanation_top1(explanations[ok], hyp.card_of, keys.card.to_numpy())
        df = pd.concat([keys, m], axis=1)
        df["setting"] = setting
        if points is None:
            unique_top = (probs.argmax(axis=1) == keys.card.to_numpy()) & (m.spread.to_numpy() == 1)
            df = df.join(convergence_points(keys.assign(correct=unique_top)), on=["game_id", "player"])
        out.append(df)
    return pd.concat(out, ignore_index=True)


def evaluate(run: str, data_dir: Path | None = None, baselines: tuple[str, ...] = ("uniform", "goal"),
             n_boot: int = 1000, clocks: tuple[str, ...] = ("window",), settings: list[str] | None = None
             ) -> pd.DataFrame:
    """Write `recognition_metrics` and `recognition_paired` for every recogniser setting of the run (or those in
    `settings`), at the checkpoints of each clock in `clocks` (column `clock`: `window`, the player's observation
    window, or `game`, the game's turn ends with setup turns, the reference's "% of game")."""
    require_missions(run, data_dir)
    sources = sources_of(run, "metrics", data_dir, settings)  # what is read, as it is before anything is computed
    parts = [_evaluate_clock(run, data_dir, baselines, n_boot, clock, settings) for clock in clocks]
    # one part per clock: evaluating one clock keeps what an earlier evaluation stored for the other; refused at
    # the commit when the games or posteriors read were replaced meanwhile
    store_frames_many([({"recognition_metrics": m, "recognition_paired": p}, {"run": run, "clock": clock},
                        f"clock-{clock}") for clock, (m, p) in zip(clocks, parts)], "metrics", data_dir, sources)
    return pd.concat([m for m, _ in parts], ignore_index=True)


def _evaluate_clock(run: str, data_dir: Path | None, baselines: tuple[str, ...], n_boot: int, clock: str,
                    settings: list[str] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    per = player_metrics(run, data_dir, settings, clock=clock)
    at_checkpoints = per[np.isin(per.point, CHECKPOINTS)].copy()
    at_checkpoints["outcome"] = np.where(at_checkpoints.won, "winners", "losers")
    parts = [summarise(at_checkpoints.drop(columns="convergence"), ["setting", "point"], n_boot=n_boot)
             .assign(subset="all")]
    parts.append(summarise(at_checkpoints.drop(columns="convergence"), ["setting", "outcome", "point"], n_boot=n_boot)
                 .rename(columns={"outcome": "subset"}))
    parts.append(summarise(at_checkpoints.drop(columns="convergence"), ["setting", "agent", "point"], n_boot=n_boot)
                 .assign(subset=lambda d: "agent=" + d.agent).drop(columns="agent"))
    conv = per.drop_duplicates(["setting", "game_id", "player"])[["setting", "game_id", "player", "convergence"]]
    conv = conv.assign(converged=conv.convergence.notna().astype(float), point=1.0)
    c = summarise(conv.rename(columns={"converged": "top1"})[["setting", "game_id", "point", "convergence", "top1"]]
                  .assign(player=0), ["setting", "point"], n_boot=n_boot)
    c["metric"] = c.metric.replace({"top1": "converged_share"})
    parts.append(c.assign(subset="all"))
    metrics = pd.concat(parts, ignore_index=True)
    metrics.insert(0, "run", run)
    settings = sorted(per.setting.unique())
    pairs = []
    for base in baselines:
        for b in [s for s in settings if parse(s).name == base]:
            for a in settings:
                if a != b:
                    for metric in ("top1", "log_loss"):
                        pairs.append(paired(at_checkpoints, a, b, metric))
    paired_df = pd.concat(pairs, ignore_index=True) if pairs else pd.DataFrame()
    if not paired_df.empty:
        paired_df.insert(0, "run", run)
        paired_df.insert(1, "clock", clock)
    metrics.insert(1, "clock", clock)
    return metrics, paired_df


def top1_table(metrics: pd.DataFrame, metric: str = "top1", subset: str = "all", index: str = "setting"
               ) -> pd.DataFrame:
    """Readable table: one row per setting (or `index` column, e.g. readable names), one column per checkpoint,
    'value [low, high]'."""
    m = metrics[(metrics.metric == metric) & (metrics.subset == subset)]
    cell = m.apply(lambda r: f"{r.value:.3f} [{r.ci_low:.3f}, {r.ci_high:.3f}]", axis=1)
    return m.assign(cell=cell).pivot(index=index, columns="point", values="cell")
