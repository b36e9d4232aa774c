"""AB: exhaustive max^n search over the atomic actions of the abstract model (the baseline GB is measured
against). Depth is counted in player turns: the search stops after `turns` ends of turn. Every player picks the
child that maximises its own value component; ties go to the first action in the model's fixed order.
"""

from __future__ import annotations

import numpy as np

from riskcore.search.abstract import END, AState, Model, maxn_search


class MaxN:
    def __init__(self, model: Model):
        self.model = model
        self.nodes = 0

    def _count(self) -> None:
        self.nodes += 1

    def _children(self, s: AState, turns: int):
        for a in self.model.actions(s):
            yield self.model.apply(s, a), turns - (a == END)

    def value(self, s: AState, turns: int) -> np.ndarray:
        return maxn_search(self.model, s, turns, self._children, self._count)

    def root(self, s: AState, turns: int) -> dict[tuple, np.ndarray]:
        """Value vector of every root action."""
        self.nodes += 1
        return {a: self.value(self.model.apply(s, a), turns - (a == END)) for a in self.model.actions(s)}
