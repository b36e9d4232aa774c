"""A game explorer for JupyterLab: any run in the database, simulated or imported, one game at a time.

Built on ipywidgets (JupyterLab ships its renderer; every control needed, a slider, buttons, dropdowns, an image,
is a stock widget, so no front-end code is written or built here). Pick a run and a game; a slider and step
buttons move over the game's events; the board shows owners (a legend names each player and agent, and, behind a
toggle, its true mission), armies, and the last attack as an arrow; the event log shows the events around the
current one; and per player the posterior over the mission cards from a chosen recogniser setting (the
`posteriors` table, at the turn of the current event), the true card marked.

Speed: a game is replayed once when chosen (every state kept as arrays); the board's geometry is drawn once, and a
move of the slider only changes colours, numbers and the arrow before the figure is rendered again. The
database is read with short-lived queries (`riskcore.db.query`), so the explorer never blocks a writer.
"""

from __future__ import annotations

import html
import io
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd
# Figures are made without pyplot, so the explorer neither switches the notebook's backend nor shows its
# figures twice (they are rendered to PNG for the image widgets).
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from riskcore.board import Board, load_board
from riskcore.db import query
from riskcore.recognition.hypotheses import build_hypotheses
from riskcore.recognition.recognisers import label
from riskcore.render import player_colour
from riskcore.replay import iter_replay, load_game


@dataclass
class GameFrames:
    """One game replayed: the event rows and the owners and armies after every event."""

    run: str
    game_id: int
    board: Board
    events: pd.DataFrame
    owners: np.ndarray  # (events, territories)
    armies: np.ndarray
    players: pd.DataFrame  # player, agent, mission

    @property
    def n_events(self) -> int:
        return len(self.events)


def load_frames(run: str, game_id: int, data_dir=None) -> GameFrames:
    """Replay a recorded game once and keep every state (the explorer then only indexes)."""
    events, missions, config, _ = load_game(run, game_id, data_dir)
    board = load_board(config.board)
    owners = np.zeros((len(events), board.n_territories), dtype=np.int64)
    armies = np.zeros_like(owners)
    last = -1
    for seq, state in iter_replay(events, missions, config, label=f"run {run!r} game {game_id}"):
        owners[last + 1:seq + 1], armies[last + 1:seq + 1] = state.owner, state.armies
        last = seq
    players = query("SELECT player, agent, mission FROM players WHERE run = ? AND game_id = ? ORDER BY player",
                    [run, game_id], data_dir)
    return GameFrames(run, game_id, board, events, owners, armies, players)


class BoardPicture:
    """The board of one game, drawn once; `show(k)` changes only what event k changes and renders a PNG."""

    def __init__(self, frames: GameFrames, missions: bool = False):
        self.f = frames
        board = frames.board
        pos = board.positions
        self.fig = Figure(figsize=(10, 5.8), dpi=80)
        self.ax = self.fig.subplots()
        for a, b in zip(*np.nonzero(np.triu(board.adjacency))):
            (x1, y1), (x2, y2) = pos[a], pos[b]
            if abs(x1 - x2) > 50:  # wrap-around borders drawn as two stubs
                self.ax.plot([x1, x1 - 3 if x1 < x2 else x1 + 3], [y1, y1], color="#bbbbbb", lw=0.8, zorder=1)
                self.ax.plot([x2, x2 - 3 if x2 < x1 else x2 + 3], [y2, y2], color="#bbbbbb", lw=0.8, zorder=1)
            else:
                self.ax.plot([x1, x2], [y1, y2], color="#bbbbbb", lw=0.8, zorder=1)
        self.dots = self.ax.scatter(pos[:, 0], pos[:, 1], s=260, c=["#ffffff"] * board.n_territories,
                                    edgecolors="black", linewidths=0.6, zorder=2)
        self.numbers = [self.ax.text(x, y, "", ha="center", va="center", fontsize=7, color="white", weight="bold",
                                     zorder=3) for x, y in pos]
        for i, (x, y) in enumerate(pos):
            self.ax.text(x, y + 2.6, board.territories[i], ha="center", va="top", fontsize=5, zorder=3)
        self.arrow = self.ax.annotate("", xy=(0, 0), xytext=(0, 0), zorder=4, visible=False,
                                      arrowprops={"arrowstyle": "-|>", "color": "black", "lw": 2.2, "shrinkA": 8,
                                                  "shrinkB": 8})
        self.ax.set_xlim(pos[:, 0].min() - 5, pos[:, 0].max() + 5)
        self.ax.set_ylim(pos[:, 1].max() + 6, pos[:, 1].min() - 5)
        self.ax.set_axis_off()
        self.title = self.ax.set_title("")
        self.legend(missions)

    def legend(self, missions: bool) -> None:
        handles = []
        for r in self.f.players.itertuples():
            text = f"{self.f.board.colours[r.player]}: player {r.player} ({r.agent})"
            if missions and isinstance(r.mission, str):
                text += f", {r.mission}"
            handles.append(Patch(facecolor=player_colour(self.f.board, r.player), edgecolor="black", label=text))
        self.ax.legend(handles=handles, loc="lower left", fontsize=7, framealpha=0.9)

    def show(self, k: int) -> bytes:
        f = self.f
        owner, armies = f.owners[k], f.armies[k]
        self.dots.set_facecolors([player_colour(f.board, int(o)) for o in owner])
        self.dots.set_sizes(120 + 60 * np.sqrt(np.maximum(armies, 0)))
        for text, a in zip(self.numbers, armies):
            text.set_text(str(int(a)))
        attack = last_attack(f.events, k)
        if attack is None:
            self.arrow.set_visible(False)
        else:
            pos = f.board.positions
            self.arrow.xy, self.arrow.xyann = pos[attack[1]], pos[attack[0]]
            self.arrow.set_visible(True)
        row = f.events.iloc[k]
        self.title.set_text(f"{f.run} game {f.game_id}: event {k}, turn {int(row.turn)}, {row.kind}")
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


