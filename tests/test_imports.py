"""Every module of the package imports on its own (an import cycle shows only when its module is imported first)."""

import subprocess
import sys

CHECK = """
import importlib, pkgutil, sys
import riskcore
for name in sorted(m.name for m in pkgutil.walk_packages(riskcore.__path__, "riskcore.")):
    for loaded in [k for k in sys.modules if k == "riskcore" or k.startswith("riskcore.")]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
    except Exception as e:
        print(f"{name}: {e!r}")
"""


def test_every_module_imports_first():
    # a fresh interpreter: re-importing the package here would leave two copies of its classes to later tests
    run = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, check=True)
    assert run.stdout == ""


LIGHT = """
import sys
import numpy as np
from riskcore.simulate import simulate_chunk, RunSpec
from riskcore.engine.config import GameConfig
from riskcore.agents import make_agent
from riskcore.game import play_game
HEAVY = {"numba", "pandas", "scipy", "sklearn", "matplotlib"}
make_agent("mission:focus=0.8", 0, np.random.default_rng(0))
print(sorted({m.split(".")[0] for m in sys.modules} & HEAVY))
make_agent("gb", 0, np.random.default_rng(0))  # an agent's module comes in when a spec names it
print("numba" in sys.modules)
"""
PLAYED = """
import sys
from riskcore.engine.config import GameConfig
from riskcore.game import play_game
play_game(GameConfig(n_players=3), ["mission"] * 3, 0)  # on the compiled kernel (numba brings in scipy)
print(sorted({m.split(".")[0] for m in sys.modules} & {"numba", "pandas", "sklearn", "matplotlib"}))
"""


def test_a_mission_run_does_not_load_the_heavy_libraries():
    # start-up is paid by every command and worker: numba, pandas and scipy only for the agents and steps using them
    lines = subprocess.run([sys.executable, "-c", LIGHT], capture_output=True, text=True, check=True).stdout.split("\n")
    assert lines[:2] == ["[]", "True"]


def test_a_mission_game_loads_numba_for_its_kernel_and_nothing_heavier():
    run = subprocess.run([sys.executable, "-c", PLAYED], capture_output=True, text=True, check=True)
    assert run.stdout.split("\n")[0] == "['numba']"
