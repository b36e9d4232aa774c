"""Importing Domination's command logs: the six genuine logs against their recorded truth, replay, determinism,
and every kind of bad log failing loudly without writing anything."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest

from riskcore import paths
from riskcore.cli import main
from riskcore.db import query
from riskcore.domination import LogError, import_logs
from riskcore.replay import RunTraces, verify_game

LOGS = paths.datasets_dir() / "domination" / "logs"
FIXED = sorted(LOGS.glob("dom-mission-fixed-*.log"))
INCREASING = sorted(LOGS.glob("dom-mission-increasing-*.log"))
# the manifest's mission text -> riskcore's mission name
MISSION_NAMES = {
    "ASIA and SOUTH AMERICA.": "Asia+South America",
    "EUROPE and AUSTRALIA and a third continent of your choice.": "Europe+Australia+1",
    "ASIA and AFRICA.": "Asia+Africa",
    "EUROPE and SOUTH AMERICA and a third continent of your choice.": "Europe+South America+1",
    "NORTH AMERICA and AUSTRALIA.": "North America+Australia",
    "NORTH AMERICA and AFRICA.": "North America+Africa",
}


def manifest() -> dict[str, dict]:
    """Per log: seats (name, level, mission) in seat order and the winner, read from MANIFEST.md."""
    out, current = {}, None
    for line in (LOGS / "MANIFEST.md").read_text().splitlines():
        if line.startswith("## dom-"):
            current = out.setdefault(line[3:].strip(), {"seats": [], "winner": None})
        elif current is not None and line.startswith("- winner:"):
            current["winner"] = re.search(r"\*\*(.+)\*\*", line).group(1)
        elif current is not None and re.match(r"\| \d+ \|", line):
            cells = [c.strip() for c in line.strip("|").split("|")]
            text = cells[3].removeprefix("Conquer the continents of ")
            current["seats"].append((cells[1], cells[2], MISSION_NAMES[text]))
    return out


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    data = tmp_path_factory.mktemp("dom")
    counts, summary = import_logs(FIXED, "dom", data)
    return data, counts, summary


def test_the_logs_are_in_the_repository():
    assert len(FIXED) == 4 and len(INCREASING) == 2


def test_winners_missions_and_seats_match_the_manifest(imported):
    data, counts, summary = imported
    truth = manifest()
    games = query("SELECT game_id, n_players, first_seat FROM games WHERE run = 'dom' ORDER BY game_id", None, data)
    players = query("SELECT game_id, player, name, agent, mission, won FROM players WHERE run = 'dom' "
                    "ORDER BY game_id, player", None, data)
    assert summary.games == 4 and counts["games"] == 4
    for gid, log in enumerate(FIXED):
        expect = truth[log.name]
        seats = players[players.game_id == gid]
        assert len(seats) == len(expect["seats"]) == games.n_players[gid]
        first = int(games.first_seat[gid])
        for row in seats.itertuples():
            name, level, mission = expect["seats"][(first + row.player) % len(seats)]
            assert (row.name, row.agent, row.mission) == (name, f"domination:{level}", mission)
        assert list(seats.name[seats.won]) == [expect["winner"]]


def test_missions_never_appear_in_the_events(imported):
    data = imported[0]
    cols = query("DESCRIBE events", None, data).column_name.tolist()
    assert not any("mission" in c for c in cols)


def test_every_imported_game_replays(imported):
    data = imported[0]
    traces = RunTraces("dom", data)
    assert sum(verify_game(traces, int(g)) for g in traces.game_ids()) > 6000


def test_reimport_is_byte_identical(imported, tmp_path):
    data = imported[0]
    import_logs(FIXED, "dom", tmp_path)
    first = sorted((data / "traces" / "run=dom").rglob("*.parquet"))
    second = sorted((tmp_path / "traces" / "run=dom").rglob("*.parquet"))
    assert [p.relative_to(data) for p in first] == [p.relative_to(tmp_path) for p in second]
    for a, b in zip(first, second):
        assert a.read_bytes() == b.read_bytes(), a.name


def test_increasing_card_values_and_gzip(tmp_path):
    gz = tmp_path / "game.log.gz"
    gz.write_bytes(gzip.compress(INCREASING[0].read_bytes()))
    counts, summary = import_logs([gz, INCREASING[1]], "inc", tmp_path / "data")
    config = query("SELECT config FROM runs WHERE run = 'inc'", None, tmp_path / "data").config[0]
    assert summary.games == 2 and '"card_values": "escalating"' in config


def test_mixed_card_values_go_to_one_run_per_setting(tmp_path):
    counts, summary = import_logs([FIXED[0], INCREASING[0], FIXED[1]], "mixed", tmp_path)
    assert summary.runs == {"mixed-escalating": 1, "mixed-fixed": 2}
    runs = query("SELECT run, games, config FROM runs ORDER BY run", None, tmp_path)
    assert runs.run.tolist() == ["mixed-escalating", "mixed-fixed"] and runs.games.tolist() == [1, 2]
    assert '"card_values": "escalating"' in runs.config[0] and '"card_values": "fixed"' in runs.config[1]


def test_the_map_a_game_was_recorded_on_is_the_runs_board(tmp_path):
    import_logs(FIXED[:1], "on81", tmp_path, borders=81)
    config = query("SELECT config FROM runs WHERE run = 'on81'", None, tmp_path).config[0]
    assert '"board": "classic-domination-81"' in config
    verify_game(RunTraces("on81", tmp_path), 0)
    with pytest.raises(ValueError, match="--borders must be one of"):
        import_logs(FIXED[:1], "x", tmp_path, borders=80)


def test_a_game_across_a_border_its_map_lacks_is_refused(tmp_path):
    """An attack Iceland -> Scandinavia (Domination ids 14 -> 15) is legal on 83 borders, not on 81."""
    lines = FIXED[0].read_text().splitlines()
    i = _first_attack(lines)
    host = lines[i].split()[0]
    across = lines[:i] + [f"{host} attack 14 15"] + lines[i + 1:]
    log = write(tmp_path / "across.log", across)
    with pytest.raises(LogError, match=rf"across\.log:{i + 1}: attack 14 15: not an attack the rules allow"):
        import_logs([log], "across", tmp_path / "data", borders=81)


def test_skip_invalid_keeps_every_game_that_replays_and_names_the_others(tmp_path):
    lines = FIXED[0].read_text().splitlines()
    truncated = write(tmp_path / "cut.log", lines[:len(lines) // 2])
    with pytest.raises(LogError, match="truncated game"):
        import_logs([FIXED[1], truncated, FIXED[2]], "skip", tmp_path / "data")
    counts, summary = import_logs([FIXED[1], truncated, FIXED[2]], "skip", tmp_path / "data", skip_invalid=True)
    assert summary.games == 2 and summary.runs == {"skip": 2}
    assert len(summary.skipped) == 1 and re.match(rf"{re.escape(str(truncated))}:{len(lines) // 2}: truncated",
                                                  summary.skipped[0])
    with pytest.raises(LogError, match=r"no game found .* that replays \(1 skipped\)"):
        import_logs([truncated], "none", tmp_path / "data", skip_invalid=True)


def test_a_retreat_after_rolls_is_an_event_so_two_battles_on_a_pair_stay_two(tmp_path):
    corpus = paths.datasets_dir() / "domination" / "corpus" / "dom-000-3p.log.gz"
    import_logs([corpus], "retreats", tmp_path, borders=81)
    ev = query("SELECT seq, kind, src, dst FROM events WHERE run = 'retreats' AND turn = 2 AND kind IN "
               "('attack', 'retreat') ORDER BY seq", None, tmp_path)
    kinds = ev.kind.tolist()
    # the log's second turn: attack 29 36, rolls, retreat, attack 29 36 (China -> Mongolia) again, ...
    first_retreat = kinds.index("retreat")
    assert kinds[first_retreat + 1] == "attack" and kinds[first_retreat + 2] == "attack"
    assert (ev.src[first_retreat], ev.dst[first_retreat]) == (ev.src[first_retreat + 1], ev.dst[first_retreat + 1])
    verify_game(RunTraces("retreats", tmp_path), 0)


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_log_with_several_games_and_names_for_player(tmp_path):
    first = FIXED[0].read_text().splitlines()
    second = FIXED[1].read_text().splitlines()
    # the other recordings name the seat that starts the deal: "PLAYER 1" -> the name of seat index 1
    names = [line.split()[-1] for line in second if " newplayer " in line]
    second = [f"PLAYER {names[1]}" if line.startswith("PLAYER") else line for line in second]
    log = write(tmp_path / "two.log", first + ["vm#1 continue", "vm#1 placearmies 1 1", "vm#1 closegame"] + second)
    _, summary = import_logs([log], "two", tmp_path / "data")
    assert summary.games == 2 and summary.ignored == {"continue": 1, "commands after the win": 1}
    winners = query("SELECT name FROM players WHERE run = 'two' AND won ORDER BY game_id", None, tmp_path / "data")
    truth = manifest()
    assert winners.name.tolist() == [truth[FIXED[0].name]["winner"], truth[FIXED[1].name]["winner"]]


def _first_attack(lines: list[str]) -> int:
    return next(i for i, line in enumerate(lines) if " attack " in line)


def test_ignored_placement_and_empty_battle(tmp_path):
    lines = FIXED[0].read_text().splitlines()
    i = _first_attack(lines)
    host, _, src, dst = lines[i].split()
    # a placement after the reserve is spent (the program rejects it), and a battle retreated before any roll
    edited = lines[:i] + [f"{host} placearmies {src} 1", f"{host} attack {src} {dst}", f"{host} retreat"] + lines[i:]
    log = write(tmp_path / "edited.log", edited)
    _, kept = import_logs([log], "kept", tmp_path / "data")
    _, dropped = import_logs([log], "dropped", tmp_path / "data", drop_empty_battles=True)
    assert kept.ignored == {"placearmies after the reserve was spent": 1} and kept.empty_battles == 1
    attacks = query("SELECT run, count(*) AS n, count(stop_at) AS whole FROM events WHERE kind = 'attack' "
                    "GROUP BY run ORDER BY run", None, tmp_path / "data")
    assert attacks.n.tolist()[1] == attacks.n.tolist()[0] + 1  # 'kept' has the empty battle, 'dropped' not
    assert attacks.whole.tolist() == [0, 1]
    assert RunTraces("kept", tmp_path / "data").game_ids() == [0]
    verify_game(RunTraces("kept", tmp_path / "data"), 0)


def _bad(tmp_path, lines: list[str], name: str = "bad.log") -> str:
    """Import a bad log over an existing run: the error text, after checking the old run is untouched."""
    data = tmp_path / "data"
    if not (data / "traces" / "run=keep").exists():
        import_logs([FIXED[0]], "keep", data)
    before = sorted(p.read_bytes() for p in (data / "traces" / "run=keep").rglob("*.parquet"))
    with pytest.raises(LogError) as err:
        import_logs([FIXED[1], write(tmp_path / name, lines)], "keep", data)
    after = sorted(p.read_bytes() for p in (data / "traces" / "run=keep").rglob("*.parquet"))
    assert before == after
    assert query("SELECT count(*) AS n FROM games WHERE run = 'keep'", None, data).n[0] == 1
    assert not [p for p in (data / "traces").iterdir() if p.name.startswith(".")]
    return str(err.value)


def test_bad_logs_name_file_and_line(tmp_path):
    lines = FIXED[0].read_text().splitlines()
    i = _first_attack(lines)
    host = lines[i].split()[0]
    unknown = lines[:i] + [f"{host} teleport 1 2"] + lines[i:]
    assert re.search(rf"bad\.log:{i + 1}: .*'teleport'", _bad(tmp_path, unknown))
    dice = next(j for j, line in enumerate(lines) if line.startswith("DICE 3 2"))
    contradicting = lines[:dice] + ["DICE 3 1 " + " ".join(lines[dice].split()[3:6]) + " 2"] + lines[dice + 1:]
    assert re.search(rf"bad\.log:{dice + 1}: DICE 3 1 .* contradicts the rolls \(3 against 2", _bad(
        tmp_path, contradicting))
    truncated = lines[:len(lines) // 2]
    assert re.search(rf"bad\.log:{len(truncated)}: truncated game", _bad(tmp_path, truncated))
    place = next(j for j, line in enumerate(lines) if " placearmies " in line)
    out_of_range = lines[:place] + [f"{host} placearmies 43 1"] + lines[place + 1:]
    assert re.search(rf"bad\.log:{place + 1}: .*territory id 43 is out of range 1..42", _bad(tmp_path, out_of_range))
    wrong_move = lines[:i] + [lines[i].rsplit(" ", 1)[0] + " 40"] + lines[i + 1:]  # attack a non-neighbour
    assert re.search(rf"bad\.log:{i + 1}: ", _bad(tmp_path, wrong_move))


def test_cli_import_and_errors(tmp_path, capsys):
    data = tmp_path / "data"
    assert main(["import", "domination", str(FIXED[0]), "--run", "cli", "--data-dir", str(data)]) == 0
    assert "'cli' (1 game(s)) on the 83-border map: 1 game(s) from 1 log(s)" in capsys.readouterr().out
    missing = tmp_path / "missing.log"
    assert main(["import", "domination", str(missing), "--run", "cli2", "--data-dir", str(data)]) == 2
    assert f"{missing}: no such log" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["import", "domination", str(FIXED[0]), "--run", "x", "--bogus"])


def test_the_recipe_for_recordings_one_has_runs_as_written(tmp_path, capsys):
    """docs/import.md's commands for scoring recordings, on the genuine logs in their place; the recogniser spec it
    names is riskcore's recogniser as the committed generalisation report states it."""
    root = paths.project_root()
    doc = (root / "docs" / "import.md").read_text()
    spec = re.search(r"--recogniser ((?!phatt:)\S+)", doc).group(1)
    assert f"`{spec}`" in (root / "reports" / "generalisation.md").read_text()
    data = ["--data-dir", str(tmp_path / "data")]
    logs = [str(p) for p in FIXED]
    assert main(["import", "domination", *logs, "--run", "human", "--borders", "81", "--skip-invalid"] + data) == 0
    for rec in (spec, "phatt:scheme=khan2013"):
        assert main(["recognize", "--run", "human", "--recogniser", rec, "--quiet", "--workers", "1"] + data) == 0
    assert main(["evaluate", "--run", "human", "--checkpoints", "game", "--reading", "explanation",
                 "--bootstrap", "50"] + data) == 0
    assert "the reference's reading" in capsys.readouterr().out
    m = query("SELECT setting, metric, value FROM recognition_metrics WHERE run = 'human' AND clock = 'game' "
              "AND point = 1 AND subset = 'all'", data_dir=tmp_path / "data")
    assert len(m.setting.unique()) == 2
    assert m[m.metric.isin(["top1", "top1_explanation"])].value.between(0, 1).all()
    assert (m[m.metric == "log_loss"].value > 0).all()


