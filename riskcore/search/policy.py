"""Goal policies: which goals each player may choose at each turn of a goal-based search, and how a strike ends
its turn. One small frozen value configures `gbsearch.GBSearch`.

Goal kinds (`goals.Goal`): `secure`, `conquer` (one goal per continent), `break` and `eliminate` (one per player),
`strike` (one per territory), `grab`, and `ranked:N` (the N whole turns the learned end scorer ranks best).

- `kinds`: the goals of every turn, in this order (ties between goals keep the earlier).
- `opponents`: `all` lets opponents choose among all their goals; `restricted` lets each consider only `secure`
  and conquering the continent it is closest to holding (a goal-restricting opponent model).
- `root`: `goals` (the paper's search) chooses among the root player's goals; `exhaustive` searches every action
  sequence of the root player's turn and puts the goal-based tree below each of its ends (a hybrid).
- `reply`: goal kinds added for the first reply (the turn right after the root turn).
- `horizon`: the goal kinds, and only those, of the last turn of the look-ahead, the second-last, ...
- `strike_ends`: where a `strike` with turns still to follow ends its turn: where its own value is highest at the
  end of the turn (`value`), or where the learned end scorer (`endscore.EndScorer`) picks (`learned`).
- `exact_own_ends`: the root player's own strikes with 1..k turns still to follow end where exact max^n over those
  turns values most, every node of those trees counted; `shortlist`: only the scorer's n best ends are searched.
"""

from __future__ import annotations

from dataclasses import dataclass

from riskcore.search.goals import Goal

BASE_KINDS = ("secure", "conquer", "break", "eliminate")
_PLAIN = ("secure", "grab")
_PER_CONTINENT, _PER_PLAYER, _PER_TERRITORY = ("conquer",), ("break", "eliminate"), ("strike",)


def _check_kind(kind: str) -> None:
    if kind in (*_PLAIN, *_PER_CONTINENT, *_PER_PLAYER, *_PER_TERRITORY):
        return
    if kind.startswith("ranked:") and kind.removeprefix("ranked:").isdigit():
        return
    raise ValueError(f"unknown goal kind {kind!r}: use secure, conquer, break, eliminate, strike, grab or ranked:N")


def expand(model, kinds: tuple[str, ...]) -> list[Goal]:
    """The goals of `kinds` on `model`'s board and players, in the order of the kinds."""
    out: list[Goal] = []
    for kind in kinds:
        if kind in _PER_CONTINENT:
            out += [Goal(kind, c) for c in range(model.board.n_continents)]
        elif kind in _PER_PLAYER:
            out += [Goal(kind, q) for q in range(model.n_players)]
        elif kind in _PER_TERRITORY:
            out += [Goal(kind, t) for t in range(model.board.n_territories)]
        elif kind.startswith("ranked:"):
            out += [Goal("ranked", i) for i in range(int(kind.removeprefix("ranked:")))]
        else:
            out.append(Goal(kind))
    return out


@dataclass(frozen=True)
class GoalPolicy:
    kinds: tuple[str, ...] = BASE_KINDS
    opponents: str = "all"
    root: str = "goals"
    reply: tuple[str, ...] = ()
    horizon: tuple[tuple[str, ...], ...] = ()
    strike_ends: str = "value"
    exact_own_ends: int = 0
    shortlist: int = 0

    def __post_init__(self) -> None:
        choices = {"opponents": ("all", "restricted"), "root": ("goals", "exhaustive"),
                   "strike_ends": ("value", "learned")}
        for name, allowed in choices.items():
            if getattr(self, name) not in allowed:
                raise ValueError(f"goal policy: {name} must be one of {allowed}, got {getattr(self, name)!r}")
        for kind in (*self.kinds, *self.reply, *(k for level in self.horizon for k in level)):
            _check_kind(kind)
        if not self.kinds:
            raise ValueError("goal policy: kinds must name at least one goal kind")
        for name in ("exact_own_ends", "shortlist"):
            if getattr(self, name) < 0:
                raise ValueError(f"goal policy: {name} must be >= 0, got {getattr(self, name)}")
        if self.shortlist and not self.exact_own_ends:
            raise ValueError("goal policy: a shortlist needs exact_own_ends > 0")

    @property
    def needs_scorer(self) -> bool:
        """Does the search consult the learned end scorer (learned strike ends, ranked turns, a shortlist)?"""
        every = (*self.kinds, *self.reply, *(k for level in self.horizon for k in level))
        return self.strike_ends == "learned" or self.shortlist > 0 or any(k.startswith("ranked:") for k in every)

    def turn_goals(self, model) -> list[Goal]:
        """The goals of every turn (the root's too, unless its turn is exhaustive)."""
        return expand(model, self.kinds)

    def reply_goals(self, model) -> list[Goal] | None:
        """The goals of the first reply, or None when it has the turn goals."""
        return self.turn_goals(model) + expand(model, self.reply) if self.reply else None

    def horizon_goals(self, model) -> tuple[list[Goal], ...]:
        """The goals of the last turn, the second-last, ..."""
        return tuple(expand(model, level) for level in self.horizon)