class PosteriorPicture:
    """Bars of each player's posterior over the mission cards at a turn, drawn once and updated in place."""

    def __init__(self, frames: GameFrames, setting: str | None, data_dir=None):
        self.f = frames
        self.hyp = build_hypotheses(frames.board, "cards6")
        cards = self.hyp.cards
        self.probs: dict[int, pd.DataFrame] = {}
        if setting:
            post = query("SELECT player, point AS turn, explanation, prob FROM posteriors WHERE run = ? AND setting = ? "
                         "AND game_id = ? AND point_kind = 'turn' ORDER BY player, point, explanation",
                         [frames.run, setting, frames.game_id], data_dir)
            for p, grp in post.groupby("player"):
                turns = grp.turn.unique()
                self.probs[int(p)] = pd.DataFrame(self.hyp.card_probs(grp.prob.to_numpy().reshape(len(turns), -1)),
                                                  index=turns, columns=cards)
        n = len(frames.players)
        self.fig = Figure(figsize=(2.3 * n + 0.5, 2.6), dpi=80)
        axes = self.fig.subplots(1, n, sharey=True, squeeze=False)
        self.axes = axes[0]
        self.bars = []
        x = np.arange(len(cards))
        for p, ax in enumerate(self.axes):
            truth = frames.players.mission.iat[p]
            colours = ["#d62728" if c == truth else "#7f7f7f" for c in cards]
            self.bars.append(ax.bar(x, np.zeros(len(cards)), color=colours))
            ax.set_xticks(x, [short_card(c) for c in cards], rotation=90, fontsize=7)
            ax.set_ylim(0, 1)
            note = "" if truth in cards else " (card outside these)"
            ax.set_title(f"player {p}{note}" if p in self.probs else f"player {p} (no posterior)", fontsize=8)
        self.axes[0].set_ylabel("P(card)", fontsize=8)
        self.note = self.fig.suptitle(label(setting) if setting else "no recogniser setting", fontsize=8)
        self.fig.tight_layout()

    def show(self, turn: float) -> bytes:
        for p, bars in enumerate(self.bars):
            table = self.probs.get(p)
            values = np.zeros(len(bars))
            if table is not None and len(table):
                seen = table.index[table.index <= turn]
                values = table.loc[seen[-1]].to_numpy() if len(seen) else values
            for bar, v in zip(bars, values):
                bar.set_height(v)
        buf = io.BytesIO()
        self.fig.savefig(buf, format="png")
        return buf.getvalue()


SHORT = {"North America": "NA", "South America": "SA", "Europe": "Eu", "Africa": "Af", "Asia": "As",
         "Australia": "Au"}


def true_card_probability(data_dir=None) -> pd.DataFrame:
    """The mean probability each recogniser gives a player's true card at each share of the player's observation
    window, per run and setting (players holding a card of `cards6`; a run's posteriors only, never summed
    with another run's games of the same id). Empty when no posteriors are stored."""
    try:
        rows = query("""SELECT po.run, po.setting, po.point, po.game_id, po.player, po.explanation, po.prob,
                               p.mission, r.config
                        FROM posteriors po JOIN players p USING (run, game_id, player) JOIN runs r USING (run)
                        WHERE po.point_kind = 'fraction' AND po.hypotheses = 'cards6'""", data_dir=data_dir)
    except Exception:  # no posteriors table yet
        return pd.DataFrame()
    if rows.empty:
        return rows
    out = []
    for config, grp in rows.groupby("config"):
        import json

        hyp = build_hypotheses(load_board(json.loads(config)["config"]["board"]), "cards6")
        card = hyp.card_of[grp.explanation.to_numpy()]
        true = grp.mission.map({m: k for k, m in enumerate(hyp.cards)}).to_numpy()
        out.append(grp[card == true])
    mine = pd.concat(out)
    per_player = mine.groupby(["run", "setting", "point", "game_id", "player"]).prob.sum()
    return per_player.groupby(["run", "setting", "point"]).mean().rename("p_true").reset_index()


def short_card(card: str) -> str:
    """`Europe+Australia+1` -> `Eu+Au+1`."""
    return "+".join(SHORT.get(part, part[:3]) for part in card.split("+"))


