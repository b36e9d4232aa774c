"""The explorer's controls and their one update path: every change of run, game or setting reloads under a guard,
clamps the slider to the new game before anything is drawn, and draws once; an error in any callback is shown in
the widget itself (ipywidgets would otherwise only log it to Lab's console). What a run offers (its last game, its
recognisers) is read once per run, so switching games costs only the game's own reads."""

from __future__ import annotations

import html
import time
import traceback

import numpy as np

from riskcore.db import query, reading, run_source
from riskcore.explore.belief_table import BeliefTable
from riskcore.explore.beliefs import has_table
from riskcore.explore.board_picture import BOARD_PIXELS, BoardPicture
from riskcore.explore.event_log import event_log
from riskcore.explore.frames import load_frames
from riskcore.explore.tour import runs_with_posteriors
from riskcore.recognition.recognisers import label

NONE = ""  # the recogniser box's value on a run without posteriors (its one option says so)


def default_setting(settings: list[str]) -> str | None:
    """The setting shown first: inverse planning, else PHATT, else the first; never an ablation."""
    from riskcore.params import parse

    main = [s for s in settings if "kinds" not in parse(s).kwargs]
    for name in ("inverse", "phatt"):
        for s in main:
            if parse(s).name == name:
                return s
    return (main or settings or [None])[0]


def no_posteriors(run: str) -> str:
    return f"no posteriors for this run: riskcore recognize --run {run}"


