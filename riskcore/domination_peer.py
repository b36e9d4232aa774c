"""Domination's own AI as a source of games: its peer program plays them and riskcore imports them.

The peer (`../shared/domination/peer/play-games`, Java 17: the program Domination's engine and "ai hard" players,
headless, seeded) writes the command log of every game it plays, `peer-SEED-Kp.log` (`-domination` appended in
domination mode), and a manifest of every seat's mission and the winner (`DIR/manifest.csv`). A game is a function
of its seed and seat count, so logs already in the folder are kept and only the missing ones are played.

`import_peer_games` plays N mission games of each seat count and imports them as a run; `play_peer_games` only
plays them. Where the peer or Java is missing and a log is not in the folder yet, neither plays anything and
`peer_missing` says why: `import_peer_games` returns None, `play_peer_games` raises `PeerMissing`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from riskcore import paths
from riskcore.domination import ImportSummary, import_logs

PEER_ENV = "RISKCORE_DOMINATION_PEER"  # the peer's play-games, when it is not beside the project
SEATS = (3, 4, 5, 6)  # the seat counts the peer plays
BORDERS = 81  # the peer plays the program's own map


class PeerMissing(RuntimeError):
    """The peer cannot run here (no peer program, or no Java)."""


def peer_program(peer: Path | None = None) -> Path:
    """`peer`, else `$RISKCORE_DOMINATION_PEER`, else `../shared/domination/peer/play-games` beside the project."""
    if peer is not None:
        return Path(peer)
    if os.environ.get(PEER_ENV):
        return Path(os.environ[PEER_ENV])
    return paths.project_root().parent / "shared" / "domination" / "peer" / "play-games"


def peer_missing(peer: Path | None = None) -> str | None:
    """Why the peer cannot run here, or None when it can."""
    program = peer_program(peer)
    if not program.is_file():
        return f"Domination's peer is not at {program} (set ${PEER_ENV} to its play-games)"
    java = os.environ.get("JAVA", "java")  # the peer's own variable for its JVM
    if shutil.which(java) is None:
        return f"no Java to run Domination's peer ({java!r} is not on the PATH; the peer needs Java 17)"
    return None


def peer_stem(seed: int, players: int, mode: str = "mission") -> str:
    """The peer's name for the log of a game (without `.log`)."""
    return f"peer-{seed}-{players}p" + ("-domination" if mode == "domination" else "")


def play_peer_games(folder: Path, games: int, seed: int = 0, players: int = 4, mode: str = "mission",
                    peer: Path | None = None) -> list[Path]:
    """The logs of `games` games of `players` seats, seeds `seed`..`seed + games - 1`, in `folder` (with their rows
    in `folder/manifest.csv`): the ones already there are kept, the others played by the peer."""
    if players not in SEATS or mode not in ("mission", "domination") or games < 0:
        raise ValueError(f"the peer plays 3 to 6 seats in mission or domination mode, not {games} games of "
                         f"{players} seats in {mode!r} mode")
    folder = Path(folder)
    logs = [folder / f"{peer_stem(s, players, mode)}.log" for s in range(seed, seed + games)]
    todo = [seed + i for i, log in enumerate(logs) if not log.exists()]
    if not todo:
        return logs
    missing = peer_missing(peer)
    if missing:
        raise PeerMissing(missing)
    folder.mkdir(parents=True, exist_ok=True)
    for start, count in seed_ranges(todo):  # the peer plays consecutive seeds and refuses to overwrite a log
        command = [str(peer_program(peer)), str(count), str(start), "--players", str(players), "--mode", mode,
                   "--logs", str(folder)]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"Domination's peer failed (exit {done.returncode}): {' '.join(command)}: "
                               f"{(done.stderr or done.stdout).strip()[-500:]}")
    return logs


def seed_ranges(seeds: list[int]) -> list[tuple[int, int]]:
    """Sorted seeds as (first, count) runs of consecutive seeds."""
    out: list[tuple[int, int]] = []
    for s in seeds:
        if out and out[-1][0] + out[-1][1] == s:
            out[-1] = (out[-1][0], out[-1][1] + 1)
        else:
            out.append((s, 1))
    return out


@dataclass(frozen=True)
class PeerRun:
    """A run of the peer's games: its name, the logs it was imported from (in game order) and their manifest."""

    run: str
    logs: tuple[Path, ...]
    manifest: Path
    summary: ImportSummary


def import_peer_games(run: str, folder: Path, games: int, seed: int = 0, players: Sequence[int] = SEATS,
                      data_dir: Path | None = None, peer: Path | None = None) -> PeerRun | None:
    """`games` mission games of each seat count in `players` (seeds `seed`..`seed + games - 1`; upstream's "ai
    hard" on every seat, increasing card values), played by the peer into `folder` (or kept from an earlier call)
    and imported as run `run` on the program's 81-border map, the missions read from the logs. None, importing
    nothing, when a log is missing and the peer cannot run here (`peer_missing` says why)."""
    try:
        logs = [log for k in players for log in play_peer_games(folder, games, seed, k, "mission", peer)]
    except PeerMissing:
        return None
    _, summary = import_logs(logs, run, data_dir, borders=BORDERS)
    return PeerRun(run, tuple(logs), Path(folder) / "manifest.csv", summary)
