"""Stress: asyncio workers and thread workers share one queue; producers on both sides.

Checks the level-based promise end to end: a key is never held twice, each key's latest version
is seen by a processing that started after it was written, each failure is retried, and nothing
runs after the drain. Waits on conditions with deadlines; no timing assertions.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import Counter

from kubectrl.workqueue import ItemExponentialFailureRateLimiter, QueueShutDown, RateLimitingQueue

KEYS = [f"default/foo-{i}" for i in range(150)]
ROUNDS = 4
ASYNC_WORKERS = 4
THREAD_WORKERS = 4
DEADLINE = 60.0  # real seconds, a cap on a shared CI machine, not an expectation


class World:
    """What the workers observe, guarded by one lock."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.version: Counter[str] = Counter()
        self.seen: dict[str, int] = {}
        self.holders: set[str] = set()
        self.violations: list[str] = []
        self.processed: Counter[str] = Counter()
        self.initial_failures = {key: i % 3 for i, key in enumerate(KEYS)}
        self.failures_left = dict(self.initial_failures)

    def write(self, queue: RateLimitingQueue[str], key: str) -> None:
        with self.lock:
            self.version[key] += 1
        queue.add(key)  # after the write, as an informer's event handler does

    def begin(self, key: str) -> None:
        with self.lock:
            if key in self.holders:
                self.violations.append(key)
            self.holders.add(key)
            self.processed[key] += 1
            self.seen[key] = max(self.seen.get(key, 0), self.version[key])

    def end(self, key: str) -> bool:
        """Finish ``key``; ``True`` when this attempt fails and must be retried."""
        with self.lock:
            self.holders.discard(key)
            fail = self.failures_left[key] > 0
            if fail:
                self.failures_left[key] -= 1
            return fail

    def settled(self) -> bool:
        with self.lock:
            return all(self.seen.get(key, 0) == self.version[key] for key in KEYS) and not any(
                self.failures_left.values()
            )


def finish(queue: RateLimitingQueue[str], key: str, *, fail: bool) -> None:
    if fail:
        queue.add_rate_limited(key)
    else:
        queue.forget(key)
    queue.done(key)


async def test_asyncio_and_thread_workers_together() -> None:
    limiter: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter(
        base_delay=0.0005, max_delay=0.004
    )
    queue: RateLimitingQueue[str] = RateLimitingQueue(limiter)
    world = World()

    async def async_worker() -> None:
        async for key in queue:
            world.begin(key)
            await asyncio.sleep(0)  # let the others interleave mid-work
            finish(queue, key, fail=world.end(key))

    def thread_worker() -> None:
        while True:
            try:
                key = queue.get_blocking()
            except QueueShutDown:
                return
            world.begin(key)
            time.sleep(0)  # yield the GIL mid-work
            finish(queue, key, fail=world.end(key))

    def thread_producer(offset: int) -> None:
        for round_ in range(ROUNDS):
            for key in KEYS[offset::2]:
                world.write(queue, key)
            if round_ % 2:
                for key in KEYS[offset::5]:
                    queue.add_after(key, 0.001)

    async def async_producer() -> None:
        for _ in range(ROUNDS):
            for i, key in enumerate(KEYS):
                world.write(queue, key)
                if i % 25 == 0:
                    await asyncio.sleep(0)

    threads = [threading.Thread(target=thread_worker) for _ in range(THREAD_WORKERS)]
    threads += [threading.Thread(target=thread_producer, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    workers = [asyncio.ensure_future(async_worker()) for _ in range(ASYNC_WORKERS)]
    await async_producer()
    for producer in threads[THREAD_WORKERS:]:
        await asyncio.to_thread(producer.join, DEADLINE)

    def idle() -> bool:
        # Retries still delayed would be dropped by the shutdown (as in client-go): wait for them.
        stats = queue.statistics()
        return world.settled() and stats.length == stats.processing == stats.waiting == 0

    deadline = time.monotonic() + DEADLINE
    while not idle():
        assert time.monotonic() < deadline, "workers did not catch up before the deadline"
        await asyncio.sleep(0.005)

    await asyncio.wait_for(queue.shutdown_with_drain(), DEADLINE)
    processed_at_drain = sum(world.processed.values())
    await asyncio.wait_for(asyncio.gather(*workers), DEADLINE)
    for thread in threads[:THREAD_WORKERS]:
        await asyncio.to_thread(thread.join, DEADLINE)
        assert not thread.is_alive()

    assert world.violations == []
    assert sum(world.processed.values()) == processed_at_drain
    for key in KEYS:
        assert world.seen[key] == world.version[key] == ROUNDS * 2
        assert world.processed[key] >= world.initial_failures[key] + 1
        assert queue.num_requeues(key) == 0
    stats = queue.statistics()
    assert (stats.length, stats.processing, stats.dirty, stats.waiting) == (0, 0, 0, 0)
