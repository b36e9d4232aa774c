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
run: str = ""  # the run to open first; empty: the first run in the database
game: int = 0
setting: str = ""  # the recogniser whose posteriors are shown; empty: the best one stored for the run

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from riskcore.engine.battle import roll_outcomes
from riskcore.db import query
from riskcore.explore import GameExplorer, top_runs, true_card_probability
from riskcore.recognition.recognisers import label
from riskcore.notebook import setup

setup()

# %% [markdown]
# ## The game explorer
# Pick a run and a game; drag the slider or step through the events. The board shows who owns what (the legend
# below the map names each player's agent; tick *show true missions* to see their cards), the armies, and the last
# attack as an arrow; beside it, each player's posterior over the mission cards at the current turn, in the
# player's colour with the true card boxed, and the events around the current one in words. It opens on a run
# that has posteriors; the runs marked "(posteriors)" in the list have them.

# %%
explorer = GameExplorer(run or None, game, setting or None)
explorer.widget

# %% [markdown]
# ## What the database holds

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
# ### 2. Battle outcomes against the exact odds
# Each attack event is one roll: the mean losses per dice pair against the exact expectation. A dice engine
# that drifts from the rules shows here first.

# %%
rolls = query("""SELECT attacker_dice AS a, defender_dice AS d, count(*) AS rolls,
                        avg(attacker_losses) AS attacker_loss, avg(defender_losses) AS defender_loss
                 FROM events WHERE kind = 'attack' AND attacker_dice > 0 AND defender_dice > 0
                 GROUP BY ALL ORDER BY a, d""")


def exact(a: int, d: int) -> tuple[float, float]:
    outcomes = roll_outcomes(int(a), int(d))
    attacker = sum(p * la for (la, _), p in outcomes.items())
    defender = sum(p * ld for (_, ld), p in outcomes.items())
    return float(attacker), float(defender)


rolls[["exact_attacker_loss", "exact_defender_loss"]] = [exact(a, d) for a, d in zip(rolls.a, rolls.d)]
fig, ax = plt.subplots(figsize=(6, 4))
labels = [f"{a}v{d}" for a, d in zip(rolls.a, rolls.d)]
x = np.arange(len(rolls))
ax.bar(x - 0.2, rolls.defender_loss, 0.4, label="defender losses (observed)")
ax.scatter(x - 0.2, rolls.exact_defender_loss, color="k", zorder=3, label="exact")
ax.bar(x + 0.2, rolls.attacker_loss, 0.4, label="attacker losses (observed)")
ax.scatter(x + 0.2, rolls.exact_attacker_loss, color="k", zorder=3)
ax.set_xticks(x, labels)
ax.set_xlabel("attacker v defender dice")
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
    display(by.unstack("point").round(3))  # noqa: F821 - IPython's display

# %% [markdown]
# ### 4. The longest games
# Which games run longest, and who played them? Turn counts by run, and the ten longest games.

# %%
lengths = query("SELECT run, turns, end_reason FROM games")
# the six runs with most games keep their names, the rest are pooled: readable at any number of runs
names = top_runs(lengths.groupby("run").size(), 6)
fig, ax = plt.subplots(figsize=(8, 4))
for name, d in lengths.assign(group=lengths.run.map(names)).groupby("group"):
    ax.hist(d.turns, bins=30, histtype="step", label=f"{name} ({len(d):,} games)", density=True, lw=1.4)
ax.set_xlabel("turns")
ax.set_ylabel("share of games (density)")
ax.legend(fontsize=7, loc="upper right")
query("""SELECT g.run, g.game_id, g.turns, g.end_reason, string_agg(p.agent, ', ' ORDER BY p.player) AS agents
         FROM games g JOIN players p USING (run, game_id)
         GROUP BY ALL ORDER BY g.turns DESC LIMIT 10""")

# %% [markdown]
# ### 5. Where imported games differ from riskcore's agents
# Per run, what a player does in a turn: attacks (rolls), conquests, fortifications and card trades. Imported
# runs (another program's players) stand next to riskcore's; the twelve runs with most turns are shown by name,
# the others pooled.

# %%
totals = query("""SELECT e.run, count(DISTINCT (game_id, turn)) AS turns,
                         count(*) FILTER (WHERE kind = 'attack') AS rolls,
                         count(*) FILTER (WHERE kind = 'attack' AND conquered) AS conquests,
                         count(*) FILTER (WHERE kind = 'fortify') AS fortifies,
                         count(*) FILTER (WHERE kind = 'trade') AS trades
                  FROM events e GROUP BY e.run""").set_index("run")
totals["group"] = totals.index.map(top_runs(totals.turns, 12))
pooled = totals.groupby("group").sum()
style = pooled[["rolls", "conquests", "fortifies", "trades"]].div(pooled.turns, axis=0).sort_index()
ax = style.plot.barh(figsize=(8, 0.45 * len(style) + 1.5))
ax.set_xlabel("per turn")
ax.legend(fontsize=8, loc="lower right")
style.round(3)
