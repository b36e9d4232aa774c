"""Saved tables keep integers as integers, also when every column is a number (tabulate then sees floats)."""

import pandas as pd

from riskcore.notebook import save_table


def test_integer_columns_are_written_without_decimals(tmp_path, monkeypatch):
    monkeypatch.setenv("RISKCORE_REPORTS", str(tmp_path))
    path = save_table(pd.DataFrame({"games": [250, 12], "win_rate": [0.2961, 0.5]}), "numbers")
    rows = [line.split("|")[1:-1] for line in path.read_text().splitlines()[2:]]
    assert [[c.strip() for c in r] for r in rows] == [["250", "0.296"], ["12", "0.500"]]


def test_missing_values_are_empty_cells_and_whole_floats_whole(tmp_path, monkeypatch):
    monkeypatch.setenv("RISKCORE_REPORTS", str(tmp_path))
    df = pd.DataFrame({"nodes": [1825.0, 63979.0], "share": [float("nan"), 0.0092], "name": ["a", None]})
    text = save_table(df, "gaps").read_text()
    assert "nan" not in text and "None" not in text
    rows = [[c.strip() for c in line.split("|")[1:-1]] for line in text.splitlines()[2:]]
    assert rows == [["1825", "", "a"], ["63979", "0.009", ""]]
