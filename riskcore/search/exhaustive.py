"""AB: exhaustive max^n search over the atomic actions of the abstract model (the baseline GB is measured
against). Depth is counted in player turns: the search stops after `turns` ends of turn. Every player picks the
child that maximises its own value component; ties go to the first action in the model's fixed order.
"""

from __future__ import annotations

import numpy as np

from riskcore.search.abstract import END, AState, Model, maxn_better


class MaxN:
    def __init__(self, model: Model):
        self.model = model
        self.nodes = 0

    def value(self, s: AState, turns: int) -> np.ndarray:
        self.nodes += 1
        if turns == 0 or self.model.terminal(s):
            return self.model.evaluate(s)
        p = s.to_move
        best = None
        for a in self.model.actions(s):
            v = self.value(self.model.apply(s, a), turns - (a == END))
            if maxn_better(v, best, p):
                best = v
        return best

    def root(self, s: AState, turns: int) -> dict[tuple, np.ndarray]:
        """Value vector of every root action."""
        self.nodes += 1
        return {a: self.value(self.model.apply(s, a), turns - (a == END)) for a in self.model.actions(s)}
