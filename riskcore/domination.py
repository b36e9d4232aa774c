"""Import the command logs of the Java RISK program Domination as riskcore runs:
`riskcore import domination LOG... --run NAME`.

A log is one command a line: the commands of the seats (`newplayer`, `placearmies`, `attack`, `roll`, `move`,
`trade`, `movearmies`, ...) and the lines the hosting program writes to resolve chance (`PLAYER`, `MISSION`,
`PLACEALL`, `DICE`, `CARD`). One log may hold several games; a game ends at its first win, and what follows it
until the next game (`continue`, ...) is ignored. `.log` and `.log.gz` files are read.

Every game is replayed through riskcore's own engine, the log's chance outcomes standing in for chance, so an action
the rules forbid is an error naming the file and line, and the events the engine writes are riskcore's schema:
`riskcore replay` rebuilds and checks every imported game. Seats are renumbered so that the seat that began the
deal is seat 0 (riskcore deals and places in seat order from seat 0; the first real turn then falls to it, as in
the program); `games.first_seat` keeps the program's number of that seat and `players.name` the seat names.

Battles: a Domination battle is a sequence of rolls in which both sides choose their dice every roll (the
defender too). riskcore's whole battle lets both sides always roll the most dice, which cannot express that, so
every roll is one single-roll `attack` event with its own dice and losses (replayed exactly: dice limits, losses,
and the armies to move in after the last roll are all checked), and a `retreat` after rolls is a `retreat` event,
so two battles on one pair stay two. A battle retreated before any roll has no roll to record; it is kept as a
whole-battle event with no losses (`stop_at` = the attacker's rolling armies), the failed attack the reference's
recogniser counted, unless `drop_empty_battles`.

The rules the replay needs and riskcore takes as options: fixed or increasing card values, the program's card
symbols (board `classic-domination`: the classic map with the program's deck; `-81` and `-82`: the program's maps
with fewer borders, as a log may have been recorded on), the +2 of a traded card on the first owned card of
every trade (`trade_bonus="every_trade"`), and the program's win test (`win_test="mover"`: only the mover, after
its placements, occupations and fortifications, so a game may end on its fortify, with no `CARD` line after it).
Commands the recording program ignored, a placement after the reserve is spent, are skipped and counted in the
summary.

Missions: a `MISSION` number indexes the missions still undealt of the recording program's list, either the 6
continent missions (the reference study's recordings) or the program's full list (those 6, 18 territories with 2
armies, 24 territories, then "destroy seat k" for the seats in the game: `RiskGame.loadCards` drops the others).
The first list is the start of the second and a draw removes one mission keeping the order, so numbers that fit
the 6 continent missions name the same missions under either list; numbers that do not fit them need the full
list, unless the log names its first seat by name (`PLAYER NAME`: the reference study's fork, whose list is the 6
continent missions), which is refused as a contradiction. `missions=6` or `14` states the list instead, and a
number out of its range is refused.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import pyarrow as pa

from riskcore import ENGINE_VERSION, paths
from riskcore.engine.actions import Attack, EndAttack, EndTurn, Fortify, IllegalAction, Occupy, Place, Retreat, Trade
from riskcore.engine.board import load_board
from riskcore.engine.chance import TraceError
from riskcore.engine.config import GameConfig
from riskcore.db import publish_runs
from riskcore.engine import OCCUPY, REINFORCE, SETUP, new_game, step
from riskcore.storage import check_name, remove_leftovers, write_parquet
from riskcore.trace import GameRecord, parquet_options, records_to_tables

BOARD = "classic-domination"
# the program's territory ids 1..42, by riskcore name
DOMINATION_IDS = (
    "Alaska", "Northwest Territory", "Alberta", "Western United States", "Central America", "Greenland", "Ontario",
    "Quebec", "Eastern United States", "Venezuela", "Peru", "Brazil", "Argentina", "Iceland", "Scandinavia",
    "Ukraine", "Great Britain", "Northern Europe", "Western Europe", "Southern Europe", "North Africa", "Egypt",
    "Congo", "East Africa", "South Africa", "Madagascar", "Siberia", "Ural", "China", "Afghanistan", "Middle East",
    "India", "Siam", "Yakutsk", "Irkutsk", "Mongolia", "Japan", "Kamchatka", "Indonesia", "New Guinea",
    "Western Australia", "Eastern Australia")
# the program's mission lists: the 6 continent missions (the reference study's recordings), or all 14
MISSIONS_6 = ("Asia+South America", "Europe+Australia+1", "Asia+Africa", "Europe+South America+1",
              "North America+Australia", "North America+Africa")
MISSIONS_14 = MISSIONS_6 + ("18 territories x2", "24 territories") + tuple(f"destroy seat {k}" for k in range(1, 7))


def full_mission_list(n_players: int) -> tuple[str, ...]:
    """The program's full list as it deals it to `n_players` seats: the destroy missions of seats not in the game
    are dropped, the others keep the card file's order."""
    return MISSIONS_14[:len(MISSIONS_14) - 6 + n_players]


