# %% [markdown]
# Test point: squares `x`, or fails on purpose.

# %% tags=["parameters"]
x: float = 1.0  # the number to square
fail: bool = False  # raise instead
label: str = "a"  # a free label
sweep: str = ""  # set by the sweep runner
point: str = ""  # set by the sweep runner
output_dir: str = ""  # set by the sweep runner

# %%
import pandas as pd

from riskcore.notebook import emit

if fail:
    raise RuntimeError(f"asked to fail at x={x}")
emit(pd.DataFrame({"x": [x], "square": [x * x], "label": [label]}), "squares", output_dir)
