import json

import numpy as np
import pytest

from riskcore.board import BoardError, board_from_dict, load_board


def test_classic_board_has_42_territories_6_continents_83_borders(classic):
    assert classic.n_territories == 42
    assert classic.n_continents == 6
    assert classic.n_borders == 83


def test_classic_bonuses_match_the_printed_board(classic):
    bonus = dict(zip(classic.continent_names, classic.continent_bonus.tolist()))
    assert bonus == {"Asia": 7, "North America": 5, "Europe": 5, "Africa": 3, "Australia": 2, "South America": 2}


@pytest.mark.parametrize("a,b", [("Iceland", "Scandinavia"), ("Great Britain", "Scandinavia"),
                                 ("Alaska", "Kamchatka"), ("Brazil", "North Africa"), ("Siam", "Indonesia")])
def test_classic_keeps_printed_borders(classic, a, b):
    assert classic.adjacency[classic.index(a), classic.index(b)]


def test_adjacency_is_symmetric_without_self_loops(classic):
    assert np.array_equal(classic.adjacency, classic.adjacency.T)
    assert not classic.adjacency.diagonal().any()


def test_classic_has_14_missions_and_44_cards(classic):
    assert len(classic.missions) == 14
    assert classic.n_cards == 44
    assert np.bincount(classic.card_symbol).tolist() == [14, 14, 14, 2]


def test_small_board_is_small(small):
    assert 8 <= small.n_territories <= 12 and small.n_continents == 3


def _spec():
    return json.loads(json.dumps({
        "continents": [{"name": "A", "bonus": 1, "territories": ["a1", "a2"]},
                       {"name": "B", "bonus": 2, "territories": ["b1"]}],
        "borders": [["a1", "a2"], ["a2", "b1"]],
        "cards": {"a1": "infantry", "a2": "cavalry", "b1": "artillery"}}))


def test_minimal_board_loads():
    assert board_from_dict(_spec()).n_territories == 3


@pytest.mark.parametrize("mutate,needle", [
    (lambda s: s["continents"][1]["territories"].append("a1"), "'a1' listed twice"),
    (lambda s: s["continents"].append({"name": "A", "bonus": 1, "territories": ["c"]}), "duplicate continent"),
    (lambda s: s["continents"][0].update(bonus=0), "positive whole-number bonus"),
    (lambda s: s["borders"].pop(), "not connected"),
    (lambda s: s["borders"].append(["a1", "zz"]), "unknown territory 'zz'"),
    (lambda s: s.update(adjacency={"a1": ["b1"]}), "not symmetric"),
    (lambda s: s["cards"].pop("b1"), "'b1' has no card"),
    (lambda s: s.pop("borders"), "missing key 'borders'"),
])
def test_bad_board_is_rejected_naming_the_entry(mutate, needle):
    spec = _spec()
    mutate(spec)
    with pytest.raises(BoardError, match=needle):
        board_from_dict(spec, "bad.json")


def test_bad_board_file_and_unknown_name(tmp_path):
    bad = tmp_path / "broken.json"
    bad.write_text("{not json")
    with pytest.raises(BoardError, match="invalid JSON"):
        load_board(bad)
    with pytest.raises(BoardError, match="not found"):
        load_board("atlantis")