# ---- Domination's own games (datasets/domination/peer: the program as shipped, its full mission list) ---------------
PEER = paths.datasets_dir() / "domination" / "peer"


def _peer(stem: str) -> list[str]:
    with gzip.open(PEER / f"{stem}.log.gz", "rt") as f:
        return f.read().splitlines()


def _missions(run: str, data: Path) -> list[str]:
    return query("SELECT mission FROM players WHERE run = ? ORDER BY game_id, player", [run], data).mission.tolist()


def test_a_mission_game_without_autoplaceall_is_dealt_by_the_program_and_imports(tmp_path):
    lines = _peer("peer-1056-3p")
    assert any(line.endswith(" startgame mission increasing recycle") for line in lines)
    _, summary = import_logs([PEER / "peer-1056-3p.log.gz"], "dealt", tmp_path, borders=81)
    assert summary.games == 1


def test_a_domination_game_without_autoplaceall_is_refused(tmp_path):
    lines = [line.replace(" autoplaceall", "") for line in _peer("peer-2004-3p-domination")]
    log = write(tmp_path / "claims.log", lines)
    with pytest.raises(LogError, match=r"claims\.log:\d+: a domination game without autoplaceall begins with the "
                                       "seats claiming territories"):
        import_logs([log], "claims", tmp_path / "data", borders=81)


