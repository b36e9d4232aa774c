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
