"""AB: exhaustive max^n search over the atomic actions of the abstract model (the baseline GB is measured
against). Depth is counted in player turns: the search stops after `turns` ends of turn. Every player picks the
child that maximises its own value component; ties go to the first action in the model's fixed order.

`nodes` is the size of the exhaustive tree (every node a plain depth-first max^n search would visit). With
`transpositions=True` (the default) a subtree met again (same state, same turns left; attack orders often
transpose) is not searched again: its value and its size are read from a table, so the count and the values are
exactly those of the plain search while the work is the number of distinct subtrees (`distinct`).

On a `Model` the search runs compiled (`kernels.maxn`, its table kept for the life of this object and bounded by
`table_mb`); on a `PlainModel` it runs in Python, the reference the compiled search is tested against.
"""

from __future__ import annotations

import numpy as np

from riskcore.search import kernels
from riskcore.search.abstract import (END, AState, Model, PlainModel, first_best, kernel_action, kernel_state,
                                     maxn_better)
from riskcore.search.transpositions import FIRST_SLOTS, REPLACED, STORED, VALUE, new_table


# The compiled transposition table's memory bound per search. Unbounded, a five-turn search of one small-board
# position could outgrow the machine; at the bound subtrees are searched again rather than kept (same results).
# A larger table saves work but, its look-ups missing the processor's caches, not time (`riskcore bench
# --search-table`).
TABLE_MB = 64


def table_slots(n_players: int, table_mb: float) -> int:
    """The largest power of two of table slots (8 bytes each for size, key, check and every player's value) that
    fits in `table_mb` megabytes."""
    slots = int(table_mb * 2**20) // (8 * (VALUE + n_players))
    if slots < FIRST_SLOTS:
        raise ValueError(f"a transposition table of {table_mb} MB is below the smallest table "
                         f"({FIRST_SLOTS} slots)")
    return 1 << (slots.bit_length() - 1)


class MaxN:
    def __init__(self, model: Model, transpositions: bool = True, table_mb: float = TABLE_MB):
        self.model = model
        self.transpositions = transpositions
        self.nodes = 0
        self.compiled = transpositions and not isinstance(model, PlainModel)
        self._table = (new_table(model.n_players, table_slots(model.n_players, table_mb))
                       if self.compiled else {})
        self._plain_nodes = 0

    @property
    def distinct(self) -> int:
        """Subtrees searched and stored: the work done, against `nodes`, the tree's size. Past the table's memory
        bound a subtree that was replaced and met again is searched, and counted, again."""
        if self.compiled:
            return int(self._table[1][0, STORED])
        return len(self._table) if self.transpositions else self._plain_nodes

    @property
    def table_bytes(self) -> int:
        """The compiled table's size now (it grows up to its bound)."""
        return int(self._table[0].nbytes) if self.compiled else 0

    @property
    def replaced(self) -> int:
        """Stored subtrees the compiled table's memory bound made it overwrite."""
        return int(self._table[1][0, REPLACED]) if self.compiled else 0

    def _search(self, s: AState, turns: int) -> tuple[np.ndarray, int]:
        if self.compiled:
            counter = np.zeros(1, dtype=np.int64)
            v, n = kernels.maxn(s.owner, s.armies, s.to_move, int(s.phase != "place"), s.attacks, turns,
                                self.model.tables, self._table, counter)
            self.model.generated += int(counter[0])
            return v, int(n)
        return self._plain(s, turns)

    def _plain(self, s: AState, turns: int) -> tuple[np.ndarray, int]:
        key = (s.key(), turns) if self.transpositions else None
        if key is not None and key in self._table:
            return self._table[key]
        self._plain_nodes += 1
        size = 1
        if turns == 0 or self.model.terminal(s):
            best = self.model.evaluate(s)
        else:
            best = None
            for a in self.model.actions(s):
                v, n = self._plain(self.model.apply(s, a), turns - (a == END))
                size += n
                if maxn_better(v, best, s.to_move):
                    best = v
        if key is not None:
            self._table[key] = (best, size)
        return best, size

    def value(self, s: AState, turns: int) -> np.ndarray:
        v, n = self._search(s, turns)
        self.nodes += n
        return v

    def root(self, s: AState, turns: int) -> dict[tuple, np.ndarray]:
        """Value vector of every root action."""
        self.nodes += 1
        return {a: self.value(self.model.apply(s, a), turns - (a == END)) for a in self.model.actions(s)}

    def principal_variation(self, s: AState, turns: int) -> list[tuple[tuple, AState]]:
        """The actions max^n picks from `s` until `turns` turns end (or the game does), each with the state it
        leads to. With transpositions the choices after the first are read from the table, so beyond `root`'s
        work this costs only the children of each chosen state. `nodes` grows by the tree below `s`, as `root`."""
        if self.compiled:
            return self._compiled_variation(s, turns)
        plan = []
        while turns > 0 and not self.model.terminal(s):
            children = {a: self.model.apply(s, a) for a in self.model.actions(s)}
            found = {a: self._search(c, turns - (a == END)) for a, c in children.items()}
            if not plan:
                self.nodes += 1 + sum(n for _, n in found.values())
            a = first_best({a: v[s.to_move] for a, (v, _) in found.items()})
            s, turns = children[a], turns - (a == END)
            plan.append((a, s))
        return plan

    def _compiled_variation(self, s: AState, turns: int) -> list[tuple[tuple, AState]]:
        m, counter = self.model, np.zeros(1, dtype=np.int64)
        codes, owners, armies, info, tree = kernels.principal_variation(
            s.owner, s.armies, s.to_move, int(s.phase != "place"), s.attacks, turns, m.tables, self._table, counter)
        m.generated += int(counter[0])
        self.nodes += int(tree)
        return [(kernel_action(c, len(s.owner), m.tables), kernel_state(owners[k], armies[k], *info[k]))
                for k, c in enumerate(codes.tolist())]
