"""The rules of RISK, in one room.

- `rules.py`: every rule constant and table (reinforcement rule, card values, symbols, phases, event kinds).
- `reference.py`: the rules as a Python state machine (`new_game`, `legal_actions`, `step`): the engine of record's
  specification, with `board.py` (maps), `cards.py` (sets and values), `battle.py` (dice and whole battles),
  `missions.py` (mission cards), `config.py` (rule options), `actions.py` and `chance.py` (where randomness enters).
- `kernel.py`: the same rules compiled (numba) on flat arrays, function by function, with one function per
  branch of `step` (`step_place`, ..., `step_end_turn`); the compiled agents (`agents/heuristic_kernel.py`) decide
  and call them.

The two forms are kept equal by the golden traces (`tests/test_golden.py`: byte-identical games), the fuzzer's
two-path replay (`riskcore fuzz`), the conformance and property tests; docs/rules.md says where each rule lives.
Importing this package loads the reference only; the kernel (numba) is imported by those who play on it.
"""

from riskcore.engine.reference import (ATTACK, CLAIM, EVENT_FIELDS, FORTIFY, OCCUPY, OVER, REINFORCE, SETUP,
                                       GameState, check_action, iter_legal_actions, legal_actions, new_game, step)

__all__ = ["ATTACK", "CLAIM", "EVENT_FIELDS", "FORTIFY", "OCCUPY", "OVER", "REINFORCE", "SETUP", "GameState",
           "check_action", "iter_legal_actions", "legal_actions", "new_game", "step"]
