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
# # 08 · Generalisation
# riskcore's recogniser on play it was not trained on: other programs' games (the Domination corpus, the reference
# study's own mission-following AI, Domination's own AI; all development sets) and riskcore's own agent families
# (in-model: the training population runs their decision code), beside the placement count and the reference's own
# recogniser on the same players. Reads the `generalisation_*` tables (`riskcore experiment generalisation`) and the
# training protocol (`models/recogniser-protocol.json`, `riskcore train-recogniser`).

# %% tags=["parameters"]
point: float = 1.0  # the share of the game clock of the comparisons

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from riskcore.experiments.recognition.protocol import NAMED, UNIFORM_LOSS
from riskcore.experiments.recognition.generalisation_report import REFERENCE_NAME, YARDSTICK_NAME, Tables
from riskcore.notebook import save_figure, save_table, setup

setup()
t = Tables()
families = (t.foreign + t.riskcore)[::-1]  # top to bottom in the figures as in the tables

# %% [markdown]
# ## How riskcore's recogniser was named

# %%
save_table(t.naming().reset_index(), "generalisation-naming")
save_table(t.folds().reset_index(), "generalisation-folds")
t.naming()

# %% [markdown]
# ## Against the count and the reference on other programs' play

# %%
save_table(t.against(point).reset_index(), "generalisation-against")
save_table(t.log_loss(point).reset_index(), "generalisation-logloss")
save_table(t.by_players(t.foreign).reset_index(), "generalisation-players")
t.against(point)

# %% [markdown]
# ## Every family
# Dots with 95% intervals: riskcore's recogniser, the reference's own recogniser and the placement count (top-1), at
# the share of the game given above; riskcore's gain over uniform; dashed: chance and uniform.

# %%
shown = [(NAMED, "tab:blue"), (REFERENCE_NAME, "tab:orange"), (YARDSTICK_NAME, "tab:gray")]
fig, axes = plt.subplots(1, 2, figsize=(12, 0.45 * len(families) + 1.6), sharey=True)
y = np.arange(len(families))
for ax, metric in zip(axes, ("top1", "gain")):
    for k, (name, colour) in enumerate(shown):
        if metric == "gain" and name == YARDSTICK_NAME:
            continue  # a guess, not a distribution: no log loss
        rows = [t.row(name, f, metric, point) for f in families]
        v = np.array([r.value for r in rows])
        err = np.vstack([v - [r.ci_low for r in rows], [r.ci_high for r in rows] - v])
        ax.errorbar(v, y + (k - 1) * 0.22, xerr=err, fmt="o", ms=4, capsize=2, color=colour, label=name)
    ax.axvline(1 / 6 if metric == "top1" else 0.0, ls="--", color="k", lw=1)
    ax.axhline(len(t.riskcore) - 0.5, color="0.6", lw=0.8)  # in-model below, other programs above
    ax.set_xlabel(f"top-1 at {point:.0%} of the game" if metric == "top1"
                  else f"gain over uniform at {point:.0%} (nats)")
axes[0].set_yticks(y, [t.label[f] for f in families])
axes[1].set_xlim(max(-1.5, axes[1].get_xlim()[0]), axes[1].get_xlim()[1])
handles, labels = axes[0].get_legend_handles_labels()
fig.legend(handles, labels, loc="lower center", ncol=3, frameon=False)
fig.tight_layout(rect=(0, 0.06, 1, 1))
save_figure(fig, "generalisation-by-family")
save_table(t.in_model(point).reset_index(), "generalisation-in-model")
t.in_model(point)

# %% [markdown]
# ## Gain over uniform at every checkpoint

