"""The --dask path against a real scheduler and worker started on loopback."""

import hashlib
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from riskcore.config import GameConfig
from riskcore.simulate import RunSpec, simulate


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def dask_cluster(tmp_path_factory):
    bindir = Path(sys.executable).parent
    dask = shutil.which("dask", path=str(bindir)) or shutil.which("dask")
    if dask is None:
        pytest.fail("the dask command is missing: install the project with `make venv`")
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    work = tmp_path_factory.mktemp("dask")
    scheduler = subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", str(port),
                                  "--no-dashboard"], cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    worker = subprocess.Popen([dask, "worker", address, "--nworkers", "1", "--nthreads", "1", "--no-dashboard",
                               "--local-directory", str(work)], cwd=work, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        from distributed import Client

        deadline = time.time() + 60
        while True:
            try:
                with Client(address, timeout="5s") as client:
                    client.wait_for_workers(1, timeout=30)
                break
            except OSError:
                if time.time() > deadline:
                    raise
                time.sleep(0.5)
        yield address
    finally:
        for proc in (worker, scheduler):
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()


def test_dask_run_matches_local_run_byte_for_byte(tmp_path, dask_cluster):
    spec = RunSpec("dask", 8, GameConfig(), ("mission", "domination"), 21, chunk=3)
    simulate(spec, tmp_path / "local", workers=1, progress=False)
    simulate(spec, tmp_path / "dask", dask_address=dask_cluster, progress=False)

    def digests(root):
        return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
                for p in sorted(root.rglob("*.parquet"))}

    local = digests(tmp_path / "local" / "traces")
    assert local and local == digests(tmp_path / "dask" / "traces")
