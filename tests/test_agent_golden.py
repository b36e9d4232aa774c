"""Golden games of the searching and learning agents: a digest of each seeded game's events, so that moving or
speeding up an agent's code cannot change its play unnoticed."""

import hashlib
import json
from pathlib import Path

import pytest

from riskcore.engine.config import GameConfig
from riskcore.game import play_game

CASES = json.loads((Path(__file__).parent / "golden" / "agents.json").read_text())


@pytest.mark.parametrize("name", sorted(CASES))
def test_agent_game_is_unchanged(name):
    case = CASES[name]
    rec = play_game(GameConfig(**case["config"]), case["agents"], case["seed"])
    text = "\n".join("\t".join("" if v is None else str(v) for v in row) for row in rec.state.log)
    assert (len(rec.state.log), rec.winner) == (case["events"], case["winner"])
    assert hashlib.sha256(text.encode()).hexdigest() == case["sha256"]
