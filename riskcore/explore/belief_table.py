"""The explorer's beliefs: each player's posterior over the mission cards at a turn, as an HTML table (a column
per player, a row per card), each cell filled in the player's colour as deep as the probability, with the number
in it, and the true card boxed whatever its kind (a card outside the recogniser's hypotheses gets a row of its
own, boxed the same way, so a player holding a destroy or 24-territory card is not left without its truth).

HTML rather than a picture: the numbers are text at the notebook's size, and a column header names the agent
briefly with its full spec on hover."""

from __future__ import annotations

import html
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.colors import to_rgb

from riskcore.engine.missions import compile_missions
from riskcore.explore.beliefs import game_beliefs
from riskcore.explore.frames import GameFrames
from riskcore.params import SpecError, format_value, parse
from riskcore.recognition.hypotheses import build_hypotheses
from riskcore.recognition.recognisers import label

NAME_WIDTH = 12  # characters of an agent's name or parameters in a column header; the full spec is on hover


def readable_card(card: str) -> str:
    """`Europe+Australia+1` -> `Europe + Australia + any`."""
    return " + ".join("any" if part == "1" else part for part in card.split("+"))


def _cut(text: str, width: int = NAME_WIDTH) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"


def short_agent(agent: str) -> tuple[str, str]:
    """An agent's name and its parameters in brief, each at most `NAME_WIDTH` characters: `mission:focus=0.5` ->
    (`mission`, `focus 0.5`)."""
    try:
        spec = parse(agent)
    except (SpecError, ValueError):
        return _cut(agent), ""
    return _cut(spec.name), _cut(", ".join(f"{k} {format_value(v)}" for k, v in spec.kwargs.items()))


def fallback_note(frames: GameFrames, player: int, k: int) -> tuple[str, str]:
    """(what, why) when a player's destroy card has become "hold N territories" by event k (the classic rule):
    (`→ 24 territories`, `falls back to ...: blue is the holder's own colour`); else empty strings."""
    mission = frames.players.mission.iat[player]
    m = {m.name: m for m in compile_missions(frames.board)}.get(mission) if isinstance(mission, str) else None
    if m is None or m.kind != "destroy":
        return "", ""
    colour = frames.board.colours[m.colour]
    what, becomes = f"→ {m.territories} territories", f"falls back to holding {m.territories} territories"
    if m.colour == player:
        return what, f"{becomes}: {colour} is the holder's own colour"
    if m.colour >= len(frames.players):
        return what, f"{becomes}: {colour} is not in play"
    ev = frames.events.iloc[:k + 1]
    by = ev[(ev.kind == "eliminate") & (ev.opponent == m.colour)].player
    if len(by) and int(by.iat[0]) != player:
        return what, f"{becomes}: {colour} was eliminated by another player"
    return "", ""


class BeliefTable:
    """Each player's card probabilities in one game after every turn, loaded once (summed in DuckDB); `show(k)`
    returns the table at event k's turn as HTML."""

    def __init__(self, frames: GameFrames, setting: str | None, data_dir: Path | None = None):
        self.f, self.setting = frames, setting
        hypotheses, self.probs = ("cards6", pd.DataFrame())
        if setting:
            hypotheses, self.probs = game_beliefs(frames.run, setting, frames.game_id, data_dir)
        self.cards = list(build_hypotheses(frames.board, hypotheses).cards)
        self.outside = sorted({m for m in frames.players.mission if isinstance(m, str) and m not in self.cards})
        self.rows = self.cards + self.outside  # a true card the hypotheses lack gets its own row
        self.players = sorted(set(self.probs.index.get_level_values("player"))) if len(self.probs) else []
        # per player: the turns with beliefs, and the beliefs as an array, for a fast lookup at any turn
        self.turns = {p: self.probs.loc[p].index.to_numpy(dtype=float) for p in self.players}
        self.values = {p: self.probs.loc[p].to_numpy() for p in self.players}
        self.colours = [to_rgb(frames.colour(p)) for p in range(len(frames.players))]
        self.header = self._header()

    def _header(self) -> str:
        cells = ['<th style="text-align:left;font-weight:normal;color:#555;padding:2px 4px">card \\ player</th>']
        for p, agent in enumerate(self.f.players.agent):
            name, params = short_agent(str(agent))
            swatch = (f'<span style="display:inline-block;width:10px;height:10px;background:{self.f.colour(p)};'
                      'border:1px solid #333;vertical-align:middle;margin-right:3px"></span>')
            none = "" if p in self.players else '<br><span style="color:#999">(no beliefs)</span>'
            cells.append(f'<th title="{html.escape(str(agent))}" style="padding:2px 4px;font-weight:normal;'
                         f'vertical-align:bottom;white-space:nowrap">{swatch}<b>{self.f.board.colours[p]}</b><br>'
                         f'{html.escape(name)}<br><span style="color:#555">{html.escape(params)}</span>{none}</th>')
        return f"<tr>{''.join(cells)}</tr>"

    def at_turn(self, player: int, turn: float) -> np.ndarray:
        """The player's card probabilities after the last turn at or before `turn` (NaN before any)."""
        turns = self.turns.get(player)
        if turns is None or not len(turns) or turns[0] > turn:
            return np.full(len(self.cards), np.nan)
        return self.values[player][np.searchsorted(turns, turn, side="right") - 1]

    def show(self, k: int) -> str:
        f = self.f
        turn = float(f.events.turn.iat[k])
        values = {p: self.at_turn(p, turn) for p in range(len(f.players))}
        body = []
        for r, card in enumerate(self.rows):
            outside = card in self.outside
            name = readable_card(card) + (' <span style="color:#777">(not a hypothesis)</span>' if outside else "")
            cells = [f'<th style="text-align:left;font-weight:normal;padding:2px 6px 2px 0;min-width:90px">'
                     f'{name}</th>']
            for p in range(len(f.players)):
                true = f.players.mission.iat[p] == card
                v = np.nan if outside else values[p][r]
                style = "padding:2px 4px;text-align:center;min-width:44px"
                text, title = "", ""
                if not np.isnan(v):
                    red, green, blue = (round(255 * c) for c in self.colours[p])
                    style += f";background:rgba({red},{green},{blue},{0.08 + 0.92 * v:.3f})"
                    style += ";color:white" if v > 0.55 else ""
                    text = f"{v:.2f}"
                if true:
                    style += ";outline:2px solid black;outline-offset:-2px;font-weight:bold"
                    what, title = fallback_note(f, p, k)
                    text = text or (f'<span style="font-size:10px;white-space:nowrap">{what}</span>' if what else "")
                cells.append(f'<td style="{style}"' + (f' title="{html.escape(title)}"' if title else "") +
                             f">{text}</td>")
            body.append(f"<tr>{''.join(cells)}</tr>")
        caption = (f"P(card) after turn {int(turn)}, {html.escape(label(self.setting))}" if self.setting else
                   "no recogniser's posteriors for this run")
        return (f'<div style="font-size:12px;line-height:1.25;overflow-x:auto"><div style="margin-bottom:3px">'
                f'{caption}; boxed: the true card</div><table style="border-collapse:separate;border-spacing:1px;'
                f'font-size:12px">{self.header}{"".join(body)}</table></div>')
