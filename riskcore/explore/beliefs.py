"""Card-level beliefs summed inside DuckDB: a recogniser stores a probability per explanation (`posteriors`), the
explorer, the tour and the convergence notebook draw a probability per mission card, the sum of its explanations'
(`Hypotheses.card_of`).

Every query here groups in DuckDB and returns only what is drawn (a row per player and turn, per game or per
point), never a run's posterior rows: the recognition experiment's runs hold millions of them. A sum of
floating-point probabilities may leave [0, 1] by rounding (1.0000000000000024 at the end of a long game): such a
sum is clipped, and one off by more than `TOLERANCE` is an error naming the run, since the stored posteriors are
then wrong.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from riskcore.db import DataError, query, run_source, sql_text
from riskcore.engine.board import load_board
from riskcore.recognition.hypotheses import build_hypotheses

TOLERANCE = 1e-6  # a card's summed probability may leave [0, 1] by rounding, never by more
EPS = 1e-9  # two card probabilities closer than this are tied (as `riskcore.recognition.metrics` reads them)
BOARD = "json_extract_string(config, '$.config.board')"  # a run's board, from its config in `runs`


def checked_probabilities(values, what: str) -> np.ndarray:
    """Summed probabilities clipped to [0, 1]; a DataError naming `what` where one is off by more than rounding."""
    values = np.asarray(values, dtype=float)
    bad = (values < -TOLERANCE) | (values > 1 + TOLERANCE)
    if bad.any():
        raise DataError(f"{what}: a card's summed probability is {values[bad][0]!r}, outside [0, 1]: the stored "
                        "posteriors are corrupt; recompute them with `riskcore recognize`")
    return np.clip(values, 0.0, 1.0)


def cards_table(boards: list[str], hypotheses: str = "cards6") -> str:
    """SQL of a small table (board, explanation, card): each explanation's mission card, on each board."""
    rows = []
    for board in sorted(set(boards)):
        hyp = build_hypotheses(load_board(board), hypotheses)
        rows += [f"({sql_text(board)}, {e}, {sql_text(hyp.cards[c])})" for e, c in enumerate(hyp.card_of)]
    if not rows:
        return "(SELECT NULL::VARCHAR AS board, NULL::BIGINT AS explanation, NULL::VARCHAR AS card LIMIT 0)"
    return f"(SELECT * FROM (VALUES {', '.join(rows)}) AS c(board, explanation, card))"


def has_table(name: str, data_dir: Path | None = None) -> bool:
    """Whether the database holds a table or view `name` (a database without recognition has no `posteriors`)."""
    return bool(query("SELECT count(*) AS n FROM information_schema.tables WHERE table_name = ?", [name],
                      data_dir).n[0])


def run_board(run: str, data_dir: Path | None = None) -> str:
    config = query("SELECT config FROM runs WHERE run = ?", [run], data_dir).config
    if config.empty:
        raise DataError(f"no run {run!r} in the database")
    return json.loads(config.iat[0])["config"]["board"]


def game_beliefs(run: str, setting: str, game_id: int, data_dir: Path | None = None) -> tuple[str, pd.DataFrame]:
    """(hypotheses, card probabilities) of one game after every turn: a row per (player, turn), a column per card
    in the hypotheses' order, summed in DuckDB from the run's own posterior file of `setting`."""
    source = run_source("posteriors", run, data_dir, (game_id, game_id), [setting])
    where = "WHERE po.run = $run AND po.setting = $setting AND po.game_id = $game AND po.point_kind = 'turn'"
    params = {"run": run, "setting": setting, "game": int(game_id)}
    found = query(f"SELECT hypotheses FROM {source} po {where} LIMIT 1", params, data_dir).hypotheses
    if found.empty:
        return "cards6", pd.DataFrame()
    hypotheses, board = found.iat[0], run_board(run, data_dir)
    sums = query(f"""SELECT po.player, po.point AS turn, c.card, sum(po.prob) AS prob
                     FROM {source} po JOIN {cards_table([board], hypotheses)} c USING (explanation)
                     {where} GROUP BY ALL""", params, data_dir)
    sums["prob"] = checked_probabilities(sums.prob, f"run {run!r}, {setting}, game {game_id}")
    table = sums.pivot_table(index=["player", "turn"], columns="card", values="prob", aggfunc="first")
    return hypotheses, table.reindex(columns=list(build_hypotheses(load_board(board), hypotheses).cards))


