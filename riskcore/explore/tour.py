"""Queries behind the explore notebook's tour of the dataset, written so that runs never mix."""

from __future__ import annotations

import json

import pandas as pd

from riskcore.engine.board import load_board
from riskcore.db import query
from riskcore.recognition.hypotheses import build_hypotheses


def runs_with_posteriors(data_dir=None) -> list[str]:
    """The runs that have per-turn posteriors stored (the explorer's belief charts need them), by name."""
    try:
        return list(query("SELECT DISTINCT run FROM posteriors WHERE point_kind = 'turn' ORDER BY run",
                          data_dir=data_dir).run)
    except Exception:  # noqa: BLE001 - no posteriors table yet
        return []


def top_runs(sizes: pd.Series, n: int = 8, other: str = "other runs") -> dict[str, str]:
    """A label per run: the `n` largest (by `sizes`, a Series indexed by run) keep their names, the rest share
    `other`, so a plot stays readable however many runs the database holds."""
    keep = set(sizes.sort_values(ascending=False, kind="stable").index[:n])
    return {run: run if run in keep else other for run in sizes.index}


def true_card_probability(data_dir=None) -> pd.DataFrame:
    """The mean probability each recogniser gives a player's true card at each share of the player's observation
    window, per run and setting (players holding a card of `cards6`; a run's posteriors only, never summed
    with another run's games of the same id). Empty when no posteriors are stored."""
    try:
        rows = query("""SELECT po.run, po.setting, po.point, po.game_id, po.player, po.explanation, po.prob,
                               p.mission, r.config
                        FROM posteriors po JOIN players p USING (run, game_id, player) JOIN runs r USING (run)
                        WHERE po.point_kind = 'fraction' AND po.hypotheses = 'cards6'""", data_dir=data_dir)
    except Exception:  # noqa: BLE001 - no posteriors table yet
        return pd.DataFrame()
    if rows.empty:
        return rows
    out = []
    for config, grp in rows.groupby("config"):
        hyp = build_hypotheses(load_board(json.loads(config)["config"]["board"]), "cards6")
        card = hyp.card_of[grp.explanation.to_numpy()]
        true = grp.mission.map({m: k for k, m in enumerate(hyp.cards)}).to_numpy()
        out.append(grp[card == true])
    mine = pd.concat(out)
    per_player = mine.groupby(["run", "setting", "point", "game_id", "player"]).prob.sum()
    return per_player.groupby(["run", "setting", "point"]).mean().rename("p_true").reset_index()
