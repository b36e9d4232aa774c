import pytest

from riskcore.experiments.bench import CASES, run_bench


def test_bench_writes_its_table(tmp_path):
    df = run_bench(games=3, out_dir=tmp_path)
    assert len(df) == len(CASES) and (df.games_per_s > 0).all() and (df.seconds_per_game > 0).all() and (df.us_per_action > 0).all()
    text = (tmp_path / "engine.md").read_text()
    assert "mission agents, 4p mission" in text and "games_per_s" in text


def test_recognition_bench_scores_every_setting(small_run, tmp_path):
    from riskcore.experiments.bench import bench_recognition
    from riskcore.recognition.pipeline import ensure_features

    ensure_features("mixed", "cards6", small_run, workers=1, progress=False)
    df = bench_recognition("mixed", settings=6, workers=1, data_dir=small_run, out_dir=tmp_path)
    assert df.settings[0] == 6 and df.games[0] == 12
    assert "PHATT weight sweep" in (tmp_path / "recognition.md").read_text()


def test_search_bench_measures_compiled_and_plain_on_the_same_work(tmp_path):
    from riskcore.experiments.bench import bench_search

    df = bench_search(positions_per_count=1, lookahead=1, out_dir=tmp_path)
    pairs = df.pivot_table(index=["players", "search"], columns="model", values="states")
    assert (pairs.compiled == pairs.plain).all() and (df.states_per_s > 0).all()
    assert "speedup" in (tmp_path / "search.md").read_text() and "processor" in (tmp_path / "search.md").read_text()


def test_memory_bench_measures_each_process_tree(tmp_path):
    from riskcore.experiments.bench_memory import bench_memory

    df = bench_memory(games=(4, 8), feature_games=4, reruns=2, out_dir=tmp_path)
    assert len(df) == 5 and (df.value > 0).all()
    assert "DuckDB file" in (tmp_path / "memory.md").read_text()


@pytest.mark.slow  # the whole path on Dask is in CI with the scale bench; this one in test-slow
def test_dask_scaling_bench_gets_the_same_rows_from_every_cluster_size(tmp_path):
    from riskcore.experiments.bench_scaling import bench_dask_scaling

    df = bench_dask_scaling(n_positions=1, lookahead=1, worker_counts=(1, 2), out_dir=tmp_path)
    assert df.same_rows_as_1_worker.all() and (df.seconds > 0).all()
    assert "LocalCluster" in (tmp_path / "dask-scaling.md").read_text()


def test_search_table_bench_finds_the_same_tree_under_every_bound(tmp_path):
    from riskcore.experiments.bench_memory import bench_search_table

    df = bench_search_table(positions=1, lookahead=2, bounds=(1024, 0.1), out_dir=tmp_path)
    assert len(df) == 4 and (df.peak_MB > 0).all() and (df.subtrees_searched > 0).all()
    assert (df.groupby(["players", "position"]).nodes.nunique() == 1).all()
    assert (df.table_MB <= df.bound_MB).all()
    assert "transposition table" in (tmp_path / "search-table.md").read_text()


def test_scale_bench_measures_the_whole_path_locally_and_on_dask(tmp_path, dask_cluster):
    from riskcore.experiments.bench_scale import bench_scale

    sim = bench_scale(sizes=(20, 40), dask_sizes=(20,), out_dir=tmp_path, scratch=tmp_path,
                      dask_address=dask_cluster, compiled_games=20)
    assert list(sim.games) == [20, 40, 20] and list(sim["where"]) == ["local processes"] * 2 + ["Dask, local cluster"]
    assert (sim.games_per_s > 0).all() and (sim.share_of_compiled > 0).all() and (sim.peak_MB > 50).all()
    assert (sim.parquet_bytes_per_game > 500).all() and (sim.duckdb_bytes_per_game > 0).all()
    assert sim.traces_digest[0] == sim.traces_digest[2] != sim.traces_digest[1]  # Dask wrote the local bytes
    text = (tmp_path / "scale.md").read_text()
    assert "share_of_compiled" in text and "processor" in text
    assert not any(p.name.startswith("riskcore-scale-") for p in tmp_path.iterdir())  # the scratch folder is gone


def test_recognition_scale_bench_passes_every_recogniser_over_each_size(tmp_path):
    from riskcore.experiments.bench_recognition_scale import bench_recognition_scale

    df = bench_recognition_scale(sizes=(10, 20), recognisers=("goal:temperature=0.1", "phatt:scheme=khan2013"),
                                 workers=1, out_dir=tmp_path, scratch=tmp_path)
    assert list(df.games) == [10] * 3 + [20] * 3
    assert list(df.measure[:3]) == ["features (with the uniform prior)", "recognize goal:temperature=0.1",
                                    "recognize phatt:scheme=khan2013"]
    assert (df.players_per_s > 0).all() and (df.peak_MB > 50).all()
    text = (tmp_path / "recognition-scale.md").read_text()
    assert "3 GB" in text and "every measure of every size" in text
    assert not any(p.name.startswith("riskcore-recognition-scale-") for p in tmp_path.iterdir())


