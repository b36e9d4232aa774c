"""The --dask path against a real scheduler and worker started on loopback."""

import hashlib

from riskcore.engine.config import GameConfig
from riskcore.simulate import RunSpec, simulate


def test_dask_run_matches_local_run_byte_for_byte(tmp_path, dask_cluster):
    spec = RunSpec("dask", 8, GameConfig(), ("mission", "domination"), 21, chunk=3)
    simulate(spec, tmp_path / "local", workers=1, progress=False)
    simulate(spec, tmp_path / "dask", dask_address=dask_cluster, progress=False)

    def digests(root):
        return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
                for p in sorted(root.rglob("*.parquet"))}

    local = digests(tmp_path / "local" / "traces")
    assert local and local == digests(tmp_path / "dask" / "traces")


def test_features_from_local_chunk_readers_match_features_shipped_to_dask(tmp_path, dask_cluster):
    """Local workers read their chunk of games from the database, Dask workers are sent it: same files."""
    import shutil

    from riskcore.recognition.features import build_features

    spec = RunSpec("feat", 7, GameConfig(), ("mission", "random"), 5)
    simulate(spec, tmp_path / "local", workers=1, progress=False)
    shutil.copytree(tmp_path / "local", tmp_path / "dask")
    build_features("feat", data_dir=tmp_path / "local", workers=2, progress=False, chunk_games=3)
    build_features("feat", data_dir=tmp_path / "dask", dask_address=dask_cluster, progress=False, chunk_games=3)

    def digests(root):
        return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
                for p in sorted(root.rglob("*.parquet"))}

    local = digests(tmp_path / "local" / "recognition")
    assert len(local) >= 3 and local == digests(tmp_path / "dask" / "recognition")


def test_posteriors_computed_on_dask_are_the_local_ones(tmp_path, dask_cluster, monkeypatch):
    import pyarrow as pa

    import riskcore.recognition.pipeline as pipeline
    from riskcore.recognition.recognisers import Recogniser

    simulate(RunSpec("post", 9, GameConfig(), ("mission", "random"), 3), tmp_path, workers=1, progress=False)
    pipeline.ensure_features("post", "cards6", tmp_path, workers=1, progress=False)
    monkeypatch.setattr(pipeline, "CHUNK_GAMES", 2)
    monkeypatch.setattr(pipeline, "TASK_CHUNKS", 2)  # three tasks on the cluster
    rec = Recogniser.from_spec("goal")
    local = pa.concat_tables(pipeline.posterior_parts("post", rec, data_dir=tmp_path, workers=1))
    dask = pa.concat_tables(pipeline.posterior_parts("post", rec, data_dir=tmp_path, dask_address=dask_cluster))
    assert local.num_rows > 0 and dask.equals(local)


def test_a_cluster_is_sent_a_few_tasks_per_thread_ahead_and_their_data_made_only_then(dask_cluster):
    from riskcore import parallel

    made = []

    def tasks():  # a task's data, made as it is sent: the caller never holds every task's data at once
        for i in range(12):
            made.append(i)
            yield (i,)

    seen = []
    for i, result in parallel.run_tasks(abs, tasks(), dask_address=dask_cluster, progress=False, total=12):
        seen.append((i, result))
        assert len(made) <= parallel.DASK_AHEAD * 1 + len(seen)  # the cluster has one thread
    assert sorted(seen) == [(i, i) for i in range(12)]


def test_a_failing_task_on_a_cluster_names_its_error(dask_cluster):
    import pytest

    from riskcore import parallel

    with pytest.raises(ZeroDivisionError):
        list(parallel.run_tasks(divmod, [(1, 1), (1, 0), (2, 1)], dask_address=dask_cluster, progress=False))
