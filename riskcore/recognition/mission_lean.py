"""How strongly a player's play leans towards its own mission card: a property of the play, not of a recogniser.

For a player holding a continent card, the lean of an action kind is the share of its actions of that kind that
land in its own card's named continents, less the mean of the same share over the other cards' named continents
(a "+ one other continent" card names two; the optional third is left out, as it is no place in particular).
Missions are dealt at random, independently of play that ignores them, so such play leans 0 in expectation. On
the classic board every continent is named by two of the six cards, so a player acting only in its own card's
continents leans 0.8 and one acting only outside them -0.4. A recogniser can only read what the play shows: a
family that leans little hides its missions from any of them, whatever its model.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from riskcore.recognition.features import KIND, Features

LEAN_KINDS = ("place", "reinforce", "attack_won")  # setup placements, reinforcements, conquests


def card_territories(hyp) -> np.ndarray:
    """(C, T) bool: the territories every explanation of a card covers (its named continents)."""
    other = sorted({e.card for e in hyp.explanations if e.kind != "continents"})
    if other:
        raise ValueError(f"mission lean compares continent cards only; {hyp.name!r} also holds {', '.join(other)}")
    member = hyp.membership(np.full(hyp.board.n_territories, -1))
    return np.stack([member[hyp.card_of == c].all(axis=0) for c in range(len(hyp.cards))])


def player_lean(f: Features) -> pd.DataFrame:
    """One row per player with a card in the hypotheses: game_id, player, card and the lean of each of the
    `LEAN_KINDS` over all its observations (NaN when it made no action of that kind)."""
    truth = f.truth[f.truth.card >= 0][["game_id", "player", "card"]].reset_index(drop=True)
    if truth.empty:
        return truth.assign(**{k: pd.Series(dtype=float) for k in LEAN_KINDS})
    inside = card_territories(f.hyp)
    obs = f.obs
    terr = obs.territory.to_numpy()
    key = pd.MultiIndex.from_frame(truth[["game_id", "player"]])
    out = truth.copy()
    for kind in LEAN_KINDS:
        rows = (obs.kind_code.to_numpy() == KIND[kind]) & (terr >= 0)
        hits = pd.DataFrame(inside[:, terr[rows]].T.astype(float))  # (actions, C): lands in card c's continents
        hits[["game_id", "player"]] = obs.loc[rows, ["game_id", "player"]].to_numpy()
        share = hits.groupby(["game_id", "player"]).mean().reindex(key).to_numpy()  # (players, C)
        own = share[np.arange(len(truth)), truth.card.to_numpy()]
        others = (share.sum(axis=1) - own) / (share.shape[1] - 1)
        out[kind] = own - others
    return out