def test_a_game_won_by_its_fortify_ends_on_the_movearmies_line(tmp_path):
    lines = _peer("peer-1054-4p")
    assert " movearmies " in lines[-1]
    import_logs([PEER / "peer-1054-4p.log.gz"], "fortified", tmp_path, borders=81)
    last = query("SELECT kind FROM events WHERE run = 'fortified' ORDER BY seq DESC LIMIT 2", None, tmp_path)
    assert last.kind.tolist() == ["win", "fortify"]
    with pytest.raises(LogError, match=rf"played-on\.log:{len(lines) + 1}: the game was won at line {len(lines)}"):
        import_logs([write(tmp_path / "played-on.log", lines + ["CARD "])], "x", tmp_path / "data", borders=81)


@pytest.mark.parametrize("end", [" nomove", " movearmies "])
def test_a_turn_that_does_not_win_still_needs_its_card_line(tmp_path, end):
    lines = FIXED[0].read_text().splitlines()
    i = next(i for i, line in enumerate(lines) if end in line)
    assert lines[i + 1].startswith("CARD")
    with pytest.raises(LogError, match=rf"nocard\.log:{i + 1}: .*the turn ends without its CARD line"):
        import_logs([write(tmp_path / "nocard.log", lines[:i + 1] + lines[i + 2:])], "x", tmp_path / "data")


