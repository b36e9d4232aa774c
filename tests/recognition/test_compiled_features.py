"""The compiled extractor (`compiled_chunk`, what `build_features` stores) equals the Python reference
(`Extractor`, which `recognition.online` feeds) on every field of every observation and candidate: simulated
games under both hypothesis sets (`deck14`'s destroy explanations follow their colour's conquests) and imported
Domination games (retreats, single rolls, their own map). Also: the mission-blind continent value is the
`domination` agent's."""

from __future__ import annotations

import numpy as np
import pytest

from riskcore import paths
from riskcore.agents.heuristic_kernel import domination_values
from riskcore.db import query, run_config
from riskcore.domination import import_logs
from riskcore.engine.board import load_board
from riskcore.recognition.features import (CANDIDATE_FIELDS, MATRICES, Extractor, chunk_events, compiled_chunk,
                                           extract_chunk)
from riskcore.recognition.hypotheses import build_hypotheses

LOGS = paths.datasets_dir() / "domination"


def _assert_equal(data, run: str, hyp_name: str) -> int:
    config = run_config(run, data)
    hyp = build_hypotheses(load_board(config.board), hyp_name)
    last = int(query("SELECT max(game_id) AS g FROM games WHERE run = ?", [run], data).g[0])
    events = chunk_events(run, 0, last, str(data))
    reference = extract_chunk(hyp, config.n_players, True, events)
    compiled = compiled_chunk(hyp, config.n_players, events)
    n = len(reference["game_id"])
    assert n > 0 and len(reference["c_game_id"]) > 0
    for field in Extractor.FIELDS + CANDIDATE_FIELDS:
        want, got = np.asarray(reference[field]), np.asarray(compiled[field])
        if field in MATRICES:
            want = want.reshape(n, hyp.size)
        assert want.shape == got.shape, field
        assert np.array_equal(want, got), f"{field} differs at row {np.flatnonzero(want != got)[0]}"
    return n


@pytest.mark.parametrize("hyp_name", ["cards6", "deck14"])
def test_compiled_extraction_equals_the_reference_on_simulated_games(small_run, hyp_name):
    assert _assert_equal(small_run, "mixed", hyp_name) > 1000


@pytest.mark.parametrize("folder, pattern, borders", [("logs", "dom-*.log", 81), ("fork-ai", "*.log.gz", 82)])
def test_compiled_extraction_equals_the_reference_on_imported_games(tmp_path, folder, pattern, borders):
    logs = sorted((LOGS / folder).glob(pattern))[:6]
    _, summary = import_logs(logs, "imported", tmp_path, borders=borders)
    for run in summary.runs:
        _assert_equal(tmp_path, run, "cards6")


def test_the_continent_value_is_the_domination_agents():
    board = load_board("classic")
    hyp = build_hypotheses(board)
    rng = np.random.default_rng(5)
    sizes = board.continent_mask.sum(axis=1)
    for owner in [rng.integers(0, 4, board.n_territories) for _ in range(20)] + [np.where(board.continent_of == 5, 1,
                                                                                           0)]:
        extractor = Extractor(4, hyp)
        extractor.owner[:] = owner
        counts = np.stack([(board.continent_mask & (owner == p)).sum(axis=1) for p in range(4)])
        for p in range(4):
            want = domination_values(p, counts, sizes, board.continent_bonus, board.continent_of,
                                     np.ones(4, dtype=bool))
            assert np.array_equal(extractor.continent_values(p), want)
