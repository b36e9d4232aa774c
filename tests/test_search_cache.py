"""The search experiment's cache: a rerun served from it writes what a fresh run writes, runs no search it
holds, and misses whenever the search's code or settings change."""

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from riskcore.engine.board import load_board
from riskcore import paths
from riskcore.experiments import search as experiment
from riskcore.experiments import search_cache
from riskcore.experiments.search import SEARCHES, measure, positions
from riskcore.search.abstract import Model
from riskcore.storage import write_parquet


def _refuse(*args, **kwargs):
    raise AssertionError("a search ran although its result was cached")


@pytest.fixture(scope="module")
def measured():
    """Two positions measured fresh, with the cache the measurement filled, saved and loaded again."""
    states = positions(2, 3, 41)
    cache: dict = {}
    rows = [pd.DataFrame(measure(s, 3, 2, 2, "small", cache)) for s in states]
    return states, cache, rows


def test_a_run_from_the_cache_gives_the_same_rows_and_runs_no_search(measured, tmp_path, monkeypatch):
    states, cache, fresh = measured
    path = tmp_path / "cache" / "search.parquet"
    search_cache.save(path, cache)
    loaded = search_cache.load(path)
    assert loaded == cache
    monkeypatch.setattr(experiment.MaxN, "root", _refuse)
    monkeypatch.setattr(experiment.GBSearch, "decide", _refuse)
    for s, rows in zip(states, fresh):
        again = pd.DataFrame(measure(s, 3, 2, 2, "small", loaded))
        pd.testing.assert_frame_equal(again, rows)
    assert loaded == cache  # nothing new was searched


def test_a_cached_result_is_what_the_rows_report(measured):
    states, cache, _ = measured
    model = Model(load_board("small"), 3, 2)
    key = search_cache.entry_key(model, states[0], 2)
    doctored = {**cache, key: {**cache[key], "nodes": 12345}}
    rows = pd.DataFrame(measure(states[0], 3, 2, 2, "small", doctored)).set_index(["search", "lookahead"])
    assert rows.loc[("AB", 2), "nodes"] == 12345  # read, not searched again


def test_the_cache_misses_when_settings_search_position_or_code_change(measured, monkeypatch):
    states, cache, _ = measured
    model = Model(load_board("small"), 3, 2)
    base = search_cache.entry_key(model, states[0], 2)
    assert base in cache
    policies = list(SEARCHES.values())
    others = [search_cache.entry_key(Model(load_board("small"), 3, 3), states[0], 2),
              search_cache.entry_key(Model(load_board("classic"), 3, 2), states[0], 2),
              search_cache.entry_key(model, states[1], 2), search_cache.entry_key(model, states[0], 1),
              search_cache.entry_key(model, states[0], 2, (repr(policies[0]),)),
              search_cache.entry_key(model, states[0], 2, (repr(policies[1]),))]
    targeted = Model(load_board("small"), 3, 2, targets={0: np.arange(10) < 3})
    others.append(search_cache.entry_key(targeted, states[0], 2))
    assert len({base, *others}) == len(others) + 1
    monkeypatch.setattr(search_cache, "AB_CODE", (search_cache.gbsearch,))  # the searched code changed
    search_cache._source_digest.cache_clear()
    try:
        assert search_cache.entry_key(model, states[0], 2) != base
    finally:
        monkeypatch.undo()
        search_cache._source_digest.cache_clear()
    assert search_cache.entry_key(model, states[0], 2) == base


def test_a_corrupt_cache_file_is_named_in_the_error(tmp_path):
    path = tmp_path / "search.parquet"
    path.write_bytes(b"not parquet")
    with pytest.raises(search_cache.CacheError, match=str(path)):
        search_cache.load(path)
    write_parquet(pa.table({"key": ["k"]}), path)
    with pytest.raises(search_cache.CacheError, match="columns"):
        search_cache.load(path)
    assert search_cache.load(tmp_path / "missing.parquet") == {}


def test_an_interrupted_run_keeps_the_searches_its_finished_tasks_did(tmp_path, monkeypatch):
    measure_chunk, calls = experiment._measure_chunk, []

    def failing_second(states, *args):
        calls.append(states)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return measure_chunk(states, *args)

    monkeypatch.setattr(experiment, "_measure_chunk", failing_second)
    with pytest.raises(KeyboardInterrupt):
        experiment.run_search_experiment(n_positions=2, lookahead=1, deep_positions=0, agent_games=1, data_dir=tmp_path,
                                         workers=1, progress=False)
    saved = search_cache.load(paths.cache_dir(tmp_path) / experiment.CACHE_NAME)
    first: dict = {}
    measure(calls[0][0], 2, 1, 2, "small", first)  # the first task's position, as the run measured it
    assert saved and saved == first
