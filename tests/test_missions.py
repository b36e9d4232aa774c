import numpy as np
import pytest

from riskcore.engine.missions import compile_missions


@pytest.fixture(scope="module")
def missions(classic):
    return {m.name: m for m in compile_missions(classic)}


def _check(classic, mission, owned_names=(), owned_continents=(), armies=1, player=0, n_players=4,
           eliminated_by=None):
    owned = np.zeros(42, dtype=bool)
    for c in owned_continents:
        owned |= classic.continent_mask[classic.continent_index(c)]
    for t in owned_names:
        owned[classic.index(t)] = True
    arm = np.full(42, armies)
    held = np.array([owned[m].all() for m in classic.continent_mask])
    elim = np.full(6, -1) if eliminated_by is None else np.asarray(eliminated_by)
    return mission.complete(player, owned, arm, held, n_players, elim)


@pytest.mark.parametrize("name,conts", [("North America+Africa", ("North America", "Africa")),
                                        ("North America+Australia", ("North America", "Australia")),
                                        ("Asia+South America", ("Asia", "South America")),
                                        ("Asia+Africa", ("Asia", "Africa"))])
def test_two_continent_missions(classic, missions, name, conts):
    assert _check(classic, missions[name], owned_continents=conts)
    assert not _check(classic, missions[name], owned_continents=conts[:1])


@pytest.mark.parametrize("name,conts", [("Europe+Australia+1", ("Europe", "Australia")),
                                        ("Europe+South America+1", ("Europe", "South America"))])
def test_plus_one_missions_need_a_third_continent(classic, missions, name, conts):
    assert not _check(classic, missions[name], owned_continents=conts)
    assert _check(classic, missions[name], owned_continents=conts + ("Africa",))


def test_24_territories(classic, missions):
    names = classic.territories
    assert _check(classic, missions["24 territories"], owned_names=names[:24])
    assert not _check(classic, missions["24 territories"], owned_names=names[:23])


def test_18_territories_need_two_armies_each(classic, missions):
    names = classic.territories
    assert _check(classic, missions["18 territories x2"], owned_names=names[:18], armies=2)
    assert not _check(classic, missions["18 territories x2"], owned_names=names[:18], armies=1)


def test_destroy_colour_done_by_you(classic, missions):
    m = missions["destroy blue"]  # colour 1
    assert not _check(classic, m, player=0)
    assert _check(classic, m, player=0, eliminated_by=[-1, 0, -1, -1, -1, -1])


@pytest.mark.parametrize("why,player,n_players,elim", [
    ("the colour is you", 1, 4, None),
    ("the colour is not in play", 0, 1, None),
    ("someone else destroyed it", 0, 4, [-1, 2, -1, -1, -1, -1])])
def test_destroy_falls_back_to_24_territories(classic, missions, why, player, n_players, elim):
    m = missions["destroy blue"]
    names = classic.territories
    assert _check(classic, m, owned_names=names[:24], player=player, n_players=n_players, eliminated_by=elim), why
    assert not _check(classic, m, owned_names=names[:23], player=player, n_players=n_players, eliminated_by=elim)