class GameExplorer:
    """The widget: `GameExplorer().widget` in a notebook cell. `step_seconds` holds how long each redraw took,
    `load_seconds` each load of a game (its reads, replay and first drawing).

    With no `run`, it opens a run that has posteriors, so the belief charts show something; the note above the
    board says which runs have them; a named run the database does not hold is refused."""

    def __init__(self, run: str | None = None, game: int = 0, setting: str | None = None, data_dir=None):
        import ipywidgets as w

        self.data_dir = data_dir
        runs = list(query("SELECT run FROM runs ORDER BY run", data_dir=data_dir).run)
        if not runs:
            raise ValueError("the database holds no run: simulate or import one first")
        if run is not None and run not in runs:
            raise ValueError(f"no run {run!r} in the database (runs: {', '.join(runs[:10])}"
                             f"{', ...' if len(runs) > 10 else ''})")
        believed = [r for r in runs_with_posteriors(data_dir) if r in runs]
        first = run if run is not None else (believed or runs)[0]
        self._busy = True  # no callback draws until the first load has set everything up
        self._offers: dict[str, tuple[int, list[str]]] = {}  # per run: its last game and its recognisers
        self.run_box = w.Dropdown(options=[(f"{r} (posteriors)" if r in believed else r, r) for r in runs],
                                  value=first, description="run", layout=w.Layout(width="340px"))
        self.game_box = w.BoundedIntText(value=game, min=0, max=10**9, description="game",
                                         layout=w.Layout(width="160px"))
        self.setting_box = w.Dropdown(description="recogniser", layout=w.Layout(width="520px"))
        self.missions_box = w.Checkbox(value=False, description="show true missions")
        self.slider = w.IntSlider(value=0, min=0, max=1, description="event", continuous_update=True,
                                  layout=w.Layout(width="640px"))
        self.back, self.forward = w.Button(description="◀ step"), w.Button(description="step ▶")
        width, height = BOARD_PIXELS
        # the image at the picture's own size: a flex row would otherwise stretch it to the row's height
        self.board_image = w.Image(format="png", layout=w.Layout(width=f"{width}px", height=f"{height}px",
                                                                  align_self="flex-start", flex="0 0 auto"))
        self.beliefs, self.log = w.HTML(), w.HTML()
        for box, name in ((self.board_image, "board"), (self.beliefs, "beliefs"), (self.log, "events")):
            box.add_class(f"riskcore-{name}")  # for the browser test
        self.error = w.HTML()
        self.note = w.HTML(f"<small>{len(believed)} of {len(runs)} runs have posteriors"
                           + (f" ({', '.join(believed[:6])}{', ...' if len(believed) > 6 else ''})" if believed else
                              "") + "; <code>riskcore recognize --run RUN</code> adds them.</small>")
        self.step_seconds: list[float] = []
        self.load_seconds: list[float] = []
        self.run_box.observe(lambda _: self._safely(self.load), "value")
        self.game_box.observe(lambda _: self._safely(self.load), "value")
        self.setting_box.observe(lambda _: self._safely(self.load_posteriors), "value")
        self.missions_box.observe(lambda _: self._safely(self.toggle_missions), "value")
        self.slider.observe(lambda _: self._safely(self.show), "value")
        self.back.on_click(lambda _: self._safely(lambda: self.move(-1)))
        self.forward.on_click(lambda _: self._safely(lambda: self.move(1)))
        controls = w.VBox([w.HBox([self.run_box, self.game_box, self.missions_box]), self.setting_box,
                           w.HBox([self.back, self.slider, self.forward]), self.note, self.error])
        # beside the board in the room it leaves (Lab's file browser open or not); below it on a narrow screen
        side = w.VBox([self.beliefs, self.log], layout=w.Layout(flex="1 1 360px", min_width="360px",
                                                                 max_width="560px"))
        self.widget = w.VBox([controls, w.HBox([self.board_image, side],
                                               layout=w.Layout(flex_flow="row wrap", align_items="flex-start"))])
        self.widget.add_class("riskcore-explorer")  # for the browser test's measure of the whole explorer
        self._setting = setting
        self.load()

    def _safely(self, action) -> None:
        """Run a callback; show its error in the widget instead of losing it to the browser's console."""
        try:
            action()
            self.error.value = ""
        except Exception as exc:  # noqa: BLE001 - shown to the user, who can act on it
            self.error.value = (f'<pre style="color:#b00020;white-space:pre-wrap">{html.escape(str(exc))}\n'
                                f'{html.escape(traceback.format_exc(limit=3))}</pre>')

    def offers(self, run: str) -> tuple[int, list[str]]:
        """A run's last game id and the recognisers with per-turn posteriors for it (read once per run, from the
        run's own posterior files)."""
        if run not in self._offers:
            last = int(query("SELECT max(game_id) AS n FROM games WHERE run = ?", [run], self.data_dir).n[0])
            settings = []
            if has_table("posteriors", self.data_dir):
                source = run_source("posteriors", run, self.data_dir)
                settings = list(query(f"SELECT DISTINCT setting FROM {source} WHERE run = ? AND point_kind = 'turn' "
                                      "ORDER BY setting", [run], self.data_dir).setting)
            self._offers[run] = (last, settings)
        return self._offers[run]

    def load(self) -> None:
        """A run or game was chosen: replay it, clamp the slider to it, rebuild the pictures, then draw once."""
        start = time.perf_counter()
        self._busy = True
        try:
            with reading(self.data_dir):  # the game's reads share one connection
                run = self.run_box.value
                last, settings = self.offers(run)
                self.game_box.max = last
                self.frames = load_frames(run, int(min(self.game_box.value, last)), self.data_dir)
                setting = self._setting if self._setting in settings else default_setting(settings)
                self.table = BeliefTable(self.frames, setting, self.data_dir)
            with self.slider.hold_trait_notifications():
                self.slider.max = self.frames.n_events - 1
                self.slider.value = min(self.slider.value, self.slider.max)
            if getattr(self, "picture", None) is not None and self.picture.board.name == self.frames.board.name:
                self.picture.use(self.frames, self.missions_box.value)  # the same map: drawn already
            else:
                self.picture = BoardPicture(self.frames, self.missions_box.value)
            if settings:
                self.setting_box.options = [(label(s), s) for s in settings]
                self.setting_box.value = setting
            else:
                self.setting_box.options = [(no_posteriors(run), NONE)]
                self.setting_box.value = NONE
            self.setting_box.disabled = not settings
        finally:
            self._busy = False
        self.show()
        self.load_seconds.append(time.perf_counter() - start)

    def load_posteriors(self) -> None:
        if self._busy:
            return
        self._setting = self.setting_box.value or self._setting  # kept when the game or run changes
        self.table = BeliefTable(self.frames, self.setting_box.value or None, self.data_dir)
        self.show()

    def toggle_missions(self) -> None:
        self.picture.legend(self.missions_box.value)
        self.show()

    def move(self, step: int) -> None:
        self.slider.value = int(np.clip(self.slider.value + step, 0, self.slider.max))

    def show(self) -> None:
        if self._busy:
            return
        start = time.perf_counter()
        k = min(int(self.slider.value), self.frames.n_events - 1)
        self.board_image.value = self.picture.show(k)
        self.beliefs.value = self.table.show(k)
        self.log.value = event_log(self.frames, k)
        self.step_seconds.append(time.perf_counter() - start)