def fits(numbers: Sequence[int], size: int) -> bool:
    """Whether draws without replacement numbered `numbers` fit a list of `size` missions."""
    return all(0 <= i < size - k for k, i in enumerate(numbers))


class LogError(ValueError):
    """A log cannot be imported; the message names the file and line."""


@dataclass
class Line:
    number: int
    words: list[str]
    server: bool  # a line the hosting program wrote (PLAYER, MISSION, PLACEALL, CARD, DICE)

    @property
    def command(self) -> str:
        return self.words[0] if self.server else self.words[1]

    @property
    def args(self) -> list[str]:
        return self.words[1:] if self.server else self.words[2:]


@dataclass
class ImportSummary:
    games: int = 0
    ignored: dict[str, int] = field(default_factory=dict)  # commands the recording program ignored, by kind
    empty_battles: int = 0  # battles retreated before any roll (kept or dropped)
    full_list: int = 0  # mission games whose numbers needed the program's full mission list
    skipped: list[str] = field(default_factory=list)  # "FILE:LINE: reason" of each game that did not replay
    duplicates: list[str] = field(default_factory=list)  # "FILE:LINE: ..." of each game seen before
    runs: dict[str, int] = field(default_factory=dict)  # the runs written and their games

    def count(self, kind: str) -> None:
        self.ignored[kind] = self.ignored.get(kind, 0) + 1

    def merge(self, other: "ImportSummary") -> None:
        for kind, n in other.ignored.items():
            self.ignored[kind] = self.ignored.get(kind, 0) + n
        self.empty_battles += other.empty_battles
        self.full_list += other.full_list


MAX_LINE = 10_000  # characters: a longer line is not a command (the longest real one, PLACEALL, is ~130)
GAME_LINES = ("newplayer", "newgame", "closegame")  # what may come before a log's first game


def _excerpt(text: str, width: int = 80) -> str:
    return repr(text if len(text) <= width else text[:width] + "...")


def read_lines(path: Path, summary: "ImportSummary | None" = None) -> list[Line]:
    """The command lines of a log, read as they stream (a malformed line is named by its number as soon as it is
    read, whatever follows it). A line that is not UTF-8 is read as Latin-1 (a seat name typed on another
    system) and counted in `summary`."""
    import zlib

    opener = gzip.open if path.suffix == ".gz" else open
    out, started, number = [], False, 0
    try:
        with opener(path, "rb") as f:
            for number, data in enumerate(f, start=1):
                if len(data) > MAX_LINE:
                    raise LogError(f"{path}:{number}: a line of {len(data):,} characters is not a command "
                                   f"({_excerpt(data.decode('latin-1'))})")
                try:
                    raw = data.decode("utf-8")
                except UnicodeDecodeError:
                    raw = data.decode("latin-1")
                    if summary is not None:
                        summary.count("lines not UTF-8, read as Latin-1")
                words = raw.split()
                if not words:
                    continue
                server = words[0] in ("PLAYER", "MISSION", "PLACEALL", "CARD", "DICE")
                if not server and (len(words) < 2 or "#" not in words[0]):
                    raise LogError(f"{path}:{number}: not a command (a sender HOST#N and a name): {_excerpt(raw)}")
                line = Line(number, words, server)
                if not started and line.command not in GAME_LINES:
                    raise LogError(f"{path}:{number}: {line.command!r} before any game: a log begins with the "
                                   "newplayer lines of its first game")
                started = started or line.command == "newplayer"
                out.append(line)
    except (OSError, EOFError, zlib.error) as exc:
        raise LogError(f"{path}: cannot read{f' after line {number}' if number else ''}: "
                       f"{' '.join(str(exc).split())[:200]}") from None
    return out


