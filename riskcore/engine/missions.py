"""Secret mission cards (classic RISK) and their completion test.

Kinds, as in the board file's `missions` list:
- `continents`: hold every listed continent, plus `extra_continents` further continents of the player's choice.
- `territories`: hold at least `territories` territories with at least `min_armies` armies on each.
- `destroy`: eliminate colour `colour` yourself. If that colour is you, is not in play, or is eliminated by someone
  else, the mission becomes "hold `fallback_territories` territories" (classic rule).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Sequence

import numpy as np

from riskcore.engine.rules import MISSION_KINDS

KINDS = MISSION_KINDS


class MissionError(ValueError):
    """A mission spec is malformed; the message names the board and the mission."""


def validate_mission_specs(specs: Sequence[dict[str, Any]], continents: Sequence[str], n_colours: int,
                           where: str) -> None:
    """Raise `MissionError` naming the board (`where`) and the first malformed mission spec."""
    names = set()
    for i, m in enumerate(specs):
        name = m.get("name", "?") if isinstance(m, dict) else "?"
        label = f"{where}: mission #{i} {name!r}"
        if not isinstance(m, dict) or m.get("kind") not in KINDS:
            raise MissionError(f"{label}: kind must be one of {KINDS}")
        if not isinstance(m.get("name"), str) or not m["name"] or m["name"] in names:
            raise MissionError(f"{label}: mission names must be present, text and unique")
        names.add(m["name"])
        counts = {"continents": ("extra_continents",), "territories": ("territories", "min_armies"),
                  "destroy": ("colour", "fallback_territories")}[m["kind"]]
        for key in counts:
            if key in m and not _count(m[key]):
                raise MissionError(f"{label}: {key} must be a whole number, not {m[key]!r}")
        if m["kind"] == "continents":
            listed = m.get("continents")
            if not isinstance(listed, list) or not listed or not all(isinstance(c, str) for c in listed):
                raise MissionError(f"{label}: continents must be a non-empty list of continent names, not {listed!r}")
            bad = [c for c in listed if c not in continents]
            if bad:
                raise MissionError(f"{label}: unknown continents {bad}")
            if not 0 <= m.get("extra_continents", 0) <= len(continents) - len(listed):
                raise MissionError(f"{label}: extra_continents out of range")
        elif m["kind"] == "territories":
            if m.get("territories", 0) < 1 or m.get("min_armies", 1) < 1:
                raise MissionError(f"{label}: territories and min_armies must be positive")
        elif not 0 <= m.get("colour", -1) < n_colours:
            raise MissionError(f"{label}: colour must be in 0..{n_colours - 1}")


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True)
class Mission:
    """A compiled mission card; `index` is its position in the board's mission list."""

    index: int
    name: str
    kind: str
    continents: tuple[int, ...] = ()
    extra_continents: int = 0
    territories: int = 0
    min_armies: int = 1
    colour: int = -1

    @classmethod
    def from_spec(cls, index: int, spec: dict[str, Any], continent_names: Sequence[str]) -> "Mission":
        kind = spec["kind"]
        if kind == "continents":
            return cls(index, spec["name"], kind,
                       continents=tuple(list(continent_names).index(c) for c in spec["continents"]),
                       extra_continents=int(spec.get("extra_continents", 0)))
        if kind == "territories":
            return cls(index, spec["name"], kind, territories=int(spec["territories"]),
                       min_armies=int(spec.get("min_armies", 1)))
        return cls(index, spec["name"], kind, territories=int(spec.get("fallback_territories", 24)),
                   colour=int(spec["colour"]))

    def destroy_fallback(self, player: int, n_players: int, eliminated_by: np.ndarray) -> bool:
        """True when a destroy mission has turned into its territory-count fallback."""
        c = self.colour
        return c == player or c >= n_players or (eliminated_by[c] >= 0 and eliminated_by[c] != player)

    def complete(self, player: int, owned: np.ndarray | None, armies: np.ndarray, held_continents,
                 n_players: int, eliminated_by: np.ndarray, n_owned: int | None = None) -> bool:
        """Whether `player` has fulfilled this mission.

        Args:
            owned: bool mask of the player's territories (may be None when `n_owned` is given and the mission
                does not count armies).
            held_continents: bools (array or list) of the continents the player holds entirely.
            eliminated_by: per colour, the player who eliminated it, or -1.
            n_owned: the player's territory count, when the caller keeps it.
        """
        if self.kind == "continents":
            if not all(held_continents[c] for c in self.continents):
                return False
            return int(sum(held_continents)) - len(self.continents) >= self.extra_continents
        if n_owned is None:
            n_owned = int(owned.sum())
        if self.kind == "territories":
            if self.min_armies <= 1:
                return n_owned >= self.territories
            return int((owned & (armies >= self.min_armies)).sum()) >= self.territories
        if self.destroy_fallback(player, n_players, eliminated_by):
            return n_owned >= self.territories
        return bool(eliminated_by[self.colour] == player)


@lru_cache(maxsize=16)  # boards compare by identity; searching agents compile a board's missions per playout
def compile_missions(board) -> tuple[Mission, ...]:
    return tuple(Mission.from_spec(i, m, board.continent_names) for i, m in enumerate(board.missions))
