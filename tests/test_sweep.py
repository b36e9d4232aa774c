import json
from pathlib import Path

import pytest

from riskcore.experiments import sweep as sweep_module
from riskcore.cli import main
from riskcore.db import query
from riskcore.experiments.sweep import SpecError, load_spec, run_sweep

NOTEBOOK = Path(__file__).parent / "notebooks" / "square_point.py"


def _spec(tmp_path, text: str) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(text.replace("NOTEBOOK", str(NOTEBOOK)))
    return path


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("RISKCORE_REPORTS", str(tmp_path / "reports"))
    return tmp_path / "data"


@pytest.mark.parametrize("text,needle", [
    ("name: s\nnotebook: nowhere.py\ngrid: {x: [1]}\n", "notebook 'nowhere.py' not found"),
    ("name: s\nnotebook: NOTEBOOK\ngrid: {y: [1]}\n", "parameter 'y' is not declared"),
    ("name: s\nnotebook: NOTEBOOK\ngrid: {x: [oops]}\n", "parameter 'x' = 'oops' should be of type float"),
    ("name: s\nnotebook: NOTEBOOK\ngrid: {fail: [1]}\n", "parameter 'fail' = 1 should be of type bool"),
    ("name: s\nnotebook: NOTEBOOK\ngrid: {x: []}\n", "grid parameter 'x' needs a non-empty list"),
    ("name: s\nnotebook: NOTEBOOK\ngrid: {}\n", "grid is empty"),
    ("name: s\nnotebook: NOTEBOOK\n", "give a 'grid', a list of 'points', or both"),
    ("notebook: NOTEBOOK\ngrid: {x: [1]}\n", "missing key 'name'"),
    ("name: s\nnotebook: NOTEBOOK\ngrid: {x: [1]}\ncolour: red\n", "unknown key(s) ['colour']"),
    ("name: s\nnotebook: NOTEBOOK\ngrid: {point: [p]}\n", "'point' is set by the runner"),
    ("name: 's/1'\nnotebook: NOTEBOOK\ngrid: {x: [1]}\n", "bad sweep name"),
    ("name: s\nnotebook: NOTEBOOK\ngrid: [x\n", "invalid YAML"),
])
def test_bad_specs_are_rejected_before_running(tmp_path, text, needle):
    with pytest.raises(SpecError) as exc:
        load_spec(_spec(tmp_path, text))
    assert needle in str(exc.value)


def test_points_cross_grid_and_seeds_are_added(tmp_path):
    spec = load_spec(_spec(tmp_path, "name: s\nnotebook: NOTEBOOK\nfixed: {label: b}\n"
                                     "points: [{x: 1.0}, {x: 2.0}]\ngrid: {fail: [false]}\n"))
    assert [p["x"] for p in spec.points] == [1.0, 2.0] and all(p["label"] == "b" for p in spec.points)


def test_sweep_runs_resumes_and_isolates_failures(tmp_path, env, monkeypatch):
    path = _spec(tmp_path, "name: sq\nnotebook: NOTEBOOK\npoints: [{x: 2.0}, {x: 3.0}, {x: 4.0, fail: true}]\n")
    spec = load_spec(path)
    points = run_sweep(spec, env, workers=2, progress=False)
    assert sorted(points.status) == ["failed", "ok", "ok"]
    failed = points[points.status == "failed"].iloc[0]
    assert "asked to fail at x=4.0" in failed.error and json.loads(failed.params)["x"] == 4.0
    squares = query("SELECT x, square FROM squares WHERE sweep = 'sq' ORDER BY x", data_dir=env)
    assert squares.square.tolist() == [4.0, 9.0]
    executed = sorted(p.name for p in (tmp_path / "reports" / "runs" / "sq").glob("*.ipynb"))
    assert len(executed) == 3  # the failed point's notebook is kept too, with its error

    calls = []
    monkeypatch.setattr(sweep_module, "execute_point", lambda *a: calls.append(a) or pytest.fail("reran"))
    with pytest.raises(pytest.fail.Exception):
        run_sweep(spec, env, workers=1, progress=False)  # only the failed point is retried
    assert len(calls) == 1 and calls[0][1]["x"] == 4.0