def split_games(lines: list[Line]) -> list[list[Line]]:
    """The games of a log: each begins at its first `newplayer` (after `newgame`/`closegame`, or after a game
    whose `startgame` was seen)."""
    games: list[list[Line]] = []
    current: list[Line] = []
    started = False
    for line in lines:
        cmd = line.command
        if cmd in ("newgame", "closegame"):
            if current:
                games.append(current)
            current, started = [], False
            continue
        if cmd == "newplayer" and started:
            games.append(current)
            current, started = [], False
        if cmd == "startgame":
            started = True
        current.append(line)
    if current:
        games.append(current)
    return [g for g in games if any(line.command == "newplayer" for line in g)]


class LogChance:
    """Chance read from a log: the deal, the missions, the next roll's losses, the next card drawn."""

    def __init__(self, deal: list[int], missions: list[int]):
        self._deal, self._missions = deal, missions
        self.roll_losses: tuple[int, int] | None = None
        self.card: str | None = None  # the next draw: a territory id, "wildcard", or None when the log draws none
        self.card_line = True  # whether the turn's end has its CARD line (a winning fortify has none)
        self.drew = False

    def deal(self, n_territories: int, n_players: int) -> list[int]:
        return self._deal

    def missions(self, n_missions: int, n_players: int) -> list[int]:
        return self._missions

    def roll(self, attacker_dice: int, defender_dice: int) -> tuple[int, int]:
        out, self.roll_losses = self.roll_losses, None
        return out

    def battle(self, attackers: int, defenders: int, stop_at: int) -> tuple[int, int, int]:
        return 0, 0, 0  # only a battle retreated before any roll is a whole battle here

    def draw(self, pool: Sequence[int]) -> int:
        if self.card is None:
            raise TraceError("the player conquered this turn but the log draws no card" if self.card_line else
                             "the turn ends without its CARD line")
        card = 42 if self.card == "wildcard" else territory(self.card)
        if self.card == "wildcard":
            wild = [c for c in pool if c >= 42]
            if not wild:
                raise TraceError("the log draws a wild card that is not in the deck")
            card = wild[0]
        if card not in pool:
            raise TraceError(f"the log draws card {self.card}, which is not in the deck")
        self.drew, self.card = True, None
        return card


def program_rules(n_players: int, mode: str, card_values: str, board: str = BOARD) -> GameConfig:
    """riskcore's rule options that match the program's: +2 on every trade, cards straight back into the deck,
    setup placement continuing the deal's rotation, the win tested for the mover alone after its placements,
    occupations and fortifications; no turn cap (a recorded game ends when it ended)."""
    return GameConfig(board=board, n_players=n_players, mode=mode, card_values=card_values,
                      trade_bonus="every_trade", card_recycle="at_once", setup_start="after_deal", turn_cap=100_000,
                      win_test="mover")


def territory(token: str) -> int:
    """riskcore's index of the program's territory id."""
    try:
        tid = int(token)
    except ValueError:
        raise ValueError(f"territory id {token!r} is not a number") from None
    if not 1 <= tid <= 42:
        raise ValueError(f"territory id {tid} is out of range 1..42")
    return load_board(BOARD).index(DOMINATION_IDS[tid - 1])


@dataclass
class GameImport:
    """One game of a log, replayed: its record and what it says about the seats."""

    record: GameRecord
    card_values: str
    path: Path


