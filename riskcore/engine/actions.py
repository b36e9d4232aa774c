"""Typed actions. Each is a small frozen value with a readable `str`; territories are board indices."""

from __future__ import annotations

from dataclasses import dataclass


class IllegalAction(ValueError):
    """An action breaks a rule; the message names the rule and the action."""


@dataclass(frozen=True, slots=True)
class Claim:
    """Setup, claim variant: take an unowned territory with one army."""
    territory: int


@dataclass(frozen=True, slots=True)
class Place:
    """Place armies on an owned territory (setup or reinforcement)."""
    territory: int
    armies: int = 1


@dataclass(frozen=True, slots=True)
class Trade:
    """Trade in a set of three cards (card ids)."""
    cards: tuple[int, int, int]


@dataclass(frozen=True, slots=True)
class Attack:
    """Attack `dst` from `src`.

    With `stop_at` None this is one roll with `dice` attacker dice (None: the most allowed). With `stop_at` = k the
    attack repeats with the most dice until `dst` falls or `src` has only k armies that may roll.
    """
    src: int
    dst: int
    dice: int | None = None
    stop_at: int | None = None


@dataclass(frozen=True, slots=True)
class Retreat:
    """Call off the battle of single rolls in progress (the pair the last roll attacked, which it did not take).

    Attacking another pair, or ending the attack phase, ends a battle too; a retreat says so explicitly, as a
    recorded program's players do (`riskcore.domination`), so a battle's end is in the trace: a recogniser that
    counts battles must not merge a retreat and a new attack on the same pair."""


@dataclass(frozen=True, slots=True)
class Occupy:
    """After a conquest, move `armies` from the attacking territory into the conquered one."""
    armies: int


@dataclass(frozen=True, slots=True)
class EndAttack:
    """End the attack phase."""


@dataclass(frozen=True, slots=True)
class Fortify:
    """The turn's one fortifying move; ends the turn."""
    src: int
    dst: int
    armies: int


@dataclass(frozen=True, slots=True)
class EndTurn:
    """End the turn without fortifying."""


Action = Claim | Place | Trade | Attack | Retreat | Occupy | EndAttack | Fortify | EndTurn
