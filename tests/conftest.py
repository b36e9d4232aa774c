"""Shared fixtures: boards, and one small simulated run in a temporary data directory."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from riskcore.engine.board import load_board
from riskcore.engine.config import GameConfig
from riskcore.simulate import RunSpec, simulate


@pytest.fixture(scope="session")
def classic():
    return load_board("classic")


@pytest.fixture(scope="session")
def small():
    return load_board("small")


@pytest.fixture(scope="session")
def small_run(tmp_path_factory):
    """A 12-game mission run with mixed agents, simulated once per test session."""
    data = tmp_path_factory.mktemp("data")
    spec = RunSpec("mixed", 12, GameConfig(), ("mission", "random", "domination", "mission:focus=1"), 11, chunk=5)
    simulate(spec, data, workers=1, progress=False)
    return data


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
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


@pytest.fixture(scope="session")
def evaluated(tmp_path_factory):
    """Run `c` (6 games in chunks of 3) with features, uniform posteriors and metrics: cases that change it copy it
    first."""
    from riskcore.cli import main

    data = tmp_path_factory.mktemp("evaluated")
    sim = ["simulate", "--run", "c", "--games", "6", "--chunk", "3", "--workers", "1", "--quiet"]
    assert main(sim + ["--data-dir", str(data)]) == 0
    assert main(["recognize", "--run", "c", "--recogniser", "uniform", "--quiet", "--data-dir", str(data)]) == 0
    assert main(["evaluate", "--run", "c", "--bootstrap", "10", "--data-dir", str(data)]) == 0
    return data