class Replayer:
    """Drives riskcore's engine with one game's commands."""

    def __init__(self, path: Path, lines: list[Line], summary: ImportSummary, missions: int | None,
                 drop_empty_battles: bool, board: str = BOARD):
        """`missions`: the recording program's mission list, 6 or 14 (the full one), or None to read it from the
        log (the module's docstring)."""
        self.path, self.lines, self.summary, self.board = path, lines, summary, board
        self.mission_choice, self.drop_empty = missions, drop_empty_battles
        self.i = 0
        self._chosen: list[int] = []  # the wild cards of the trade being read
        self._after_setup = False  # the last command was a setup placement (the program ends that turn by a CARD)

    def fail(self, line: Line | None, message: str) -> LogError:
        where = f"{self.path}:{line.number}" if line else f"{self.path}"
        return LogError(f"{where}: {message if len(message) <= 300 else message[:300] + '...'}")

    def peek(self) -> Line | None:
        return self.lines[self.i] if self.i < len(self.lines) else None

    def take(self) -> Line:
        line = self.lines[self.i]
        self.i += 1
        return line

    # ---- the game's head: seats, settings, first seat, missions, deal ------------------------------------------------
    def head(self) -> tuple[list[tuple[str, str, str]], str, int, list[str], list[int]]:
        seats, settings, first, missions, deal = [], None, None, None, None
        by_name = False  # the PLAYER line names the first seat (the reference study's fork) rather than its index
        while self.peek() is not None and deal is None:
            line = self.take()
            cmd, args = line.command, line.args
            if cmd == "newplayer":
                if len(args) < 3 or args[0] not in ("human", "ai") or (args[0] == "ai" and len(args) < 4):
                    raise self.fail(line, "newplayer needs human COLOUR NAME or ai LEVEL COLOUR NAME")
                level = args[1] if args[0] == "ai" else ""
                name = " ".join(args[3:] if args[0] == "ai" else args[2:])
                seats.append(("human" if args[0] == "human" else f"domination:{level}", name, line.number))
            elif cmd == "startgame":
                if len(args) < 2 or args[0] not in ("mission", "domination") or args[1] not in ("fixed", "increasing"):
                    raise self.fail(line, f"unsupported game settings {' '.join(args)!r}: mission or domination "
                                          "mode, fixed or increasing cards")
                if args[0] == "domination" and "autoplaceall" not in args:  # mission mode always deals itself
                    raise self.fail(line, "a domination game without autoplaceall begins with the seats claiming "
                                          "territories in turn, which the importer does not read")
                settings = (args[0], "fixed" if args[1] == "fixed" else "escalating")
            elif cmd == "PLAYER":
                names = [s[1] for s in seats]
                token = " ".join(args)
                by_name = not (token.isdigit() and int(token) < len(seats))
                if by_name:
                    first = names.index(token) if token in names else None
                else:
                    first = int(token)
                if first is None:
                    raise self.fail(line, f"PLAYER {token!r} names no seat ({names})")
            elif cmd == "MISSION":
                missions = self.missions(line, len(seats), by_name)
            elif cmd == "PLACEALL":
                deal = self.deal(line)
            elif cmd in ("continue", "undo"):
                self.summary.count(cmd)
            else:
                raise self.fail(line, f"unexpected {cmd!r} before the deal")
        if deal is None or settings is None or first is None or not 2 <= len(seats) <= 6:
            raise self.fail(self.peek(), "truncated game: no complete head (seats, startgame, PLAYER, PLACEALL)")
        if settings[0] == "mission" and missions is None:
            raise self.fail(self.peek(), "a mission game without a MISSION line")
        return seats, settings, first, missions or [], deal

    def missions(self, line: Line, n: int, by_name: bool) -> list[str]:
        """The program draws without replacement: each number indexes the missions still unassigned, of the list
        the log's numbers and `PLAYER` line tell (or `self.mission_choice` states)."""
        if len(line.args) != n:
            raise self.fail(line, f"MISSION gives {len(line.args)} numbers for {n} seats")
        bad = next((token for token in line.args if not token.isdigit()), None)
        if bad is not None:
            raise self.fail(line, f"mission number {bad!r} is not a number")
        numbers = [int(token) for token in line.args]
        full = full_mission_list(n)
        listed = self.mission_list(line, numbers, full, by_name)
        self.summary.full_list += listed is full
        left = list(listed)
        return [left.pop(i) for i in numbers]

    def mission_list(self, line: Line, numbers: list[int], full: tuple[str, ...], by_name: bool) -> tuple[str, ...]:
        where = f"MISSION {' '.join(map(str, numbers))}"
        in_full = fits(numbers, len(full))
        if self.mission_choice == 6:
            if not fits(numbers, len(MISSIONS_6)):
                raise self.fail(line, f"{where}: out of range of the 6 continent missions (--missions 6)"
                                + (f", but within the program's full list of {len(full)} for {len(numbers)} seats: "
                                   "import it without --missions or with --missions 14" if in_full else ""))
            return MISSIONS_6
        if self.mission_choice == 14:
            if not in_full:
                raise self.fail(line, f"{where}: out of range of the program's full list, {len(full)} missions for "
                                      f"{len(numbers)} seats (the destroy missions of absent seats are not dealt)")
            return full
        if fits(numbers, len(MISSIONS_6)):  # the same missions under either list
            return MISSIONS_6
        if by_name:
            raise self.fail(line, f"{where}: out of range of the 6 continent missions, the list of the reference "
                                  "study's fork, whose logs name the first seat (PLAYER NAME): the mission list "
                                  "cannot be told; pass --missions 14 if this program dealt from its full list")
        if not in_full:
            raise self.fail(line, f"{where}: out of range of every mission list the program deals from (the 6 "
                                  f"continent missions, or its full list of {len(full)} for {len(numbers)} seats)")
        return full

    def deal(self, line: Line) -> list[int]:
        if len(line.args) != 42:
            raise self.fail(line, f"PLACEALL lists {len(line.args)} territories, not 42")
        try:
            order = [territory(t) for t in line.args]
        except ValueError as exc:
            raise self.fail(line, str(exc)) from None
        if len(set(order)) != 42:
            raise self.fail(line, "PLACEALL lists a territory twice")
        return order

    # ---- the game ---------------------------------------------------------------------------------------------------
    def play(self) -> GameImport:
        seats, (mode, card_values), first, mission_names, deal = self.head()
        n = len(seats)
        order = [(first + s) % n for s in range(n)]  # riskcore seat s is the program's seat order[s]
        board = load_board(self.board)
        catalog = [m["name"] for m in board.missions]

        def mission_index(name: str) -> int:
            if name.startswith("destroy seat "):  # the program's seat k (from 1): riskcore's colour of that seat
                seat = int(name.removeprefix("destroy seat ")) - 1
                return catalog.index(f"destroy {board.colours[order.index(seat) if seat < n else seat]}")
            return catalog.index(name)

        missions = [mission_index(mission_names[d]) for d in order] if mode == "mission" else []
        config = program_rules(n, mode, card_values, self.board)
        self.chance = LogChance(deal, missions)
        state = new_game(board, config, self.chance)
        self.state, self.config = state, config
        actions = 0
        while not state.is_terminal:
            line = self.peek()
            if line is None:
                raise self.fail(self.lines[-1] if self.lines else None,
                                f"truncated game: the log ends in turn {state.turn} before anyone has won")
            actions += self.command(self.take())
        rest = self.peek()
        if rest is not None and rest.command not in ("continue", "closegame", "newgame"):
            raise self.fail(rest, f"the game was won at line {self.lines[self.i - 1].number} but the log plays on "
                                  f"with {rest.command!r}: the log and the rules disagree")
        for line in self.lines[self.i:]:  # play after `continue` is not part of the game
            self.summary.count("continue" if line.command == "continue" else "commands after the win")
        agents = [seats[d][0] for d in order]
        names = [seats[d][1] for d in order]
        record = GameRecord(seed=0, agents=agents, state=state, actions=actions, missions=missions, names=names,
                            first_seat=first)
        return GameImport(record, card_values, self.path)

    def act(self, line: Line, action, defender_dice: int | None = None) -> int:
        try:
            step(self.state, action, defender_dice)
        except (IllegalAction, TraceError) as exc:
            raise self.fail(line, f"{line.command} {' '.join(line.args)}: {exc}") from None
        return 1

    def command(self, line: Line) -> int:
        """Apply one command (and the lines that complete it); returns the riskcore actions taken."""
        s, cmd, args = self.state, line.command, line.args
        try:
            if cmd == "placearmies":
                t, k = territory(args[0]), int(args[1])
                if s.reserve == 0 or s.phase not in (SETUP, REINFORCE):
                    self.summary.count("placearmies after the reserve was spent")
                    return 0
                setup = s.phase == SETUP
                taken = self.act(line, Place(t, k))
                self._after_setup = setup
                return taken
            if cmd == "trade":
                self._chosen = []
                return self.act(line, Trade(tuple(self.card_id(a) for a in args)))
            if cmd == "endtrade":
                if len(s.hands[s.current]) >= self.config.forced_trade_at:
                    raise self.fail(line, f"endtrade while holding {len(s.hands[s.current])} cards")
                return 0
            if cmd == "attack":
                return self.battle(line, territory(args[0]), territory(args[1]))
            if cmd == "endattack":
                return self.act(line, EndAttack())
            if cmd in ("movearmies", "nomove"):
                card = self.expect_card()
                if card is None and cmd == "nomove":  # only a fortify can win
                    raise self.fail(line, "the turn ends without its CARD line")
                action = EndTurn() if cmd == "nomove" else Fortify(territory(args[0]), territory(args[1]),
                                                                    int(args[2]))
                taken = self.act(line, action)
                if not s.is_terminal:  # a fortify that wins ends the game before the turn's end and its CARD
                    self.check_card(line, card)
                return taken
            if cmd == "CARD":  # after a setup placement; the turn's own CARD is read with its fortify
                if self._after_setup:
                    self._after_setup = False
                    return 0
                raise self.fail(line, "CARD without the end of a turn")
            if cmd in ("continue", "undo"):
                self.summary.count(cmd)
                return 0
        except LogError:
            raise
        except (ValueError, IndexError) as exc:
            raise self.fail(line, f"{cmd} {' '.join(args)}: {exc}") from None
        raise self.fail(line, f"unknown or misplaced command {cmd!r}")

    def card_id(self, token: str) -> int:
        hand = self.state.hands[self.state.current]
        if token == "wildcard":
            wild = [c for c in hand if c >= 42 and c not in self._chosen]
            if not wild:
                raise ValueError("a wild card that is not in the hand")
            self._chosen.append(wild[0])
            return wild[0]
        return territory(token)

    def expect_card(self) -> Line | None:
        """The turn's CARD line, if the next line is one; its card is the turn's draw."""
        nxt = self.peek()
        card = nxt if nxt is not None and nxt.command == "CARD" else None
        self.chance.card = card.args[0] if card is not None and card.args else None
        self.chance.card_line, self.chance.drew = card is not None, False
        return card

    def check_card(self, line: Line, card: Line | None) -> None:
        if card is None:
            raise self.fail(line, "the turn ends without its CARD line")
        card_line = self.take()
        if self.chance.card is not None and not self.chance.drew:
            raise self.fail(card_line, f"the log draws card {self.chance.card} though the player conquered nothing")
        self.chance.card = None

    def battle(self, line: Line, src: int, dst: int) -> int:
        """One Domination battle: rolls until a conquest, a retreat, or an attacker with one army left."""
        s, taken, rolls = self.state, 0, 0
        me = s.current
        if s.owner[src] != me or s.owner[dst] == me or not s.board.adjacency[src, dst] or s.armies[src] < 2:
            raise self.fail(line, f"attack {' '.join(line.args)}: not an attack the rules allow (own territory "
                                  "with 2+ armies onto an adjacent enemy territory)")
        while True:
            nxt = self.peek()
            if nxt is not None and nxt.command == "roll":
                a_line = self.take()
                d_line = self.take() if self.peek() is not None and self.peek().command == "roll" else None
                dice = self.take() if self.peek() is not None and self.peek().command == "DICE" else None
                if d_line is None or dice is None:
                    raise self.fail(a_line, "a roll needs the defender's roll and a DICE line")
                a_dice, d_dice = int(a_line.args[0]), int(d_line.args[0])
                self.chance.roll_losses = self.losses(dice, a_dice, d_dice)
                taken += self.act(a_line, Attack(src, dst, a_dice), d_dice)
                rolls += 1
                if s.phase == OCCUPY:
                    return taken + self.occupy(dice)
                if s.is_terminal or s.armies[src] < 2:
                    return taken
                continue
            if nxt is not None and nxt.command == "retreat":
                retreat = self.take()
                if rolls == 0:
                    self.summary.empty_battles += 1
                    if not self.drop_empty:
                        taken += self.act(line, Attack(src, dst, None, int(s.armies[src]) - 1))  # no roll
                elif s.battle is not None:  # the battle's end is in the trace (a new one may follow on the pair)
                    taken += self.act(retreat, Retreat())
                return taken
            if rolls:  # the program ends a battle itself when the attacker can roll no more
                return taken
            raise self.fail(nxt or line, "an attack needs its rolls or a retreat")

    def losses(self, line: Line, a_dice: int, d_dice: int) -> tuple[int, int]:
        """(attacker losses, defender losses) of a DICE line; its dice counts must be the rolls'."""
        try:
            na, nd = int(line.args[0]), int(line.args[1])
            faces = [int(x) for x in line.args[2:]]
        except (ValueError, IndexError):
            raise self.fail(line, f"malformed DICE line {' '.join(line.args)!r}") from None
        if (na, nd) != (a_dice, d_dice) or len(faces) != na + nd or not all(0 <= f <= 5 for f in faces):
            raise self.fail(line, f"DICE {' '.join(line.args)} contradicts the rolls ({a_dice} against {d_dice} "
                                  "dice, faces 0..5)")
        att, dfn = faces[:na], faces[na:]
        if att != sorted(att, reverse=True) or dfn != sorted(dfn, reverse=True):
            raise self.fail(line, f"DICE {' '.join(line.args)}: each side's faces come sorted high to low")
        d_loss = sum(a > d for a, d in zip(att, dfn))
        return min(na, nd) - d_loss, d_loss

    def occupy(self, dice_line: Line) -> int:
        s = self.state
        src, _, low = s.occupy
        high = int(s.armies[src]) - 1
        nxt = self.peek()
        if nxt is not None and nxt.command == "move":
            line = self.take()
            k = high if line.args[0] == "all" else int(line.args[0])
            return self.act(line, Occupy(k))
        if low == high:  # the program moves them itself when there is no choice
            return self.act(dice_line, Occupy(low))
        raise self.fail(nxt or dice_line, f"a conquest needs a move of {low}..{high} armies")