def test_a_recognition_scale_run_stopped_part_way_keeps_what_it_measured(tmp_path, monkeypatch):
    import riskcore.experiments.bench_recognition_scale as bench

    calls = []
    real = bench.timed

    def stop_at_the_third_recogniser(argv, what):
        calls.append(what)
        if "recognize" in argv and len([c for c in calls if "games" in c and "simulate" not in c]) == 3:
            raise KeyboardInterrupt  # the run is stopped
        return real(argv, what)

    monkeypatch.setattr(bench, "timed", stop_at_the_third_recogniser)
    with pytest.raises(KeyboardInterrupt):
        bench.bench_recognition_scale(sizes=(10,), recognisers=("goal:temperature=0.1", "phatt:scheme=khan2013"),
                                      workers=1, out_dir=tmp_path, scratch=tmp_path)
    text = (tmp_path / "recognition-scale.md").read_text()
    assert "2 of the 3 measures" in text and "recognize goal:temperature=0.1" in text


@pytest.mark.slow  # the whole path on Dask is in CI with the scale bench; this one in test-slow
def test_recognition_scale_on_a_cluster_measures_local_beside_it_and_keeps_the_local_report(tmp_path,
                                                                                            dask_cluster):
    from riskcore.experiments.bench_recognition_scale import bench_recognition_scale

    df = bench_recognition_scale(sizes=(12,), recognisers=("goal:temperature=0.1",), workers=1, out_dir=tmp_path,
                                 scratch=tmp_path, dask_address=dask_cluster)
    measures = ["features (with the uniform prior)", "recognize goal:temperature=0.1"]
    assert list(df.measure) == measures * 2 and list(df["where"]) == ["local"] * 2 + ["Dask"] * 2
    assert (df.peak_MB > 50).all() and (df.players_per_s > 0).all()
    assert "Dask cluster" in (tmp_path / "recognition-scale-dask.md").read_text()
    assert not (tmp_path / "recognition-scale.md").exists()  # the local measures are another file


def test_worker_peaks_reads_the_clusters_memory_and_starts_again_at_each_call(dask_cluster):
    import time

    import riskcore.experiments.bench_recognition_scale as bench

    with bench.worker_peaks(dask_cluster) as peak:
        time.sleep(2.5 * bench.SAMPLE_SECONDS)
        assert peak() > 50  # a Python worker process holds more than 50 MB
        assert peak() == 0.0  # nothing sampled since
    with bench.worker_peaks(None) as peak:
        assert peak() == 0.0


def test_bench_passes_the_recognisers_and_the_cluster_to_the_recognition_scale_bench(monkeypatch, capsys):
    import pandas as pd

    import riskcore.experiments.bench_recognition_scale as bench
    from riskcore.cli import main

    calls = []
    monkeypatch.setattr(bench, "bench_recognition_scale", lambda sizes, **kw: calls.append((sizes, kw)) or
                        pd.DataFrame())
    assert main(["bench", "--recognition-scale", "1000000", "--recognisers", "uniform", "goal:temperature=0.1",
                 "--dask", "tcp://host:8786"]) == 0
    (sizes, kw), = calls
    assert sizes == (1000000,) and kw["recognisers"] == ("uniform", "goal:temperature=0.1")
    assert kw["dask_address"] == "tcp://host:8786"


def test_a_recognition_scale_run_keeps_the_rows_it_does_not_measure_again_with_their_dates(tmp_path, monkeypatch):
    import json
    from contextlib import contextmanager

    import riskcore.experiments.bench_recognition_scale as bench

    @contextmanager
    def no_cluster(address):
        yield lambda: 0.0

    commands = []
    monkeypatch.setattr(bench, "timed", lambda argv, what: commands.append(argv) or (2.0, 100.0))
    monkeypatch.setattr(bench, "worker_peaks", no_cluster)
    old = [{"games": g, "where": w, "measure": "features (with the uniform prior)", "seconds": 9.0,
            "players_per_s": 1.0, "peak_MB": 1.0} for g in (10_000, 1_000_000) for w in ("local", "Dask")]
    (tmp_path / "recognition-scale-dask.json").write_text(json.dumps({"meta": {"date": "2026-01-02"}, "rows": old}))
    df = bench.bench_recognition_scale(sizes=(1_000_000,), recognisers=(), out_dir=tmp_path,
                                       dask_address="tcp://x:1", dask_only=True)
    assert list(df["where"]) == ["Dask"] and all("--dask" in argv for argv in commands)
    rows = json.loads((tmp_path / "recognition-scale-dask.json").read_text())["rows"]
    assert [(r["games"], r["where"], r["seconds"], r["measured"]) for r in rows] == [
        (10_000, "local", 9.0, "2026-01-02"), (10_000, "Dask", 9.0, "2026-01-02"),
        (1_000_000, "local", 9.0, "2026-01-02"), (1_000_000, "Dask", 2.0, df.measured[0])]
    text = (tmp_path / "recognition-scale-dask.md").read_text()
    assert "10,000 games Dask, 10,000 games local, 1,000,000 games local: kept from an earlier run" in text


def test_bench_refuses_dask_only_without_a_cluster(capsys):
    from riskcore.cli import main

    assert main(["bench", "--recognition-scale", "10", "--dask-only"]) != 0
    assert "--dask-only needs --dask" in capsys.readouterr().err
