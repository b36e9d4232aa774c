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


ONE_GAME = """
import sys
from riskcore.cli import run
sys.argv = ["riskcore", "simulate", "--games", "1", "--run", "one", "--data-dir", sys.argv[1], "--quiet"]
try:
    run()
except SystemExit as done:
    assert not done.code, done.code
print(sorted({m.split(".")[0] for m in sys.modules} & {"numba", "pandas", "scipy", "sklearn", "matplotlib"}
             | {"pyarrow.compute"} & sys.modules.keys()))
"""


def test_a_one_game_simulate_loads_none_of_the_heavy_libraries(tmp_path):
    # start-up target: a tiny run plays in Python (same traces) and writes Parquet without pyarrow's pandas probe
    run = subprocess.run([sys.executable, "-c", ONE_GAME, str(tmp_path)], capture_output=True, text=True, check=True)
    assert run.stdout.strip().split("\n")[-1] == "[]"


AFTER_THE_PROBE = """
import sys
if sys.argv[1] == "probe":
    from riskcore.cli import _arrow_without_pandas
    _arrow_without_pandas()
print("pandas" in sys.modules)
import pandas as pd
import pyarrow as pa
print(pa.table({"x": [1, 2]}).to_pandas().x.sum())
print(pa.array(pd.Series(["a", "b", "a"], dtype="category")).type)
"""


def test_pyarrow_converts_to_pandas_after_the_probe_went_without():
    # what the probe costs: until pyarrow first converts to pandas it takes a pandas object for a plain sequence
    # (a simulate process meets none); the first conversion brings pandas in and every later one is as usual
    probed, plain = (subprocess.run([sys.executable, "-c", AFTER_THE_PROBE, how], capture_output=True, text=True,
                                    check=True).stdout.split("\n") for how in ("probe", "plain"))
    assert probed[0] == "False" and probed[1:] == plain[1:] and "dictionary" in plain[2]