BORDERS = {81: "classic-domination-81", 82: "classic-domination-82", 83: BOARD}  # the recording program's maps


def import_logs(logs: Sequence[Path], run: str, data_dir: Path | None = None, missions: int | None = None,
                drop_empty_battles: bool = False, borders: int = 83, skip_invalid: bool = False
                ) -> tuple[dict[str, int], ImportSummary]:
    """Import every game of `logs` as run `run`, replayed on the map of `borders` borders (a log does not say
    which map it was recorded on; a recogniser whose observations depend on adjacency needs the right one).
    `missions`: the recording program's mission list, 6 (the continent missions) or 14 (its full list), or None to
    read it from each log (the module's docstring); a log that contradicts it, or from which it cannot be told, is
    refused.

    Written and registered only when every game imported, unless `skip_invalid`: then every game that replays is
    kept and each one that does not is listed in `summary.skipped` with its file, line and reason. Games of
    different settings (mode, card values) go to one run per setting, `run` suffixed with the setting
    (`summary.runs` names them); the counts returned are summed over the runs."""
    check_name("run", run)
    if missions not in (None, 6, 14):
        raise ValueError("--missions must be 6 (the continent missions) or 14 (the full list), or left out to read "
                         "the list from each log")
    if borders not in BORDERS:
        raise ValueError(f"--borders must be one of {sorted(BORDERS)} (the recording program's maps), not {borders}")
    summary = ImportSummary()
    games: list[GameImport] = []
    seen: dict[str, str] = {}  # a game's commands -> where it was first found
    for path in logs:
        path = Path(path)
        if not path.exists():
            raise LogError(f"{path}: no such log")
        for lines in split_games(read_lines(path, summary)):
            digest = hashlib.sha256("\n".join(" ".join(line.words) for line in lines).encode()).hexdigest()
            where = f"{path}:{lines[0].number}"
            if digest in seen:  # the same log given twice, or one game recorded twice
                summary.duplicates.append(f"{where}: the same game as {seen[digest]}, imported once")
                continue
            seen[digest] = where
            counted = ImportSummary()  # a skipped game's ignored commands are not counted
            try:
                games.append(Replayer(path, lines, counted, missions, drop_empty_battles, BORDERS[borders]).play())
            except LogError as exc:
                if not skip_invalid:
                    raise
                summary.skipped.append(str(exc))
                continue
            summary.merge(counted)
    if not games:
        raise LogError("no game found in " + ", ".join(map(str, logs))
                       + (f" that replays ({len(summary.skipped)} skipped)" if summary.skipped else ""))
    summary.games = len(games)
    groups: dict[tuple[str, str], list[GameImport]] = {}
    for g in games:
        groups.setdefault((g.record.state.config.mode, g.card_values), []).append(g)
    counts: dict[str, int] = {}
    runs = []
    for (mode, card_values), members in sorted(groups.items()):
        name = run if len(groups) == 1 else f"{run}-{_setting_suffix((mode, card_values), groups)}"
        check_name("run", name)
        config = program_rules(max(g.record.state.n_players for g in members), mode, card_values, BORDERS[borders])
        runs.append((name, [g.record for g in members], config, sorted({str(g.path) for g in members})))
        summary.runs[name] = len(members)
    for run_counts in land(runs, data_dir).values():  # every run at once: all new, or all as they were
        for k, v in run_counts.items():
            counts[k] = counts.get(k, 0) + v
    return counts, summary


