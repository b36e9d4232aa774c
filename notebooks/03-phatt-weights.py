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
# # 03 · PHATT weights
# The `phatt_weights` sweep: the inconsistent weight of each action kind (the others at 1.0 / 0.98). Every setting
# is scored on each focus level's training run, where the best is chosen (by mean log loss over the checkpoints),
# and on its test run, where the chosen one is reported. Heatmaps and sensitivity on the training runs.

# %% tags=["parameters"]
sweep: str = "phatt_weights"  # the sweep whose results to plot
point_share: float = 0.5  # share of the observation window for the heatmaps

# %%
import matplotlib.pyplot as plt
import seaborn as sns

from riskcore.db import query
from riskcore.notebook import save_figure, save_table, setup

setup()
res = query("SELECT * FROM phatt_sweep WHERE sweep = ?", [sweep])
res["share"] = res.share.astype(float).round(2)
train, test = res[res.split == "train"], res[res.split == "test"]
print(f"{res.setting.nunique()} weight settings x {res.focus.nunique()} focus levels")

# %%
at = train[(train.share == point_share) & train.declared]
levels = sorted(at.focus.unique())
fig, axes = plt.subplots(1, len(levels), figsize=(4.2 * len(levels) + 1.5, 3.8), squeeze=False, sharey=True)
for k, (ax, focus) in enumerate(zip(axes[0], levels)):
    table = at[at.focus == focus].pivot_table(index="kind", columns="inconsistent", values="top1")
    sns.heatmap(table, annot=True, fmt=".2f", cmap="viridis", ax=ax, cbar=False, vmin=0, vmax=at.top1.max(),
                annot_kws={"fontsize": 7})
    ax.set_title(f"focus {focus:g}")
    ax.set_xlabel("inconsistent weight")
    ax.set_ylabel("action kind varied" if k == 0 else "")
fig.suptitle(f"PHATT simple on the training runs: top-1 at {point_share:.0%} observed")
fig.tight_layout()
save_figure(fig, "phatt-weights-heatmap")

# %% [markdown]
# ## The setting chosen per focus level on the training run, scored on the test run

# %%
mean = train.groupby(["focus", "kind", "inconsistent"])[["log_loss", "top1"]].mean().reset_index()
best = mean.loc[mean.groupby("focus").log_loss.idxmin()][["focus", "kind", "inconsistent", "log_loss"]]
reference = test[(test.kind == "all") & (test.inconsistent == 0.98)]
chosen = best.merge(test, on=["focus", "kind", "inconsistent"], suffixes=("_train", ""))
out = chosen[chosen.share == point_share][["focus", "kind", "inconsistent", "log_loss_train", "top1", "log_loss"]]
out = out.merge(reference[reference.share == point_share][["focus", "top1"]], on="focus", suffixes=("", "_reference"))
out = out.rename(columns={"log_loss_train": "training log loss (mean)", "top1": f"test top-1 at {point_share:.0%}",
                          "log_loss": f"test log loss at {point_share:.0%}",
                          "top1_reference": f"test top-1 at {point_share:.0%}, reference weights"})
save_table(out, "phatt-weights-best")
out.round(3)

# %% [markdown]
# ## Sensitivity on the training runs: mean log loss against the inconsistent weight

# %%
g = sns.relplot(mean, x="inconsistent", y="log_loss", hue="kind", col="focus", kind="line", marker="o", seed=0,
                height=3.2, aspect=0.9, facet_kws={"sharey": False})
g.set_axis_labels("inconsistent weight", "mean log loss (training run)")
save_figure(g.figure, "phatt-weights-sensitivity")
