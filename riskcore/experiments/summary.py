"""A first look at a run: win rates by agent and seat, game lengths, mission completion, as a figure and a table.

Reads DuckDB read-only; writes `reports/figures/summary-RUN.png` and `reports/summary.md`.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

from riskcore import paths  # noqa: E402
from riskcore.db import DataError, query  # noqa: E402
from riskcore.notebook import markdown_table  # noqa: E402
from riskcore.stats import wilson_interval  # noqa: E402
from riskcore.storage import atomic_path, write_text  # noqa: E402


def win_rates(run: str, by: str, data_dir: Path | None = None) -> pd.DataFrame:
    """Win rate with Wilson 95% interval grouped by a `players` column (`agent`, `player`, `mission`)."""
    df = query(f"SELECT {by}, count(*)::INT AS games, sum(won::INT)::INT AS wins FROM players WHERE run = ? "
               f"GROUP BY {by} ORDER BY {by}", [run], data_dir)
    if df.empty:
        raise DataError(f"run {run!r} has no games in the database")
    df["win_rate"] = df.wins / df.games
    df["ci_low"], df["ci_high"] = wilson_interval(df.wins, df.games)
    return df


def write_summary(run: str = "default", data_dir: Path | None = None, out_dir: Path | None = None) -> Path:
    out_dir = Path(out_dir or paths.reports_dir())
    games = query("SELECT end_reason, turns, actions FROM games WHERE run = ?", [run], data_dir)
    if games.empty:
        raise DataError(f"run {run!r} has no games in the database")
    by_agent, by_seat, by_mission = (win_rates(run, c, data_dir) for c in ("agent", "player", "mission"))
    sns.set_theme(style="whitegrid")
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.8))
    for ax, df, col, title in ((axes[0], by_agent, "agent", "Win rate by agent"),
                               (axes[1], by_seat, "player", "Win rate by seat")):
        x = range(len(df))
        ax.bar(x, df.win_rate, yerr=[df.win_rate - df.ci_low, df.ci_high - df.win_rate], capsize=4, color="#4c72b0")
        ax.set_xticks(list(x), [str(v) for v in df[col]], rotation=20, ha="right")
        ax.set_ylabel("win rate (Wilson 95% CI)")
        ax.set_title(title)
    sns.histplot(games, x="turns", hue="end_reason", ax=axes[2], bins=30, multiple="stack")
    axes[2].set_title("Game length (player turns)")
    fig.suptitle(f"Run {run!r}: {len(games)} games")
    fig.tight_layout()
    figure = paths.figures_dir() if out_dir is None else out_dir / "figures"
    png = figure / f"summary-{run}.png"
    png.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(png) as tmp:
        fig.savefig(tmp, format="png", dpi=110)
    plt.close(fig)
    ends = games.end_reason.value_counts().rename_axis("end_reason").reset_index(name="games")
    text = "\n\n".join([
        f"# Summary of run `{run}`",
        f"{len(games)} games; mean {games.turns.mean():.1f} player turns and {games.actions.mean():.0f} actions "
        f"per game. Figure: `figures/{png.name}`.",
        "## End of game\n\n" + markdown_table(ends),
        "## Win rate by agent (Wilson 95% CI)\n\n" + markdown_table(by_agent),
        "## Win rate by seat\n\n" + markdown_table(by_seat),
        "## Win rate by mission card\n\n" + markdown_table(by_mission),
    ]) + "\n"
    md = out_dir / "summary.md"
    write_text(md, text)
    return md