def _setting_suffix(setting: tuple[str, str], groups: dict[tuple[str, str], list]) -> str:
    """The parts of a setting that differ between the groups: `fixed`, `mission-escalating`, ..."""
    differ = [i for i in range(2) if len({key[i] for key in groups}) > 1]
    return "-".join(setting[i] for i in differ)


def land(runs: list[tuple[str, list[GameRecord], GameConfig, list[str]]], data_dir: Path | None
         ) -> dict[str, dict[str, int]]:
    """Write the games' traces of each (run, records, config, source logs) and publish the runs together, one
    transaction registering them all (staged, then swapped in): a stop at any instant leaves every run old or every
    run new. Returns each run's counts."""
    data_dir = paths.data_dir(data_dir)
    remove_leftovers(paths.traces_dir(data_dir))
    return publish_runs([(paths.traces_dir(data_dir) / f"run={run}", run, _trace_writer(run, *rest))
                         for run, *rest in runs], data_dir)


def _trace_writer(run: str, records: list[GameRecord], config: GameConfig, sources: list[str]
                  ) -> Callable[[Path], None]:
    """What writes an imported run's tables into its staging directory."""

    def write(stage: Path) -> None:
        for i in range(0, len(records), 25):
            tables = records_to_tables(run, list(range(i, min(i + 25, len(records)))), records[i:i + 25])
            for name, table in tables.items():
                write_parquet(table, stage / name / f"part-{i // 25:05d}.parquet", parquet_options(table))
        agents = sorted({a for r in records for a in r.agents})
        meta = {"config": json.loads(config.to_json()), "agents": agents, "source": "domination",
                "logs": [Path(s).name for s in sources]}
        write_parquet(pa.table({"run": [run], "seed": pa.array([0], pa.int64()), "engine_version": [ENGINE_VERSION],
                                "config": [json.dumps(meta, sort_keys=True)], "games": pa.array([len(records)],
                                                                                                  pa.int32()),
                                "agents": [",".join(agents)], "mode": [config.mode],
                                "n_players": pa.array([config.n_players], pa.int8())}),
                      stage / "runs" / "part-00000.parquet")

    return write


