"""A cache of the search experiment's measurements, so a rerun repeats no search it has already done.

Every search `experiments.search.measure` runs is deterministic: its result depends only on the position, the
look-ahead, and the code and settings of the search. An entry's key hashes all of these: the code by the source of
the modules the search runs (AB: the abstract model, the expected battles and AB; a GB search also the goals, the
goal policy and GB), the settings by the board's arrays, the players, the attack limit, the mission targets and
the goal policy. Changing any of them misses the cache instead of reading a stale result, so adding a search to
the experiment runs only that search.

Stored as one Parquet file of (key, JSON payload) rows sorted by key, written atomically. JSON keeps float64
values exactly, so a run served from the cache writes the same tables as a fresh run. Deleting the file is safe.
"""

from __future__ import annotations

import hashlib
import inspect
import json
from functools import cache
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from riskcore.engine import battle
from riskcore.search import abstract, exhaustive, gbsearch, goals, policy
from riskcore.search.abstract import AState, Model
from riskcore.storage import write_parquet

AB_CODE = (abstract, battle.expected_battle, battle.expected_attack, exhaustive)
GB_CODE = (*AB_CODE, goals, policy, gbsearch)


class CacheError(ValueError):
    """The cache file cannot be read; the message names it."""


@cache
def _source_digest(objects: tuple) -> str:
    h = hashlib.sha256()
    for obj in objects:
        h.update(inspect.getsource(obj).encode())
    return h.hexdigest()


def _model_digest(model: Model) -> str:
    b = model.board
    h = hashlib.sha256(f"{model.n_players}|{model.max_attacks}|{model.target_weight}".encode())
    for arr in (b.adjacency, b.continent_mask, b.continent_bonus):
        h.update(arr.astype("int64").tobytes())
    for p in sorted(model.targets):
        h.update(f"|{p}:".encode() + model.targets[p].astype("int64").tobytes())
    return h.hexdigest()


def entry_key(model: Model, state: AState, lookahead: int, search: tuple | None = None,
              search_code: tuple = ()) -> str:
    """The key of AB's measurement (`search` None) or a GB search's (`search`: its definition, and
    `search_code` the modules outside `GB_CODE` that it runs)."""
    code = _source_digest(AB_CODE) if search is None else _source_digest((*GB_CODE, *search_code))
    h = hashlib.sha256(f"{code}|{_model_digest(model)}|{lookahead}|{search!r}|".encode())
    for part in state.key():
        h.update(part if isinstance(part, bytes) else f"{part}|".encode())
    return h.hexdigest()


def load(path: Path) -> dict[str, dict]:
    """The cached entries (none if the file does not exist)."""
    if not path.exists():
        return {}
    try:
        table = pq.read_table(path)
        if table.column_names != ["key", "payload"]:
            raise ValueError(f"columns {table.column_names}, expected ['key', 'payload']")
        return {k: json.loads(p) for k, p in zip(table["key"].to_pylist(), table["payload"].to_pylist())}
    except Exception as e:  # noqa: BLE001 - any failure to read is the same problem for the user
        raise CacheError(f"search cache {path} is unreadable ({e}); delete it or run with --no-cache") from e


def save(path: Path, entries: dict[str, dict]) -> None:
    keys = sorted(entries)
    payloads = [json.dumps(entries[k], sort_keys=True) for k in keys]
    write_parquet(pa.table({"key": keys, "payload": payloads}), path)
