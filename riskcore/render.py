"""Board pictures: territories at their map positions, coloured by owner, labelled with army counts, with a legend
naming the players."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Sequence

import sys

import matplotlib

if "ipykernel" not in sys.modules:  # in a notebook the kernel's inline backend shows the figures
    matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from matplotlib.patheffects import withStroke  # noqa: E402

from riskcore.engine.board import Board  # noqa: E402
from riskcore.storage import atomic_path  # noqa: E402

COLOURS = {"red": "#d62728", "blue": "#1f77b4", "green": "#2ca02c", "yellow": "#e6c229", "black": "#444444",
           "pink": "#e377c2"}
UNOWNED = "#ffffff"


WRAP = 50  # a border longer than this (in board units) runs round the map's edge: Alaska-Kamchatka


def arrow_ends(pos: np.ndarray, src: int, dst: int) -> tuple[tuple[float, float], tuple[float, float]]:
    """Where an attack's arrow starts and ends: across a border that runs round the map's edge, it leaves the
    attacker towards that edge instead of crossing the whole map."""
    (x1, y1), (x2, y2) = pos[src], pos[dst]
    if abs(x1 - x2) > WRAP:
        return (x1, y1), (x1 - 9 if x1 < x2 else x1 + 9, y1)
    return (x1, y1), (x2, y2)


def player_colour(board: Board, player: int) -> str:
    """The colour a player's territories are drawn in (its seat's colour on the board)."""
    return COLOURS.get(board.colours[player], "#888888") if player >= 0 else UNOWNED


def player_labels(board: Board, agents: Sequence[str], missions: Sequence[str | None] = ()) -> list[str]:
    """Legend labels per seat: colour, seat, agent, and the mission when given."""
    out = []
    for p, agent in enumerate(agents):
        label = f"{board.colours[p]}: player {p} ({agent})"
        if p < len(missions) and missions[p]:
            label += f", {missions[p]}"
        out.append(label)
    return out


MAX_ARMIES_DRAWN = 25  # a stack's circle grows with its armies up to here, so it cannot cover its neighbours' names


def dot_sizes(armies: np.ndarray) -> np.ndarray:
    """Marker areas (points squared) for army counts."""
    return 120 + 60 * np.sqrt(np.clip(armies, 0, MAX_ARMIES_DRAWN))


# names sit just under the largest circle a territory can have, so no circle ever covers its own name
NAME_OFFSET = -(np.sqrt(float(dot_sizes(np.array(MAX_ARMIES_DRAWN))) / np.pi) + 1)


def draw_map(ax, board: Board, name_size: float = 5.5) -> None:
    """The board's borders and territory names (wrapped to stay narrow, with a white halo so lines and circles
    never hide them); the axis fitted to the map and turned off."""
    pos = board.positions
    for a, b in zip(*np.nonzero(np.triu(board.adjacency))):
        (x1, y1), (x2, y2) = pos[a], pos[b]
        if abs(x1 - x2) > WRAP:  # wrap-around borders (Alaska-Kamchatka) drawn as two stubs
            ax.plot([x1, x1 - 3 if x1 < x2 else x1 + 3], [y1, y1], color="#bbbbbb", lw=0.8, zorder=1)
            ax.plot([x2, x2 - 3 if x2 < x1 else x2 + 3], [y2, y2], color="#bbbbbb", lw=0.8, zorder=1)
        else:
            ax.plot([x1, x2], [y1, y2], color="#bbbbbb", lw=0.8, zorder=1)
    for name, (x, y) in zip(board.territories, pos):
        ax.annotate(textwrap.fill(name, 11), (x, y), xytext=(0, NAME_OFFSET), textcoords="offset points",
                    ha="center", va="top", fontsize=name_size, linespacing=0.9, zorder=4,
                    path_effects=[withStroke(linewidth=1.6, foreground="white")])
    ax.set_xlim(pos[:, 0].min() - 5, pos[:, 0].max() + 5)
    ax.set_ylim(pos[:, 1].max() + 9, pos[:, 1].min() - 5)
    ax.set_axis_off()


def player_legend(ax, board: Board, labels: Sequence[str], fontsize: float = 7) -> None:
    """A legend of the players' colours below the map, never over it."""
    handles = [Patch(facecolor=player_colour(board, p), edgecolor="black", label=label)
               for p, label in enumerate(labels)]
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=2 if len(labels) > 3 else 1,
              fontsize=fontsize, frameon=False)


def draw_board(board: Board, owner: np.ndarray, armies: np.ndarray, ax=None, title: str = "",
               players: Sequence[str] | None = None, attack: tuple[int, int] | None = None):
    """Draw one position on a matplotlib axis (a new figure if none) and return the axis.

    `players`: a legend label per seat (`player_labels`); `attack`: (src, dst) of an attack to highlight."""
    if ax is None:
        _, ax = plt.subplots(figsize=(12, 7))
    pos = board.positions
    draw_map(ax, board)
    colours = [player_colour(board, int(o)) for o in owner]
    ax.scatter(pos[:, 0], pos[:, 1], s=dot_sizes(armies), c=colours, edgecolors="black", linewidths=0.6, zorder=2)
    for i, (x, y) in enumerate(pos):
        ax.text(x, y, str(int(armies[i])), ha="center", va="center", fontsize=8, color="white", weight="bold",
                zorder=3)
    if attack is not None:
        start, end = arrow_ends(pos, *attack)
        ax.annotate("", xy=end, xytext=start, zorder=5,
                    arrowprops={"arrowstyle": "-|>", "color": "black", "lw": 2.2, "shrinkA": 9, "shrinkB": 9})
    if players:
        player_legend(ax, board, players)
    ax.set_title(title)
    return ax


def save_board_png(board: Board, owner: np.ndarray, armies: np.ndarray, path: Path, title: str = "",
                   players: Sequence[str] | None = None) -> Path:
    fig, ax = plt.subplots(figsize=(12, 7))
    draw_board(board, owner, armies, ax, title, players)
    path = Path(path)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path
