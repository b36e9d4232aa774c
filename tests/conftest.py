"""Shared fixtures: boards, and one small simulated run in a temporary data directory."""

from __future__ import annotations

import pytest

from riskcore.board import load_board
from riskcore.config import GameConfig
from riskcore.simulate import RunSpec, simulate


@pytest.fixture(scope="session")
def classic():
    return load_board("classic")


@pytest.fixture(scope="session")
def small():
    return load_board("small")


@pytest.fixture(scope="session")
def small_run(tmp_path_factory):
    """A 12-game mission run with mixed agents, simulated once per test session."""
    data = tmp_path_factory.mktemp("data")
    spec = RunSpec("mixed", 12, GameConfig(), ("mission", "random", "domination", "mission:focus=1"), 11, chunk=5)
    simulate(spec, data, workers=1, progress=False)
    return data
