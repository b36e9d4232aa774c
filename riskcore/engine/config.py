"""Game configuration: every rule variant is an explicit field, recorded with every run.

Classic rules by default. Two-player variant used here: 40 armies each and no neutral army (stated in the README).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from typing import Any

from riskcore.engine.rules import WIN_TESTS

STARTING_ARMIES = {2: 40, 3: 35, 4: 30, 5: 25, 6: 20}
# Options added after traces were first recorded: `to_json` writes them only when they differ from their default,
# so a configuration of the rules as they were (every default run, the golden traces) records the same text as before
# and a recorded configuration without them reads back as the default.
WRITTEN_WHEN_SET = ("win_test",)


class ConfigError(ValueError):
    """A configuration field has a bad value; the message names it."""


@dataclass(frozen=True)
class GameConfig:
    board: str = "classic"
    n_players: int = 4
    mode: str = "mission"  # "mission" | "domination"
    deal: str = "random"  # "random" territories dealt, or "claim" in turn
    setup_batch: int = 1  # armies each player places per setup turn (classic: 1)
    card_values: str = "escalating"  # "escalating" | "fixed"
    card_cap: int | None = None  # cap on escalating trade values (e.g. 30), None for no cap
    fortify: str = "adjacent"  # "adjacent" (classic) | "connected" (along owned paths)
    turn_cap: int = 400  # player turns; reaching it ends the game as a recorded draw
    forced_trade_at: int = 5  # must trade at the start of a turn holding this many cards
    elimination_trade_at: int = 6  # after taking an eliminated player's cards, trade down below 5
    starting_armies: int | None = None  # None: classic table by player count
    trade_bonus: str = "once_a_turn"  # the +2 of a traded card you own: "once_a_turn" (on the first owned card by
    # card id) or "every_trade" (on the first owned card in the order traded, as the program Domination does)
    setup_start: str = "seat0"  # who places the first initial army: "seat0", or "after_deal" (the seat after the
    # last one dealt a territory, continuing the deal's rotation, as the program Domination does)
    card_recycle: str = "when_empty"  # traded cards go back to the deck "when_empty" (shuffled in once it runs out)
    # or "at_once" (straight back, as the program Domination's `recycle` setting does)
    win_test: str = "any_seat"  # when and whose victory is tested: "any_seat" (after every action of a turn, the
    # acting player first, and once anyone is out every living seat, as a destroy mission may have fallen back to
    # its territory count) or "mover" (only the mover, after each of its placements, occupations and fortifications,
    # all territories first and then its mission, as the program Domination does)

    def __post_init__(self) -> None:
        checks = {
            "n_players": 2 <= self.n_players <= 6,
            "mode": self.mode in ("mission", "domination"),
            "deal": self.deal in ("random", "claim"),
            "setup_batch": self.setup_batch >= 1,
            "card_values": self.card_values in ("escalating", "fixed"),
            "card_cap": self.card_cap is None or self.card_cap >= 4,
            "fortify": self.fortify in ("adjacent", "connected"),
            "turn_cap": self.turn_cap >= 1,
            "forced_trade_at": self.forced_trade_at >= 3,
            "elimination_trade_at": self.elimination_trade_at >= 3,
            "starting_armies": self.starting_armies is None or self.starting_armies >= 1,
            "trade_bonus": self.trade_bonus in ("once_a_turn", "every_trade"),
            "setup_start": self.setup_start in ("seat0", "after_deal"),
            "card_recycle": self.card_recycle in ("when_empty", "at_once"),
            "win_test": self.win_test in WIN_TESTS,
        }
        for name, ok in checks.items():
            if not ok:
                raise ConfigError(f"bad game config field {name}={getattr(self, name)!r}")

    @property
    def armies_per_player(self) -> int:
        return self.starting_armies or STARTING_ARMIES[self.n_players]

    def to_dict(self) -> dict[str, Any]:
        """The fields as recorded (`WRITTEN_WHEN_SET` left out at their default); `from_dict` reads it back."""
        data = asdict(self)
        for name in WRITTEN_WHEN_SET:
            if data[name] == type(self).__dataclass_fields__[name].default:
                del data[name]
        return data

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "GameConfig":
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(f"unknown game config field(s) {unknown}; known: {sorted(known)}")
        return cls(**data)
