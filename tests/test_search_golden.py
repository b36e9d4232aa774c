"""Golden searches: AB's root values and tree sizes and the kept GB searches' decisions and node counts on fixed
positions, recorded once; any change to the search code must leave them exactly as they were."""

import json
from pathlib import Path

import numpy as np
import pytest

from riskcore.engine.board import load_board
from riskcore.search.abstract import AState, Model
from riskcore.search.exhaustive import MaxN
from riskcore.experiments.search import SEARCHES, policy_search

GOLDEN = json.loads((Path(__file__).parent / "golden" / "search.json").read_text())
# the searches' names when the golden file was recorded
NAMES = {"GB": "GB", "GB-restricted": "GB-restricted", "GB+learned strike + exact top-5 own ends": "GB+learned strikes",
         "AB turn + GB + ranked reply + ranked horizon": "AB turn + GB"}
POSITIONS = list(enumerate(GOLDEN["positions"]))


def _state(rec) -> AState:
    return AState(np.array(rec["owner"]), np.array(rec["armies"]), rec["to_move"])


@pytest.mark.parametrize("i,rec", POSITIONS)
def test_ab_values_and_tree_sizes_are_unchanged(i, rec):
    model, s = Model(load_board("small"), rec["players"], 2), _state(rec)
    for L, want in rec["ab"].items():
        before, ab = model.generated, MaxN(model)
        values = ab.root(s, int(L))
        assert [[list(a), v.tolist()] for a, v in values.items()] == want["values"]
        assert (ab.nodes, model.generated - before) == (want["nodes"], want["generated"])


@pytest.mark.parametrize("i,rec", POSITIONS)
def test_gb_decisions_and_node_counts_are_unchanged(i, rec):
    model, s = Model(load_board("small"), rec["players"], 2), _state(rec)
    for name, by_lookahead in rec["gb"].items():
        for L, want in by_lookahead.items():
            before = model.generated
            gb = policy_search(model, s.to_move, SEARCHES[NAMES[name]])
            goal, actions, value = gb.decide(s, int(L))
            got = {"nodes": gb.nodes, "generated": model.generated - before, "goal": goal.name if goal else "",
                   "actions": [list(a) for a in actions], "value": value.tolist()}
            assert got == want, f"{name} at {L} turns"
