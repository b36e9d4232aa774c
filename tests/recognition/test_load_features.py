"""Stored features read back as they were extracted: `load_features` (the files' pending rows put in observation
order here, not sorted by the query) equals `features_from_parts` of the same games' compiled extraction, on
every matrix and observation column, in any chunk of games; rows in another order are sorted, rows that do not
match their observations are refused."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from riskcore.db import query, run_config
from riskcore.engine.board import load_board
from riskcore.engine.chance import TraceError
from riskcore.recognition.features import (KIND, MATRICES, _pending_matrices, chunk_events, compiled_chunk,
                                           features_from_parts, kind_codes, load_features)
from riskcore.recognition.hypotheses import build_hypotheses
from riskcore.recognition.pipeline import ensure_features

@pytest.mark.parametrize("games", [None, (3, 7)])
def test_stored_features_equal_the_extraction_they_were_made_from(small_run, games):
    ensure_features("mixed", "cards6", small_run, workers=1, progress=False)
    config = run_config("mixed", small_run)
    hyp = build_hypotheses(load_board(config.board), "cards6")
    first, last = games or (0, int(query("SELECT max(game_id) AS g FROM games", data_dir=small_run).g[0]))
    want = features_from_parts(compiled_chunk(hyp, config.n_players, chunk_events("mixed", first, last,
                                                                                  str(small_run))), hyp)
    got = load_features("mixed", "cards6", small_run, games=games)
    assert len(got.obs) == len(want.obs) > 100
    for name in MATRICES:
        assert np.array_equal(getattr(got, name), getattr(want, name)), name
    columns = ["game_id", "player", "obs", "seq", "turn", "kind", "kind_code", "territory", "n_owned"]
    pd.testing.assert_frame_equal(got.obs[columns], want.obs[columns], check_dtype=False)


def _pending(obs: pd.DataFrame, e: int) -> dict[str, np.ndarray]:
    """Pending rows as the files hold them: each observation's E rows together, observations in event order."""
    events = obs.sort_values(["game_id", "seq"])
    rows = {k: np.repeat(events[k].to_numpy(), e) for k in ("game_id", "player", "obs")}
    rows["explanation"] = np.tile(np.arange(e), len(events))
    code = rows["game_id"] * 1000 + rows["player"] * 100 + rows["obs"] * 10  # a value that names its row
    for j, name in enumerate(MATRICES):
        rows[name] = code + rows["explanation"] + j
    return rows


def _observations() -> pd.DataFrame:
    obs = pd.DataFrame({"game_id": [0, 0, 0, 0, 1, 1], "player": [1, 0, 1, 0, 0, 1], "obs": [0, 0, 1, 1, 0, 0],
                        "seq": [1, 2, 3, 4, 1, 2]})
    return obs.sort_values(["game_id", "player", "obs"]).reset_index(drop=True)


def _expected(obs: pd.DataFrame, e: int) -> np.ndarray:
    code = obs.game_id.to_numpy() * 1000 + obs.player.to_numpy() * 100 + obs.obs.to_numpy() * 10
    return code[:, None] + np.arange(e)[None, :]


@pytest.mark.parametrize("order", ["files", "shuffled"])
def test_pending_rows_are_put_in_observation_order(order):
    obs, e = _observations(), 3
    rows = _pending(obs, e)
    if order == "shuffled":  # not in blocks at all: sorted row by row
        perm = np.random.default_rng(5).permutation(len(rows["explanation"]))
        rows = {k: v[perm] for k, v in rows.items()}
    mats = _pending_matrices(rows, obs, e, "r")
    for j, name in enumerate(MATRICES):
        assert np.array_equal(mats[name], _expected(obs, e) + j), name


@pytest.mark.parametrize("fault", ["lost row", "wrong player", "missing value", "repeated explanation"])
def test_pending_rows_that_do_not_match_their_observations_are_refused(fault):
    obs, e = _observations(), 3
    rows = _pending(obs, e)
    if fault == "lost row":
        rows = {k: v[1:] for k, v in rows.items()}
    elif fault == "wrong player":
        rows["player"][4] = 7
    elif fault == "missing value":
        rows["owned_in"] = np.ma.masked_array(rows["owned_in"], mask=np.arange(len(rows["owned_in"])) == 2)
    else:
        rows["explanation"][1] = 0
    with pytest.raises(TraceError, match="run 'r'.*corrupt"):
        _pending_matrices(rows, obs, e, "r")


def test_each_observation_kind_gets_its_code_and_an_unknown_or_missing_one_is_named():
    kinds = ["place", "attack_won", "place", "occupy", "fortify"]
    assert kind_codes(pd.Series(kinds)).tolist() == [KIND[k] for k in kinds]
    for bad, named in ((["place", "teleport"], "teleport"), (["place", None], "missing")):
        with pytest.raises(TraceError, match=named):
            kind_codes(pd.Series(bad))
