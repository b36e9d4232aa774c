"""The explorer's board: drawn once per game, then redrawn in place for each event."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
# Figures are made without pyplot, so the explorer neither switches the notebook's backend nor shows its
# figures twice (they are rendered to PNG for the image widgets).
from matplotlib.figure import Figure

from riskcore.explore.frames import GameFrames
from riskcore.render import arrow_ends, dot_sizes, draw_map, player_legend

BOARD_INCHES, BOARD_DPI = (6.0, 4.2), 90  # 540 x 378 px: beside the beliefs in Lab's notebook on a 1400 px screen
BOARD_PIXELS = (round(BOARD_INCHES[0] * BOARD_DPI), round(BOARD_INCHES[1] * BOARD_DPI))  # the PNG's width, height


class BoardPicture:
    """The board of one game, drawn once; `show(k)` changes only what event k changes and renders a PNG."""

    def __init__(self, frames: GameFrames, missions: bool = False):
        self.f = frames
        pos = frames.board.positions
        self.fig = Figure(figsize=BOARD_INCHES, dpi=BOARD_DPI)
        self.ax = self.fig.subplots()
        self.fig.subplots_adjust(left=0.01, right=0.99, top=0.94, bottom=0.15)  # the legend's room below the map
        draw_map(self.ax, frames.board, name_size=6)
        self.dots = self.ax.scatter(pos[:, 0], pos[:, 1], s=dot_sizes(np.zeros(len(pos))),
                                    c=["#ffffff"] * len(pos), edgecolors="black", linewidths=0.6, zorder=2)
        self.numbers = [self.ax.text(x, y, "", ha="center", va="center", fontsize=7, color="white",
                                     weight="bold", zorder=3) for x, y in pos]
        self.arrow = self.ax.annotate("", xy=(0, 0), xytext=(0, 0), zorder=5, visible=False,
                                      arrowprops={"arrowstyle": "-|>", "color": "black", "lw": 2.2, "shrinkA": 8,
                                                  "shrinkB": 8})
        self.title = self.ax.set_title("", fontsize=9)
        self.legend(missions)

    def legend(self, missions: bool) -> None:
        labels = []
        for r in self.f.players.itertuples():
            text = f"{self.f.player_name(r.player)}"
            if missions and isinstance(r.mission, str):
                text += f": {r.mission}"
            labels.append(text)
        player_legend(self.ax, self.f.board, labels, fontsize=7)

    def show(self, k: int) -> bytes:
        f = self.f
        owner, armies = f.owners[k], f.armies[k]
        self.dots.set_facecolors([f.colour(int(o)) for o in owner])
        self.dots.set_sizes(dot_sizes(armies))
        for text, a in zip(self.numbers, armies):
            text.set_text(str(int(a)))
        attack = last_attack(f.events, k)
        if attack is None:
            self.arrow.set_visible(False)
        else:
            start, end = arrow_ends(f.board.positions, *attack)
            self.arrow.xy, self.arrow.xyann = end, start
            self.arrow.set_visible(True)
        row = f.events.iloc[k]
        self.title.set_text(f"{f.run}, game {f.game_id}: event {k} of {f.n_events - 1}, turn {int(row.turn)}")
        buf = io.BytesIO()
        self.fig.savefig(buf, format="png")
        return buf.getvalue()


def last_attack(events: pd.DataFrame, k: int) -> tuple[int, int] | None:
    """(src, dst) of the last attack at or before event k within the same turn, or None."""
    turn = events.turn.iat[k]
    for i in range(k, -1, -1):
        if events.turn.iat[i] != turn:
            return None
        if events.kind.iat[i] == "attack":
            return int(events.src.iat[i]), int(events.dst.iat[i])
    return None