def default_setting(settings: list[str]) -> str | None:
    """The setting shown first: inverse planning, else PHATT, else the first; never an ablation."""
    from riskcore.params import parse

    main = [s for s in settings if "kinds" not in parse(s).kwargs]
    for name in ("inverse", "phatt"):
        for s in main:
            if parse(s).name == name:
                return s
    return (main or settings or [None])[0]


def event_log(events: pd.DataFrame, k: int, width: int = 6) -> str:
    """HTML of the events around event k, the current one highlighted."""
    lo, hi = max(0, k - width), min(len(events), k + width + 1)
    cols = ["seq", "turn", "player", "kind", "src", "dst", "armies", "attacker_losses", "defender_losses", "cards"]
    rows = []
    for i in range(lo, hi):
        r = events.iloc[i]
        cells = "".join(f"<td>{'' if pd.isna(r[c]) else html.escape(str(r[c]))}</td>" for c in cols)
        style = ' style="background:#ffe08a;font-weight:bold"' if i == k else ""
        rows.append(f"<tr{style}>{cells}</tr>")
    head = "".join(f"<th>{c}</th>" for c in cols)
    return f'<table style="font-size:11px"><tr>{head}</tr>{"".join(rows)}</table>'


class GameExplorer:
    """The widget: `GameExplorer().widget` in a notebook cell. `step_seconds` holds how long each redraw took."""

    def __init__(self, run: str | None = None, game: int = 0, setting: str | None = None, data_dir=None):
        import ipywidgets as w

        self.data_dir = data_dir
        runs = list(query("SELECT run FROM runs ORDER BY run", data_dir=data_dir).run)
        if not runs:
            raise ValueError("the database holds no run: simulate or import one first")
        self.run_box = w.Dropdown(options=runs, value=run if run in runs else runs[0], description="run")
        self.game_box = w.BoundedIntText(value=game, min=0, max=10**9, description="game")
        self.setting_box = w.Dropdown(description="recogniser", layout=w.Layout(width="480px"))
        self.missions_box = w.Checkbox(value=False, description="show true missions")
        self.slider = w.IntSlider(value=0, min=0, max=1, description="event", continuous_update=True,
                                  layout=w.Layout(width="640px"))
        self.back, self.forward = w.Button(description="◀ step"), w.Button(description="step ▶")
        self.board_image, self.posterior_image = w.Image(format="png"), w.Image(format="png")
        self.log = w.HTML()
        self.step_seconds: list[float] = []
        self.run_box.observe(lambda _: self.load(), "value")
        self.game_box.observe(lambda _: self.load(), "value")
        self.setting_box.observe(lambda _: self.load_posteriors(), "value")
        self.missions_box.observe(lambda _: self.toggle_missions(), "value")
        self.slider.observe(lambda _: self.show(), "value")
        self.back.on_click(lambda _: self.move(-1))
        self.forward.on_click(lambda _: self.move(1))
        self.widget = w.VBox([w.HBox([self.run_box, self.game_box, self.missions_box]), self.setting_box,
                              w.HBox([self.back, self.slider, self.forward]), self.board_image,
                              self.posterior_image, self.log])
        self._setting = setting
        self.load()

    def load(self) -> None:
        run = self.run_box.value
        games = query("SELECT max(game_id) AS n FROM games WHERE run = ?", [run], self.data_dir).n[0]
        self.game_box.max = int(games)
        self.frames = load_frames(run, int(min(self.game_box.value, games)), self.data_dir)
        self.picture = BoardPicture(self.frames, self.missions_box.value)
        try:
            settings = list(query("SELECT DISTINCT setting FROM posteriors WHERE run = ? ORDER BY setting", [run],
                                  self.data_dir).setting)
        except Exception:  # noqa: BLE001 - no posteriors table yet
            settings = []
        options = [(label(s), s) for s in settings]
        self.setting_box.options = options or [("no posteriors for this run", None)]
        wanted = self._setting if self._setting in settings else default_setting(settings)
        self.setting_box.value = wanted
        self.load_posteriors()
        with self.slider.hold_trait_notifications():
            self.slider.max = self.frames.n_events - 1
            self.slider.value = min(self.slider.value, self.slider.max)
        self.show()

    def load_posteriors(self) -> None:
        self.posteriors = PosteriorPicture(self.frames, self.setting_box.value, self.data_dir)
        if hasattr(self, "picture"):
            self.show()

    def toggle_missions(self) -> None:
        self.picture.legend(self.missions_box.value)
        self.show()

    def move(self, step: int) -> None:
        self.slider.value = int(np.clip(self.slider.value + step, 0, self.slider.max))

    def show(self) -> None:
        start = time.perf_counter()
        k = int(self.slider.value)
        self.board_image.value = self.picture.show(k)
        self.posterior_image.value = self.posteriors.show(float(self.frames.events.turn.iat[k]))
        self.log.value = event_log(self.frames.events, k)
        self.step_seconds.append(time.perf_counter() - start)
