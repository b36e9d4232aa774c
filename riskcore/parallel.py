"""Run independent tasks on local processes (default) or on a Dask distributed cluster (`--dask ADDRESS`).

`run_tasks` yields `(index, result)` as tasks finish; callers write each result at once, so memory stays flat and
nothing depends on finishing order (outputs are keyed by index, which keeps them deterministic; `in_task_order`
sorts results that are gathered into one table).
"""

from __future__ import annotations

import os
import signal
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any, Callable, Iterable, Iterator, Sequence

from tqdm.auto import tqdm


def default_workers() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


def run_tasks(fn: Callable[..., Any], args: Iterable[tuple], workers: int | None = None,
              dask_address: str | None = None, desc: str = "tasks", progress: bool = True,
              total: int | None = None) -> Iterator[tuple[int, Any]]:
    """Apply `fn(*args[i])` to every argument tuple; yield `(i, result)` in completion order.

    `args` may be a generator (give `total` for the progress bar): on a Dask cluster its tuples are made only as
    tasks are sent, a few per worker thread ahead, so tasks that carry their data (a chunk's events) never all sit
    in this process's memory at once."""
    if not dask_address and not isinstance(args, Sequence):
        args = list(args)  # local tasks carry no data: sending them all at once costs nothing
    if total is None and isinstance(args, Sequence):
        total = len(args)
    bar = tqdm(total=total, desc=desc, disable=not progress, unit="task")
    try:
        if dask_address:
            yield from _run_dask(fn, args, dask_address, bar)
        elif (workers or default_workers()) == 1 or len(args) <= 1:
            for i, a in enumerate(args):
                yield i, fn(*a)
                bar.update()
        else:
            pool = ProcessPoolExecutor(max_workers=workers or default_workers(), initializer=_worker_start)
            futures = {pool.submit(fn, *a): i for i, a in enumerate(args)}
            try:
                for fut in _completed(futures):
                    # a finished future keeps its result: let go of it so memory stays flat in the task count
                    i, result = futures.pop(fut), fut.result()
                    del fut
                    yield i, result
                    del result
                    bar.update()
            except BaseException:
                _stop(pool)  # an error, Ctrl-C or SIGTERM: the workers stop now, not after their tasks
                raise
            pool.shutdown()
    finally:
        bar.close()


WAKE_SECONDS = 1.0


def _completed(futures: dict) -> Iterator:
    """`as_completed` over the futures still in `futures`, waking at least every `WAKE_SECONDS`. A signal that the
    kernel hands to another thread (the pool's manager, tqdm's monitor) wakes nobody: the main thread, blocked until
    a task finishes, would run its handler only then, and never if the pool has stalled."""
    while futures:
        try:
            yield from as_completed(list(futures), timeout=WAKE_SECONDS)
        except TimeoutError:
            pass  # back in Python: pending signal handlers run here


def _worker_start() -> None:
    """Pool workers die with their parent, even a parent killed outright (Linux: the parent-death signal), and
    leave Ctrl-C to the parent, which stops them."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the parent's clean-up handler: a worker just ends
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _stop(pool: ProcessPoolExecutor) -> None:
    processes = list((pool._processes or {}).values())  # noqa: SLF001 - the executor offers no terminate
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in processes:
        if proc.is_alive():
            proc.terminate()
    for proc in processes:
        proc.join(timeout=5)


def in_order(results: Iterator[tuple[int, Any]]) -> Iterator[Any]:
    """The results of `run_tasks` by task index, each yielded as soon as every earlier one has been: a stream
    written in a fixed order (the same bytes at any number of workers) holds only the results that came early."""
    early, wanted = {}, 0
    for i, result in results:
        early[i] = result
        while wanted in early:
            yield early.pop(wanted)
            wanted += 1


def in_task_order(results: Iterator[tuple[int, Any]]) -> list[Any]:
    """The results of `run_tasks` by task index, whatever order they finished in (for outputs whose row order
    matters downstream: float sums, seeded resampling)."""
    return [r for _, r in sorted(results, key=lambda x: x[0])]


DASK_AHEAD = 2  # tasks sent per worker thread of the cluster before their results come: every thread stays busy


def _run_dask(fn, args: Iterable[tuple], address: str, bar) -> Iterator[tuple[int, Any]]:
    from distributed import Client
    from distributed import as_completed as dask_completed

    with Client(address, timeout="30s") as client:
        pending, running = enumerate(args), {}
        finished = dask_completed()

        def send() -> None:
            """Fill the window, sized by the threads the cluster has now (workers may join while it runs)."""
            window = DASK_AHEAD * max(1, sum(client.nthreads().values()))
            while len(running) < window:
                task = next(pending, None)
                if task is None:
                    return
                fut = client.submit(fn, *task[1], pure=False)
                running[fut.key] = (task[0], fut)
                finished.add(fut)

        send()
        try:
            for fut in finished:
                i, _ = running.pop(fut.key)
                result = fut.result()  # the cluster drops a result once nothing holds its future
                del fut
                send()
                yield i, result
                del result
                bar.update()
        finally:
            client.cancel([f for _, f in running.values()])
