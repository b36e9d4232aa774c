"""Local process pool: results keyed by task, whatever order the tasks finish in."""

import time

from riskcore.parallel import in_task_order, run_tasks


def _slow_first(i: int) -> int:
    time.sleep(0.3 if i == 0 else 0.0)  # task 0 finishes last on two workers
    return i * i


def test_results_come_back_in_task_order_after_finishing_out_of_order():
    finished = list(run_tasks(_slow_first, [(i,) for i in range(4)], workers=2, progress=False))
    assert sorted(finished) == [(i, i * i) for i in range(4)]
    assert in_task_order(reversed(finished)) == [0, 1, 4, 9]
    assert in_task_order(iter(finished)) == [0, 1, 4, 9]
