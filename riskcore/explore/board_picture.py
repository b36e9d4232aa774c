"""The explorer's board: the map (borders and names) drawn once per board, then for each event only what changes.

Speed: the names with their white halos are most of a board's drawing. The borders are rendered once into a
background that every event's picture starts from (Agg's `copy_from_bbox` / `restore_region`), the names once into
a transparent layer laid over the armies as `draw_map` stacks them (above the circles, under the attack arrow);
the owners, armies, arrow, title and legend are drawn for each event. A game switch on the same board keeps both.
"""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
# Figures are made without pyplot, so the explorer neither switches the notebook's backend nor shows its
# figures twice (they are rendered to PNG for the image widgets).
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from PIL import Image

from riskcore.explore.frames import GameFrames
from riskcore.render import arrow_ends, dot_sizes, draw_map, player_legend

BOARD_INCHES, BOARD_DPI = (6.0, 4.2), 90  # 540 x 378 px: beside the beliefs in Lab's notebook on a 1400 px screen
BOARD_PIXELS = (round(BOARD_INCHES[0] * BOARD_DPI), round(BOARD_INCHES[1] * BOARD_DPI))  # the PNG's width, height


class BoardPicture:
    """The board of a game: the map drawn once; `show(k)` draws event k's owners, armies and attack over it and
    returns a PNG. `use(frames)` moves it to another game on the same board, keeping the map."""

    def __init__(self, frames: GameFrames, missions: bool = False):
        pos = frames.board.positions
        self.board = frames.board
        self.fig = Figure(figsize=BOARD_INCHES, dpi=BOARD_DPI)
        self.canvas = FigureCanvasAgg(self.fig)
        self.ax = self.fig.subplots()
        self.fig.subplots_adjust(left=0.01, right=0.99, top=0.94, bottom=0.15)  # the legend's room below the map
        draw_map(self.ax, frames.board, name_size=6)
        self.names = list(self.ax.texts)
        self.dots = self.ax.scatter(pos[:, 0], pos[:, 1], s=dot_sizes(np.zeros(len(pos))),
                                    c=["#ffffff"] * len(pos), edgecolors="black", linewidths=0.6, zorder=2)
        self.numbers = [self.ax.text(x, y, "", ha="center", va="center", fontsize=7, color="white",
                                     weight="bold", zorder=3) for x, y in pos]
        self.arrow = self.ax.annotate("", xy=(0, 0), xytext=(0, 0), zorder=5, visible=False,
                                      arrowprops={"arrowstyle": "-|>", "color": "black", "lw": 2.2, "shrinkA": 8,
                                                  "shrinkB": 8})
        self.title = self.ax.set_title("", fontsize=9)
        self.background, self.names_layer = self._draw_layers()
        self.use(frames, missions)

    def _draw_layers(self):
        """(the figure with the borders alone, the names alone on a transparent layer: rows, columns, RGB and
        opacity)."""
        everything = [*self.ax.get_children(), self.fig.patch]
        shown = [a.get_visible() for a in everything]
        for a in everything:
            a.set_visible(a in self.ax.lines or a in (self.fig.patch, self.ax.patch, *self.ax.spines.values()))
        self.canvas.draw()
        background = self.canvas.copy_from_bbox(self.fig.bbox)
        for a in everything:
            a.set_visible(a in self.names)
        self.canvas.draw()
        names = np.array(self.canvas.buffer_rgba(), dtype=np.float32)
        names[..., 3] /= 255  # colours 0-255 as the canvas's, opacity 0-1
        for a, visible in zip(everything, shown):
            a.set_visible(visible)
        return background, names

    def use(self, frames: GameFrames, missions: bool = False) -> None:
        """Show another game (on the same board: the map is kept)."""
        if frames.board is not self.board and frames.board.name != self.board.name:
            raise ValueError(f"a picture of board {self.board.name!r} cannot show a game on {frames.board.name!r}")
        self.f = frames
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
        return self.render()

    def render(self) -> bytes:
        """The borders, then the armies, the names laid over them, then the arrow, title and legend, as a PNG."""
        self.canvas.restore_region(self.background)
        renderer = self.canvas.get_renderer()
        for artist in (self.dots, *self.numbers):
            artist.draw(renderer)
        pixels = np.asarray(self.canvas.buffer_rgba())
        alpha = self.names_layer[..., 3:]
        pixels[..., :3] = (self.names_layer[..., :3] * alpha + pixels[..., :3] * (1 - alpha) + 0.5).astype(np.uint8)
        for artist in (self.arrow, self.title, self.ax.get_legend()):
            if artist is not None and artist.get_visible():
                artist.draw(renderer)
        buf = io.BytesIO()
        Image.fromarray(np.asarray(self.canvas.buffer_rgba())).save(buf, format="png", compress_level=1)
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
