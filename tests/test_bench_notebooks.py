"""`riskcore bench --notebooks`: a notebook's kernel memory on a dataset where a whole-table load would show."""

import sys

import pytest

from riskcore.experiments.bench_memory import peak_mb
from riskcore.experiments.bench_notebooks import bench_notebooks, database_size
from tests.test_explore import shared_bulk_data

# what the explore notebook's tour once ran: every window posterior with its run's config, into pandas
WHOLE_TABLE = """
import sys
from riskcore.db import query
query('''SELECT po.*, p.mission, r.config FROM posteriors po JOIN players p USING (run, game_id, player)
         JOIN runs r USING (run) WHERE po.point_kind = 'fraction' ''', data_dir=sys.argv[1])
"""


@pytest.fixture(scope="module")
def bulk_data(tmp_path_factory):
    return shared_bulk_data(tmp_path_factory)


def test_the_explore_notebook_runs_in_a_fraction_of_what_a_whole_table_load_takes(bulk_data, tmp_path):
    data, rows = bulk_data
    assert rows >= 3_000_000
    df = bench_notebooks(("07-explore",), data, tmp_path)
    row = df.iloc[0]
    assert row.error == "" and row.code_cells >= 8 and row.kernel_peak_MB is not None
    whole = peak_mb([sys.executable, "-c", WHOLE_TABLE, str(data)])
    assert whole > 2 * row.kernel_peak_MB, (whole, row.kernel_peak_MB)  # the dataset is large enough to tell
    assert row.kernel_peak_MB < 1024
    written = (tmp_path / "notebooks.md").read_text()
    assert "07-explore" in written and database_size(data) in written  # what it ran on


def test_a_failing_notebook_is_named_after_the_table_is_written(bulk_data, tmp_path, monkeypatch):
    data, _ = bulk_data
    root = tmp_path / "project"
    (root / "notebooks").mkdir(parents=True)
    (root / "notebooks" / "07-explore.py").write_text("# %%\nraise RuntimeError('the tour broke')\n")
    monkeypatch.setenv("RISKCORE_ROOT", str(root))
    with pytest.raises(RuntimeError, match="07-explore: .*the tour broke"):
        bench_notebooks(("07-explore",), data, tmp_path / "out")
    assert "the tour broke" in (tmp_path / "out" / "notebooks.md").read_text()


def test_an_unknown_notebook_is_refused(tmp_path):
    with pytest.raises(ValueError, match="09-nothing"):
        bench_notebooks(("09-nothing",), tmp_path, tmp_path)
