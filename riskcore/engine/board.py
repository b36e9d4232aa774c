"""Immutable board data: territories, continents, borders, cards and mission cards, loaded and validated once.

A board file is JSON with `continents` (name, bonus, territories), `borders` (pairs of territory names), `cards`
(territory -> infantry|cavalry|artillery), `wild_cards`, `colours`, optional `positions` (x, y for pictures) and
`missions` (see `riskcore.engine.missions`). `classic.json` is the printed board (42 territories, 83 borders);
`small.json` is a 10-territory board for fast tests and exhaustive search. A file may instead name a `base` board
and the borders it lacks (`remove_borders`): `classic-domination-81` and `-82` are the maps Domination recordings
were played on.
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from riskcore.engine.missions import MissionError, validate_mission_specs
from riskcore.engine.rules import CARD_SYMBOLS, WILD, base_reinforcement
from riskcore.paths import BOARDS_DIR

__all__ = ["CARD_SYMBOLS", "WILD", "Board", "BoardError", "board_from_dict", "load_board"]


class BoardError(ValueError):
    """A board file is malformed; the message names the offending entry."""


@dataclass(frozen=True, eq=False)
class Board:
    """The fixed facts of a map. Territories are indexed 0..n-1 in file order (continent by continent)."""

    name: str
    territories: tuple[str, ...]
    continent_names: tuple[str, ...]
    continent_bonus: np.ndarray  # (n_continents,) int
    continent_of: np.ndarray  # (n_territories,) int
    adjacency: np.ndarray  # (n, n) bool, symmetric, no self loops
    card_symbol: np.ndarray  # (n_cards,) int in 0..3; cards 0..n-1 are territory cards, the rest wild
    colours: tuple[str, ...]
    positions: np.ndarray  # (n, 2) float
    missions: tuple[dict[str, Any], ...]
    neighbours: tuple[tuple[int, ...], ...] = field(repr=False)
    continent_members: tuple[np.ndarray, ...] = field(repr=False)
    continent_mask: np.ndarray = field(repr=False)  # (n_continents, n) bool

    @cached_property
    def continent_sizes(self) -> np.ndarray:
        return self.continent_mask.sum(axis=1)

    @cached_property
    def continent_sizes_list(self) -> list[int]:
        return [int(n) for n in self.continent_sizes]

    @cached_property
    def continent_bonus_list(self) -> list[int]:
        return [int(b) for b in self.continent_bonus]

    @property
    def n_territories(self) -> int:
        return len(self.territories)

    @property
    def n_continents(self) -> int:
        return len(self.continent_names)

    @property
    def n_cards(self) -> int:
        return len(self.card_symbol)

    def held_continents(self, owned: np.ndarray) -> np.ndarray:
        """Bool mask of the continents whose every territory is in `owned` (a bool mask of territories)."""
        return ~((self.continent_mask & ~owned[None, :]).any(axis=1))

    def reinforcements(self, owned: np.ndarray) -> int:
        """The armies a player owning `owned` places at the start of its turn: `rules.base_reinforcement` plus the
        bonuses of the continents held (card trades come on top)."""
        return self.reinforcements_for(int(owned.sum()), self.held_continents(owned).tolist())

    def reinforcements_for(self, territories: int, held: list[bool]) -> int:
        """The same from a territory count and the continents held (for callers that keep counts)."""
        return base_reinforcement(territories) + sum(b for b, whole in zip(self.continent_bonus_list, held) if whole)

    def index(self, territory: str) -> int:
        """The index of a territory by name; raises `KeyError` naming it."""
        try:
            return self._index[territory]
        except KeyError:
            raise KeyError(f"unknown territory {territory!r} on board {self.name!r}") from None

    def continent_index(self, continent: str) -> int:
        try:
            return self.continent_names.index(continent)
        except ValueError:
            raise KeyError(f"unknown continent {continent!r} on board {self.name!r}") from None

    @property
    def _index(self) -> dict[str, int]:
        cached = self.__dict__.get("_index_cache")
        if cached is None:
            cached = {t: i for i, t in enumerate(self.territories)}
            object.__setattr__(self, "_index_cache", cached)
        return cached

    @property
    def n_borders(self) -> int:
        return int(self.adjacency.sum() // 2)


def _require(cond: bool, message: str) -> None:
    if not cond:
        raise BoardError(message)


def _count(value) -> bool:
    """A whole number, and not a flag (`true` is 1 to Python, never a count here)."""
    return isinstance(value, int) and not isinstance(value, bool)


def board_from_dict(spec: dict[str, Any], source: str = "<dict>") -> Board:
    """Validate a board specification and build the `Board`; every error names the bad entry and the source."""
    where = f"board {source}"
    _require(isinstance(spec, dict), f"{where}: top level must be an object")
    for key in ("continents", "borders", "cards"):
        _require(key in spec, f"{where}: missing key {key!r}")
    _require(isinstance(spec["continents"], list), f"{where}: continents must be a list")
    _require(isinstance(spec["borders"], list), f"{where}: borders must be a list of pairs")
    _require(isinstance(spec["cards"], dict), f"{where}: cards must map territories to symbols")
    territories: list[str] = []
    continent_of: list[int] = []
    names: list[str] = []
    bonuses: list[int] = []
    for ci, cont in enumerate(spec["continents"]):
        _require(isinstance(cont, dict) and {"name", "bonus", "territories"} <= set(cont),
                 f"{where}: continent #{ci} needs name, bonus and territories")
        name = cont["name"]
        _require(isinstance(name, str) and name != "", f"{where}: continent #{ci} has a bad name {name!r}")
        _require(name not in names, f"{where}: duplicate continent name {name!r}")
        _require(_count(cont["bonus"]) and cont["bonus"] > 0,
                 f"{where}: continent {name!r} needs a positive whole-number bonus, not {cont['bonus']!r}")
        _require(isinstance(cont["territories"], list),
                 f"{where}: continent {name!r}: territories must be a list of names, not {cont['territories']!r}")
        _require(len(cont["territories"]) > 0, f"{where}: continent {name!r} has no territories")
        names.append(name)
        bonuses.append(cont["bonus"])
        for t in cont["territories"]:
            _require(isinstance(t, str) and t != "", f"{where}: continent {name!r} has a bad territory name {t!r}")
            _require(t not in territories,
                     f"{where}: territory {t!r} listed twice (each territory must be in exactly one continent)")
            territories.append(t)
            continent_of.append(ci)
    index = {t: i for i, t in enumerate(territories)}
    n = len(territories)
    adj = np.zeros((n, n), dtype=bool)
    for bi, border in enumerate(spec["borders"]):
        _require(isinstance(border, (list, tuple)) and len(border) == 2, f"{where}: border #{bi} must be a pair")
        a, b = border
        for t in (a, b):
            _require(t in index, f"{where}: border #{bi} {a!r}-{b!r} names unknown territory {t!r}")
        _require(a != b, f"{where}: border #{bi} joins {a!r} to itself")
        _require(not adj[index[a], index[b]], f"{where}: border {a!r}-{b!r} listed twice")
        adj[index[a], index[b]] = adj[index[b], index[a]] = True
    if "adjacency" in spec:  # an explicit directed list must be symmetric
        for t, ns in spec["adjacency"].items():
            for nb in ns:
                _require(t in index and nb in index, f"{where}: adjacency of {t!r} names unknown {nb!r}")
                _require(nb in spec["adjacency"].get(t, []) and t in spec["adjacency"].get(nb, []),
                         f"{where}: adjacency {t!r}->{nb!r} is not symmetric")
                adj[index[t], index[nb]] = True
    _require(n >= 2, f"{where}: needs at least two territories")
    # connected graph
    seen = {0}
    queue = deque([0])
    while queue:
        u = queue.popleft()
        for v in np.flatnonzero(adj[u]):
            if int(v) not in seen:
                seen.add(int(v))
                queue.append(int(v))
    if len(seen) != n:
        lonely = sorted(territories[i] for i in set(range(n)) - seen)
        raise BoardError(f"{where}: graph is not connected; unreachable from {territories[0]!r}: {lonely}")
    cards = spec["cards"]
    for t in cards:
        _require(t in index, f"{where}: card for unknown territory {t!r}")
    symbols = []
    for t in territories:
        _require(t in cards, f"{where}: territory {t!r} has no card")
        _require(cards[t] in CARD_SYMBOLS, f"{where}: card of {t!r} has unknown symbol {cards[t]!r}")
        symbols.append(CARD_SYMBOLS.index(cards[t]))
    wild = spec.get("wild_cards", 2)
    _require(_count(wild) and wild >= 0, f"{where}: wild_cards must be a non-negative whole number, not {wild!r}")
    symbols += [WILD] * wild
    colours = tuple(spec.get("colours", ["red", "blue", "green", "yellow", "black", "pink"]))
    _require(len(colours) >= 2 and len(set(colours)) == len(colours), f"{where}: colours must be unique, at least 2")
    pos = spec.get("positions", {})
    positions = np.zeros((n, 2))
    for i, t in enumerate(territories):
        if t in pos:
            positions[i] = pos[t]
        else:  # fall back to a circle so any board can be drawn
            angle = 2 * np.pi * i / n
            positions[i] = (50 + 40 * np.cos(angle), 30 + 25 * np.sin(angle))
    _require(isinstance(spec.get("missions", []), list), f"{where}: missions must be a list")
    missions = tuple(spec.get("missions", []))
    try:
        validate_mission_specs(missions, names, len(colours), where)
    except MissionError as exc:
        raise BoardError(str(exc)) from None
    cont_arr = np.array(continent_of, dtype=np.int64)
    mask = np.zeros((len(names), n), dtype=bool)
    mask[cont_arr, np.arange(n)] = True
    return Board(
        name=str(spec.get("name", source)),
        territories=tuple(territories),
        continent_names=tuple(names),
        continent_bonus=np.array(bonuses, dtype=np.int64),
        continent_of=cont_arr,
        adjacency=adj,
        card_symbol=np.array(symbols, dtype=np.int64),
        colours=colours,
        positions=positions,
        missions=missions,
        neighbours=tuple(tuple(int(v) for v in np.flatnonzero(adj[i])) for i in range(n)),
        continent_members=tuple(np.flatnonzero(mask[c]) for c in range(len(names))),
        continent_mask=mask,
    )


_CACHE: dict[str, Board] = {}


def load_board(name_or_path: str | Path = "classic") -> Board:
    """Load a packaged board by name (`classic`, `small`) or any board JSON file by path (cached)."""
    key = str(name_or_path)
    if key in _CACHE:
        return _CACHE[key]
    path = Path(key)
    if not path.suffix:
        path = BOARDS_DIR / f"{key}.json"
    if not path.exists():
        known = sorted(p.stem for p in BOARDS_DIR.glob("*.json"))
        raise BoardError(f"board {key!r} not found (packaged boards: {known}, or give a path to a JSON file)")
    board = board_from_dict(_read_spec(path), source=str(path))
    _CACHE[key] = board
    return board


def _read_spec(path: Path, depth: int = 0) -> dict[str, Any]:
    """A board file's specification; one that names a `base` board takes the base's entries, its own on top, and
    drops the borders it lists in `remove_borders` (a recording program's map that lacks a few of them)."""
    try:
        spec = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise BoardError(f"board {path}: invalid JSON: {exc}") from None
    if not isinstance(spec, dict) or "base" not in spec:
        return spec
    _require(depth < 4, f"board {path}: too many nested bases")
    base_path = BOARDS_DIR / f"{spec['base']}.json"
    _require(base_path.exists(), f"board {path}: base board {spec['base']!r} not found")
    merged = {**_read_spec(base_path, depth + 1),
              **{k: v for k, v in spec.items() if k not in ("base", "remove_borders")}}
    borders = [tuple(b) for b in merged["borders"]]
    for pair in spec.get("remove_borders", []):
        found = [b for b in borders if set(b) == set(pair)]
        _require(len(found) == 1, f"board {path}: remove_borders names {pair!r}, not a border of "
                                  f"{spec['base']!r}")
        borders.remove(found[0])
    merged["borders"] = [list(b) for b in borders]
    return merged
