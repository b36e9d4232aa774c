"""Domination's own games (`datasets/domination/peer/`, as its peer wrote them) import, replay and agree with the
program's manifest, and the comparison notices a game that does not."""

from __future__ import annotations

import gzip
from dataclasses import replace

import pytest

from riskcore import paths
from riskcore.domination_check import check_logs, compare_game, expected_mission, log_stem, read_manifest

PEER = paths.datasets_dir() / "domination" / "peer"
LOGS = sorted(PEER.glob("*.log.gz"))
TRUTH = read_manifest(PEER / "manifest.csv")


def _lines(stem: str) -> list[str]:
    with gzip.open(PEER / f"{stem}.log.gz", "rt") as f:
        return f.read().splitlines()


@pytest.fixture(scope="module")
def checked(tmp_path_factory):
    return check_logs(LOGS, PEER / "manifest.csv", tmp_path_factory.mktemp("peer"))


def test_every_game_imports_replays_and_agrees_with_the_manifest(checked):
    assert checked.problems == []
    assert (checked.logs, checked.imported, checked.replayed, checked.matched) == (32, 32, 32, 32)
    assert checked.passed


def test_the_set_holds_every_seat_count_in_both_modes():
    counts = {(g.mode, len(g.seats)) for g in TRUTH.values()}
    assert counts == {(mode, n) for mode in ("mission", "domination") for n in (3, 4, 5, 6)}
    assert sorted(TRUTH) == sorted(log_stem(log) for log in LOGS)


def test_the_set_holds_games_won_by_a_fortify():
    won_by_fortify = [stem for stem in TRUTH if " movearmies " in _lines(stem)[-1]]
    assert len(won_by_fortify) >= 2


def test_the_set_holds_destroy_missions_whose_target_a_third_seat_eliminated(tmp_path):
    """The target's last territory taken by neither the holder nor the target itself: the holder's mission became
    24 territories, tested on its own moves (the eliminating seat won first in the first two, the holder later)."""
    from riskcore.domination import import_logs
    from riskcore.engine.board import load_board
    from riskcore.replay import RunTraces

    third = ["peer-1000-5p", "peer-1029-4p", "peer-1040-3p", "peer-1090-4p"]
    import_logs([PEER / f"{stem}.log.gz" for stem in third], "third", tmp_path, borders=81)
    traces, colours = RunTraces("third", tmp_path), load_board("classic-domination-81").colours
    players = traces.df("SELECT game_id, player, mission, won FROM players WHERE mission LIKE 'destroy %'")
    eliminations = traces.df("SELECT game_id, player, opponent FROM events WHERE kind = 'eliminate'")
    for game, stem in enumerate(third):
        target_of = {r.player: colours.index(r.mission.split()[1]) for r in players.itertuples() if r.game_id == game}
        assert any(target_of.get(holder) == e.opponent and holder not in (e.player, e.opponent)
                   for holder in target_of for e in eliminations.itertuples() if e.game_id == game), stem
    winners = players[players.won].game_id.tolist()  # a destroy mission's holder won games 2 and 3, not 0 and 1
    assert 0 not in winners and 1 not in winners and {2, 3} <= set(winners)


def test_missions_are_read_from_the_programs_words():
    colours = {"p1": "red", "p2": "blue"}
    assert expected_mission("Conquer the continents of NORTH AMERICA and AFRICA.", colours) == "North America+Africa"
    assert expected_mission("Conquer the continents of EUROPE and SOUTH AMERICA and a third continent of your "
                            "choice.", colours) == "Europe+South America+1"
    assert expected_mission("Occupy 18 countries of your choice and occupy each with at least 2 armies.",
                            colours) == "18 territories x2"
    assert expected_mission("Destroy all of green p2's TROOPS. If they are yours or they have already been "
                            "destroyed by another player then your mission is: Occupy 24 countries.",
                            colours) == "destroy blue"
    assert expected_mission("", colours) is None
    with pytest.raises(ValueError, match="unknown mission text"):
        expected_mission("Hold the line.", colours)


def _imported(stem: str) -> tuple[dict, list[dict]]:
    """A games row and players rows as riskcore records the game (riskcore seat r = program seat first + r)."""
    truth = TRUTH[stem]
    n = len(truth.seats)
    order = [truth.seats[(truth.first_seat + r) % n] for r in range(n)]
    colours = {s.name: c for s, c in zip(order, ["red", "blue", "green", "yellow", "black", "pink"])}
    winner = next(r for r, s in enumerate(order) if s.won)
    game = {"n_players": n, "first_seat": truth.first_seat, "winner": winner, "turns": truth.turns,
            "end_reason": {"mission": "mission", "elimination": "domination"}[truth.result]}
    players = [{"name": s.name, "mission": expected_mission(s.mission, colours)} for s in order]
    return game, players


@pytest.mark.parametrize("change,message", [
    (lambda g, p: g.update(winner=(g["winner"] + 1) % len(p)), "winner"),
    (lambda g, p: g.update(turns=g["turns"] + 1), "turns"),
    (lambda g, p: g.update(end_reason="domination"), "ended by"),
    (lambda g, p: p[0].update(mission="24 territories" if p[0]["mission"] != "24 territories" else "destroy red"),
     "mission"),
    (lambda g, p: p.reverse(), "seats"),
])
def test_the_comparison_names_what_differs(change, message):
    game, players = _imported("peer-1000-5p")
    assert compare_game(TRUTH["peer-1000-5p"], game, players) == []
    change(game, players)
    assert any(message in problem for problem in compare_game(TRUTH["peer-1000-5p"], game, players))


def test_a_log_the_manifest_does_not_list_is_a_problem(tmp_path):
    truth = {stem: g for stem, g in TRUTH.items() if stem != "peer-1004-3p"}
    report = check_logs([PEER / "peer-1004-3p.log.gz", PEER / "peer-1056-3p.log.gz"], truth, tmp_path)
    assert report.matched == 1 and not report.passed
    assert report.problems == [f"{PEER / 'peer-1004-3p.log.gz'}: no rows in the manifest"]


def test_a_game_that_does_not_agree_with_its_rows_is_counted_and_named(tmp_path):
    truth = dict(TRUTH)
    truth["peer-1056-3p"] = replace(TRUTH["peer-1056-3p"], turns=2)
    report = check_logs([PEER / "peer-1056-3p.log.gz"], truth, tmp_path)
    assert (report.imported, report.replayed, report.matched) == (1, 1, 0)
    assert report.problems == [f"{PEER / 'peer-1056-3p.log.gz'}: 1 turns, the manifest's 2"]


def test_a_manifest_with_other_columns_or_disagreeing_rows_is_refused(tmp_path):
    other = tmp_path / "other.csv"
    other.write_text("stem,seat\npeer-1-3p,0\n")
    with pytest.raises(ValueError, match="not a peer manifest"):
        read_manifest(other)
    rows = (PEER / "manifest.csv").read_text().splitlines()
    seat = next(row for row in rows[1:] if row.startswith("peer-1056-3p,"))
    broken = tmp_path / "broken.csv"
    broken.write_text("\n".join(rows + [seat.replace(",mission,3,1,", ",mission,3,2,", 1)]) + "\n")
    with pytest.raises(ValueError, match="peer-1056-3p"):
        read_manifest(broken)


def test_the_import_check_says_why_it_checks_nothing_without_the_peer(tmp_path, capsys):
    from riskcore.domination_check import main

    assert main(["--peer", str(tmp_path / "no-such-play-games")]) == 0
    assert "import-check skipped: Domination's peer is not at" in capsys.readouterr().out
