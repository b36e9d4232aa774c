"""Bad input and hostile conditions get one line and a clean exit, never a traceback or a hang, and nothing stored
is lost or silently stale."""

from __future__ import annotations

import gzip
import os
import re
import signal
import subprocess
import sys
import time

from riskcore import cli, paths
from riskcore.cli import main
from riskcore.db import query
from riskcore.domination import import_logs

LOGS = paths.datasets_dir() / "domination" / "logs"
FIXED = sorted(LOGS.glob("dom-mission-fixed-*.log"))
SIM = ["simulate", "--run", "r", "--games", "3", "--players", "4", "--quiet"]


def test_a_gz_log_with_garbage_after_its_header_names_the_file(tmp_path, capsys):
    log = tmp_path / "bad.log.gz"
    log.write_bytes(gzip.compress(FIXED[0].read_bytes())[:40] + os.urandom(200))
    assert main(["import", "domination", str(log), "--run", "x", "--data-dir", str(tmp_path / "d")]) == 2
    assert re.search(rf"{re.escape(str(log))}: cannot read", capsys.readouterr().err)


def test_an_absurd_number_of_games_is_refused_in_one_line(tmp_path, capsys):
    assert main(SIM[:3] + ["--games", "99999999999999999999", "--data-dir", str(tmp_path)]) == 2
    assert "--games must be 1 to 2,147,483,647" in capsys.readouterr().err


def test_a_read_only_data_directory_can_still_be_read(tmp_path, capsys, monkeypatch):
    assert main(SIM + ["--data-dir", str(tmp_path)]) == 0
    writable = os.access
    monkeypatch.setattr(cli.os, "access", lambda p, mode: False if mode & os.W_OK else writable(p, mode))
    capsys.readouterr()
    assert main(["db", "--sql", "SELECT count(*) AS n FROM games", "--data-dir", str(tmp_path)]) == 0
    assert main(["replay", "--run", "r", "--data-dir", str(tmp_path)]) == 0
    assert main(SIM + ["--data-dir", str(tmp_path)]) == 2
    assert "is not writable" in capsys.readouterr().err


def test_sigterm_during_a_query_exits_130(tmp_path):
    assert main(SIM + ["--data-dir", str(tmp_path)]) == 0
    slow = "SELECT sum(a.range * b.range) AS s FROM range(100000) a, range(1000000) b"
    proc = subprocess.Popen([sys.executable, "-m", "riskcore.cli", "db", "--sql", slow, "--data-dir", str(tmp_path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(3)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "stopped" in err and "Traceback" not in err


def test_leftovers_of_a_killed_feature_build_go_with_the_next_one(tmp_path):
    assert main(SIM + ["--data-dir", str(tmp_path)]) == 0
    dead = 2**22 + 12345  # no such process
    leftover = tmp_path / "recognition" / f".tmp-run=r-{dead}-abcd"
    leftover.mkdir(parents=True)
    assert main(["recognize", "--run", "r", "--recogniser", "uniform", "--quiet", "--data-dir", str(tmp_path)]) == 0
    assert not leftover.exists()


def test_a_huge_line_or_junk_is_named_by_its_line_at_once(tmp_path):
    one_line = tmp_path / "one.log"
    one_line.write_text("x" * 5_000_000)
    junk = tmp_path / "junk.log"
    junk.write_text(FIXED[0].read_text().split("\n", 3)[0] + "\n" + "\n".join(["lorem ipsum dolor"] * 100_000))
    for log, line in ((one_line, 1), (junk, 2)):
        try:
            import_logs([log], "x", tmp_path / "d")
        except ValueError as exc:
            message = str(exc)
        assert message.startswith(f"{log}:{line}: ") and len(message) < 300, message


def test_a_seat_name_that_is_not_utf8_is_read_as_latin1(tmp_path):
    raw = FIXED[0].read_bytes()
    name = next(line for line in raw.split(b"\n") if b" newplayer " in line).rsplit(b" ", 1)[1]
    log = tmp_path / "latin.log"
    log.write_bytes(raw.replace(b" " + name + b"\n", b" J\xe9r\xf4me\n", 1))
    _, summary = import_logs([log], "latin", tmp_path / "d")
    assert summary.ignored["lines not UTF-8, read as Latin-1"] == 1
    names = query("SELECT name FROM players WHERE run = 'latin'", data_dir=tmp_path / "d").name.tolist()
    assert "Jérôme" in names


def test_the_first_recognize_reports_the_rows_it_stored(tmp_path, capsys):
    assert main(SIM + ["--data-dir", str(tmp_path)]) == 0
    assert main(["recognize", "--run", "r", "--recogniser", "phatt", "--quiet", "--data-dir", str(tmp_path)]) == 0
    stored = query("SELECT count(*) AS n FROM posteriors WHERE run = 'r'", data_dir=tmp_path).n[0]
    assert stored > 0 and f": {stored} posterior rows" in capsys.readouterr().out


def test_evaluating_one_clock_keeps_the_other(tmp_path):
    data = ["--data-dir", str(tmp_path)]
    assert main(SIM + data) == 0
    assert main(["recognize", "--run", "r", "--recogniser", "phatt", "--quiet"] + data) == 0
    assert main(["evaluate", "--run", "r", "--checkpoints", "both", "--bootstrap", "10"] + data) == 0
    assert main(["evaluate", "--run", "r", "--checkpoints", "window", "--bootstrap", "10"] + data) == 0
    clocks = query("SELECT DISTINCT clock FROM recognition_metrics WHERE run = 'r' ORDER BY 1", data_dir=tmp_path)
    assert clocks.clock.tolist() == ["game", "window"]


def test_the_same_game_given_twice_is_imported_once_and_said(tmp_path, capsys):
    data = ["--data-dir", str(tmp_path)]
    assert main(["import", "domination", str(FIXED[0]), str(FIXED[0]), str(FIXED[1]), "--run", "twice"] + data) == 0
    out = capsys.readouterr().out
    assert "1 game(s) given more than once, imported once" in out and f"{FIXED[0]}:1: the same game as" in out
    assert query("SELECT count(*) AS n FROM games WHERE run = 'twice'", data_dir=tmp_path).n[0] == 2


def test_dice_faces_out_of_order_are_refused(tmp_path):
    lines = FIXED[0].read_text().splitlines()
    i = next(j for j, line in enumerate(lines) if re.match(r"DICE 3 \d( \d+)+ ?$", line) and
             len(set(line.split()[3:6])) == 3)
    faces = lines[i].split()
    lines[i] = " ".join(faces[:3] + sorted(faces[3:6]) + faces[6:])  # the attacker's, low to high
    log = tmp_path / "unsorted.log"
    log.write_text("\n".join(lines) + "\n")
    try:
        import_logs([log], "x", tmp_path / "d")
        raise AssertionError("accepted")
    except ValueError as exc:
        assert str(exc).startswith(f"{log}:{i + 1}: ") and "sorted high to low" in str(exc)


def test_a_failed_command_ends_at_once_without_joining_worker_threads(monkeypatch):
    exits = []
    monkeypatch.setattr(cli, "main", lambda: 2)
    monkeypatch.setattr(cli.os, "_exit", lambda code: exits.append(code))
    monkeypatch.setattr(cli.sys, "exit", lambda code: exits.append(("sys.exit", code)))
    cli.run()
    assert exits[0] == 2
