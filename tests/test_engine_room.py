"""The rules live in one room (`riskcore/engine/`): one definition of every constant, the compiled kernel beside
its Python reference and tied to it by imports, agents' kernels that decide and leave the rules to the engine."""

import ast
import re
from dataclasses import dataclass, fields
from pathlib import Path

import pytest

from riskcore.engine import rules
from riskcore.engine.config import GameConfig

PACKAGE = Path(__file__).parents[1] / "riskcore"
ENGINE = PACKAGE / "engine"
# the literal forms a restated rule would take (and rules.py's own definition, so a pattern cannot go stale)
RESTATED = {
    "the escalating card table": r"\(\s*4,\s*6,\s*8,\s*10,\s*12,\s*15\s*\)",
    "the escalating step": r"15\s*\+\s*5\s*\*|\bESCALATING_STEP\s*=\s*5",
    "the fixed card values": r"\{\s*0:\s*4,\s*1:\s*6,\s*2:\s*8\s*\}|\(\s*4,\s*6,\s*8\s*\)",
    "the reinforcement rule": r"max\(\s*3\s*,[^)]*//\s*3\s*\)|\b(LEAST_REINFORCEMENT|TERRITORIES_PER_ARMY)\s*=\s*3",
    "the traded card's bonus": r"\bTERRITORY_BONUS\s*=",
    "the wild symbol": r"\bWILD\s*=",
    "the event kinds": r"[\"']end_attack[\"']\s*,\s*[\"']fortify[\"']",
    "the card symbols": r"[\"']infantry[\"']\s*,\s*[\"']cavalry[\"']",
}


def _sources(outside_rules: bool = True):
    for path in sorted(PACKAGE.rglob("*.py")):
        if not (outside_rules and path == ENGINE / "rules.py"):
            yield path, path.read_text()


@pytest.mark.parametrize("what", sorted(RESTATED))
def test_no_rule_constant_is_typed_twice(what):
    pattern = re.compile(RESTATED[what])
    found = [str(path.relative_to(PACKAGE)) for path, text in _sources() if pattern.search(text)]
    assert not found, f"{what} restated outside riskcore/engine/rules.py in {found}"
    assert pattern.search((ENGINE / "rules.py").read_text()), f"the pattern for {what} no longer finds the rule"


def test_the_kernel_and_the_reference_import_the_same_rules():
    from tests.test_layers import GRAPH  # each module's riskcore imports, read from its source

    for name in ("kernel", "reference", "cards", "board", "battle"):
        assert "riskcore.engine.rules" in GRAPH[f"riskcore.engine.{name}"], name
    assert "riskcore.engine.kernel" in GRAPH["riskcore.agents.heuristic_kernel"]
    assert "riskcore.engine.kernel" in GRAPH["riskcore.search.kernels"]


RULE_FUNCTIONS = {"step", "check_victory", "begin_turn", "end_turn", "next_setup_player", "trade", "step_attack",
                  "mission_done", "trade_value", "sample_full_battle", "finish", "step_place", "step_trade",
                  "step_occupy", "step_end_attack", "step_fortify", "step_end_turn", "emit"}
# what an agent's kernel may take from the engine's: facts about the state, and the branches of `step`
AGENT_MAY_CALL = {"first_set", "holds", "room"} | {name for name in RULE_FUNCTIONS if name.startswith("step_")}


def test_agents_decide_and_hold_no_rules():
    held = {}
    for path in (PACKAGE / "agents").glob("*.py"):
        defined = {n.name for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.FunctionDef)}
        held.update({f"{path.name}:{name}": True for name in defined & RULE_FUNCTIONS})
    assert not held, f"rules restated among the agents: {sorted(held)}"


def test_agents_apply_actions_only_through_the_branches_of_step():
    from riskcore.engine import kernel

    functions = {name for name, value in vars(kernel).items() if hasattr(value, "py_func")}
    for path in (PACKAGE / "agents").glob("*.py"):
        tree = ast.parse(path.read_text())
        taken, aliases = set(), set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == "riskcore.engine.kernel":
                taken |= {alias.name for alias in node.names}
            if isinstance(node, ast.ImportFrom) and node.module == "riskcore.engine":
                aliases |= {alias.asname or alias.name for alias in node.names if alias.name == "kernel"}
        taken |= {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)
                  and isinstance(node.value, ast.Name) and node.value.id in aliases}
        taken &= functions
        assert taken <= AGENT_MAY_CALL, f"{path.name} calls the kernel's {sorted(taken - AGENT_MAY_CALL)}"


def test_every_event_kind_the_reference_logs_is_defined_in_rules():
    logged = set(re.findall(r"_emit\(\"(\w+)\"", (ENGINE / "reference.py").read_text()))
    assert logged == set(rules.EVENT_KINDS)
    assert len(set(rules.EVENT_KINDS)) == len(rules.EVENT_KINDS)


def test_the_kernel_maps_every_rule_option_and_refuses_an_unknown_one():
    from riskcore.agents.compiled import CONFIG_FIELDS, _rules

    assert set(CONFIG_FIELDS) == {f.name for f in fields(GameConfig)}, "say how the kernel honours every field"

    @dataclass(frozen=True)
    class Wider(GameConfig):
        fog_of_war: bool = False

    with pytest.raises(ValueError, match="fog_of_war"):
        _rules(Wider())


@pytest.mark.filterwarnings("ignore::numba.core.errors.NumbaPendingDeprecationWarning")  # a Python list passed in
def test_the_kernel_plays_the_reference_tables():
    import numpy as np

    from riskcore.engine import kernel
    from riskcore.engine.cards import escalating_value, fixed_value

    escalating = np.array([0, 0, -1, 0, 0, 400, 5, 1, 1], dtype=np.int64)  # FIXED_VALUES 0, no cap
    for trades in range(12):
        assert kernel.trade_value(escalating, trades, [0, 1, 2]) == escalating_value(trades)
    fixed = escalating.copy()
    fixed[kernel.FIXED_VALUES] = 1
    for symbols in ([0, 0, 0], [1, 1, 1], [2, 2, 2], [0, 1, 2], [0, 0, rules.WILD], [rules.WILD] * 3, [0, 0, 1]):
        assert kernel.trade_value(fixed, 0, symbols) == fixed_value(symbols), symbols


def test_compiled_code_from_other_sources_is_forgotten(tmp_path):
    from riskcore.engine.kernel import forget_stale_compilations

    engine, agents = tmp_path / "engine", tmp_path / "agents"
    (agents / "__pycache__").mkdir(parents=True)
    engine.mkdir()
    (engine / "rules.py").write_text("WILD = 3\n")
    (engine / "kernel.py").write_text("@njit\ndef step(): pass\n")
    (agents / "plain.py").write_text("x = 1\n")  # no compiled code: not a source of the caches
    stale = agents / "__pycache__" / "heuristic_kernel.play-1.py311.nbi"
    stale.write_bytes(b"old")
    assert forget_stale_compilations(engine) and not stale.exists()
    for change, forgotten in ((None, False), (agents / "plain.py", False), (engine / "rules.py", True),
                              (engine / "kernel.py", True)):  # a callee's file changed: its callers' caches too
        stale.write_bytes(b"compiled")
        if change is not None:
            change.write_text(change.read_text() + "# changed\n")
        assert forget_stale_compilations(engine) == forgotten and stale.exists() != forgotten, change
