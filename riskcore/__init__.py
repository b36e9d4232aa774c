"""riskcore: a reproducible RISK engine and research toolkit for mission recognition and game AI.

`ENGINE_VERSION` is bumped whenever a rule change or a change of their schema alters traces; every trace row
records it.
"""

ENGINE_VERSION = "0.4.0"

__all__ = ["ENGINE_VERSION"]
