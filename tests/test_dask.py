"""The --dask path against a real scheduler and worker started on loopback."""

import hashlib

from riskcore.config import GameConfig
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
