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
# # 04 · Accuracy tables
# Paper-style tables from `recognition_metrics`: top-1 by focus level and checkpoint, winners vs losers, and
# paired comparisons of each recogniser against the baselines (test runs, 95% bootstrap intervals over games).

# %% tags=["parameters"]
report_points: list[float] = [0.3, 0.5, 1.0]  # shares of the observation window in the compact table

# %%
import matplotlib.pyplot as plt
import numpy as np

from riskcore.db import query
from riskcore.experiments.recognition.focus import experiment_runs, test_metrics
from riskcore.notebook import save_figure, save_table, setup
from riskcore.recognition.recognisers import Recogniser

setup()
runs = experiment_runs("test")
focus_of = dict(zip(runs.run, runs.focus))
marks = ", ".join("?" for _ in runs.run)
m = test_metrics()
recs = {s: Recogniser.from_spec(s) for s in m.setting.unique()}
main = m[~m.ablation]


def cell(r):
    return f"{r.value:.3f} [{r.ci_low:.3f}, {r.ci_high:.3f}]"


def share(point: float) -> str:
    return f"{point:.0%} observed"


# %% [markdown]
# ## Top-1 (card level) by focus and share of the window observed

# %%
top1 = main[(main.subset == "all") & (main.metric == "top1")].copy()
top1["cell"] = top1.apply(cell, axis=1)
full = top1.pivot_table(index=["focus", "recogniser"], columns="point", values="cell", aggfunc="first")
full.columns = [share(p) for p in full.columns]
save_table(full.reset_index(), "accuracy-top1")
compact = full[[share(p) for p in report_points]].reset_index()
compact["focus"] = compact.focus.map(lambda x: f"{x:g}")
compact = compact[~compact.recogniser.isin(["PHATT equal"])]  # the prior again, as uniform
save_table(compact, "accuracy-top1-compact")
compact

# %%
points = [0.5, 1.0]
names = sorted(top1.recogniser.unique())
colours = dict(zip(names, plt.get_cmap("tab10").colors))
levels = sorted(top1.focus.unique())
fig, axes = plt.subplots(1, len(points), figsize=(13, 4.2), sharey=True)
width = 0.8 / len(names)
for ax, point in zip(axes, points):
    at = top1[top1.point == point]
    for k, name in enumerate(names):
        d = at[at.recogniser == name].set_index("focus").reindex(levels)
        x = np.arange(len(levels)) + (k - (len(names) - 1) / 2) * width
        ax.bar(x, d.value, width, color=colours[name], label=name,
               yerr=[d.value - d.ci_low, d.ci_high - d.value], capsize=2, error_kw={"lw": 0.8})
    ax.axhline(1 / 6, ls="--", color="grey", label="chance (1/6)")
    ax.set_xticks(np.arange(len(levels)), [f"{x:g}" for x in levels])
    ax.set_xlabel("mission focus of the players")
    ax.set_title(share(point))
axes[0].set_ylabel("top-1 (95% bootstrap CI)")
handles, labels = axes[0].get_legend_handles_labels()
fig.legend(handles, labels, loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=8, frameon=False)
fig.tight_layout()
save_figure(fig, "accuracy-by-focus")

# %% [markdown]
# ## Winners vs losers (top-1 at 50% observed)

# %%
wl = main[main.subset.isin(["winners", "losers"]) & (main.metric == "top1") & (main.point == 0.5)].copy()
wl["cell"] = wl.apply(cell, axis=1)
save_table(wl.pivot_table(index=["focus", "recogniser"], columns="subset", values="cell", aggfunc="first")
           .reset_index().assign(focus=lambda d: d.focus.map(lambda x: f"{x:g}")), "accuracy-winners-losers")
shown = wl[wl.setting.map(lambda s: recs[s].name in ("inverse", "goal") or
                          (recs[s].name == "phatt" and recs[s].weights.scheme == "simple"))]
fig, axes = plt.subplots(1, len(levels), figsize=(3.4 * len(levels), 3.8), sharey=True)
for ax, focus in zip(axes, levels):
    d = shown[shown.focus == focus].sort_values(["recogniser", "subset"])
    names_here = sorted(d.recogniser.unique())
    for j, subset in enumerate(("winners", "losers")):
        s = d[d.subset == subset].set_index("recogniser").reindex(names_here)
        x = np.arange(len(names_here)) + (j - 0.5) * 0.38
        ax.bar(x, s.value, 0.38, label=subset, yerr=[s.value - s.ci_low, s.ci_high - s.value], capsize=2)
    ax.set_xticks(np.arange(len(names_here)), [n.split(" (")[0] for n in names_here], rotation=30, ha="right")
    ax.set_title(f"focus {focus:g}")
axes[0].set_ylabel("top-1 at 50% (95% CI)")
handles, labels = axes[-1].get_legend_handles_labels()
fig.tight_layout()
fig.legend(handles, labels, loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False)  # beside, not over, bars
save_figure(fig, "accuracy-winners-losers")

# %% [markdown]
# ## Paired comparisons against the baselines (top-1; per-game bootstrap)

# %%
pairs = query(f"SELECT * FROM recognition_paired WHERE run IN ({marks}) AND metric = 'top1'", list(runs.run))
pairs = pairs[pairs.a.map(lambda s: Recogniser.from_spec(s).kinds is None)
              & pairs.b.map(lambda s: Recogniser.from_spec(s).name in ("uniform", "goal"))]
pairs = pairs.assign(focus=pairs.run.map(focus_of), a=pairs.a.map(lambda s: Recogniser.from_spec(s).label),
                     b=pairs.b.map(lambda s: Recogniser.from_spec(s).label))
pairs = pairs[["focus", "point", "a", "b", "difference", "ci_low", "ci_high", "p_value", "n_games"]]
save_table(pairs.sort_values(["focus", "point", "a", "b"]), "accuracy-paired")
pairs[pairs.point.isin([0.3, 0.5])].round(3)
