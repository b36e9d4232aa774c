"""The kernel's `step_*` functions apply each action as the reference's `step` does: the same state, log, snapshots
and chance draws after every action of random games (every action the compiled games take, in any order the rules
allow, not only the heuristic agents' choices)."""

from dataclasses import replace

import numpy as np
import pytest

from riskcore.agents.compiled import battle_rolls, pack, unpack
from riskcore.engine import kernel as R
from riskcore.engine import legal_actions, new_game, step
from riskcore.engine.actions import Attack, EndAttack, EndTurn, Fortify, Occupy, Place, Trade
from riskcore.engine.board import load_board
from riskcore.engine.chance import RngChance
from tests.test_compiled_play import CONFIGS, _fields, _snapshots


def _compiled_form(action) -> bool:
    """The actions the compiled games take: single rolls and retreats stay in Python."""
    return not isinstance(action, Attack) or (action.stop_at == 0 and action.dice is None)


def _kernel_step(state, action) -> None:
    """Apply `action` to `state` on the kernel's arrays, with the branch of `step` that applies it."""
    g = pack(state, record=True)
    counts, chance = state.continent_counts().copy(), state.chance.rng  # the kernel changes its counts
    edge_src, edge_dst, nbr_start, nbr, continent_of, sizes, bonus, card_symbol = g.board
    state_arrays = (g.owner, g.armies, g.hands, g.hand_len, g.deck, g.discard)
    if isinstance(action, Place):
        R.step_place(g.log, g.sc, g.rules, g.setup_left, g.owner, g.armies, counts, sizes, bonus, g.alive,
                     g.eliminated_by, g.missions, g.hand_len, action.territory, action.armies)
    elif isinstance(action, Trade):
        hand = state.hands[state.current]
        i, j, k = sorted(hand.index(c) for c in action.cards)
        R.step_trade(g.log, g.sc, g.rules, *state_arrays, card_symbol, counts, sizes, g.alive, g.eliminated_by,
                     g.missions, i, j, k)
    elif isinstance(action, Attack):
        R.step_attack(g.log, chance, g.sc, g.rules, g.owner, g.armies, counts, sizes, continent_of, g.alive,
                      g.eliminated_by, g.missions, g.hands, g.hand_len, action.src, action.dst, battle_rolls())
    elif isinstance(action, Occupy):
        R.step_occupy(g.log, g.sc, g.rules, g.owner, g.armies, counts, sizes, g.alive, g.eliminated_by, g.missions,
                      g.hand_len, action.armies)
    elif isinstance(action, EndAttack):
        R.step_end_attack(g.log, g.sc, g.rules, g.owner, g.armies, counts, sizes, g.alive, g.eliminated_by,
                          g.missions)
    elif isinstance(action, Fortify):
        R.step_fortify(g.log, chance, g.sc, g.rules, *state_arrays, g.alive, g.eliminated_by, g.missions,
                       counts, sizes, bonus, action.src, action.dst, action.armies)
    else:
        assert isinstance(action, EndTurn)
        R.step_end_turn(g.log, chance, g.sc, g.rules, *state_arrays, g.alive, counts, sizes, bonus)
    unpack(g, state)


# and under the program Domination's win test (the mover alone, after its placements, occupations and fortifications)
STEP_CONFIGS = CONFIGS + [replace(CONFIGS[0], win_test="mover"), replace(CONFIGS[2], win_test="mover")]


@pytest.mark.parametrize("config", STEP_CONFIGS, ids=["mission-4", "domination-3-capped", "mission-5-domination-cards",
                                                      "mission-4-mover", "mission-5-domination-cards-mover"])
@pytest.mark.parametrize("seed", [0, 1])
def test_each_step_branch_applies_an_action_as_the_reference_step_does(config, seed):
    # the chance of both games from equal generators; the walk's choices from a third
    board, pick = load_board(config.board), np.random.default_rng(100 + seed)
    reference, kernel = (new_game(board, config, RngChance(np.random.default_rng(seed))) for _ in range(2))
    kinds = set()
    for _ in range(1500):
        if reference.is_terminal:
            break
        # mostly whole placements, so that a random walk reaches the late game's trades and eliminations
        actions = [a for a in legal_actions(reference) if _compiled_form(a)]
        whole = [a for a in actions if isinstance(a, Place) and a.armies == reference.reserve]
        action = actions[pick.integers(len(actions))] if not whole or pick.random() < 0.2 else \
            whole[pick.integers(len(whole))]
        step(reference, action)
        _kernel_step(kernel, action)
        kinds.add(type(action).__name__)
        assert _fields(kernel) == _fields(reference), action
        assert kernel.log == reference.log and _snapshots(kernel) == _snapshots(reference), action
        assert kernel.chance.rng.bit_generator.state == reference.chance.rng.bit_generator.state
    assert kinds == {"Place", "Trade", "Attack", "Occupy", "EndAttack", "Fortify", "EndTurn"}
