"""Mission lean: how much a player's play lands in its own card's continents rather than the other cards'."""

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from riskcore.engine.board import load_board
from riskcore.recognition.features import KIND, load_features
from riskcore.recognition.hypotheses import build_hypotheses
from riskcore.recognition.mission_lean import card_territories, player_lean
from riskcore.recognition.pipeline import ensure_features

HYP = build_hypotheses(load_board("classic"), "cards6")
BOARD = HYP.board


def _continent(name: str) -> np.ndarray:
    return BOARD.continent_mask[BOARD.continent_names.index(name)]


def _player(card: str, territories: np.ndarray, kind: str = "reinforce") -> SimpleNamespace:
    """One player holding `card` who acts once of `kind` in each of `territories`."""
    obs = pd.DataFrame({"game_id": 0, "player": 0, "kind_code": KIND[kind], "territory": territories})
    truth = pd.DataFrame({"game_id": [0], "player": [0], "card": [HYP.cards.index(card)]})
    return SimpleNamespace(hyp=HYP, obs=obs, truth=truth)


def test_a_card_with_an_optional_continent_is_its_two_named_ones():
    inside = card_territories(HYP)
    card = HYP.cards.index("Europe+Australia+1")
    assert (inside[card] == (_continent("Europe") | _continent("Australia"))).all()
    assert (inside[HYP.cards.index("Asia+Africa")] == (_continent("Asia") | _continent("Africa"))).all()


def test_a_deck_with_other_than_continent_cards_is_refused_by_name():
    with pytest.raises(ValueError, match="continent cards only; 'deck14' also holds .*24 territories"):
        card_territories(build_hypotheses(BOARD, "deck14"))


def test_play_in_its_own_continents_leans_towards_the_card_and_play_elsewhere_away():
    north_america = np.flatnonzero(_continent("North America"))
    asia = np.flatnonzero(_continent("Asia"))
    # only "North America+Australia" of the other five cards also names North America
    toward = player_lean(_player("North America+Africa", north_america))
    assert np.isclose(toward.reinforce.iloc[0], 1 - 1 / 5) and np.isnan(toward.attack_won.iloc[0])
    # Asia lies in two other cards and not in this one
    away = player_lean(_player("North America+Africa", asia, "attack_won"))
    assert np.isclose(away.attack_won.iloc[0], 0 - 2 / 5)


def test_mission_agents_lean_towards_their_cards_more_than_players_blind_to_them(small_run):
    ensure_features("mixed", "cards6", small_run, workers=1)
    f = load_features("mixed", "cards6", small_run)
    lean = player_lean(f).merge(f.truth[["game_id", "player", "agent"]], on=["game_id", "player"])
    assert len(lean) == (f.truth.card >= 0).sum()
    follows = lean.agent.str.startswith("mission")
    assert follows.any() and (~follows).any()
    kinds = ["reinforce", "attack_won"]
    assert (lean[follows][kinds].mean() > lean[~follows][kinds].mean() + 0.2).all()


def test_on_the_classic_board_every_card_spans_the_same_range():
    # every continent is named by two of the six cards, so the extremes do not depend on the card
    inside = card_territories(HYP)
    for c, card in enumerate(HYP.cards):
        own, elsewhere = np.flatnonzero(inside[c]), np.flatnonzero(~inside[c])
        assert np.isclose(player_lean(_player(card, own)).reinforce.iloc[0], 0.8)
        assert np.isclose(player_lean(_player(card, elsewhere)).reinforce.iloc[0], -0.4)
