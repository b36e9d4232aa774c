"""Domination's own AI as a development family: mission games played fresh by the program where it is found."""

from __future__ import annotations

from pathlib import Path

from riskcore import paths

PEER_GAMES = 200  # games of 3 to 6 seats played fresh for the experiments
PEER_SEED = 20_000  # the seeds of its development games (none of the regression set's)


def peer_logs(data_dir: Path | None, games: int = PEER_GAMES) -> list[Path]:
    """Domination's own AI in mission mode, `games` games split evenly over 3 to 6 seats (seeds from
    `PEER_SEED`), played by the program where it is found (`domination_peer`); none where Java or the program is
    missing."""
    from riskcore.domination_peer import SEATS, PeerMissing, play_peer_games

    folder = paths.data_dir(data_dir) / "peer-logs"
    try:
        return [log for k in SEATS for log in play_peer_games(folder, max(1, games // len(SEATS)), PEER_SEED, k)]
    except PeerMissing:
        return []
