"""Local process pool: results keyed by task, whatever order the tasks finish in."""

import time

from riskcore.parallel import in_order, in_task_order, run_tasks


def _slow_first(i: int) -> int:
    time.sleep(0.3 if i == 0 else 0.0)  # task 0 finishes last on two workers
    return i * i


def test_results_come_back_in_task_order_after_finishing_out_of_order():
    finished = list(run_tasks(_slow_first, [(i,) for i in range(4)], workers=2, progress=False))
    assert sorted(finished) == [(i, i * i) for i in range(4)]
    assert in_task_order(reversed(finished)) == [0, 1, 4, 9]
    assert in_task_order(iter(finished)) == [0, 1, 4, 9]


def test_in_order_yields_each_result_once_every_earlier_one_has_come():
    seen = []

    def finished():
        for i in (2, 0, 3, 1, 4):
            seen.append(i)
            yield i, i * 10

    out = []
    for r in in_order(finished()):
        out.append((r, len(seen)))  # what had finished when r came out
    assert out == [(0, 2), (10, 4), (20, 4), (30, 4), (40, 5)]


class Box:
    def __init__(self, n):
        self.n = n


def _box(n):
    return Box(n)


def test_run_tasks_holds_no_result_the_caller_has_let_go():
    """Memory stays flat in the number of tasks: a result lives only as long as the caller keeps it."""
    import gc
    import weakref

    refs = []
    for _, box in run_tasks(_box, [(k,) for k in range(8)], workers=2, progress=False):
        refs.append(weakref.ref(box))
        del box
        gc.collect()
        assert all(r() is None for r in refs[:-1])  # the newest is still the generator's until it resumes


# A pool whose tasks never finish, and a Ctrl-C that the kernel hands to a thread other than the main one (here
# sent to a helper thread itself): the main thread, waiting for a task, must still stop the run.
_STALLED = """
import signal, sys, threading, time
from riskcore.parallel import run_tasks

# Ctrl-C handled as in a fresh shell, whatever the test process passed on (it may run with SIGINT ignored or blocked)
signal.signal(signal.SIGINT, signal.default_int_handler)
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})

def helper():
    time.sleep(2)
    signal.pthread_kill(threading.get_ident(), signal.SIGINT)

threading.Thread(target=helper, daemon=True).start()
try:
    list(run_tasks(time.sleep, [(600,), (600,)], workers=2, progress=False))
except KeyboardInterrupt:
    print("stopped")
"""


def test_a_signal_that_reaches_another_thread_still_stops_a_stalled_pool():
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _STALLED], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "stopped", done.stderr[-2000:]
