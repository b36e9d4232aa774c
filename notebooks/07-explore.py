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
# # 07 · Explore the games
# The game explorer over any run in the database (simulated or imported), then a tour of the dataset: what the
# database holds and five questions asked of it in DuckDB SQL. Everything reads `data/riskcore.duckdb` (or
# `$RISKCORE_DATA`), the database `make report` fills.

# %% tags=["parameters"]
run: str = ""  # the run to open first; empty: the first run with posteriors (else the first run in the database)
game: int = 0  # the game to open first, by its number in the run (past the run's last: its last)
setting: str = ""  # the recogniser whose posteriors are shown; empty: the best one stored for the run

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from riskcore.db import query
from riskcore.explore import GameExplorer, true_card_probability
from riskcore.explore.tour import game_length_quantiles, play_per_turn, single_roll_losses
from riskcore.recognition.recognisers import label
from riskcore.notebook import setup

setup()

# %% [markdown]
# ## The game explorer
# Pick a run and a game; drag the slider or step through the events. The board shows who owns what (the legend
# below the map names each player's agent; tick *show true missions* to see their cards), the armies, and the last
# attack as an arrow; beside it, each player's posterior over the mission cards at the current turn, in the
# player's colour with the true card boxed (hover over a column's agent for its full spec), and the events around
# the current one in words. It opens on a run that has posteriors; the runs marked "(posteriors)" in the list
# have them.

# %%
explorer = GameExplorer(run or None, game, setting or None)
explorer.widget

# %% [markdown]
# ## What the database holds
# Every query below aggregates inside DuckDB and returns only what it shows: the tables hold tens of millions of
# rows.

# %%
present = set(query("SELECT table_name FROM information_schema.tables").table_name)
counts = {name: query(f"SELECT count(*) AS n FROM {name}").n[0] for name in
          ("runs", "games", "players", "events", "snapshots", "posteriors") if name in present}
pd.Series(counts, name="rows").to_frame()

# %%
query("""SELECT r.run, r.mode, r.n_players, r.agents, count(g.game_id) AS games, avg(g.turns) AS mean_turns
         FROM runs r LEFT JOIN games g USING (run) GROUP BY ALL ORDER BY r.run""")

# %% [markdown]
# ### 1. Win rate by mission card
# Which missions are easiest to complete? Mission games only; one bar per card, with its number of holders.

# %%
wins = query("""SELECT p.mission, count(*) AS players, avg(p.won::INT) AS win_rate
                FROM players p JOIN runs r USING (run)
                WHERE r.mode = 'mission' AND p.mission IS NOT NULL
                GROUP BY p.mission ORDER BY win_rate DESC""")
fig, ax = plt.subplots(figsize=(9, 0.35 * max(len(wins), 3) + 1))
ax.barh(wins.mission, wins.win_rate)
for y, (rate, n) in enumerate(zip(wins.win_rate, wins.players)):
    ax.text(rate, y, f" {n}", va="center", fontsize=8)
ax.invert_yaxis()
ax.set_xlabel("win rate of the card's holders")
wins

# %% [markdown]
# ### 2. Single dice rolls against the exact odds
# An attack event is either one roll of the dice or a whole battle, rolled until the territory falls or the
# attacker stops, with its losses summed (`stop_at` set: most of riskcore's agents' and imported attacks). Only
# single rolls are compared here, by dice pair, with the exact expectation of one roll: a dice engine that drifts
# from the rules shows here first.

# %%
rolls, battles = single_roll_losses()
print(f"{rolls.rolls.sum():,} single rolls; {battles:,} whole battles left out (their losses are a battle's)")
if rolls.empty:
    print("no single rolls recorded")
else:
    fig, ax = plt.subplots(figsize=(6, 4))
    x = np.arange(len(rolls))
    ax.bar(x - 0.2, rolls.defender_loss, 0.4, label="defender losses per roll (observed)")
    ax.scatter(x - 0.2, rolls.exact_defender_loss, color="k", zorder=3, label="exact")
    ax.bar(x + 0.2, rolls.attacker_loss, 0.4, label="attacker losses per roll (observed)")
    ax.scatter(x + 0.2, rolls.exact_attacker_loss, color="k", zorder=3)
    ax.set_xticks(x, [f"{a}v{d}\n{n:,}" for a, d, n in zip(rolls.a, rolls.d, rolls.rolls)])
    ax.set_xlabel("attacker v defender dice (single rolls)")
    ax.legend(fontsize=8)
rolls

# %% [markdown]
# ### 3. When do missions become recognisable?
# The mean probability each recogniser gives the true card against the share of the player's actions observed
# (stored posteriors; `riskcore recognize` adds more).

# %%
p_true = true_card_probability()
if p_true.empty:
    print("no stored posteriors: run `riskcore recognize` on a run first")
else:
    by = p_true.assign(recogniser=p_true.setting.map(label)).groupby(["recogniser", "point"]).p_true.mean()
    ax = by.unstack("recogniser").plot(figsize=(8, 4), legend=False)
    ax.axhline(1 / 6, ls="--", color="k", lw=1)
    ax.set_xlabel("share of the player's actions observed")
    ax.set_ylabel("mean probability of the true card")
    ax.legend(fontsize=7, loc="upper left", ncol=2)
    display(by.unstack("point").iloc[:, ::2].round(3))  # noqa: F821 - IPython's display; every tenth, not cut

# %% [markdown]
# ### 4. The longest games
# Which games run longest, and who played them? Turn counts by run (box: the middle half, whiskers: 5% to 95%,
# dot: the mean), and the ten longest games.

# %%
lengths = game_length_quantiles(6)  # the six runs with most games by name, the others pooled
fig, ax = plt.subplots(figsize=(8, 0.45 * len(lengths) + 1.2))
ax.bxp([{"label": f"{r.run} ({r.games:,} games)", "whislo": r.q05, "q1": r.q25, "med": r.q50, "q3": r.q75,
         "whishi": r.q95, "mean": r.mean_turns} for r in lengths.itertuples()],
       vert=False, showfliers=False, showmeans=True)
ax.invert_yaxis()
ax.set_xlabel("turns")
query("""SELECT g.run, g.game_id, g.turns, g.end_reason, string_agg(p.agent, ', ' ORDER BY p.player) AS agents
         FROM games g JOIN players p USING (run, game_id)
         GROUP BY ALL ORDER BY g.turns DESC LIMIT 10""")

# %% [markdown]
# ### 5. Where imported games differ from riskcore's agents
# Per run, what a player does in a turn: single rolls, whole battles, conquests, fortifications and card trades.
# Imported runs (another program's players) stand next to riskcore's; the twelve runs with most turns are shown by
# name, the others pooled.

# %%
style = play_per_turn(12)
ax = style.plot.barh(figsize=(8, 0.55 * len(style) + 1.5))
ax.set_xlabel("per turn")
ax.legend(fontsize=8, loc="lower right")
style.round(3)
