"""Domination's peer as a source of games: played into a folder (logs already there are kept), imported as a run,
and nothing done where the peer cannot run. A stand-in peer hands out the committed logs of
`datasets/domination/peer/` by seed; one test runs the real peer where Java is present."""

from __future__ import annotations

import stat
import sys
from pathlib import Path

import pytest

from riskcore import paths
from riskcore.domination_check import check_logs
from riskcore.domination_peer import (PEER_ENV, PeerMissing, seed_ranges, import_peer_games, peer_missing, peer_program,
                                      peer_stem, play_peer_games)

DATASET = paths.datasets_dir() / "domination" / "peer"

STAND_IN = f'''#!{sys.executable}
"""play-games N SEED --players K --mode M --logs DIR, from the committed logs; notes every call in DIR/calls."""
import csv, gzip, sys
from pathlib import Path
n, seed, k, mode, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[4], sys.argv[6], Path(sys.argv[8])
source = Path({str(DATASET)!r})
rows = list(csv.DictReader(open(source / "manifest.csv")))
with open(out / "calls", "a") as f:
    f.write(" ".join(sys.argv[1:]) + "\\n")
new = not (out / "manifest.csv").exists()
with open(out / "manifest.csv", "a", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\\n")
    if new:
        w.writeheader()
    for s in range(seed, seed + n):
        stem = f"peer-{{s}}-{{k}}p" + ("-domination" if mode == "domination" else "")
        if not (source / f"{{stem}}.log.gz").exists():
            sys.exit(3)
        (out / f"{{stem}}.log").write_bytes(gzip.decompress((source / f"{{stem}}.log.gz").read_bytes()))
        w.writerows(r for r in rows if r["stem"] == stem)
'''


@pytest.fixture
def stand_in(tmp_path):
    program = tmp_path / "play-games"
    program.write_text(STAND_IN)
    program.chmod(program.stat().st_mode | stat.S_IEXEC)
    return program


def _calls(folder: Path) -> list[str]:
    return (folder / "calls").read_text().splitlines() if (folder / "calls").exists() else []


def test_games_are_played_into_the_folder_and_kept_there(stand_in, tmp_path):
    folder = tmp_path / "logs"
    logs = play_peer_games(folder, 1, 1056, 3, peer=stand_in)
    assert logs == [folder / "peer-1056-3p.log"] and logs[0].exists()
    assert _calls(folder) == [f"1 1056 --players 3 --mode mission --logs {folder}"]
    assert play_peer_games(folder, 1, 1056, 3, peer=stand_in) == logs  # a log is a function of its seed: kept
    assert len(_calls(folder)) == 1


def test_only_the_missing_seeds_are_played_in_runs_of_consecutive_seeds():
    assert seed_ranges([3, 4, 5, 9, 11, 12]) == [(3, 3), (9, 1), (11, 2)]


def test_the_peer_s_games_are_imported_as_one_run_that_agrees_with_the_manifest(stand_in, tmp_path):
    folder, data = tmp_path / "logs", tmp_path / "data"
    played = import_peer_games("peer", folder, 1, 1056, players=(3,), data_dir=data, peer=stand_in)
    assert played.run == "peer" and played.summary.runs == {"peer": 1}
    assert played.logs == (folder / "peer-1056-3p.log",) and played.manifest == folder / "manifest.csv"
    assert check_logs(list(played.logs), played.manifest, tmp_path / "check").passed


def test_a_failing_peer_is_an_error_naming_its_command(stand_in, tmp_path):
    with pytest.raises(RuntimeError, match=r"peer failed \(exit 3\).* 1 1 --players 4"):
        play_peer_games(tmp_path / "logs", 1, 1, 4, peer=stand_in)


def test_without_the_peer_nothing_is_played_or_imported_and_the_reason_is_given(tmp_path):
    absent = tmp_path / "no-peer" / "play-games"
    assert "Domination's peer is not at" in peer_missing(absent)
    assert import_peer_games("peer", tmp_path / "logs", 2, peer=absent, data_dir=tmp_path / "data") is None
    assert not (tmp_path / "logs").exists() and not (tmp_path / "data").exists()
    with pytest.raises(PeerMissing, match="not at"):
        play_peer_games(tmp_path / "logs", 2, peer=absent)


def test_logs_already_in_the_folder_need_no_peer(stand_in, tmp_path):
    folder = tmp_path / "logs"
    play_peer_games(folder, 1, 1056, 3, peer=stand_in)
    played = import_peer_games("kept", folder, 1, 1056, players=(3,), data_dir=tmp_path / "data",
                               peer=tmp_path / "gone")
    assert played is not None and played.summary.games == 1


def test_no_java_is_a_reason_too(stand_in, monkeypatch):
    monkeypatch.setenv("JAVA", "no-such-java-binary")
    assert "no Java" in peer_missing(stand_in)


def test_the_peer_is_found_beside_the_project_or_where_the_variable_says(monkeypatch, tmp_path):
    monkeypatch.delenv(PEER_ENV, raising=False)
    assert peer_program() == paths.project_root().parent / "shared" / "domination" / "peer" / "play-games"
    monkeypatch.setenv(PEER_ENV, str(tmp_path / "pg"))
    assert peer_program() == tmp_path / "pg"
    assert peer_stem(7, 5) == "peer-7-5p" and peer_stem(7, 5, "domination") == "peer-7-5p-domination"


def test_a_bad_request_is_refused_before_anything_runs(stand_in, tmp_path):
    with pytest.raises(ValueError, match="3 to 6 seats"):
        play_peer_games(tmp_path, 1, 0, 7, peer=stand_in)
    with pytest.raises(ValueError, match="mission or domination"):
        play_peer_games(tmp_path, 1, 0, 4, mode="capital", peer=stand_in)


@pytest.mark.skipif(peer_missing() is not None, reason="Domination's peer or Java is not here")
def test_the_real_peer_s_games_import_and_agree_with_its_manifest(tmp_path):
    folder = tmp_path / "logs"
    logs = play_peer_games(folder, 2, 0, 3) + play_peer_games(folder, 1, 0, 4, mode="domination")
    report = check_logs(logs, folder / "manifest.csv", tmp_path / "data")
    assert report.problems == [] and report.matched == 3
