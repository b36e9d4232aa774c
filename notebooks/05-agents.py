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
yard = query("SELECT * FROM ga_yardstick WHERE sweep = ? ORDER BY generation", [ga_sweep])
played = hist[hist.fitness.notna()]
generations = sorted(played.generation.unique())
fig, axes = plt.subplots(1, 3, figsize=(15, 4))
axes[0].errorbar(yard.generation, yard.decided_share, yerr=[yard.decided_share - yard.ci_low,
                                                            yard.ci_high - yard.decided_share], marker="o", capsize=4)
axes[0].axhline(0.5, ls="--", color="grey", label="no better than equal weights")
axes[0].set_ylabel("share of decided games won")
axes[0].set_title("fittest gene vs equal weights (Wilson 95% CI)")
axes[0].legend(loc="lower right")
sns.lineplot(played, x="generation", y="fitness", errorbar=("pi", 50), ax=axes[1], label="mean (50% band)")
played.groupby("generation").fitness.max().plot(ax=axes[1], marker="o", label="best")
axes[1].set_ylabel("wins / games against other genes")
axes[1].set_title("fitness inside the population")
axes[1].legend(loc="lower right")
weights = hist.melt(id_vars=["generation"], value_vars=["w1", "w2", "w3", "w4"], var_name="weight")
sns.lineplot(weights, x="generation", y="value", hue="weight", errorbar="sd", ax=axes[2])
axes[2].set_ylim(0, 10)  # the genes' range
axes[2].set_ylabel("weight")
axes[2].set_title("population weights (mean, sd)")
for ax in axes:
    ax.set_xticks(sorted(hist.generation.unique()) if ax is axes[2] else generations)
    ax.set_xlabel("generation")
save_figure(fig, "genetic-fitness")
val = query("SELECT * FROM ga_validation WHERE sweep = ?", [ga_sweep])
save_table(val.drop(columns=["sweep", "point"], errors="ignore"), "genetic-validation")
shown = yard.assign(interval=[f"[{lo:.3f}, {hi:.3f}]" for lo, hi in zip(yard.ci_low, yard.ci_high)])
save_table(shown[["generation", "w1", "w2", "w3", "w4", "games", "wins", "draws", "decided_share", "interval"]].rename(
    columns={"decided_share": "share of decided games won", "interval": "95% interval (Wilson)"}), "genetic-yardstick")
yard.round(3)

# %% [markdown]
# ## Monte Carlo control of dice choices

# %%
tables, curve = learn(mcrl_episodes, mcrl_seed)
curve["mean reward (1,000-episode window)"] = curve.reward.rolling(1000, min_periods=100).mean()
agree = agreement(tables).assign(side=lambda t: np.where(t.side == "attacker", "attacker", "defender"))
wrong = agree[~agree.agree].groupby("side").optimal_tries.median()
summary = agree.groupby("side").agg(states=("agree", "size"), agree=("agree", "mean"), regret=("regret", "mean"),
                                    thumb_agree=("thumb_agree", "mean"), thumb_regret=("thumb_regret", "mean"))
summary["optimum_tries_where_wrong"] = wrong.reindex(summary.index).fillna(0)
summary = summary.rename(columns={"agree": "learned: agrees with the optimum",
                                  "regret": "learned: armies lost per battle",
                                  "thumb_agree": "most dice: agrees",
                                  "thumb_regret": "most dice: armies lost per battle",
                                  "optimum_tries_where_wrong": "tries of the optimum where learned is wrong (median)"})
fig, ax = plt.subplots(figsize=(7, 4))
ax.plot(curve.episode, curve["mean reward (1,000-episode window)"])
ax.set_xlabel("episode")
ax.set_ylabel("attacker return per battle")
ax.set_title("learning curve; agreement with exact choices: " +
             ", ".join(f"{k} {v:.0%}" for k, v in summary.iloc[:, 1].items()))
save_figure(fig, "mcrl-learning")
save_table(summary.reset_index(), "mcrl-agreement")
summary
