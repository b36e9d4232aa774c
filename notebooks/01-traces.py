# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
#   language_info:
#     codemirror_mode:
#       name: ipython
#       version: 3
#     file_extension: .py
#     mimetype: text/x-python
#     name: python
#     nbconvert_exporter: python
#     pygments_lexer: ipython3
#     version: 3.11.7
# ---

# %% [markdown]
# # 01 · The dataset at a glance
# Games, lengths, win rates by agent and seat, mission completion, and one game on the board.

# %% tags=["parameters"]
dataset: str = "default"  # the simulated dataset to describe
example_game: int = 0  # game drawn on the board at several turns

# %%
import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns

from riskcore.db import query
from riskcore.experiments.summary import win_rates
from riskcore.notebook import save_figure, save_table, setup
from riskcore.render import draw_board, player_labels
from riskcore.replay import load_game, replay

setup()
games = query("SELECT * FROM games WHERE run = ?", [dataset])
players = query("SELECT * FROM players WHERE run = ?", [dataset])
print(f"run {dataset!r}: {len(games)} games, {len(players)} player seats, "
      f"mean {games.turns.mean():.1f} player turns, {games.actions.mean():.0f} actions per game")
games.end_reason.value_counts()

# %% [markdown]
# ## Win rates by agent and by seat (Wilson 95% intervals)

# %%
fig, axes = plt.subplots(1, 2, figsize=(12, 4))
for ax, by in zip(axes, ("agent", "player")):
    df = win_rates(dataset, by)
    ax.bar(df[by].astype(str), df.win_rate, yerr=[df.win_rate - df.ci_low, df.ci_high - df.win_rate], capsize=4)
    ax.axhline(1 / games.n_players.iloc[0], ls="--", color="grey", label="equal share")
    ax.set_title(f"win rate by {'seat' if by == 'player' else by}")
    ax.set_ylabel("win rate")
    ax.tick_params(axis="x", rotation=20)
axes[0].legend()
save_figure(fig, "traces-win-rates")

# %% [markdown]
# ## Game length and mission completion

# %%
fig, ax = plt.subplots(figsize=(7, 4))
counts = games.end_reason.value_counts()
# the legend gives each way of ending its number of games: a reason too rare to see as a bar is still read
ended = games.assign(ended=games.end_reason.map(lambda r: f"{r} ({counts[r]:,} games)"))
sns.histplot(ended, x="turns", hue="ended", multiple="stack", bins=30, ax=ax,
             hue_order=[f"{r} ({counts[r]:,} games)" for r in counts.index])
ax.set_xlabel("player turns")
ax.set_ylabel("games")
save_figure(fig, "traces-game-length")
missions = win_rates(dataset, "mission")
shown = missions.assign(ci=[f"[{lo:.3f}, {hi:.3f}]" for lo, hi in zip(missions.ci_low, missions.ci_high)])
save_table(shown[["mission", "games", "wins", "win_rate", "ci"]].rename(columns={
    "mission": "mission card", "games": "players holding it", "wins": "won", "win_rate": "win rate",
    "ci": "95% interval (Wilson)"}), "traces-mission-completion")
missions.round(3)

# %% [markdown]
# ## One game on the board

# %%
events, mission_ids, config, _ = load_game(dataset, example_game)
seats = players[players.game_id == example_game].sort_values("player")
turn_ends = events.groupby("turn").seq.max()
turns = [t for t in np.unique(np.linspace(0, turn_ends.index.max(), 4).astype(int)) if t in turn_ends.index]
fig, axes = plt.subplots(2, 2, figsize=(16, 10))
for ax, t in zip(axes.ravel(), turns):
    state = replay(events, mission_ids, config, until_seq=int(turn_ends[t]))
    labels = player_labels(state.board, list(seats.agent)) if ax is axes[0, 0] else None
    draw_board(state.board, state.owner, state.armies, ax, title=f"after turn {t}", players=labels)
for ax in axes.ravel()[len(turns):]:
    ax.set_axis_off()
save_figure(fig, "traces-board")
