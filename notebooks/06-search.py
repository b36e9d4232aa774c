# %% [markdown]
# # 06 · Goal-based game-tree search
# GB against exhaustive max^n (AB) on the small board: nodes against look-ahead, accuracy of GB's first
# decision, the tree-size estimate, scalability on the classic board, and a GB agent against mission agents.

# %% tags=["parameters"]
experiment: str = "search"  # the search experiment's key in the tables

# %%
import matplotlib.pyplot as plt
import seaborn as sns

from riskcore.db import query
from riskcore.notebook import save_figure, save_table, setup

setup()
nodes = query("SELECT * FROM search_nodes WHERE run = ?", [experiment])
g = sns.relplot(nodes, x="lookahead", y="nodes", hue="search", col="players", kind="line", marker="o",
                errorbar=("ci", 95), height=3.5)
for ax in g.axes.ravel():
    ax.set_yscale("log")
g.set_axis_labels("look-ahead (turns)", "nodes explored (log)")
save_figure(g.figure, "search-nodes")

# %%
ab_max = int(nodes[nodes.search == "AB"].lookahead.max())
acc = nodes[(nodes.search == "GB") & (nodes.lookahead <= ab_max)]
ab = nodes[nodes.search == "AB"].groupby(["players", "lookahead"]).nodes.mean().rename("ab_nodes")
table = acc.groupby(["players", "lookahead"]).agg(positions=("position", "nunique"), optimal=("optimal", "mean"),
                                                 relative_loss=("relative_loss", "mean"),
                                                 gb_nodes=("nodes", "mean")).join(ab).reset_index()
table["gb_share_of_ab_nodes"] = table.gb_nodes / table.ab_nodes
save_table(table, "search-accuracy")
fig, ax = plt.subplots(figsize=(6, 4))
sns.barplot(acc, x="lookahead", y="optimal", hue="players", ax=ax)
ax.axhline(0.881, ls="--", color="grey", label="paper: 88.1%")
ax.set_ylabel("share of positions where GB's decision is optimal")
ax.legend()
save_figure(fig, "search-accuracy")
table.round(4)

# %%
est = query("SELECT * FROM search_estimate WHERE run = ?", [experiment])
fig, ax = plt.subplots(figsize=(6, 4))
for (players, search), d in est.groupby(["players", "search"]):
    ax.plot(d.lookahead, d.measured, marker="o", label=f"{search} measured, {players}p")
    ax.plot(d.lookahead, d.estimated, ls="--", label=f"{search} estimate, {players}p")
ax.set_yscale("log")
ax.set_xlabel("look-ahead (turns)")
ax.set_ylabel("nodes")
ax.legend(fontsize=7)
save_figure(fig, "search-estimate")
est.round(1)

# %%
scal = query("SELECT * FROM search_scalability WHERE run = ?", [experiment])
g = sns.catplot(scal, x="goal_kinds", y="nodes", hue="players", kind="bar", height=4, aspect=1.4)
g.ax.set_yscale("log")
save_figure(g.figure, "search-scalability")
agent = query("SELECT * FROM search_agent WHERE run = ?", [experiment])
save_table(agent.drop(columns="run"), "search-agent")
agent.round(3)
