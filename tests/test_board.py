import json

import numpy as np
import pytest

from riskcore.engine.board import BoardError, board_from_dict, load_board
from riskcore.paths import BOARDS_DIR


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


def test_a_board_on_a_base_drops_the_borders_it_names(tmp_path, monkeypatch):
    from riskcore.engine import board as board_module

    b81, b82 = load_board("classic-domination-81"), load_board("classic-domination-82")
    full = load_board("classic-domination")
    assert (full.n_borders, b81.n_borders, b82.n_borders) == (83, 81, 82)
    i, s = b81.index("Iceland"), b81.index("Scandinavia")
    assert full.adjacency[i, s] and not b81.adjacency[i, s] and b82.adjacency[i, s]
    assert b81.territories == full.territories and (b81.card_symbol == full.card_symbol).all()
    monkeypatch.setattr(board_module, "BOARDS_DIR", tmp_path)
    (tmp_path / "classic-domination.json").write_text((BOARDS_DIR / "classic-domination.json").read_text())
    (tmp_path / "bad.json").write_text('{"base": "classic-domination", "remove_borders": [["Peru", "Japan"]]}')
    with pytest.raises(BoardError, match=r"remove_borders names \['Peru', 'Japan'\], not a border"):
        load_board(str(tmp_path / "bad.json"))
    (tmp_path / "orphan.json").write_text('{"base": "nowhere"}')
    with pytest.raises(BoardError, match="base board 'nowhere' not found"):
        load_board(str(tmp_path / "orphan.json"))
