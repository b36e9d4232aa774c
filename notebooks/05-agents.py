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
# # 05 · Game-playing agents
# The round robin of all agents, the `aware` agent's win rate against `mission` agents by `belief_weight`, the
# genetic tuning of the minimax weights, and the Monte Carlo control of dice choices.

# %% tags=["parameters"]
round_robin: str = "round-robin"  # tournament name of the round robin
aware: str = "aware"  # tournament name of the belief-weight sweep
ga_sweep: str = "genetic_tuning"  # sweep name of the genetic tuning
mcrl_episodes: int = 20000  # episodes of Monte Carlo control for the learning curve
mcrl_seed: int = 0  # seed of the learning run

# %%
import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns

from riskcore.db import query
from riskcore.learning.dice import agreement, learn
from riskcore.notebook import save_figure, save_table, setup

setup()
rr = query("SELECT * FROM tournament_results WHERE tournament = ?", [round_robin])
save_table(rr.drop(columns="tournament"), "agents-round-robin")
rr.drop(columns="tournament").round(3)

# %%
fig, axes = plt.subplots(1, 2, figsize=(13, 4))
x = np.arange(len(rr))
axes[0].bar(x, rr.win_rate, yerr=[rr.win_rate - rr.ci_low, rr.ci_high - rr.win_rate], capsize=4)
axes[0].axhline(0.5, ls="--", color="grey")
axes[0].set_title("two-player round robin: win rate (Wilson 95% CI)")
axes[1].bar(x, rr.bt_elo)
axes[1].set_title("Bradley-Terry rating (Elo scale)")
for ax in axes:
    ax.set_xticks(x, rr.agent, rotation=25, ha="right")
save_figure(fig, "agents-round-robin")

# %% [markdown]
# ## Does recognising missions win games?

# %%
bw = query("SELECT * FROM aware_sweep WHERE tournament = ? ORDER BY belief_weight", [aware])
save_table(bw.drop(columns="tournament"), "agents-belief-weight")
fig, ax = plt.subplots(figsize=(6, 4))
ax.errorbar(bw.belief_weight, bw.win_rate, yerr=[bw.win_rate - bw.ci_low, bw.ci_high - bw.win_rate], marker="o",
            capsize=4)
ax.axhline(0.25, ls="--", color="grey", label="equal share (1/4)")
ax.set_xlabel("belief_weight")
ax.set_ylabel("aware win rate vs 3 mission agents")
ax.legend()
save_figure(fig, "agents-belief-weight")
bw.drop(columns="tournament").round(3)

# %% [markdown]
# ## Genetic tuning of the minimax weights

# %%
hist = query("SELECT * FROM ga_history WHERE sweep = ?", [ga_sweep])
played = hist[hist.fitness.notna()]
fig, axes = plt.subplots(1, 2, figsize=(12, 4))
sns.lineplot(played, x="generation", y="fitness", errorbar=("pi", 50), ax=axes[0], label="mean (50% band)")
played.groupby("generation").fitness.max().plot(ax=axes[0], marker="o", label="best")
axes[0].set_title("fitness (wins / games) per generation")
axes[0].legend()
weights = hist.melt(id_vars=["generation"], value_vars=["w1", "w2", "w3", "w4"], var_name="weight")
sns.lineplot(weights, x="generation", y="value", hue="weight", errorbar="sd", ax=axes[1])
axes[1].set_title("population weights (mean, sd)")
save_figure(fig, "genetic-fitness")
val = query("SELECT * FROM ga_validation WHERE sweep = ?", [ga_sweep])
save_table(val.drop(columns=["sweep", "point"]), "genetic-validation")
val.round(3)

# %% [markdown]
# ## Monte Carlo control of dice choices

# %%
tables, curve = learn(mcrl_episodes, mcrl_seed)
curve["mean reward (1,000-episode window)"] = curve.reward.rolling(1000, min_periods=100).mean()
agree = agreement(tables)
summary = agree.assign(side=np.where(agree.side == "attacker", "attacker", "defender")).groupby("side").agree.mean()
fig, ax = plt.subplots(figsize=(7, 4))
ax.plot(curve.episode, curve["mean reward (1,000-episode window)"])
ax.set_xlabel("episode")
ax.set_ylabel("attacker return per battle")
ax.set_title("learning curve; agreement with exact choices: " +
             ", ".join(f"{k} {v:.0%}" for k, v in summary.items()))
save_figure(fig, "mcrl-learning")
save_table(summary.reset_index(), "mcrl-agreement")
summary
