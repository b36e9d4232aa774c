"""One pass over a run's events that stores, for every observation, what any recogniser needs.

Observations of player p (kinds in `KINDS`): reinforce T; successful / failed attack on N (from T); successful /
failed defence of T (when p is attacked); fortify into N; card trade (bonus territory). Consecutive rolls of one
battle (single-roll attacks on the same pair) are one observation, the battle's outcome. The window opens with the
first turn after setup and closes at the player's elimination, or just before the game-ending action (the final
occupy and its attack, or the final fortify or placement), so the end state never gives the answer away.

The stored features also hold two `EXTENDED_KINDS` the reference implementation observed: setup placements
(`place`, turn 0) and the armies moved into a conquered territory (`occupy`). Every recogniser observes them by
default (`load_features(view="full")`, the window then opening with setup); `view="turns"` leaves them out, to
measure what they are worth.

For each observation we store, from the territories p owns just before it (Khan 2013, GENERATEPENDINGSET):
`n_owned` (each gives reinforce, defend-won, defend-lost pending actions), `n_attack` (pairs owned T -> enemy
neighbour N: attack-won and attack-lost), `n_fortify` (pairs owned T -> owned neighbour N), and per explanation
e the counts inside e's territories (`owned_in`, `attack_in`, `fortify_in`, counted at N) and whether the observed
action is consistent with e. Any PHATT weighting is then a vectorised formula over these counts.

For inverse planning we also store each attack and reinforcement decision's candidate set (`rec_candidates`):
one row per (candidate, enemy target) pair with the exact conquest odds and a bit mask of the explanations
whose territories contain the target; `cand` groups the rows of one candidate, `chosen` marks the observed one.

`Extractor` is the reference, in Python (fed a few events at a time by `recognition.online`); `build_features`
runs its compiled equal, `compiled_features.extract_events`, over a chunk of games at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np
import pandas as pd
import pyarrow as pa

from riskcore import ENGINE_VERSION, paths
from riskcore.engine.battle import win_probability_table
from riskcore.engine.board import load_board
from riskcore.engine.chance import TraceError
from riskcore.db import (DamagedFile, DataError, StaleData, generation, publish_run, query, query_arrays, reading,
                         run_config, run_source, stale_sources)
from riskcore.parallel import run_tasks
from riskcore.recognition.hypotheses import Hypotheses, build_hypotheses
from riskcore.storage import parquet_bytes, write_bytes, write_parquet
from riskcore.trace import text_column

KINDS = ("reinforce", "defend_won", "defend_lost", "fortify", "attack_won", "attack_lost", "trade", "place",
         "occupy")
EXTENDED_KINDS = ("place", "occupy")  # left out of the `turns` view
VIEWS = ("full", "turns")  # every observation; or no setup placements and move-ins
PENDING_KINDS = KINDS[:6]  # the kinds in PHATT's pending set
KIND = {k: i for i, k in enumerate(KINDS)}

EVENT_COLUMNS = ("game_id", "seq", "turn", "player", "kind", "src", "dst", "armies", "attacker_losses",
                 "defender_losses", "conquered", "opponent", "stop_at")
_ODDS = win_probability_table(64)
_CAP = _ODDS.shape[0] - 1
MATRICES = ("owned_in", "attack_in", "fortify_in", "member_size", "consistent", "targets_in")  # (N, E) per observation
CANDIDATE_FIELDS = ("c_game_id", "c_player", "c_seq", "c_cand", "c_odds", "c_bits", "c_self_bits", "c_continent",
                    "c_self_continent", "c_chosen")


@dataclass
class Features:
    """Observation arrays of one run, sorted by (game_id, player, obs)."""

    obs: pd.DataFrame  # one row per observation
    owned_in: np.ndarray  # (N, E)
    attack_in: np.ndarray  # (N, E)
    fortify_in: np.ndarray  # (N, E)
    member_size: np.ndarray  # (N, E) territories each explanation covers at that time
    consistent: np.ndarray  # (N, E) bool: observed action consistent with explanation
    hyp: Hypotheses
    truth: pd.DataFrame  # (game_id, player, mission, card index or -1, won, agent)
    targets_in: np.ndarray  # (N, E) distinct enemy neighbours inside each explanation (after a conquest for one)

    @property
    def n(self) -> int:
        return len(self.obs)

    def select(self, rows: np.ndarray) -> "Features":
        """Rows by boolean mask or integer index (repeats allowed)."""
        rows = np.asarray(rows)
        mask = np.flatnonzero(rows) if rows.dtype == bool else rows
        return Features(self.obs.iloc[mask].reset_index(drop=True), self.owned_in[mask], self.attack_in[mask],
                        self.fortify_in[mask], self.member_size[mask], self.consistent[mask], self.hyp, self.truth,
                        self.targets_in[mask])


def _cutoff(kinds: list[str]) -> int:
    """Index of the first event an observer must not see: the game-ending action (and its attack)."""
    if not kinds or kinds[-1] != "win":
        return len(kinds)
    cut = len(kinds) - 2  # the action that ended the game
    if cut >= 1 and kinds[cut] == "occupy" and kinds[cut - 1] == "attack":
        cut -= 1
    return max(cut, 0)


class Extractor:
    """The observations of every player of one game, fed its events in order (all at once, or a few at a time as
    a game goes on: `recognition.online`). `parts` holds what `extract_game` returns for the events fed so far."""

    FIELDS = ("game_id", "player", "seq", "turn", "kind", "territory", "src", "n_owned", "n_attack", "n_fortify",
              "n_targets", "owned_in", "attack_in", "fortify_in", "member_size", "consistent", "targets_in")

    def __init__(self, n_players: int, hyp: Hypotheses, extended: bool = False):
        board = hyp.board
        self.hyp, self.extended = hyp, extended
        self.n = board.n_territories
        self.adj = board.adjacency.astype(np.int64)
        self.owner = np.full(self.n, -1, dtype=np.int64)
        self.armies = np.zeros(self.n, dtype=np.int64)
        self.e_src, self.e_dst = np.nonzero(board.adjacency)
        self.bit_values = (1 << np.arange(hyp.size)).astype(np.int64)
        self.parts: dict[str, list] = {k: [] for k in (*self.FIELDS, *CANDIDATE_FIELDS)}
        self.eliminated = [False] * n_players
        self.cache: dict[tuple, tuple] = {}
        self.version = [0] * n_players  # bumps when a player's territories change
        self.dynamic = any(e.kind == "destroy" for e in hyp.explanations)
        self._carry: dict[str, np.ndarray] | None = None  # the events of a battle still open at the last feed

    def pending(self, p: int):
        # a destroy explanation holds its colour's territories: then anyone's conquest changes p's counts too
        key = (p, tuple(self.version)) if self.dynamic else (p, self.version[p])
        if key not in self.cache:
            owner, hyp = self.owner, self.hyp
            o = (owner == p).astype(np.int64)
            m = hyp.membership(owner)
            adj_owned = self.adj @ o
            enemy_w = adj_owned * (1 - o)
            fort_w = adj_owned * o
            targets = (enemy_w > 0).astype(np.int64)  # distinct enemy neighbours: the reference's attack options
            if len(self.cache) > 64:
                self.cache.clear()
            self.cache[key] = (int(o.sum()), int(enemy_w.sum()), int(fort_w.sum()), m @ o, m @ enemy_w, m @ fort_w,
                               m.sum(axis=1), m, int(targets.sum()), m @ targets)
        return self.cache[key]

    def observe(self, ev, p: int, i: int, kind: str, t: int, src: int | None) -> int:
        """Append p's observation; returns its row in `parts` (-1: p is out of the game)."""
        if self.eliminated[p]:
            return -1
        n_owned, n_att, n_fort, own_in, att_in, fort_in, size, m, n_targets, targets_in = self.pending(p)
        inside = m[:, t] if t >= 0 else np.ones(self.hyp.size, dtype=bool)
        consistent = ~inside if kind == "defend_lost" else inside
        out = self.parts
        for key, value in (("game_id", int(ev["game_id"][i])), ("player", p), ("seq", int(ev["seq"][i])),
                           ("turn", int(ev["turn"][i])), ("kind", KIND[kind]), ("territory", t),
                           ("src", -1 if src is None else src), ("n_owned", n_owned), ("n_attack", n_att),
                           ("n_fortify", n_fort), ("n_targets", n_targets), ("owned_in", own_in),
                           ("attack_in", att_in), ("fortify_in", fort_in), ("member_size", size),
                           ("consistent", consistent), ("targets_in", targets_in)):
            out[key].append(value)
        return len(out["game_id"]) - 1

    def retarget(self, row: int, p: int) -> None:
        """Set a conquest's attack options to those after it (the reference computes them then)."""
        n_targets, targets_in = self.pending(p)[8:]
        self.parts["n_targets"][row] = n_targets
        self.parts["targets_in"][row] = targets_in

    def continent_values(self, p: int) -> np.ndarray:
        """A mission-blind player's value of each territory (the `domination` agent's): its continent's value,
        0.5 + the share p owns x the continent's bonus (relative to the largest), + 0.5 when an opponent holds the
        whole continent; scaled to a maximum of 1."""
        board = self.hyp.board
        mask, owner = board.continent_mask, self.owner
        owned = (mask & (owner == p)).sum(axis=1) / mask.sum(axis=1)  # a count (a bool matmul gives any())
        value = 0.5 + owned * board.continent_bonus / board.continent_bonus.max()
        lowest = np.where(mask, owner[None, :], board.n_territories).min(axis=1)
        highest = np.where(mask, owner[None, :], -2).max(axis=1)
        value += 0.5 * ((lowest == highest) & (lowest != p) & (lowest != -1))  # an opponent holds it whole
        per_territory = value[board.continent_of]
        return per_territory / per_territory.max()

    def candidates(self, ev, p: int, i: int, chosen: int, extra: int, attack: bool) -> None:
        """Decision candidates: attack pairs (src, dst), or territories to reinforce with `extra` armies."""
        owner, armies, e_src, e_dst, n = self.owner, self.armies, self.e_src, self.e_dst, self.n
        front = (owner[e_src] == p) & (owner[e_dst] != p)
        if attack:
            front &= armies[e_src] >= 2
        s_, d_ = e_src[front], e_dst[front]
        odds = _ODDS[np.minimum(armies[s_] - 1 + extra, _CAP), np.minimum(armies[d_], _CAP)]
        bits = (self.hyp.membership(owner)[:, d_] * self.bit_values[:, None]).sum(axis=0)
        values = self.continent_values(p)
        continent = values[d_]
        if attack:
            cand, is_chosen = np.arange(len(s_)), (s_ * n + d_) == chosen
            self_bits = np.zeros(len(s_), dtype=np.int64)
            self_continent = np.zeros(len(s_))
        else:  # every owned territory is a candidate; interior ones threaten nothing
            mine = np.flatnonzero(owner == p)
            inner = np.setdiff1d(mine, s_)
            s_ = np.r_[s_, inner]
            odds = np.r_[odds, np.zeros(len(inner))]
            bits = np.r_[bits, np.zeros(len(inner), dtype=np.int64)]
            continent = np.r_[continent, np.zeros(len(inner))]
            cand, is_chosen = s_, s_ == chosen
            # the explanations whose territories hold the candidate itself (a placement may hold, not threaten)
            self_bits = (self.hyp.membership(owner)[:, s_] * self.bit_values[:, None]).sum(axis=0)
            self_continent = values[s_]  # and its own continent's value to a mission-blind continent seeker
        if not is_chosen.any():
            return
        g, q = int(ev["game_id"][i]), int(ev["seq"][i])
        m = len(cand)
        out = self.parts
        out["c_game_id"].extend([g] * m)
        out["c_player"].extend([p] * m)
        out["c_seq"].extend([q] * m)
        out["c_cand"].extend(cand.tolist())
        out["c_odds"].extend(odds.tolist())
        out["c_bits"].extend(bits.tolist())
        out["c_self_bits"].extend(self_bits.tolist())
        out["c_continent"].extend(continent.tolist())
        out["c_self_continent"].extend(self_continent.tolist())
        out["c_chosen"].extend(is_chosen.tolist())

    def feed(self, ev: dict[str, np.ndarray], cut: int | None = None, final: bool = True) -> None:
        """Process the game's events `ev` (columns, in seq order), up to index `cut` (the game-ending action).
        `final=False` when more events of the game will follow (a battle still open at the end waits for them)."""
        if self._carry is not None:
            ev = {k: np.concatenate([self._carry[k], ev[k]]) for k in ev}
            cut = None if cut is None else cut + len(self._carry["kind"])
            self._carry = None
        owner, armies, n = self.owner, self.armies, self.n
        kinds = ev["kind"]
        cut = len(kinds) if cut is None else cut

        def num(col: str, i: int) -> int:
            if col not in ev:  # e.g. hand-made events without `stop_at`
                return -1
            v = ev[col][i]
            return -1 if v is None or (isinstance(v, float) and np.isnan(v)) else int(v)

        def continues(i: int) -> bool:
            """Event i + 1 is another roll of the battle that event i (a single roll) began or went on with."""
            j = i + 1
            return (j < len(kinds) and kinds[j] == "attack" and num("stop_at", i) < 0 and num("stop_at", j) < 0
                    and not ev["conquered"][i] and int(ev["player"][j]) == int(ev["player"][i])
                    and num("src", j) == num("src", i) and num("dst", j) == num("dst", i))

        battle_end = -1  # index of the last roll of the battle being read
        attacker_row = -1  # the attacker's observation of that battle
        for i in range(len(kinds)):
            kind, p = kinds[i], int(ev["player"][i])
            dst, src, amount = num("dst", i), num("src", i), num("armies", i)
            if kind in ("deal", "claim"):
                owner[dst] = p
                armies[dst] += 1
                self.version[p] += 1
                continue
            if i >= cut:
                break
            turn = int(ev["turn"][i])
            if kind in ("place", "reinforce"):
                if kind == "reinforce" and turn >= 1:
                    self.observe(ev, p, i, kind, dst, None)
                    if not self.eliminated[p]:
                        self.candidates(ev, p, i, dst, amount, attack=False)
                elif kind == "place" and self.extended:
                    self.observe(ev, p, i, kind, dst, None)
                    self.candidates(ev, p, i, dst, amount, attack=False)  # a setup army placed as a reinforcement
                armies[dst] += amount
            elif kind == "trade":
                if turn >= 1:
                    self.observe(ev, p, i, "trade", dst, None)
                if dst >= 0:
                    armies[dst] += 2
            elif kind in ("fortify", "occupy"):
                if kind == "fortify" or self.extended:
                    self.observe(ev, p, i, kind, dst, src)
                armies[src] -= amount
                armies[dst] += amount
            elif kind == "attack":
                if i > battle_end:  # a battle's first roll: observed once, with the outcome of its last roll
                    battle_end = i
                    while battle_end + 1 < cut and continues(battle_end):
                        battle_end += 1
                    if not final and battle_end == len(kinds) - 1 and num("stop_at", i) < 0 \
                            and not ev["conquered"][battle_end]:
                        self._carry = {k: v[i:] for k, v in ev.items()}
                        return
                    won = bool(ev["conquered"][battle_end])
                    victim = int(ev["opponent"][i])
                    attacker_row = self.observe(ev, p, i, "attack_won" if won else "attack_lost", dst, src)
                    self.observe(ev, victim, i, "defend_lost" if won else "defend_won", dst, None)
                    if not self.eliminated[p]:
                        self.candidates(ev, p, i, src * n + dst, 0, attack=True)
                armies[src] -= num("attacker_losses", i)
                armies[dst] -= num("defender_losses", i)
                if ev["conquered"][i]:
                    owner[dst] = p
                    self.version[p] += 1
                    self.version[int(ev["opponent"][i])] += 1
                    if attacker_row >= 0:
                        self.retarget(attacker_row, p)
            elif kind == "eliminate":
                self.eliminated[int(ev["opponent"][i])] = True


