"""Imports of Domination's own games checked against the truth the program wrote beside them.

Domination's peer (`../shared/domination/peer/play-games N [SEED] --logs DIR`: the program's own AI, headless) writes
one command log per game and `DIR/manifest.csv`, a row per seat with the seat that started the deal, the seat's
name, its mission (the program's text), whether it won, the game's turns and how it ended. `check_logs` imports the
logs as a user would (`riskcore import domination LOG... --borders 81`, the mission list read from each log),
replays every imported game from its traces (`riskcore replay`), and compares each game with its rows: the first
seat, the seats' order, the winner, every seat's mission, the turns and the end (a mission, or every territory: the
manifest's `elimination`). The expected missions are read from the program's text, not its mission numbers, so the
comparison does not share the importer's reading of the `MISSION` line.

`python -m riskcore.domination_check` (`make import-check`) generates games with the peer and checks them all; where
Java or the peer is missing it says so and checks nothing.
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from riskcore.domination import LogError, import_logs
from riskcore.engine.board import load_board

MANIFEST_COLUMNS = ("stem", "seed", "mode", "n_players", "first_seat", "seat", "name", "ai_level", "mission_index",
                    "mission", "won", "territories", "turns", "result")
END_REASONS = {"mission": "mission", "elimination": "domination"}  # the manifest's result -> riskcore's end_reason
BOARD = "classic-domination-81"  # the program's own map, which the peer plays


@dataclass(frozen=True)
class Seat:
    name: str
    mission: str  # the program's text ("" in domination mode)
    won: bool


@dataclass(frozen=True)
class GameTruth:
    """One game as the manifest states it; `seats` in the program's seat order."""

    stem: str
    mode: str
    first_seat: int
    turns: int
    result: str
    seats: tuple[Seat, ...]


def read_manifest(path: Path) -> dict[str, GameTruth]:
    """The games of a peer's `manifest.csv` by stem. A file with other columns, a game whose rows disagree or miss a
    seat, or a stem listed twice with different rows is refused, naming it."""
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        if tuple(reader.fieldnames or ()) != MANIFEST_COLUMNS:
            raise ValueError(f"{path}: not a peer manifest (columns {reader.fieldnames}, expected {MANIFEST_COLUMNS})")
        rows: dict[str, dict[int, dict]] = {}
        for row in reader:
            seats = rows.setdefault(row["stem"], {})
            seat = int(row["seat"])
            if seat in seats and seats[seat] != row:
                raise ValueError(f"{path}: game {row['stem']} lists seat {seat} twice, differently")
            seats[seat] = row
    games = {}
    for stem, seats in rows.items():
        first = seats[min(seats)]
        n = int(first["n_players"])
        game = {(r["mode"], r["n_players"], r["first_seat"], r["turns"], r["result"]) for r in seats.values()}
        if sorted(seats) != list(range(n)) or len(game) != 1:
            raise ValueError(f"{path}: game {stem} has seats {sorted(seats)} of {n} or rows that disagree")
        games[stem] = GameTruth(stem, first["mode"], int(first["first_seat"]), int(first["turns"]), first["result"],
                                tuple(Seat(seats[s]["name"], seats[s]["mission"], seats[s]["won"] == "1")
                                      for s in range(n)))
    return games


CONTINENTS = re.compile(r"Conquer the continents of (.+?) and (.+?)( and a third continent of your choice)?\.$")
DESTROY = re.compile(r"Destroy all of \S+ (.+)'s TROOPS\.")
TERRITORIES = {"Occupy 18 countries of your choice and occupy each with at least 2 armies.": "18 territories x2",
               "Occupy 24 countries of your choice and occupy each with at least 1 army.": "24 territories"}


def expected_mission(text: str, colour_of: dict[str, str]) -> str | None:
    """riskcore's name of the program's mission text; a destroy mission names its target's seat, whose riskcore
    colour `colour_of` gives by seat name. None in domination mode (no text)."""
    if not text:
        return None
    if text in TERRITORIES:
        return TERRITORIES[text]
    if m := CONTINENTS.match(text):
        return f"{m.group(1).title()}+{m.group(2).title()}" + ("+1" if m.group(3) else "")
    if (m := DESTROY.match(text)) and m.group(1) in colour_of:
        return f"destroy {colour_of[m.group(1)]}"
    raise ValueError(f"unknown mission text {text!r}")


def compare_game(truth: GameTruth, game: dict, players: list[dict]) -> list[str]:
    """What differs between an imported game (its `games` row and `players` rows, riskcore seat order) and its
    manifest rows; empty when they agree."""
    n, colours = len(truth.seats), load_board(BOARD).colours
    if game["n_players"] != n or len(players) != n:
        return [f"{n} seats in the manifest, {game['n_players']} imported"]
    problems = []
    if game["first_seat"] != truth.first_seat:
        problems.append(f"first seat {game['first_seat']}, the manifest's {truth.first_seat}")
    # riskcore's seat r is the program's seat (first + r) mod n
    order = [truth.seats[(truth.first_seat + r) % n] for r in range(n)]
    names = [p["name"] for p in players]
    if names != [s.name for s in order]:
        return problems + [f"seats {names}, the manifest's in that order {[s.name for s in order]}"]
    winner = next((s.name for s in truth.seats if s.won), None)
    got = names[game["winner"]] if game["winner"] >= 0 else None
    if got != winner:
        problems.append(f"winner {got}, the manifest's {winner}")
    if game["turns"] != truth.turns:
        problems.append(f"{game['turns']} turns, the manifest's {truth.turns}")
    if game["end_reason"] != END_REASONS.get(truth.result):
        problems.append(f"ended by {game['end_reason']}, the manifest's {truth.result}")
    colour_of = {name: colours[r] for r, name in enumerate(names)}
    for r, (seat, player) in enumerate(zip(order, players)):
        want = expected_mission(seat.mission, colour_of)
        if player["mission"] != want:
            problems.append(f"{seat.name}'s mission {player['mission']}, the manifest's {want} ({seat.mission!r})")
    return problems


