"""A game explorer for JupyterLab: any run in the database, simulated or imported, one game at a time.

Built on ipywidgets (JupyterLab ships its renderer; every control needed, a slider, buttons, dropdowns, an image,
HTML, is a stock widget, so no front-end code is written or built here). Pick a run and a game; a slider and step
buttons move over the game's events; the board shows owners (a legend below the map names each player and agent,
and, behind a toggle, its true mission), armies, and the last attack as an arrow; beside it, each player's
posterior over the mission cards from a chosen recogniser (the `posteriors` table, at the turn of the current
event) in the player's colour with the true card outlined, and the events around the current one in words.

- `frames`: a game replayed once into arrays, and the names the pictures use;
- `board_picture`, `belief_table`, `event_log`: the three views, each redrawn in place;
- `beliefs`: card-level probabilities summed in DuckDB, clipped and checked;
- `widget`: the controls and their one update path;
- `tour`: the queries of the notebook's tour of the dataset.

Memory: every query aggregates inside DuckDB and returns what is drawn (a game's events, a row per card and
turn, a row per dice pair or run), never a table's rows: the full dataset's posteriors are tens of millions.
Speed: a game is replayed once when chosen (every state kept as arrays); the board's geometry is drawn once, and a
move of the slider only changes colours, numbers and the arrow before the figure is rendered again. The
database is read with short-lived queries (`riskcore.db.query`), so the explorer never blocks a writer.
"""

from riskcore.explore.frames import GameFrames, load_frames
from riskcore.explore.beliefs import true_card_by_game, true_card_probability
from riskcore.explore.tour import runs_with_posteriors, top_runs
from riskcore.explore.widget import GameExplorer, default_setting

__all__ = ["GameExplorer", "GameFrames", "default_setting", "load_frames", "runs_with_posteriors", "top_runs",
           "true_card_by_game", "true_card_probability"]
