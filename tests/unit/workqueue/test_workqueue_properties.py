"""Property-based: random interleavings of queue operations across several workers.

Workers are simulated in one event loop so hypothesis can shrink failures to a short script.
Invariants checked:

1. no key is ever held by two workers;
2. every key added is processed (a ``get`` starts) after its last effective add;
3. nothing is handed out after ``shutdown_with_drain`` returns.

"Effective add": ``add``, ``add_after`` with a non-positive delay, and a delayed add whose time
came before the shutdown (delayed keys not ready at shutdown are dropped, as in client-go).
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from kubectrl._internal.clock import FakeClock
from kubectrl.workqueue import ItemExponentialFailureRateLimiter, QueueShutDown, RateLimitingQueue

WORKERS = 3
BASE_DELAY = 0.5
MAX_DELAY = 4.0

keys = st.sampled_from("abcd")
workers = st.integers(0, WORKERS - 1)
operations = st.one_of(
    st.tuples(st.just("add"), keys),
    st.tuples(st.just("add_after"), keys, st.sampled_from([-1.0, 0.0, 0.5, 1.0, 3.0])),
    st.tuples(st.just("add_rate_limited"), keys),
    st.tuples(st.just("get"), workers),
    st.tuples(st.just("done"), workers, st.booleans()),
    st.tuples(st.just("forget"), keys),
    st.tuples(st.just("advance"), st.sampled_from([0.25, 0.5, 1.0, 5.0])),
    st.tuples(st.just("drain")),
)


@dataclass
class Model:
    clock: FakeClock = field(default_factory=FakeClock)
    queue: RateLimitingQueue[str] = field(init=False)
    step: int = 0
    held: dict[int, str] = field(default_factory=dict)
    last_add: dict[str, int] = field(default_factory=dict)
    pending: dict[str, float] = field(default_factory=dict)  # key -> ready time
    started: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    drain: asyncio.Future[None] | None = None
    drained: bool = False

    def __post_init__(self) -> None:
        limiter: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter(
            base_delay=BASE_DELAY, max_delay=MAX_DELAY
        )
        self.queue = RateLimitingQueue(limiter, clock=self.clock)

    # What the queue promises, tracked beside it.

    def added(self, key: str) -> None:
        if not self.queue.shutting_down:
            self.last_add[key] = self.step

    def delayed(self, key: str, delay: float) -> None:
        if self.queue.shutting_down:
            return
        if delay <= 0:
            self.added(key)
            return
        ready_at = self.clock.now() + delay
        self.pending[key] = min(ready_at, self.pending.get(key, ready_at))

    def advance(self, seconds: float) -> None:
        self.clock.advance(seconds)
        for key, ready_at in list(self.pending.items()):
            if ready_at <= self.clock.now():
                del self.pending[key]
                self.last_add[key] = self.step

    def start_drain(self) -> None:
        if self.drain is None:
            self.drain = asyncio.ensure_future(self.queue.shutdown_with_drain())
            self.pending.clear()  # not ready at shutdown: dropped

    # Workers.

    async def get(self, worker: int) -> None:
        if worker in self.held:
            return
        if len(self.queue) == 0:
            if self.queue.shutting_down:
                with pytest.raises(QueueShutDown):
                    await self.queue.get()
            return
        key = await self.queue.get()
        assert not self.drained, f"{key!r} handed out after shutdown_with_drain returned"
        assert key not in self.held.values(), f"{key!r} held by two workers"
        self.held[worker] = key
        self.started[key].append(self.step)

    def done(self, worker: int, *, fail: bool) -> None:
        key = self.held.pop(worker, None)
        if key is None:
            return
        if fail:
            delay = min(BASE_DELAY * 2.0 ** self.queue.num_requeues(key), MAX_DELAY)
            self.delayed(key, delay)
            self.queue.add_rate_limited(key)
        else:
            self.queue.forget(key)
        self.queue.done(key)

    async def settle(self) -> None:
        for _ in range(3):
            await asyncio.sleep(0)
        if self.drain is not None and self.drain.done() and not self.drained:
            self.drained = True
            self.drain.result()
            stats = self.queue.statistics()
            assert (stats.length, stats.processing, stats.dirty) == (0, 0, 0)
            assert not self.held

    async def run(self, script: list[tuple[object, ...]]) -> None:
        for operation in script:
            self.step += 1
            await self.apply(operation)
            await self.settle()
        # Let everything finish: time passes, workers keep working and never fail.
        self.step += 1
        if self.drain is None:
            self.advance(1000.0)
            self.start_drain()
        for _ in range(100):
            self.step += 1
            for worker in range(WORKERS):
                self.done(worker, fail=False)
            for worker in range(WORKERS):
                await self.get(worker)
            await self.settle()
            if self.drained:
                break
        assert self.drained, "shutdown_with_drain never returned"
        for key, added_at in self.last_add.items():
            assert any(start > added_at for start in self.started[key]), (
                f"{key!r} added at step {added_at} but processing started only at "
                f"{self.started[key]}"
            )

    async def apply(self, operation: tuple[object, ...]) -> None:
        name, *args = operation
        if name == "add":
            (key,) = args
            assert isinstance(key, str)
            self.added(key)
            self.queue.add(key)
        elif name == "add_after":
            key, delay = args
            assert isinstance(key, str)
            assert isinstance(delay, float)
            self.delayed(key, delay)
            self.queue.add_after(key, delay)
        elif name == "add_rate_limited":
            (key,) = args
            assert isinstance(key, str)
            self.delayed(key, min(BASE_DELAY * 2.0 ** self.queue.num_requeues(key), MAX_DELAY))
            self.queue.add_rate_limited(key)
        elif name == "get":
            (worker,) = args
            assert isinstance(worker, int)
            await self.get(worker)
        elif name == "done":
            worker, fail = args
            assert isinstance(worker, int)
            assert isinstance(fail, bool)
            self.done(worker, fail=fail)
        elif name == "forget":
            (key,) = args
            assert isinstance(key, str)
            self.queue.forget(key)
        elif name == "advance":
            (seconds,) = args
            assert isinstance(seconds, float)
            self.advance(seconds)
        elif name == "drain":
            self.start_drain()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(script=st.lists(operations, max_size=80))
# A delayed key whose time has come when the drain starts must still run.
@example(script=[("add_after", "a", 0.5), ("advance", 0.5), ("drain",)])
@example(script=[("add", "a"), ("get", 0), ("add", "a"), ("drain",), ("done", 1, False)])
def test_random_interleavings_keep_the_queue_invariants(script: list[tuple[object, ...]]) -> None:
    asyncio.run(Model().run(script))
