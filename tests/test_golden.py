"""Golden traces: seeded games whose text trace is committed and diffed on every run.

A deliberate rule change regenerates them with `make golden` (RISKCORE_REGEN_GOLDEN=1) and bumps ENGINE_VERSION.
"""

import os
from pathlib import Path

import pytest

from riskcore.engine.config import GameConfig
from riskcore.engine import EVENT_FIELDS
from riskcore.game import play_game

GOLDEN = Path(__file__).parent / "golden"
CASES = {
    "small-3p-mission": (GameConfig(board="small", n_players=3), ["mission", "random", "domination"], 1),
    "small-2p-domination-claim": (GameConfig(board="small", n_players=2, mode="domination", deal="claim"),
                                  ["domination", "mission:focus=0"], 2),
    "classic-4p-mission": (GameConfig(), ["mission:focus=1", "mission:focus=0.5", "domination", "random"], 3),
}


def trace_text(config, agents, seed) -> str:
    rec = play_game(config, agents, seed)
    lines = [f"# config {config.to_json()}", f"# agents {agents} seed {seed} missions {rec.missions}",
             "\t".join(EVENT_FIELDS)]
    lines += ["\t".join("" if v is None else str(v) for v in row) for row in rec.state.log]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_trace(name):
    text = trace_text(*CASES[name])
    path = GOLDEN / f"{name}.tsv"
    if os.environ.get("RISKCORE_REGEN_GOLDEN") == "1" or not path.exists():
        path.write_text(text)
        if os.environ.get("RISKCORE_REGEN_GOLDEN") != "1":
            pytest.fail(f"golden trace {path.name} was missing and has been written; commit it")
    assert text == path.read_text(), f"trace of {name} changed: if the rules changed on purpose, run `make golden`"