def true_card_by_game(run: str, settings: list[str], point_kind: str = "fraction", data_dir: Path | None = None
                      ) -> pd.DataFrame:
    """Per (setting, point, game): the mean over the game's players holding one of the six continent cards of
    their true card's probability (`p_true`) and of the card-level top-1 (ties split: 1 / the number of cards
    tied at the top, as `riskcore.recognition.metrics.card_metrics` scores it), computed in DuckDB."""
    source = run_source("posteriors", run, data_dir, None, settings)
    settings_sql = ", ".join(sql_text(s) for s in settings)
    rows = query(f"""
        WITH summed AS (
            SELECT po.setting, po.game_id, po.player, round(po.point::DOUBLE, 2) AS point, c.card, sum(po.prob) AS p
            FROM {source} po JOIN {cards_table([run_board(run, data_dir)])} c USING (explanation)
            WHERE po.run = $run AND po.point_kind = $kind AND po.hypotheses = 'cards6'
                  AND po.setting IN ({settings_sql})
            GROUP BY ALL),
        marked AS (
            SELECT s.*, max(CASE WHEN s.card = t.mission THEN s.p END)
                        OVER (PARTITION BY s.setting, s.game_id, s.player, s.point) AS p_true
            FROM summed s JOIN (SELECT game_id, player, mission FROM players WHERE run = $run) t
                 USING (game_id, player)),
        scored AS (
            SELECT setting, game_id, player, point, any_value(p_true) AS p_true,
                   count(*) FILTER (WHERE p > p_true + {EPS}) AS greater,
                   count(*) FILTER (WHERE abs(p - p_true) <= {EPS}) AS equal
            FROM marked WHERE p_true IS NOT NULL GROUP BY ALL)
        SELECT setting, point, game_id, avg(least(greatest(p_true, 0), 1)) AS p_true,
               avg(CASE WHEN greater = 0 THEN 1.0 / equal ELSE 0 END) AS top1,
               min(p_true) AS lowest, max(p_true) AS highest
        FROM scored GROUP BY ALL ORDER BY setting, point, game_id""", {"run": run, "kind": point_kind}, data_dir)
    checked_probabilities(np.r_[rows.lowest, rows.highest], f"run {run!r}")
    return rows.drop(columns=["lowest", "highest"])


def true_card_probability(data_dir: Path | None = None) -> pd.DataFrame:
    """The mean probability each recogniser gives a player's true card at each share of the player's observation
    window, per run and setting (players holding one of the six continent cards; a run's posteriors only, never
    summed with another run's games of the same id). Only the true card's explanations are read and summed, in
    DuckDB. Empty when no posteriors are stored."""
    if not has_table("posteriors", data_dir):
        return pd.DataFrame()
    boards = list(query(f"SELECT DISTINCT {BOARD} AS board FROM runs", data_dir=data_dir).board.dropna())
    rows = query(f"""
        WITH per_player AS (
            SELECT po.run, po.setting, po.point, po.game_id, po.player, sum(po.prob) AS p_true
            FROM posteriors po JOIN (SELECT run, {BOARD} AS board FROM runs) r USING (run)
                 JOIN players p USING (run, game_id, player)
                 JOIN {cards_table(boards)} c ON c.board = r.board AND c.explanation = po.explanation
                                              AND c.card = p.mission
            WHERE po.point_kind = 'fraction' AND po.hypotheses = 'cards6'
            GROUP BY ALL)
        SELECT run, setting, point, avg(least(greatest(p_true, 0), 1)) AS p_true,
               min(p_true) AS lowest, max(p_true) AS highest
        FROM per_player GROUP BY ALL ORDER BY run, setting, point""", data_dir=data_dir)
    checked_probabilities(np.r_[rows.lowest, rows.highest], "the stored posteriors")
    return rows.drop(columns=["lowest", "highest"])