# %%
save_table(t.gain(t.foreign).reset_index(), "generalisation-gain-foreign")
save_table(t.gain(t.riskcore).reset_index(), "generalisation-gain-riskcore")
fig, axes = plt.subplots(1, 2, figsize=(12, 4.2), sharey=True)
for ax, (title, group) in zip(axes, (("other programs' play (development sets)", t.foreign),
                                     ("riskcore's families (in-model)", t.riskcore))):
    for f in group:
        rows = [t.row(NAMED, f, "gain", p) for p in (0.1, 0.3, 0.5, 0.7, 1.0)]
        ax.plot([10, 30, 50, 70, 100], [r.value for r in rows], marker="o", label=t.label[f])
    ax.axhline(0, ls="--", color="k", lw=1)
    ax.set_title(title)
    ax.set_xlabel("% of the game (turn ends, setup included)")
    ax.legend(fontsize=7, loc="upper left")
axes[0].set_ylabel(f"{NAMED}: gain over uniform (nats)")
fig.tight_layout()
save_figure(fig, "generalisation-gain")
t.gain(t.foreign)

# %% [markdown]
# ## Learning curve
# The learned models fitted on the first 10^3 games of the training population and every tenfold step up to its
# size, on the development families: gain over uniform and log loss (checkpoints pooled) and top-1 at 100%, with
# 95% intervals over the families' games.

# %%
curve = pd.DataFrame(t.protocol["learning_curve"])
save_table(t.curve("gain").reset_index(), "generalisation-curve")
save_table(t.curve("log_loss").reset_index(), "generalisation-curve-logloss")
save_table(t.curve("top1_at_100").reset_index(), "generalisation-curve-top1")
panels = (("gain", "gain_ci", "gain over uniform (nats)"), ("log_loss", "log_loss_ci", "log loss (nats)"),
          ("top1_at_100", "top1_ci", "top-1 at 100%"))
fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
for ax, (metric, ci, label) in zip(axes, panels):
    for (family, model), group in curve.groupby(["family", "model"]):
        group = group.sort_values("games")
        err = np.vstack([group[metric] - group[f"{ci}_low"], group[f"{ci}_high"] - group[metric]])
        ax.errorbar(group.games, group[metric], yerr=err, marker="o", capsize=2,
                    ls="-" if model == "evidence" else "--", label=f"{family}, {model}")
    ax.set_xscale("log")
    ax.set_xlabel("training games")
    ax.set_ylabel(label)
axes[0].axhline(0, ls=":", color="k", lw=1)
axes[1].axhline(UNIFORM_LOSS, ls=":", color="k", lw=1)
axes[2].legend(fontsize=7)
fig.tight_layout()
save_figure(fig, "generalisation-learning-curve")
print(t.curve_reading())
t.curve("gain")

# %% [markdown]
# ## Calibration
# Reliability of the top-1 confidence (the largest card probability), checkpoints pooled: a calibrated recogniser
# lies on the diagonal.

# %%
rel = [(NAMED, "tab:blue"), (REFERENCE_NAME, "tab:orange")]
fig, axes = plt.subplots(1, 2, figsize=(11, 4.4), sharey=True)
for ax, (title, group) in zip(axes, (("other programs' play", t.foreign), ("riskcore's families", t.riskcore))):
    for name, colour in rel:
        d = t.cal[t.cal.family.isin(group) & (t.cal.recogniser == name)]
        g = d.groupby("bin").apply(lambda b: (np.average(b.confidence, weights=b["count"]),
                                              np.average(b.accuracy, weights=b["count"])), include_groups=False)
        if len(g):
            conf, acc = zip(*g)
            ax.plot(conf, acc, marker="o", label=name, color=colour)
    ax.plot([0, 1], [0, 1], ls="--", color="k", lw=1)
    ax.set_title(title)
    ax.set_xlabel("confidence (largest card probability)")
axes[0].set_ylabel("top-1 accuracy")
axes[0].legend(fontsize=7)
fig.tight_layout()
save_figure(fig, "generalisation-calibration")
save_table(t.ece().reset_index(), "generalisation-ece")

# %% [markdown]
# ## How much of its mission each family's play shows; every candidate

# %%
save_table(t.lean_table().reset_index(), "generalisation-lean")
save_table(t.candidates("top1").reset_index(), "generalisation-top1-100")
save_table(t.candidates("gain").reset_index(), "generalisation-gain-100")
t.candidates("top1")
