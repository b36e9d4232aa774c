"""What recognition and its evaluation refuse to read: a run without missions, refused in one line."""

from riskcore.cli import main


def test_a_domination_run_is_refused_by_recognize_and_evaluate_in_one_line(tmp_path, capsys):
    data = ["--data-dir", str(tmp_path)]
    assert main(["simulate", "--run", "d", "--games", "3", "--mode", "domination", "--quiet"] + data) == 0
    for command in (["recognize", "--run", "d", "--recogniser", "uniform", "--quiet"],
                    ["evaluate", "--run", "d", "--bootstrap", "10"]):
        capsys.readouterr()
        assert main(command + data) == 2
        out = capsys.readouterr()
        assert out.err == ("riskcore " + command[0] + ": error: run 'd' is a domination run: its players have no "
                           "secret missions to recognise (recognition and its evaluation need a mission run)\n")
        assert out.out == ""
