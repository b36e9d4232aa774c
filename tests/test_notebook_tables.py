"""Saved tables keep integers as integers, also when every column is a number (tabulate then sees floats)."""

import pandas as pd

from riskcore.notebook import save_table


def test_integer_columns_are_written_without_decimals(tmp_path, monkeypatch):
    monkeypatch.setenv("RISKCORE_REPORTS", str(tmp_path))
    path = save_table(pd.DataFrame({"games": [250, 12], "win_rate": [0.2961, 0.5]}), "numbers")
    rows = [line.split("|")[1:-1] for line in path.read_text().splitlines()[2:]]
    assert [[c.strip() for c in r] for r in rows] == [["250", "0.296"], ["12", "0.500"]]
