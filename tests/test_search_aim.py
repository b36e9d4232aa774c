"""The aim check picks, per player count and look-ahead, the most accurate search inside the node budget and
says whether it meets the paper; yardsticks never count."""

import pandas as pd
import pytest

from riskcore.experiments.search_aim import aim_table, meets_paper

ROWS = [  # search, players, lookahead, optimal, relative_loss, node_share, generated_share
    ("A", 2, 3, 0.90, 0.05, 0.005, 0.30),  # its goals' own searches made many states: shown, not judged
    ("B", 2, 3, 0.95, 0.03, 0.050, 0.20),  # more accurate, over the budget
    ("AB one turn shorter", 2, 3, 0.99, 0.01, 0.001, 0.001),  # a yardstick: left out
    ("C", 2, 4, 0.80, 0.12, 0.002, 0.01),
    ("E", 2, 4, 0.80, 0.10, 0.004, 0.02),  # C's accuracy at a lower loss
    ("D", 3, 4, 0.95, 0.02, 0.020, 0.05),  # nothing inside the budget
]
COLUMNS = ["search", "players", "lookahead", "optimal", "relative_loss", "node_share", "generated_share"]


@pytest.fixture
def table():
    acc = pd.DataFrame(ROWS, columns=COLUMNS)
    return aim_table(acc, references=("AB one turn shorter",)).set_index(["players", "lookahead"])


def test_the_most_accurate_search_inside_the_budget_is_picked_and_judged(table):
    row = table.loc[(2, 3)]
    assert (row.in_budget, row.paper_met, row.in_budget_generated_share) == ("A", True, 0.30)
    assert (row.most_accurate, row.most_accurate_share) == ("B", 0.05)


def test_equal_accuracy_goes_to_the_lower_loss_and_short_of_the_paper_is_not_met(table):
    row = table.loc[(2, 4)]
    assert (row.in_budget, row.in_budget_loss, row.paper_met) == ("E", 0.10, False)


def test_no_search_inside_the_budget_is_reported_as_not_met(table):
    row = table.loc[(3, 4)]
    assert (row.in_budget, row.paper_met, row.most_accurate) == ("", False, "D")
    assert pd.isna(row.in_budget_optimal) and pd.isna(row.in_budget_generated_share)


def test_the_paper_thresholds_are_inclusive():
    assert meets_paper(0.881, 0.094)
    assert not meets_paper(0.880, 0.05)
    assert not meets_paper(0.95, 0.095)


def test_a_table_without_the_needed_columns_is_refused_by_name():
    with pytest.raises(ValueError, match="generated_share"):
        aim_table(pd.DataFrame(columns=COLUMNS[:-1]))
