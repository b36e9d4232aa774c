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
# # 02 · Convergence of mission recognition
# Posterior over time in example games, and the mean probability of the true card and top-1 accuracy against the
# share of the observation window, per recogniser and focus level (the recognition experiment's test runs; 95%
# bootstrap bands over games).

# %% tags=["parameters"]
example_focus: float = 0.8  # focus level of the example games
examples: int = 3  # number of example (game, player) posteriors

# %%
import numpy as np
import pandas as pd
import matplotlib.pyplot as plt
import seaborn as sns

from riskcore.engine.board import load_board
from riskcore.db import query
from riskcore.experiments.recognition.focus import experiment_runs
from riskcore.explore.beliefs import game_beliefs, true_card_by_game
from riskcore.notebook import save_figure, setup
from riskcore.recognition.hypotheses import build_hypotheses
from riskcore.recognition.recognisers import Recogniser

setup()
runs = experiment_runs("test").set_index("focus").run
hyp = build_hypotheses(load_board("classic"), "cards6")


def shown(setting: str) -> bool:
    """The recognisers compared here: not the ablations, not PHATT equal (it is the prior, as uniform)."""
    rec = Recogniser.from_spec(setting)
    return rec.kinds is None and not (rec.weights is not None and rec.weights.scheme == "equal")


metrics = query("SELECT * FROM recognition_metrics WHERE run = ? AND subset = 'all' AND metric = 'top1' "
                "AND point = 0.5", [runs[example_focus]])
main = metrics[metrics.setting.map(shown)]
best = Recogniser.from_spec(main.sort_values("value").setting.iloc[-1])
print(f"best recogniser at focus {example_focus:g} (top-1 at 50%): {best.label}")

# %% [markdown]
# ## Posterior over time in example games (true card in bold)

# %%
# the card probabilities of the first few players holding one of the six cards, summed in DuckDB game by game
run = runs[example_focus]
seats = query("SELECT game_id, player, mission FROM players WHERE run = ? ORDER BY game_id, player", [run])
seats = seats[seats.mission.isin(hyp.cards)]
shown_players = []
for g, holders in seats.groupby("game_id", sort=True):
    _, beliefs = game_beliefs(run, best.setting, int(g))
    shown_players += [(g, r.player, r.mission, beliefs.loc[r.player]) for r in holders.itertuples()
                      if len(beliefs) and r.player in beliefs.index.get_level_values("player")]
    if len(shown_players) >= examples:
        break
shown_players = shown_players[:examples]
fig, axes = plt.subplots(1, len(shown_players), figsize=(5 * len(shown_players), 4), squeeze=False, sharey=True)
for ax, (g, p, truth, cards) in zip(axes[0], shown_players):
    for name in hyp.cards:
        ax.plot(cards.index, cards[name], lw=3 if name == truth else 1, label=name.removeprefix("Conquer "))
    ax.set_title(f"game {g}, player {p}")
    ax.set_xlabel("turn")
    ax.set_ylim(0, 1)
axes[0][0].set_ylabel("P(card)")
fig.legend(*axes[0][0].get_legend_handles_labels(), loc="lower center", ncol=3, fontsize=8,
           bbox_to_anchor=(0.5, -0.12))
fig.suptitle(f"{best.label}, focus {example_focus:g}")
save_figure(fig, "convergence-examples")

# %% [markdown]
# ## Top-1 and P(true card) against the share of the window observed

# %%
frames = []
for focus, run in runs.items():
    settings = [s for s in query("SELECT DISTINCT setting FROM recognition_metrics WHERE run = ?", [run]).setting
                if shown(s)]
    # per game and point: the mean over its players of the card-level top-1 and P(true card), summed in DuckDB
    frames.append(true_card_by_game(run, sorted(settings)).assign(focus=focus))
per_game = pd.concat(frames, ignore_index=True)
per_game["recogniser"] = per_game.setting.map(lambda s: Recogniser.from_spec(s).label)
per_game = per_game.sort_values(["focus", "recogniser", "point", "game_id"], ignore_index=True)  # hue order: by name
for metric, name in (("top1", "convergence-top1"), ("p_true", "convergence-ptrue")):
    g = sns.relplot(per_game, x="point", y=metric, hue="recogniser", col="focus", kind="line", errorbar=("ci", 95),
                    n_boot=200, seed=0, height=3.5, aspect=1.0, facet_kws={"sharey": True})
    for ax in g.axes.ravel():
        ax.axhline(1 / 6, ls="--", color="grey")
    g.set_axis_labels("share of observation window", "top-1" if metric == "top1" else "P(true card)")
    sns.move_legend(g, "lower center", bbox_to_anchor=(0.45, -0.12), ncol=3, title=None, frameon=False)
    save_figure(g.figure, name)
