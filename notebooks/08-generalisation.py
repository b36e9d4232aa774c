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
# The recognisers on play they were not built from: every riskcore agent family held out in turn (fitted
# recognisers chosen or trained on the other families), and the Domination corpus, recorded by another program.
# Reads `generalisation_metrics`, `generalisation_calibration` and `generalisation_lean`
# (`riskcore experiment generalisation`).

# %% tags=["parameters"]
points: list[float] = [0.3, 0.5, 1.0]  # shares of the observation window in the tables

# %%
import matplotlib.pyplot as plt
import numpy as np

from riskcore.db import query
from riskcore.experiments.generalisation import KEY, lean_table, load_lean, table
from riskcore.notebook import save_figure, save_table, setup

setup()
m = query("SELECT * FROM generalisation_metrics WHERE run = ?", [KEY])
cal = query("SELECT * FROM generalisation_calibration WHERE run = ?", [KEY])
runs = query("SELECT * FROM generalisation_runs WHERE run = ?", [KEY])
families = list(runs.family)
shown = ["uniform", "PHATT simple (reference weights)", "PHATT khan2013 (the reference's code)", "goal completion",
         "inverse planning", "play-style mixture", "open-goal mixture", "classifier"]

# %% [markdown]
# ## Top-1 and log loss by held-out family

# %%
for metric in ("top1", "log_loss"):
    for point in points:
        t = table(m[m.recogniser.isin(shown + [r for r in m.recogniser.unique() if r.startswith("corpus")])],
                  metric, point)
        save_table(t.reset_index(), f"generalisation-{metric.replace('_', '')}-{int(point * 100)}")
table(m, "top1", 1.0)

# %%
end = m[(m.point == 1.0) & m.recogniser.isin(shown)]
fig, axes = plt.subplots(1, 2, figsize=(14, 5.2))
colours = dict(zip(shown, plt.get_cmap("tab10").colors))
width = 0.8 / len(shown)
x = np.arange(len(families))
for ax, metric in zip(axes, ("top1", "log_loss")):
    for k, name in enumerate(shown):
        d = end[(end.recogniser == name) & (end.metric == metric)].set_index("family").reindex(families)
        err = np.vstack([d.value - d.ci_low, d.ci_high - d.value])
        ax.bar(x + (k - len(shown) / 2 + 0.5) * width, d.value, width, yerr=err, capsize=1.5, label=name,
               color=colours[name])
    ax.axhline(1 / 6 if metric == "top1" else np.log(6), ls="--", color="k", lw=1)
    ax.set_xticks(x, families, rotation=30, ha="right")
    ax.set_ylabel("top-1 at 100% observed" if metric == "top1" else "log loss at 100% observed")
axes[1].set_ylim(0, min(6, axes[1].get_ylim()[1]))
# below the charts: inside, the legend hides the tallest bars
handles, labels = axes[0].get_legend_handles_labels()
fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=8, frameon=False)
fig.tight_layout(rect=(0, 0.1, 1, 1))
save_figure(fig, "generalisation-by-family")

# %% [markdown]
# ## Calibration
# Reliability of the top-1 confidence (the largest card probability), checkpoints pooled, over every held-out
# riskcore family and separately on the Domination corpus: a calibrated recogniser lies on the diagonal.

# %%
rel = ["PHATT khan2013 (the reference's code)", "goal completion", "inverse planning", "play-style mixture",
       "open-goal mixture", "classifier"]
fig, axes = plt.subplots(1, 2, figsize=(11, 4.4), sharey=True)
for ax, (title, mask) in zip(axes, (("riskcore families (held out)", cal.family != "domination corpus"),
                                    ("Domination corpus", cal.family == "domination corpus"))):
    for name in rel:
        d = cal[mask & (cal.recogniser == name)]
        g = d.groupby("bin").apply(lambda b: (np.average(b.confidence, weights=b["count"]),
                                              np.average(b.accuracy, weights=b["count"]), b["count"].sum()),
                                   include_groups=False)
        conf, acc, n = (np.array(v) for v in zip(*g)) if len(g) else ([], [], [])
        ax.plot(conf, acc, marker="o", label=name, color=colours[name])
    ax.plot([0, 1], [0, 1], ls="--", color="k", lw=1)
    ax.set_title(title)
    ax.set_xlabel("confidence (largest card probability)")
axes[0].set_ylabel("top-1 accuracy")
axes[0].legend(fontsize=7)
fig.tight_layout()
save_figure(fig, "generalisation-calibration")
ece = m[m.metric == "ece"].pivot(index="recogniser", columns="family", values="value").round(3)
save_table(ece.reset_index(), "generalisation-ece")
ece

# %% [markdown]
# ## How much of its mission each family's play shows
# Mission lean: the share of a player's reinforcements (or conquests) in its own card's named continents, less the
# mean share over the other cards'. Missions are dealt at random, so play that ignores them leans 0; no
# recogniser's model enters this number.

# %%
lean = lean_table(load_lean())
save_table(lean.reset_index(), "generalisation-lean")
lean
