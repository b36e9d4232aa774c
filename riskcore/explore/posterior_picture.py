"""The explorer's beliefs: a grid of each player's posterior over the mission cards at a turn (a column per player,
a row per card), each cell filled in the player's colour as deep as the probability, with the number in it, and
the true card boxed whatever its kind (a card outside the recogniser's hypotheses gets a row of its own, boxed the
same way, so a player holding a destroy or 24-territory card is not left without its truth)."""

from __future__ import annotations

import io
import textwrap

import numpy as np
import pandas as pd
from matplotlib.colors import to_rgba
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from riskcore.db import query
from riskcore.explore.frames import GameFrames
from riskcore.recognition.hypotheses import build_hypotheses
from riskcore.recognition.recognisers import label

POSTERIOR_DPI = 80


def readable_card(card: str) -> str:
    """`Europe+Australia+1` -> `Europe + Australia + any`."""
    return " + ".join("any" if part == "1" else part for part in card.split("+"))


def _short(text: str, width: int = 14) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"


class PosteriorPicture:
    """The grid of each player's posterior over the mission cards at a turn, drawn once and updated in place."""

    def __init__(self, frames: GameFrames, setting: str | None, data_dir=None):
        self.f = frames
        self.probs: dict[int, pd.DataFrame] = {}
        hypotheses = "cards6"
        if setting:
            post = query("SELECT player, point AS turn, explanation, prob, hypotheses FROM posteriors WHERE run = ? "
                         "AND setting = ? AND game_id = ? AND point_kind = 'turn' ORDER BY player, point, explanation",
                         [frames.run, setting, frames.game_id], data_dir)
            hypotheses = post.hypotheses.iat[0] if len(post) else hypotheses
            self.hyp = build_hypotheses(frames.board, hypotheses)
            for p, grp in post.groupby("player"):
                turns = grp.turn.unique()
                self.probs[int(p)] = pd.DataFrame(self.hyp.card_probs(grp.prob.to_numpy().reshape(len(turns), -1)),
                                                  index=turns, columns=self.hyp.cards)
        else:
            self.hyp = build_hypotheses(frames.board, hypotheses)
        self._draw(setting)

    def _draw(self, setting: str | None) -> None:
        cards, n = list(self.hyp.cards), len(self.f.players)
        outside = sorted({m for m in self.f.players.mission if isinstance(m, str) and m not in cards})
        rows = cards + outside  # a true card the hypotheses lack gets its own row
        self.fig = Figure(figsize=(2.2 + 0.62 * n, 0.27 * len(rows) + 1.1), dpi=POSTERIOR_DPI)
        ax = self.ax = self.fig.subplots()
        self.cells: dict[tuple[int, int], tuple[Rectangle, object]] = {}
        for p in range(n):
            for r in range(len(cards)):
                cell = Rectangle((p - 0.45, r - 0.42), 0.9, 0.84, facecolor=self.f.colour(p), edgecolor="none")
                ax.add_patch(cell)
                self.cells[(p, r)] = (cell, ax.text(p, r, "", ha="center", va="center", fontsize=6.5))
            truth = self.f.players.mission.iat[p]
            if isinstance(truth, str):
                ax.add_patch(Rectangle((p - 0.48, rows.index(truth) - 0.46), 0.96, 0.92, fill=False,
                                       edgecolor="black", lw=1.6, zorder=3))
        ax.set_xlim(-0.5, n - 0.5)
        ax.set_ylim(len(rows) - 0.5, -0.5)
        ax.set_yticks(range(len(rows)), [readable_card(c) + (" (not a hypothesis)" if c in outside else "")
                                         for c in rows], fontsize=6.5)
        names = [f"{self.f.board.colours[p]}\n{_short(str(self.f.players.agent.iat[p]))}"
                 + ("" if p in self.probs else "\n(none)") for p in range(n)]
        ax.set_xticks(range(n), names, fontsize=6.5)
        ax.xaxis.tick_top()
        ax.tick_params(length=0)
        for side in ax.spines.values():
            side.set_visible(False)
        title = f"P(card), {label(setting)}" if setting else "no recogniser's posteriors for this run"
        self.fig.suptitle(textwrap.fill(title + "; boxed: the true card", 70), fontsize=7, y=0.995)
        self.fig.tight_layout()

    def show(self, turn: float) -> bytes:
        for p in range(len(self.f.players)):
            table = self.probs.get(p)
            values = np.full(len(self.hyp.cards), np.nan)
            if table is not None and len(table):
                seen = table.index[table.index <= turn]
                values = table.loc[seen[-1]].to_numpy() if len(seen) else values
            for r, v in enumerate(values):
                cell, text = self.cells[(p, r)]
                known = not np.isnan(v)
                cell.set_facecolor(to_rgba(self.f.colour(p), 0.08 + 0.92 * v if known else 0.0))
                text.set_text(f"{v:.2f}" if known else "")
                text.set_color("white" if known and v > 0.55 else "black")
        buf = io.BytesIO()
        self.fig.savefig(buf, format="png")
        return buf.getvalue()
