"""`riskcore bench --versus`: both sides timed whole process, alternating, the speed-up a median of the runs'
own ratios, and nothing written when a side fails."""

import json
import shutil
import sys

import pandas as pd
import pytest

from riskcore.cli import main
from riskcore.experiments.bench_versus import bench_versus, measure, other_command, riskcore_side, summary

SLEEP = shutil.which("sleep")


def logging_side(log, word, pause=0.0):
    """A stand-in program: appends `word` to `log`, then sleeps `pause` seconds."""
    return [sys.executable, "-c", f"import time; open({str(log)!r}, 'a').write({word!r} + ' '); time.sleep({pause})"]


def test_the_games_field_is_filled_in_and_quoting_kept():
    argv = other_command("java -jar 'My Domination.jar' --games {games} --seed=7", 2000)
    assert argv == ["java", "-jar", "My Domination.jar", "--games", "2000", "--seed=7"]


@pytest.mark.parametrize("command, needle", [("", "empty"), ("   ", "empty"),
                                             ("run --games {gamse}", "{gamse}"), ("run {} x", "{}")])
def test_a_bad_command_is_refused_naming_what_is_wrong(command, needle):
    with pytest.raises(ValueError, match="--versus") as err:
        other_command(command, 10)
    assert needle in str(err.value)


def test_riskcore_side_plays_four_player_mission_games_into_the_folder_given(tmp_path):
    argv = riskcore_side(123)(tmp_path / "x")
    assert argv[argv.index("--games") + 1] == "123" and argv[argv.index("--players") + 1] == "4"
    assert argv[argv.index("--mode") + 1] == "mission" and argv[argv.index("--data-dir") + 1] == str(tmp_path / "x")


def test_the_sides_alternate_and_each_run_gets_a_fresh_data_folder(tmp_path):
    log, folders = tmp_path / "order.txt", []

    def ours(data):
        folders.append(data)
        return logging_side(log, "ours")

    df = measure(ours, logging_side(log, "theirs"), runs=4, name="Other", scratch=tmp_path)
    assert log.read_text().split() == ["ours", "theirs", "theirs", "ours", "ours", "theirs", "theirs", "ours"]
    assert list(df["first"]) == ["riskcore", "Other", "riskcore", "Other"]
    assert len(set(folders)) == 4


@pytest.mark.skipif(SLEEP is None, reason="needs a sleep program")
def test_a_slower_program_shows_a_speed_up_above_one_in_every_run(tmp_path):
    df = measure(lambda data: [SLEEP, "0.1"], [SLEEP, "0.6"], runs=2, name="Other", scratch=tmp_path)
    assert (df["speed_up"] > 2).all() and (df["Other_s"] > df["riskcore_s"]).all()


def test_the_speed_up_is_the_median_of_each_runs_ratio_not_a_ratio_of_medians():
    runs = pd.DataFrame({"riskcore_s": [1.0, 10.0, 1.0], "Other_s": [2.0, 10.0, 100.0], "speed_up": [2.0, 1.0, 100.0]})
    stats = summary(runs, "Other")
    assert stats["speed_up_median"] == 2.0  # the medians' ratio would be 10
    assert stats["riskcore_median_s"] == 1.0 and stats["Other_median_s"] == 10.0
    assert stats["speed_up_range"] == "1.00-100.00"


def test_a_failing_program_is_named_with_its_exit_code_and_nothing_is_written(tmp_path):
    out = tmp_path / "out"
    failing = f"{sys.executable} -c \"import sys; sys.stderr.write('no map called risk'); sys.exit(3)\""
    with pytest.raises(RuntimeError, match="Other") as err:
        bench_versus(failing, games=5, runs=2, name="Other", out_dir=out, scratch=tmp_path,
                     ours=lambda data: logging_side(tmp_path / "log", "ours"))
    assert "code 3" in str(err.value) and "no map called risk" in str(err.value)
    assert not out.exists() or not any(out.iterdir())


def test_a_program_that_cannot_start_is_named(tmp_path):
    with pytest.raises(RuntimeError, match="could not start"):
        measure(lambda data: logging_side(tmp_path / "log", "ours"), [str(tmp_path / "no-such-program")], runs=1,
                name="Other", scratch=tmp_path)


def test_the_report_holds_every_run_the_medians_and_the_target(tmp_path):
    df = bench_versus(f"{sys.executable} -c pass", games=7, runs=3, name="Other", out_dir=tmp_path,
                      scratch=tmp_path, ours=lambda data: logging_side(tmp_path / "log", "ours"))
    written = json.loads((tmp_path / "versus-other.json").read_text())
    assert len(written["rows"]) == 3 and written["meta"]["games"] == 7
    assert written["meta"]["speed_up_median"] == round(df["speed_up"].median(), 2)
    assert written["meta"]["target_met"] == (written["meta"]["speed_up_median"] >= 20)
    text = (tmp_path / "versus-other.md").read_text()
    assert "7 games" not in text and "(7)" in text and "Other_s" in text and "-c pass" in text


def test_riskcore_simulate_is_the_riskcore_side_as_a_user_runs_it(tmp_path):
    df = bench_versus(f"{sys.executable} -c pass", games=2, runs=1, name="Other", out_dir=tmp_path, scratch=tmp_path)
    assert df["riskcore_s"][0] > 0 and (tmp_path / "versus-other.md").exists()
    assert not list(tmp_path.glob("riskcore-versus-*"))  # its scratch folder is gone


@pytest.mark.parametrize("args, needle", [(["--versus", ""], "empty"),
                                          (["--versus", "x", "--versus-name", "a b"], "--versus-name"),
                                          (["--versus", "x", "--versus-name", "RiskCore"], "other than riskcore")])
def test_the_command_line_refuses_bad_versus_options_in_one_line(tmp_path, capsys, args, needle):
    assert main(["bench", *args, "--out-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1 and not list(tmp_path.iterdir())


def test_against_dominations_own_ai_where_it_is_here(tmp_path):
    """The measure against the real peer, a few games: skipped, never failed, where Java or the peer is absent."""
    from riskcore.domination_peer import peer_missing, peer_program

    why = peer_missing()
    if why:
        pytest.skip(why)
    df = bench_versus(f"{peer_program()} {{games}} --no-undo", games=4, runs=1, out_dir=tmp_path,
                      scratch=tmp_path)
    assert len(df) == 1 and (df.filter(like="seconds") > 0).all(axis=None)
    assert (tmp_path / "versus-domination.md").is_file()
