# %% [markdown]
# # 04 · Accuracy tables
# Paper-style tables from `recognition_metrics`: top-1 by focus level and checkpoint, winners vs losers, and
# paired comparisons of each recogniser against the baselines (test runs, 95% bootstrap intervals over games).

# %% tags=["parameters"]
run_prefix: str = "rec-test"  # test runs are named <prefix>-f<focus>
focus_levels: str = "0,0.5,0.8,1"  # comma-separated focus levels

# %%
import matplotlib.pyplot as plt
import seaborn as sns

from riskcore.db import query
from riskcore.notebook import save_figure, save_table, setup

setup()
levels = [float(x) for x in focus_levels.split(",")]
runs = [f"{run_prefix}-f{x:g}" for x in levels]
marks = ", ".join("?" for _ in runs)
m = query(f"SELECT * FROM recognition_metrics WHERE run IN ({marks})", runs)
m["focus"] = m.run.str.rsplit("-f", n=1).str[1].astype(float)
main = m[~m.setting.str.contains("kinds=")]


def cell(r):
    return f"{r.value:.3f} [{r.ci_low:.3f}, {r.ci_high:.3f}]"


# %% [markdown]
# ## Top-1 (card level) by focus and share of the window observed

# %%
top1 = main[(main.subset == "all") & (main.metric == "top1")].copy()
top1["cell"] = top1.apply(cell, axis=1)
table = top1.pivot_table(index=["focus", "setting"], columns="point", values="cell", aggfunc="first").reset_index()
save_table(table, "accuracy-top1")
table

# %%
sub = top1[top1.point.isin([0.5, 1.0])]
g = sns.catplot(sub, x="focus", y="value", hue="setting", col="point", kind="bar", seed=0, height=4, aspect=1.4)
for ax in g.axes.ravel():
    ax.axhline(1 / 6, ls="--", color="grey")
g.set_axis_labels("mission focus", "top-1")
save_figure(g.figure, "accuracy-by-focus")

# %% [markdown]
# ## Winners vs losers (top-1 at 50% observed)

# %%
wl = main[main.subset.isin(["winners", "losers"]) & (main.metric == "top1") & (main.point == 0.5)].copy()
wl["cell"] = wl.apply(cell, axis=1)
save_table(wl.pivot_table(index=["focus", "setting"], columns="subset", values="cell", aggfunc="first")
           .reset_index(), "accuracy-winners-losers")
fig, ax = plt.subplots(figsize=(10, 4))
sns.barplot(wl[wl.setting.str.startswith(("inverse", "goal", "phatt:simple"))], x="setting", y="value",
            hue="subset", ax=ax, errorbar=None)
ax.tick_params(axis="x", rotation=15)
ax.set_ylabel("top-1 at 50%")
save_figure(fig, "accuracy-winners-losers")

# %% [markdown]
# ## Paired comparisons against the baselines (top-1; per-game bootstrap)

# %%
pairs = query(f"SELECT * FROM recognition_paired WHERE run IN ({marks}) AND metric = 'top1'", runs)
pairs = pairs[~pairs.a.str.contains("kinds=") & pairs.b.str.startswith(("uniform", "goal"))]
save_table(pairs.round(4), "accuracy-paired")
pairs[pairs.point.isin([0.3, 0.5])].round(3)
