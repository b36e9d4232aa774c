"""Territory cards: valid sets and trade values.

Cards 0..n-1 are territory cards (card i shows territory i); the rest are wild. A set is three alike, one of each
symbol, or any two with a wild. Values follow the classic escalating table 4, 6, 8, 10, 12, 15, then +5 each trade,
optionally capped; or the fixed-value variant (3 infantry 4, 3 cavalry 6, 3 artillery 8, one of each 10).
"""

from __future__ import annotations

from itertools import combinations
from typing import Sequence

import numpy as np

from riskcore.engine.rules import ESCALATING, ESCALATING_STEP, FIXED, FIXED_MIXED, TERRITORY_BONUS, WILD

__all__ = ["TERRITORY_BONUS", "escalating_value", "find_sets", "fixed_value", "is_set"]


def is_set(symbols: Sequence[int]) -> bool:
    """Whether three card symbols (0..2, 3 = wild) form a tradable set."""
    if len(symbols) != 3:
        return False
    if WILD in symbols:
        return True
    distinct = len(set(symbols))
    return distinct == 1 or distinct == 3


def escalating_value(trade_index: int, cap: int | None = None) -> int:
    """Armies for the `trade_index`-th trade of the game (0-based), escalating table, optionally capped."""
    if trade_index < len(ESCALATING):
        value = ESCALATING[trade_index]
    else:
        value = ESCALATING[-1] + ESCALATING_STEP * (trade_index - len(ESCALATING) + 1)
    return min(value, cap) if cap is not None else value


def fixed_value(symbols: Sequence[int]) -> int:
    """Fixed-value variant: the best value the three symbols can stand for (wilds fill in)."""
    plain = [s for s in symbols if s != WILD]
    options = []
    if len(set(plain)) <= 1:  # three alike, wilds standing in
        options.append(FIXED[plain[0]] if plain else max(FIXED))
    if len(set(plain)) == len(plain):  # one of each, wilds standing in
        options.append(FIXED_MIXED)
    return max(options, default=0)


def find_sets(hand: Sequence[int], card_symbol: np.ndarray) -> list[tuple[int, int, int]]:
    """All tradable triples in a hand, as sorted card-id tuples."""
    return [tuple(sorted(c)) for c in combinations(hand, 3) if is_set([int(card_symbol[x]) for x in c])]
