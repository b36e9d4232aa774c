"""The aim check picks, per player count and look-ahead, the most accurate search inside the node budget and
says whether it meets the paper; yardsticks never count."""

import pandas as pd
import pytest

from riskcore.search.aim import aim_table, coverage_table, meets_paper

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


def test_coverage_counts_a_position_when_any_search_inside_the_budget_is_optimal():
    acc = pd.DataFrame(ROWS, columns=COLUMNS)
    per = [("A", 2, 3, 0, 1.0), ("A", 2, 3, 1, 0.0), ("A", 2, 3, 2, 0.0),
           ("C", 2, 4, 0, 1.0), ("C", 2, 4, 1, 0.0), ("E", 2, 4, 0, 0.0), ("E", 2, 4, 1, 1.0),
           ("B", 2, 3, 1, 1.0),  # over the budget: does not cover position 1
           ("AB one turn shorter", 2, 3, 2, 1.0),  # a yardstick: does not cover position 2
           ("random placement", 2, 4, 0, 0.5), ("random placement", 2, 4, 1, 0.25)]  # shares of optimal placements
    nodes = pd.DataFrame(per, columns=["search", "players", "lookahead", "position", "optimal"])
    cov = coverage_table(nodes, acc, ("AB one turn shorter", "random placement"), "random placement")
    cov = cov.set_index(["players", "lookahead"])
    assert list(cov.index) == [(2, 3), (2, 4)]  # (3, 4) has no search inside the budget
    assert (cov.loc[(2, 3)].searches, cov.loc[(2, 3)].any_optimal) == (1, pytest.approx(1 / 3))
    assert pd.isna(cov.loc[(2, 3)].random_any_optimal)  # no random yardstick rows there
    row = cov.loc[(2, 4)]
    assert (row.searches, row.any_optimal, row.best_single) == (2, 1.0, 0.80)
    assert row.joint_node_share == pytest.approx(0.006)
    # two uniform draws: 1 - 0.5^2 and 1 - 0.75^2 of the positions' chances, averaged
    assert row.random_any_optimal == pytest.approx(((1 - 0.25) + (1 - 0.5625)) / 2)


def test_coverage_refuses_a_nodes_table_without_positions_by_name():
    with pytest.raises(ValueError, match="nodes table lacks columns \\['position'\\]"):
        coverage_table(pd.DataFrame(columns=["search", "players", "lookahead", "optimal"]),
                       pd.DataFrame(ROWS, columns=COLUMNS), (), "random placement")


def test_coverage_without_a_search_inside_the_budget_keeps_its_columns():
    over = pd.DataFrame([("B", 2, 3, 0.95, 0.03, 0.050, 0.20)], columns=COLUMNS)
    nodes = pd.DataFrame([("B", 2, 3, 0, 1.0)], columns=["search", "players", "lookahead", "position", "optimal"])
    cov = coverage_table(nodes, over, (), "random placement")
    assert cov.empty and "lookahead" in cov.columns