def log_stem(path: Path) -> str:
    return path.name.removesuffix(".gz").removesuffix(".log")


@dataclass
class CheckReport:
    """How many logs imported, replayed and agreed with the manifest; `problems` names every other one."""

    logs: int = 0
    imported: int = 0
    replayed: int = 0
    matched: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.logs > 0 and self.matched == self.logs and not self.problems

    def add(self, other: "CheckReport") -> None:
        self.logs, self.imported = self.logs + other.logs, self.imported + other.imported
        self.replayed, self.matched = self.replayed + other.replayed, self.matched + other.matched
        self.problems += other.problems

    def summary(self) -> str:
        return (f"{self.logs} logs: {self.imported} imported, {self.replayed} replayed, {self.matched} with the "
                "manifest's first seat, seats, winner, missions, turns and end")


def check_logs(logs: Sequence[Path], manifest: Path | dict[str, GameTruth], data_dir: Path, run: str = "check",
               borders: int = 81) -> CheckReport:
    """Import `logs` (one game each, a peer's) into `data_dir` as run `run-<mode>` per mode, replay every game from
    its traces and compare it with `manifest`; a log that does not import or replay is a problem, not an error."""
    from riskcore.db import DataError
    from riskcore.replay import RunTraces, verify_game

    truth = read_manifest(manifest) if isinstance(manifest, Path) else manifest
    report = CheckReport(logs=len(logs))
    groups: dict[str, list[Path]] = {}
    for log in map(Path, logs):
        if log_stem(log) not in truth:
            report.problems.append(f"{log}: no rows in the manifest")
            continue
        groups.setdefault(truth[log_stem(log)].mode, []).append(log)
    for mode, group in sorted(groups.items()):
        name = f"{run}-{mode}"
        try:
            _, summary = import_logs(group, name, data_dir, borders=borders, skip_invalid=True)
        except LogError as exc:  # not one game imported
            report.problems.append(str(exc))
            continue
        report.problems += summary.skipped + summary.duplicates
        if list(summary.runs) != [name]:
            report.problems.append(f"run {name}: the logs went to runs {list(summary.runs)}, one per setting")
            continue
        imported = [log for log in group if not any(s.startswith(f"{log}:") for s in summary.skipped)]
        traces = RunTraces(name, data_dir)
        games = traces.df("SELECT * FROM games ORDER BY game_id").to_dict("records")
        if len(games) != len(imported):  # one game a log: game ids follow the logs' order
            report.problems.append(f"run {name}: {len(games)} games from {len(imported)} logs that imported")
            continue
        report.imported += len(imported)
        for log, game in zip(imported, games):
            try:
                verify_game(traces, int(game["game_id"]))
            except (ValueError, DataError) as exc:  # the trace's errors and the rules' (IllegalAction)
                report.problems.append(f"{log}: does not replay: {exc}")
                continue
            report.replayed += 1
            players = traces.df("SELECT * FROM players WHERE game_id = ? ORDER BY player",
                                [int(game["game_id"])]).to_dict("records")
            for p in players:  # DuckDB gives a missing mission as NaN
                p["mission"] = p["mission"] if isinstance(p["mission"], str) else None
            differs = compare_game(truth[log_stem(log)], game, players)
            report.problems += [f"{log}: {d}" for d in differs]
            report.matched += not differs
    return report


# ---- make import-check ----------------------------------------------------------------------------------------------
def main(argv: Sequence[str] | None = None) -> int:
    """Generate games with the peer (mission mode: GAMES of each seat count 3-6; domination mode: DOMINATION_GAMES
    of each) into a temporary folder and check them all; 0 when every one agrees with the manifest, or when the
    peer cannot run (said on stdout)."""
    from riskcore.domination_peer import SEATS, peer_missing, play_peer_games

    ap = argparse.ArgumentParser(prog="python -m riskcore.domination_check", description=main.__doc__)
    ap.add_argument("--games", type=int, default=100, help="mission games of each seat count (3-6)")
    ap.add_argument("--domination-games", type=int, default=10, help="domination-mode games of each seat count")
    ap.add_argument("--seed", type=int, default=1000, help="the first seed (domination mode: this + 1000)")
    ap.add_argument("--peer", type=Path, default=None, help="the peer's play-games (default: $RISKCORE_DOMINATION_PEER "
                                                           "or ../shared/domination/peer/play-games)")
    a = ap.parse_args(argv)
    missing = peer_missing(a.peer)
    if missing:
        print(f"import-check skipped: {missing}")
        return 0
    with tempfile.TemporaryDirectory(prefix="riskcore-import-check-") as tmp:
        folder = Path(tmp) / "logs"
        total = CheckReport()
        for mode, games, seed in (("mission", a.games, a.seed), ("domination", a.domination_games, a.seed + 1000)):
            if games <= 0:
                continue
            logs = [log for k in SEATS for log in play_peer_games(folder, games, seed, k, mode, a.peer)]
            report = check_logs(logs, folder / "manifest.csv", Path(tmp) / "data")
            print(f"{mode} mode, {games} games each of {len(SEATS)} seat counts from seed {seed}: {report.summary()}")
            total.add(report)
    for problem in total.problems:
        print(f"  {problem}")
    print(("passed: " if total.passed else "FAILED: ") + total.summary())
    return 0 if total.passed else 1


if __name__ == "__main__":
    sys.exit(main())
