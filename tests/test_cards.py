import pytest

from riskcore.engine.cards import escalating_value, find_sets, fixed_value, is_set

INF, CAV, ART, WILD = 0, 1, 2, 3


@pytest.mark.parametrize("symbols,ok", [
    ((INF, INF, INF), True), ((INF, CAV, ART), True), ((INF, INF, WILD), True), ((WILD, WILD, CAV), True),
    ((INF, INF, CAV), False), ((ART, ART, CAV), False), ((INF, CAV), False)])
def test_set_rules(symbols, ok):
    assert is_set(symbols) is ok


def test_escalating_values_then_plus_five():
    assert [escalating_value(i) for i in range(9)] == [4, 6, 8, 10, 12, 15, 20, 25, 30]


def test_escalating_values_with_cap():
    assert escalating_value(10, cap=30) == 30 and escalating_value(2, cap=30) == 8


@pytest.mark.parametrize("symbols,value", [((INF,) * 3, 4), ((CAV,) * 3, 6), ((ART,) * 3, 8), ((INF, CAV, ART), 10),
                                           ((INF, INF, WILD), 4), ((INF, CAV, WILD), 10), ((WILD, WILD, WILD), 10)])
def test_fixed_values(symbols, value):
    assert fixed_value(symbols) == value


def test_find_sets_in_a_hand(classic):
    # cards 0,1,2 are infantry, cavalry, artillery on the classic board; 42 is wild
    assert (0, 1, 2) in find_sets([0, 1, 2, 42], classic.card_symbol)
    assert find_sets([0, 3, 1], classic.card_symbol) == []  # two infantry and a cavalry
