# %% [markdown]
# # 02 · Convergence of mission recognition
# Posterior over time in example games, and the mean probability of the true card and top-1 accuracy against the
# share of the observation window, per recogniser and focus level (test runs; 95% bootstrap bands over games).

# %% tags=["parameters"]
run_prefix: str = "rec-test"  # test runs are named <prefix>-f<focus>
focus_levels: str = "0,0.5,0.8,1"  # comma-separated focus levels to plot
example_focus: float = 0.8  # focus level of the example games
examples: int = 3  # number of example (game, player) posteriors

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from riskcore.board import load_board
from riskcore.db import query
from riskcore.notebook import save_figure, setup
from riskcore.recognition.hypotheses import build_hypotheses
from riskcore.recognition.pipeline import player_metrics

setup()
levels = [float(x) for x in focus_levels.split(",")]
runs = {x: f"{run_prefix}-f{x:g}" for x in levels}
hyp = build_hypotheses(load_board("classic"), "cards6")
metrics = query("SELECT * FROM recognition_metrics WHERE run = ? AND subset = 'all' AND metric = 'top1' "
                "AND point = 0.5", [runs[example_focus]])
main = metrics[~metrics.setting.str.contains("kinds=")]
best = main.sort_values("value").setting.iloc[-1]
print(f"best recogniser at focus {example_focus:g} (top-1 at 50%): {best}")

# %% [markdown]
# ## Posterior over time in example games (true card in bold)

# %%
run = runs[example_focus]
post = query("SELECT p.game_id, p.player, p.point AS turn, p.explanation, p.prob, pl.mission FROM posteriors p "
             "JOIN players pl USING (run, game_id, player) WHERE p.run = ? AND p.setting = ? "
             "AND p.point_kind = 'turn' ORDER BY p.game_id, p.player, p.point, p.explanation", [run, best])
post = post[post.mission.isin(hyp.cards)]
keys = post[["game_id", "player"]].drop_duplicates().head(examples)
fig, axes = plt.subplots(1, len(keys), figsize=(5 * len(keys), 4), squeeze=False)
for ax, (g, p) in zip(axes[0], keys.itertuples(index=False)):
    one = post[(post.game_id == g) & (post.player == p)]
    turns = one.turn.unique()
    cards = hyp.card_probs(one.prob.to_numpy().reshape(len(turns), hyp.size))
    truth = one.mission.iloc[0]
    for c, name in enumerate(hyp.cards):
        ax.plot(turns, cards[:, c], lw=3 if name == truth else 1, label=name + (" (true)" if name == truth else ""))
    ax.set_title(f"game {g}, player {p}")
    ax.set_xlabel("turn")
    ax.set_ylim(0, 1)
axes[0][0].set_ylabel("P(card)")
axes[0][-1].legend(fontsize=7, loc="upper left")
save_figure(fig, "convergence-examples")

# %% [markdown]
# ## Top-1 and P(true card) against the share of the window observed

# %%
frames = []
for x, r in runs.items():
    settings = query("SELECT DISTINCT setting FROM recognition_metrics WHERE run = ?", [r]).setting
    settings = sorted(s for s in settings if "kinds=" not in s and s != "phatt:equal")  # equal = uniform
    df = player_metrics(r, settings=settings)
    frames.append(df.assign(focus=x, p_true=np.exp(-df.log_loss)))
per = pd.concat(frames, ignore_index=True)
per_game = per.groupby(["focus", "setting", "point", "game_id"])[["top1", "p_true"]].mean().reset_index()
for metric, name in (("top1", "convergence-top1"), ("p_true", "convergence-ptrue")):
    g = sns.relplot(per_game, x="point", y=metric, hue="setting", col="focus", kind="line", errorbar=("ci", 95),
                    n_boot=200, seed=0, height=3.5, aspect=1.0, facet_kws={"sharey": True})
    for ax in g.axes.ravel():
        ax.axhline(1 / 6, ls="--", color="grey")
    g.set_axis_labels("share of observation window", "top-1" if metric == "top1" else "P(true card)")
    save_figure(g.figure, name)
