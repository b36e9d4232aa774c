"""Every rule constant of the game, defined once: read by the Python reference (`reference.py`, `cards.py`,
`board.py`), by the compiled kernel (`kernel.py`: numba freezes module-level globals into the machine code), by the
search's kernels and by the fuzzer's independent checker. Nothing outside `riskcore/engine/` restates them
(`tests/test_layers.py` greps for the literal tables).
"""

from __future__ import annotations

# ---- the turn -------------------------------------------------------------------------------------------------------
PHASES = ("setup", "claim", "reinforce", "attack", "occupy", "fortify", "over")
END_REASONS = ("", "domination", "mission", "turn_cap")  # how a game ended ("": not yet)
MISSION_KINDS = ("continents", "territories", "destroy")
# when and whose victory is tested (`GameConfig.win_test`; the kernel numbers them by position): "any_seat" after
# every action of a turn, the acting player first and, once anyone is out, every living seat; "mover" only the
# mover, after each of its placements, occupations and fortifications (the program Domination's
# `RiskGame.checkPlayerWon`)
WIN_TESTS = ("any_seat", "mover")

# ---- battles -------------------------------------------------------------------------------------------------------
ATTACKER_DICE = 3  # the most dice an attacker rolls (one fewer than the armies attacking, at most this)
DEFENDER_DICE = 2  # the most dice a defender rolls (at most its armies)

# ---- reinforcements ------------------------------------------------------------------------------------------------
LEAST_REINFORCEMENT = 3  # a player places at least this many armies a turn...
TERRITORIES_PER_ARMY = 3  # ...or one per this many territories owned, whichever is more, plus continent bonuses


def base_reinforcement(territories: int) -> int:
    """Armies a turn from territory count alone (continent bonuses and card trades come on top)."""
    return max(LEAST_REINFORCEMENT, territories // TERRITORIES_PER_ARMY)


# ---- cards ---------------------------------------------------------------------------------------------------------
CARD_SYMBOLS = ("infantry", "cavalry", "artillery")
WILD = len(CARD_SYMBOLS)  # the symbol index of a wild card
ESCALATING = (4, 6, 8, 10, 12, 15)  # armies for the 1st..6th trade of the game
ESCALATING_STEP = 5  # each later trade gives this many more than the one before
FIXED = (4, 6, 8)  # fixed-value variant: three alike, by symbol (a wild stands in for any)
FIXED_MIXED = 10  # fixed-value variant: one of each symbol
TERRITORY_BONUS = 2  # armies on a traded card's territory that the trader owns

# ---- the log -------------------------------------------------------------------------------------------------------
# every kind of event the engine logs; the kernel numbers them by position in this tuple
EVENT_KINDS = ("deal", "claim", "place", "reinforce", "trade", "attack", "retreat", "occupy", "end_attack",
               "fortify", "end_turn", "draw_card", "eliminate", "win", "draw")