def test_the_mission_list_is_read_from_the_log(tmp_path):
    """Numbers past the 6 continent missions: the program's full list, whose destroy missions of absent seats are
    not dealt; riskcore's missions then equal the program's (tests/test_domination_check.py compares them all)."""
    lines = _peer("peer-1000-5p")
    assert max(int(x) for x in next(line for line in lines if line.startswith("MISSION")).split()[1:]) >= 6
    _, summary = import_logs([PEER / "peer-1000-5p.log.gz"], "inferred", tmp_path, borders=81)
    import_logs([PEER / "peer-1000-5p.log.gz"], "stated", tmp_path, borders=81, missions=14)
    assert summary.full_list == 1 and _missions("inferred", tmp_path) == _missions("stated", tmp_path)


def test_numbers_that_fit_the_continent_missions_name_the_same_missions_under_either_list(tmp_path):
    log = PEER / "peer-1004-3p.log.gz"  # a game of the full list whose numbers all fit the first 6
    for missions in (None, 6, 14):
        import_logs([log], f"list-{missions}", tmp_path, borders=81, missions=missions)
    assert _missions("list-None", tmp_path) == _missions("list-6", tmp_path) == _missions("list-14", tmp_path)


def test_a_stated_list_the_log_contradicts_is_refused(tmp_path):
    line = next(i for i, line in enumerate(_peer("peer-1000-5p")) if line.startswith("MISSION")) + 1
    with pytest.raises(LogError, match=rf"peer-1000-5p\.log\.gz:{line}: MISSION .* out of range of the 6 continent "
                                       r"missions \(--missions 6\), but within the program's full list of 13"):
        import_logs([PEER / "peer-1000-5p.log.gz"], "x", tmp_path, borders=81, missions=6)