def test_interrupted_sweep_resumes_without_duplicates(tmp_path, env, monkeypatch):
    spec = load_spec(_spec(tmp_path, "name: intr\nnotebook: NOTEBOOK\ngrid: {x: [1.0, 2.0, 3.0]}\n"))
    real_store = sweep_module._store_point
    stored = []

    def store_then_interrupt(*args):
        if stored:
            raise KeyboardInterrupt
        stored.append(args[1])
        real_store(*args)

    monkeypatch.setattr(sweep_module, "_store_point", store_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        run_sweep(spec, env, workers=1, progress=False)
    assert len(query("SELECT * FROM squares WHERE sweep = 'intr'", data_dir=env)) == 1
    monkeypatch.setattr(sweep_module, "_store_point", real_store)
    points = run_sweep(spec, env, workers=1, progress=False)
    assert (points.status == "ok").sum() == 3
    squares = query("SELECT x FROM squares WHERE sweep = 'intr' ORDER BY x", data_dir=env)
    assert squares.x.tolist() == [1.0, 2.0, 3.0]
    assert len(list((env / "sweeps").rglob("*.tmp"))) == 0


def test_sweep_on_dask(tmp_path, env, dask_cluster, capsys):
    path = _spec(tmp_path, "name: dsq\nnotebook: NOTEBOOK\ngrid: {x: [5.0, 6.0]}\n")
    assert main(["sweep", str(path), "--dask", dask_cluster, "--data-dir", str(env), "--quiet"]) == 0
    assert "2 ok" in capsys.readouterr().out
    assert query("SELECT sum(square) AS s FROM squares WHERE sweep = 'dsq'", data_dir=env).s[0] == 61.0


def test_shipped_pipelines_are_valid():
    root = Path(__file__).parents[1] / "pipelines"
    specs = sorted(root.glob("*.yaml"))
    assert {p.stem for p in specs} >= {"phatt_weights", "recognisers"}
    for p in specs:
        assert load_spec(p).points


def test_the_tables_hold_exactly_the_points_of_the_current_spec(tmp_path, env, capsys):
    path = _spec(tmp_path, "name: st\nnotebook: NOTEBOOK\npoints: [{x: 2.0}, {x: 3.0}, {x: 4.0, fail: true}]\n")
    assert main(["sweep", str(path), "--data-dir", str(env), "--workers", "1", "--quiet"]) == 2  # one failed
    path.write_text(path.read_text().replace(", {x: 4.0, fail: true}", "").replace("{x: 3.0}", "{x: 5.0}"))
    assert main(["sweep", str(path), "--data-dir", str(env), "--workers", "1", "--quiet"]) == 0
    assert "2 ok" in capsys.readouterr().out
    assert query("SELECT x FROM squares WHERE sweep = 'st' ORDER BY x", data_dir=env).x.tolist() == [2.0, 5.0]
    points = query("SELECT params, status FROM sweep_points WHERE sweep = 'st'", data_dir=env)
    assert sorted(json.loads(p)["x"] for p in points.params) == [2.0, 5.0] and (points.status == "ok").all()
    files = sorted(p for p in (env / "sweeps" / "sweep=st").rglob("*.parquet") if "generations_" not in str(p))
    assert len(files) == 4  # two points x (sweep_points, squares), beside each point's record


def test_force_means_from_scratch(tmp_path, env, monkeypatch):
    spec = load_spec(_spec(tmp_path, "name: fs\nnotebook: NOTEBOOK\ngrid: {x: [1.0, 2.0]}\n"))
    run_sweep(spec, env, workers=1, progress=False)
    ran = []
    real = sweep_module.execute_point
    monkeypatch.setattr(sweep_module, "execute_point", lambda *a: ran.append(a[1]["x"]) or real(*a))
    run_sweep(spec, env, workers=1, force=True, progress=False)
    assert sorted(ran) == [1.0, 2.0]
    assert len(query("SELECT * FROM squares WHERE sweep = 'fs'", data_dir=env)) == 2


def test_a_point_listed_twice_is_refused(tmp_path):
    with pytest.raises(SpecError, match=r"point \{'x': 1.0\} is listed twice"):
        load_spec(_spec(tmp_path, "name: d\nnotebook: NOTEBOOK\npoints: [{x: 1.0}, {x: 1.0}]\n"))


def test_a_point_that_ran_before_a_run_was_rewritten_is_named_stale(tmp_path, env):
    from riskcore.engine.config import GameConfig
    from riskcore.integrity import check
    from riskcore.simulate import RunSpec, simulate

    simulate(RunSpec("read", 2, GameConfig(), ("mission",), 1), env, workers=1, progress=False)
    run_sweep(load_spec(_spec(tmp_path, "name: sq\nnotebook: NOTEBOOK\npoints: [{x: 2.0}]\n")), env, workers=1,
              progress=False)
    recorded = json.loads(query("SELECT trace_generations FROM sweep_points", data_dir=env).trace_generations[0])
    assert set(recorded) == {"read"}
    assert not [s for s in check(env).stale if "sweep" in s]
    simulate(RunSpec("read", 3, GameConfig(), ("mission",), 2), env, workers=1, progress=False)  # new games
    stale = [s for s in check(env).stale if "sweep" in s]
    assert len(stale) == 1 and "'sq'" in stale[0] and "read" in stale[0] and "--force" in stale[0]
