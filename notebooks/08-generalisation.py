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
# The recognisers on play they were not built from: riskcore's agent families held out by code lineage, and the
# games of other programs: the Domination corpus (a development set) and the reference study's own
# mission-following AI. riskcore's recogniser, named on riskcore's families before any foreign family was scored,
# beside the reference's own recogniser on the same players. Reads the `generalisation_*` tables
# (`riskcore experiment generalisation`).

# %% tags=["parameters"]
point: float = 1.0  # the share of the game clock of the comparisons

# %%
import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns

from riskcore.experiments.recognition.protocol import NAMED, UNIFORM_LOSS
from riskcore.experiments.recognition.generalisation_report import REFERENCE_NAME, YARDSTICK_NAME, Tables
from riskcore.notebook import save_figure, save_table, setup

setup()
t = Tables()
families = t.families[::-1]  # top to bottom in the figures as in the tables

# %% [markdown]
# ## Against the reference on the same players

# %%
save_table(t.against_reference(point).reset_index(), "generalisation-against-reference")
save_table(t.log_loss_against_reference(point).reset_index(), "generalisation-logloss-reference")
t.against_reference(point)

# %% [markdown]
# ## riskcore's recogniser on every family
# Dots with 95% intervals: riskcore's recogniser, the reference's own recogniser and the placement-count yardstick
# (top-1), at the share of the game given above; dashed: chance and uniform.

# %%
shown = [(NAMED, "tab:blue"), (REFERENCE_NAME, "tab:orange"), (YARDSTICK_NAME, "tab:gray")]
fig, axes = plt.subplots(1, 2, figsize=(12, 0.45 * len(families) + 1.6), sharey=True)
y = np.arange(len(families))
for ax, metric in zip(axes, ("top1", "log_loss")):
    for k, (name, colour) in enumerate(shown):
        if metric == "log_loss" and name == YARDSTICK_NAME:
            continue  # a guess, not a distribution: no log loss
        rows = [t.row(name, f, metric, point) for f in families]
        v = np.array([r.value for r in rows])
        err = np.vstack([v - [r.ci_low for r in rows], [r.ci_high for r in rows] - v])
        ax.errorbar(v, y + (k - 1) * 0.22, xerr=err, fmt="o", ms=4, capsize=2, color=colour, label=name)
    ax.axvline(1 / 6 if metric == "top1" else UNIFORM_LOSS, ls="--", color="k", lw=1)
    ax.set_xlabel(f"top-1 at {point:.0%} of the game" if metric == "top1" else f"log loss at {point:.0%} of the game")
axes[0].set_yticks(y, [t.label[f] for f in families])
axes[1].set_xlim(0, min(4, axes[1].get_xlim()[1]))
handles, labels = axes[0].get_legend_handles_labels()
fig.legend(handles, labels, loc="lower center", ncol=3, frameon=False)
fig.tight_layout(rect=(0, 0.06, 1, 1))
save_figure(fig, "generalisation-by-family")
save_table(t.standing(point).reset_index(), "generalisation-standing")
t.standing(point)

# %% [markdown]
# ## Gain over uniform at every checkpoint

# %%
gain = t.gain_by_checkpoint()
save_table(gain.reset_index(), "generalisation-gain")
fig, axes = plt.subplots(1, 2, figsize=(12, 4.2), sharey=True)
for ax, (title, group) in zip(axes, (("riskcore's families", t.riskcore), ("other programs' play", t.foreign))):
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
gain

# %% [markdown]
# ## What setup placements and move-ins are worth

# %%
evidence = t.evidence()
save_table(evidence.reset_index(), "generalisation-evidence")
evidence

# %% [markdown]
# ## Calibration
# Reliability of the top-1 confidence (the largest card probability), checkpoints pooled, on riskcore's families
# and on the foreign ones: a calibrated recogniser lies on the diagonal.

# %%
rel = [(NAMED, "tab:blue"), (REFERENCE_NAME, "tab:orange"), ("play-style mixture", "tab:green"),
       ("inverse planning", "tab:red")]
fig, axes = plt.subplots(1, 2, figsize=(11, 4.4), sharey=True)
for ax, (title, group) in zip(axes, (("riskcore's families", t.riskcore), ("other programs' play", t.foreign))):
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
ece = t.m[t.m.metric == "ece"].pivot(index="recogniser", columns="family", values="value").round(3)
save_table(ece.reset_index(), "generalisation-ece")

# %% [markdown]
# ## How much of its mission each family's play shows, and every recogniser (exploration)

# %%
save_table(t.lean_table().reset_index(), "generalisation-lean")
save_table(t.named_choice().reset_index(names="candidate"), "generalisation-named")
save_table(t.everyone("top1").reset_index(), "generalisation-top1-100")
save_table(t.everyone("log_loss").drop(index=YARDSTICK_NAME, errors="ignore").reset_index(),
           "generalisation-logloss-100")
# the same two tables as heatmaps: fifteen families side by side read better as colour than as columns
fig, axes = plt.subplots(2, 1, figsize=(15, 11))
for ax, (metric, cmap, label) in zip(axes, (("top1", "viridis", "top-1 at 100%"),
                                            ("log_loss", "viridis_r", "log loss at 100%"))):
    grid = t.everyone(metric).replace("", np.nan).astype(float)
    sns.heatmap(grid, annot=True, fmt=".2f", cmap=cmap, ax=ax, cbar_kws={"label": label}, annot_kws={"size": 8})
    ax.set_xlabel("")
    ax.set_ylabel("")
    ax.tick_params(axis="x", labelrotation=30)
    plt.setp(ax.get_xticklabels(), ha="right")
    ax.set_title(label)
fig.tight_layout()
save_figure(fig, "generalisation-everyone")
t.everyone("top1")
