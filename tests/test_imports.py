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
