"""Workqueue throughput: add/get/done cycles per second for 1 and 8 workers.

One cycle is one ``add`` of a fresh key, one ``get`` and one ``done``: the queue's overhead per
reconcile, with no work in between. Measured for asyncio workers (``await get()``) and for thread
workers (``get_blocking()``), on a plain ``Queue`` and on the ``RateLimitingQueue`` controllers
use. Prints a table; run with ``nox -s bench`` or ``python benchmarks/bench_workqueue.py``.
"""

# A benchmark reports by printing its table.
# ruff: noqa: T201

from __future__ import annotations

import argparse
import asyncio
import threading
import time
from collections.abc import Callable

from kubectrl.workqueue import Queue, RateLimitingQueue

QueueFactory = Callable[[], Queue[tuple[int, int]]]
FACTORIES: dict[str, QueueFactory] = {"Queue": Queue, "RateLimitingQueue": RateLimitingQueue}


async def _asyncio_run(queue: Queue[tuple[int, int]], workers: int, cycles: int) -> float:
    async def worker(worker_id: int) -> None:
        for i in range(cycles):
            queue.add((worker_id, i))
            item = await queue.get()
            queue.done(item)
            if i % 64 == 0:
                await asyncio.sleep(0)  # take turns, as real reconcilers that await do

    start = time.perf_counter()
    await asyncio.gather(*(worker(w) for w in range(workers)))
    return time.perf_counter() - start


def _threads_run(queue: Queue[tuple[int, int]], workers: int, cycles: int) -> float:
    def worker(worker_id: int) -> None:
        for i in range(cycles):
            queue.add((worker_id, i))
            queue.done(queue.get_blocking())

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(workers)]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - start


def measure(kind: str, factory: QueueFactory, workers: int, total: int) -> float:
    """Cycles per second, best of three runs of ``total`` cycles shared by ``workers``."""
    cycles = total // workers
    best = float("inf")
    for _ in range(3):
        queue = factory()
        if kind == "asyncio":
            elapsed = asyncio.run(_asyncio_run(queue, workers, cycles))
        else:
            elapsed = _threads_run(queue, workers, cycles)
        best = min(best, elapsed)
    return cycles * workers / best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=40_000, help="cycles per measurement")
    args = parser.parse_args()
    print("workqueue: add/get/done cycles per second (best of 3)")
    header = f"{'queue':<18} {'workers':>7} {'asyncio':>12} {'threads':>12}"
    print(header)
    print("-" * len(header))
    for name, factory in FACTORIES.items():
        for workers in (1, 8):
            row = [measure(kind, factory, workers, args.cycles) for kind in ("asyncio", "threads")]
            print(f"{name:<18} {workers:>7} {row[0]:>12,.0f} {row[1]:>12,.0f}")


if __name__ == "__main__":
    main()