def test_numbers_past_the_full_list_of_the_seats_in_the_game_are_refused(tmp_path):
    """With 4 seats the program deals from 12 missions (no destroy seat 5 or 6): 12 is not a first draw."""
    lines = [("MISSION 12 0 0 0" if line.startswith("MISSION") else line) for line in _peer("peer-1029-4p")]
    log = write(tmp_path / "seat5.log", lines)
    for missions, what in ((None, "out of range of every mission list"), (14, "out of range of the program's full "
                                                                           "list, 12 missions for 4 seats")):
        with pytest.raises(LogError, match=f"seat5.log:\\d+: MISSION 12 0 0 0: {what}"):
            import_logs([log], "x", tmp_path / "data", borders=81, missions=missions)


def test_a_log_that_names_its_first_seat_with_numbers_past_the_continent_missions_cannot_be_told(tmp_path):
    """PLAYER NAME is the reference study's fork, which deals the 6 continent missions: refused unless stated."""
    lines = _peer("peer-1000-5p")
    first = int(next(line for line in lines if line.startswith("PLAYER")).split()[1])
    names = [line.split()[-1] for line in lines if " newplayer " in line]
    log = write(tmp_path / "named.log", [f"PLAYER {names[first]}" if line.startswith("PLAYER") else line
                                         for line in lines])
    with pytest.raises(LogError, match=r"named\.log:\d+: MISSION .* the mission list cannot be told; pass "
                                       "--missions 14"):
        import_logs([log], "x", tmp_path / "data", borders=81)
    import_logs([log], "named", tmp_path / "data", borders=81, missions=14)
    import_logs([PEER / "peer-1000-5p.log.gz"], "indexed", tmp_path / "data", borders=81)
    assert _missions("named", tmp_path / "data") == _missions("indexed", tmp_path / "data")


def test_the_reference_recordings_import_with_the_read_list_as_with_the_continent_missions(tmp_path):
    import_logs(FIXED + INCREASING, "read", tmp_path)
    import_logs(FIXED + INCREASING, "six", tmp_path, missions=6)
    assert _missions("read", tmp_path) == _missions("six", tmp_path)


def test_cli_import_says_how_many_games_needed_the_full_list(tmp_path, capsys):
    data = ["--data-dir", str(tmp_path / "data"), "--borders", "81"]
    logs = [str(PEER / "peer-1000-5p.log.gz"), str(PEER / "peer-1004-3p.log.gz")]
    assert main(["import", "domination", *logs, "--run", "peer"] + data) == 0
    assert "mission games dealt from the program's full mission list: 1;" in capsys.readouterr().out
    assert main(["import", "domination", logs[0], "--run", "six", "--missions", "6"] + data) == 2
    assert "out of range of the 6 continent missions" in capsys.readouterr().err