def extract_game(ev: dict[str, np.ndarray], n_players: int, hyp: Hypotheses, extended: bool = False
                 ) -> dict[str, list]:
    """Observations of every player of one game; `ev` holds the game's event columns ordered by seq."""
    extractor = Extractor(n_players, hyp, extended)
    extractor.feed(ev, _cutoff(list(ev["kind"])))
    return extractor.parts


def extract_chunk(hyp: Hypotheses, n_players: int, extended: bool, events: dict[str, np.ndarray]
                  ) -> dict[str, list]:
    gids = events["game_id"]
    bounds = np.flatnonzero(np.diff(gids)) + 1
    merged: dict[str, list] = {}
    for lo, hi in zip(np.r_[0, bounds], np.r_[bounds, len(gids)]):
        game = {k: v[lo:hi] for k, v in events.items()}
        part = extract_game(game, n_players, hyp, extended)
        for k, v in part.items():
            merged.setdefault(k, []).extend(v)
    return merged


def compiled_chunk(hyp: Hypotheses, n_players: int, events: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """`extract_chunk` with every observation view (`extended`), compiled: the same parts, as arrays."""
    from riskcore.recognition import compiled_features as cf

    board = hyp.board
    n_ev = len(events["kind"])
    kind = np.full(n_ev, cf.OTHER, dtype=np.int64)
    for code, name in enumerate(cf.EVENT_CODES):
        kind[events["kind"] == name] = code

    def ints(col: str) -> np.ndarray:  # -1 stands for a missing value, as `Extractor.feed` reads it
        v = np.asarray(events[col], dtype=np.float64)
        return np.where(np.isnan(v), -1, v).astype(np.int64)

    conquered = np.array(events["conquered"], dtype=bool)  # a writable copy: the types the install compiled for
    e_src, e_dst = np.nonzero(board.adjacency)
    colour = np.array([e.colour if e.kind == "destroy" else -1 for e in hyp.explanations], dtype=np.int64)
    obs, mats, cands = cf.extract_events(
        ints("game_id"), ints("seq"), ints("turn"), ints("player"), kind, ints("src"), ints("dst"), ints("armies"),
        ints("attacker_losses"), ints("defender_losses"), conquered, ints("opponent"), ints("stop_at"), n_players,
        np.searchsorted(e_src, np.arange(board.n_territories + 1)).astype(np.int64), e_dst.astype(np.int64),
        hyp._static, colour, board.continent_mask, board.continent_mask.sum(axis=1).astype(np.int64),
        board.continent_bonus.astype(np.int64), board.continent_of.astype(np.int64), _ODDS)
    parts = {name: np.ascontiguousarray(obs[:, j]) for j, name in enumerate(cf.SCALARS)}
    parts.update({name: np.ascontiguousarray(mats[:, j]) for j, name in enumerate(MATRICES)})
    parts.update({name: np.ascontiguousarray(cands[:, j]) for j, name in enumerate(cf.CANDIDATE_COLUMNS)})
    parts["consistent"] = parts["consistent"].astype(bool)
    for name in ("c_game_id", "c_player", "c_seq", "c_cand", "c_bits", "c_self_bits"):
        parts[name] = parts[name].astype(np.int64)  # whole numbers the candidate rows carried as floats
    parts["c_chosen"] = parts["c_chosen"].astype(bool)
    return parts


def feature_tables(run: str, hyp_name: str, parts: dict[str, list], hyp: Hypotheses) -> dict[str, pa.Table]:
    """Arrow tables: `rec_observations` (one row per observation) and `rec_pending` (observation x explanation)."""
    n = len(parts["game_id"])
    obs = pa.table({
        "run": text_column(run, n), "hypotheses": text_column(hyp_name, n),
        "game_id": pa.array(parts["game_id"], pa.int32()), "player": pa.array(parts["player"], pa.int8()),
        "obs": pa.array(parts["obs"] if "obs" in parts else _obs_index(parts), pa.int32()),
        "seq": pa.array(parts["seq"], pa.int32()),
        "turn": pa.array(parts["turn"], pa.int32()),
        "kind": pa.array(np.array(KINDS, dtype=object)[np.asarray(parts["kind"], dtype=np.int64)], pa.string()),
        "territory": pa.array(parts["territory"], pa.int16()), "src": pa.array(parts["src"], pa.int16()),
        "n_owned": pa.array(parts["n_owned"], pa.int16()), "n_attack": pa.array(parts["n_attack"], pa.int16()),
        "n_fortify": pa.array(parts["n_fortify"], pa.int16()), "n_targets": pa.array(parts["n_targets"], pa.int16()),
        "engine_version": text_column(ENGINE_VERSION, n)})
    e = hyp.size
    stack = {k: np.asarray(parts[k]).reshape(n, e) if n else np.zeros((0, e)) for k in MATRICES}
    pend = pa.table({
        "run": text_column(run, (n * e)), "hypotheses": text_column(hyp_name, (n * e)),
        "game_id": pa.array(np.repeat(parts["game_id"], e), pa.int32()),
        "player": pa.array(np.repeat(parts["player"], e), pa.int8()),
        "obs": pa.array(np.repeat(obs.column("obs").to_numpy(), e), pa.int32()),
        "explanation": pa.array(np.tile(np.arange(e), n), pa.int8()),
        "owned_in": pa.array(stack["owned_in"].ravel(), pa.int16()),
        "attack_in": pa.array(stack["attack_in"].ravel(), pa.int16()),
        "fortify_in": pa.array(stack["fortify_in"].ravel(), pa.int16()),
        "member_size": pa.array(stack["member_size"].ravel(), pa.int16()),
        "consistent": pa.array(stack["consistent"].ravel().astype(bool), pa.bool_()),
        "targets_in": pa.array(stack["targets_in"].ravel(), pa.int16())})
    m = len(parts["c_game_id"])
    cands = pa.table({
        "run": text_column(run, m), "hypotheses": text_column(hyp_name, m),
        "game_id": pa.array(parts["c_game_id"], pa.int32()), "player": pa.array(parts["c_player"], pa.int8()),
        "seq": pa.array(parts["c_seq"], pa.int32()), "cand": pa.array(parts["c_cand"], pa.int32()),
        "odds": pa.array(parts["c_odds"], pa.float32()), "bits": pa.array(parts["c_bits"], pa.int32()),
        "self_bits": pa.array(parts["c_self_bits"], pa.int32()),
        "continent": pa.array(parts["c_continent"], pa.float32()),
        "self_continent": pa.array(parts["c_self_continent"], pa.float32()),
        "chosen": pa.array(parts["c_chosen"], pa.bool_())})
    return {"rec_observations": obs, "rec_pending": pend, "rec_candidates": cands}


def _obs_index(parts: dict[str, list]) -> list[int]:
    """Running observation number within each (game, player), in event order."""
    counter: dict[tuple[int, int], int] = {}
    idx = []
    for g, p in zip(parts["game_id"], parts["player"]):
        k = counter.get((g, p), 0)
        idx.append(k)
        counter[(g, p)] = k + 1
    return idx


def build_features(run: str, hyp_name: str = "cards6", data_dir: Path | None = None,
                   workers: int | None = None, dask_address: str | None = None, progress: bool = True,
                   chunk_games: int = 100) -> dict[str, int]:
    """Extract a run's observations once, write Parquet under `data/recognition/run=NAME/`, register in DuckDB.

    Local workers read their own chunk of games from the database, so the run's events are never all in memory;
    Dask workers (possibly on other machines) are sent their chunk's events."""
    source = generation("traces", run, data_dir)  # the games read, as they are before anything is read
    config = run_config(run, data_dir)
    build_hypotheses(load_board(config.board), hyp_name)  # an unknown name fails here, before any work
    game_ids = query("SELECT game_id FROM games WHERE run = ? ORDER BY 1", [run], data_dir).game_id
    if game_ids.empty:
        raise DataError(f"run {run!r} has no events")
    game_ids = game_ids.to_numpy()
    where, data = (run, hyp_name, config.board, config.n_players), str(paths.data_dir(data_dir))
    chunks = [(int(game_ids[lo]), int(game_ids[min(lo + chunk_games, len(game_ids)) - 1]))
              for lo in range(0, len(game_ids), chunk_games)]

    def write(stage: Path) -> None:
        if dask_address:
            # a cluster's workers may not see this disk: each is sent its chunk's events, read only as the task is
            # sent (the run's events never all in memory here), and sends back its files' Parquet bytes
            tasks = ((*where, events) for events in _events_of_chunks(run, chunks, data))
            for i, files in run_tasks(chunk_parquet, tasks, workers, dask_address, desc=f"features {run}",
                                      progress=progress, total=len(chunks)):
                for name, data_bytes in files.items():
                    write_bytes(data_bytes, _chunk_file(stage, name, i))
            return
        # local workers write their own chunk into the stage (published whole, or not at all, once all are done)
        for _ in run_tasks(chunk_files_from_db, [(*where, first, last, data, str(stage), i)
                                                 for i, (first, last) in enumerate(chunks)], workers,
                           desc=f"features {run}", progress=progress):
            pass

    return publish_run(paths.parquet_dir("recognition", "run", run, data_dir), run, write, data_dir, source=source)


CHUNKS_A_CONNECTION = 5  # chunks whose events one connection reads: an open costs more as a run's views list more
# files (some 30-60 ms at 10^4-10^6 games), and this process reads every chunk while the cluster computes


def _events_of_chunks(run: str, chunks: list[tuple[int, int]], data_dir: str) -> Iterator[dict[str, np.ndarray]]:
    """`chunk_events` of each chunk in turn, read `CHUNKS_A_CONNECTION` at a time on one connection, which is let
    go before they are handed on (a writer waits for readers)."""
    for i in range(0, len(chunks), CHUNKS_A_CONNECTION):
        with reading(Path(data_dir)):
            batch = [chunk_events(run, first, last, data_dir) for first, last in chunks[i:i + CHUNKS_A_CONNECTION]]
        yield from batch


def chunk_events(run: str, first: int, last: int, data_dir: str) -> dict[str, np.ndarray]:
    """The event columns of games `first`..`last` of a run, ordered by game and sequence."""
    cols = ", ".join(EVENT_COLUMNS)
    with reading(Path(data_dir)):
        source = run_source("events", run, Path(data_dir), (first, last))
        events = query(f"SELECT {cols} FROM {source} WHERE run = ? AND game_id BETWEEN ? AND ? ORDER BY game_id, seq",
                       [run, first, last], Path(data_dir))
    arrays = {c: events[c].to_numpy(dtype=object if events[c].dtype == object else None) for c in EVENT_COLUMNS}
    arrays["kind"] = events["kind"].to_numpy(dtype=object)
    for c in ("src", "dst", "opponent", "armies", "attacker_losses", "defender_losses", "stop_at"):
        arrays[c] = events[c].astype("float64").to_numpy()
    arrays["conquered"] = events["conquered"].fillna(False).astype(bool).to_numpy()
    return arrays


def chunk_tables(run: str, hyp_name: str, board_name: str, n_players: int, events: dict[str, np.ndarray]
                 ) -> dict[str, pa.Table]:
    """The feature tables of one chunk of a run's games."""
    hyp = build_hypotheses(load_board(board_name), hyp_name)
    return feature_tables(run, hyp_name, compiled_chunk(hyp, n_players, events), hyp)


def chunk_files_from_db(run: str, hyp_name: str, board_name: str, n_players: int, first: int, last: int,
                        data_dir: str, stage: str, index: int) -> None:
    """The feature tables of games `first`..`last`, read from the database and written as part `index` of the
    stage by the worker itself."""
    write_chunk_tables(chunk_tables(run, hyp_name, board_name, n_players, chunk_events(run, first, last, data_dir)),
                       Path(stage), index)


def chunk_parquet(run: str, hyp_name: str, board_name: str, n_players: int, events: dict[str, np.ndarray]
                  ) -> dict[str, bytes]:
    """`chunk_tables` as the Parquet bytes of their files, compressed where they are computed: a hundred games'
    tables are some 57 MB in Arrow and 2 MB in Parquet, and receiving them whole made the writer the cluster's
    bottleneck."""
    return {name: parquet_bytes(table) for name, table in
            chunk_tables(run, hyp_name, board_name, n_players, events).items()}


def _chunk_file(stage: Path, name: str, index: int) -> Path:
    return stage / name / f"part-{index:05d}.parquet"


def write_chunk_tables(tables: dict[str, pa.Table], stage: Path, index: int) -> None:
    for name, table in tables.items():
        write_parquet(table, _chunk_file(stage, name, index))


def features_from_parts(parts: dict[str, list], hyp: Hypotheses, truth: pd.DataFrame | None = None) -> Features:
    """Features straight from `extract_game` output (no database), e.g. for hand-made traces."""
    n, e = len(parts["game_id"]), hyp.size
    obs = pd.DataFrame({k: parts[k] for k in ("game_id", "player", "seq", "turn", "territory", "src", "n_owned",
                                              "n_attack", "n_fortify", "n_targets")})
    obs["kind"] = [KINDS[k] for k in parts["kind"]]
    obs["kind_code"] = np.asarray(parts["kind"], dtype=np.int64)
    obs["obs"] = _obs_index(parts)
    order = np.lexsort((obs.obs.to_numpy(), obs.player.to_numpy(), obs.game_id.to_numpy()))
    mats = {k: np.asarray(parts[k]).reshape(n, e)[order] for k in MATRICES}
    truth = truth if truth is not None else pd.DataFrame(columns=["game_id", "player", "card"])
    return _features(obs.iloc[order].reset_index(drop=True), mats, hyp, truth)


def _features(obs: pd.DataFrame, mats: dict[str, np.ndarray], hyp: Hypotheses, truth: pd.DataFrame) -> Features:
    return Features(obs, mats["owned_in"].astype(float), mats["attack_in"].astype(float),
                    mats["fortify_in"].astype(float), mats["member_size"].astype(float),
                    mats["consistent"].astype(bool), hyp, truth, mats["targets_in"].astype(float))


def features_stale(run: str, data_dir: Path | None = None) -> bool:
    """Whether the run's stored features were built from another generation of its games than the current one."""
    return not stale_sources("recognition", run, data_dir).empty


def load_features(run: str, hyp_name: str = "cards6", data_dir: Path | None = None, view: str = "full",
                  games: tuple[int, int] | None = None) -> Features:
    """The stored observation arrays of a run (built by `build_features`), sorted by game, player, obs; the `turns`
    view without the `EXTENDED_KINDS`; only games `first`..`last` when `games` is given (bounded memory)."""
    if view not in VIEWS:
        raise ValueError(f"unknown view {view!r}; known: {VIEWS}")
    with reading(data_dir):  # a handful of reads on one connection, released before any work on them
        return _load_features(run, hyp_name, data_dir, view, games)


def kind_codes(kinds: pd.Series) -> np.ndarray:
    """The `KIND` code of each observation kind: looked up once per distinct kind, not once per row."""
    codes, names = pd.factorize(kinds, use_na_sentinel=False)  # a missing kind is a name too, refused below
    unknown = ["(missing)" if pd.isna(k) else k for k in names if k not in KIND]
    if unknown:
        raise TraceError(f"unknown observation kind(s) {unknown}; known: {list(KINDS)}")
    return np.array([KIND[k] for k in names], dtype=np.int64)[codes]


OBSERVATION_KEYS = ("game_id", "player", "obs")
PENDING_KEYS = OBSERVATION_KEYS + ("explanation",)


def _pending_matrices(pend: dict[str, np.ndarray], obs: pd.DataFrame, e: int, run: str) -> dict[str, np.ndarray]:
    """The (N, E) matrices of the observations `obs` (sorted by game, player, obs) from their pending rows in any
    order. The files hold each observation's E rows together, observations in event order: sorting N blocks costs a
    fraction of sorting N x E rows; rows found in another order are sorted one by one. Every row is checked
    against its observation and explanation."""
    n, rows = len(obs), len(pend["explanation"])
    if rows != n * e:
        raise TraceError(f"recognition features of run {run!r} are corrupt: {rows} pending rows for "
                         f"{n} observations x {e} explanations")
    missing = [c for c, v in pend.items() if np.ma.getmaskarray(v).any()]
    if missing:
        raise TraceError(f"recognition features of run {run!r} are corrupt: missing values in {missing}")
    columns = {c: np.ma.getdata(v) for c, v in pend.items()}
    mats = _blocks_in_observation_order(columns, obs, e)
    if mats is None:  # not in blocks: every row sorted first
        order = np.lexsort([columns[c] for c in reversed(PENDING_KEYS)])
        mats = _blocks_in_observation_order({c: v[order] for c, v in columns.items()}, obs, e)
    if mats is None:
        raise TraceError(f"recognition features of run {run!r} are corrupt: the pending rows do not match the "
                         f"observations one to one (each with explanations 0..{e - 1})")
    return {c: mats[c] for c in MATRICES}


def _blocks_in_observation_order(columns: dict[str, np.ndarray], obs: pd.DataFrame, e: int
                                 ) -> dict[str, np.ndarray] | None:
    """The columns as (N, E) blocks sorted like `obs`, if every block is one observation's explanations 0..E-1
    (each row checked); else None."""
    mats = {c: v.reshape(len(obs), e) for c, v in columns.items()}
    order = np.lexsort([mats[c][:, 0] for c in reversed(OBSERVATION_KEYS)])
    mats = {c: m[order] for c, m in mats.items()}
    aligned = (mats["explanation"] == np.arange(e)).all() and all(
        (mats[c] == obs[c].to_numpy()[:, None]).all() for c in OBSERVATION_KEYS)
    return mats if aligned else None


def _load_features(run: str, hyp_name: str, data_dir: Path | None, view: str, games: tuple[int, int] | None
                   ) -> Features:
    config = run_config(run, data_dir)
    hyp = build_hypotheses(load_board(config.board), hyp_name)
    where, params = "run = ? AND hypotheses = ?", [run, hyp_name]
    if games is not None:
        where, params = where + " AND game_id BETWEEN ? AND ?", params + [int(games[0]), int(games[1])]
    try:
        obs = query("SELECT game_id, player, obs, seq, turn, kind, territory, src, n_owned, n_attack, n_fortify, "
                    f"n_targets FROM {run_source('rec_observations', run, data_dir, games)} WHERE {where} "
                    "ORDER BY game_id, player, obs", params, data_dir)
        # in the files' order: sorting the N x E rows in the query took most of a chunk's read
        pend = query_arrays(f"SELECT {', '.join(PENDING_KEYS + MATRICES)} FROM "
                            f"{run_source('rec_pending', run, data_dir, games)} WHERE {where}", params, data_dir)
    except DamagedFile:
        raise
    except Exception as exc:  # duckdb raises CatalogException when the tables do not exist yet
        raise DataError(f"no recognition features for run {run!r}: run `riskcore recognize --run {run}` "
                        f"(it builds them): {exc}") from None
    if obs.empty:
        raise DataError(f"no recognition features for run {run!r} with hypotheses {hyp_name!r}")
    if features_stale(run, data_dir):
        raise StaleData(f"the recognition features of run {run!r} were built from an earlier version of its games: "
                        f"rebuild them with `riskcore recognize --run {run} --rebuild-features`")
    mats = _pending_matrices(pend, obs, hyp.size, run)
    obs["kind_code"] = kind_codes(obs.kind)
    truth = query("SELECT game_id, player, agent, mission, won FROM players WHERE run = ? "
                  + ("AND game_id BETWEEN ? AND ? " if games is not None else "") + "ORDER BY game_id, player",
                  [run] + ([int(games[0]), int(games[1])] if games is not None else []), data_dir)
    truth["card"] = truth.mission.map({c: i for i, c in enumerate(hyp.cards)}).fillna(-1).astype(int)
    f = _features(obs, mats, hyp, truth)
    return f if view == "full" else f.select(~np.isin(obs.kind.to_numpy(), EXTENDED_KINDS))
