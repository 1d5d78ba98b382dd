"""The priority queue: controller-runtime v0.23's default workqueue (``priorityqueue``).

A :class:`PriorityQueue` is a :class:`~kubectrl.workqueue.RateLimitingQueue` whose ready keys
are handed out highest priority first, and in the order they became ready within one priority.
Everything else is the plain queue's: deduplication, one worker per key, delays, backoff.

Why: when a controller starts (or its informer relists, or resyncs), every cached object comes
in as an event although nothing changed. With a FIFO queue a user's fresh change waits behind
10,000 such keys. controller-runtime gives those events :data:`LOW_PRIORITY` (``-100``:
``handler.LowPriority``; events from the initial list and updates whose resourceVersion did not
change) and everything else priority 0, so the fresh change goes first.

A key added again while queued keeps one place in the queue, at the higher of its two
priorities (added again at a higher priority, it moves up; at a lower one, nothing changes). A
key added while a worker holds it is queued again after ``done`` with the highest priority it
was added with meanwhile. A delayed key (``add_after``, ``add_rate_limited``) enters the queue
with the priority it was delayed with.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Generic, TypeVar

from kubectrl._internal.clock import Clock
from kubectrl.workqueue._metrics import MetricsProvider
from kubectrl.workqueue._rate_limiters import RateLimiter
from kubectrl.workqueue._rate_limiting import RateLimitingQueue

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

__all__ = ["DEFAULT_PRIORITY", "LOW_PRIORITY", "PriorityQueue"]

T = TypeVar("T", bound=Hashable)

#: The priority of an ordinary add.
DEFAULT_PRIORITY = 0
#: controller-runtime's ``handler.LowPriority``: initial-list and unchanged (resync) events.
LOW_PRIORITY = -100


class _Heap(Generic[T]):
    """Ready keys by (priority descending, arrival); a key has one live entry, older ones are
    skipped when they surface (a key moved up leaves its old entry behind)."""

    def __init__(self, priority_of: Callable[[T], int]) -> None:
        self._priority_of = priority_of
        self._heap: list[tuple[int, int, T]] = []
        self._live: dict[T, int] = {}
        self._sequence = itertools.count()

    def append(self, item: T, /) -> None:
        self.push(item, self._priority_of(item))

    def push(self, item: T, priority: int) -> None:
        sequence = next(self._sequence)
        self._live[item] = sequence
        heapq.heappush(self._heap, (-priority, sequence, item))

    def popleft(self) -> T:
        while True:
            _, sequence, item = heapq.heappop(self._heap)
            if self._live.get(item) == sequence:
                del self._live[item]
                return item

    def __contains__(self, item: object) -> bool:
        return item in self._live

    def __len__(self) -> int:
        return len(self._live)


class PriorityQueue(RateLimitingQueue[T]):
    """A rate-limiting workqueue handing out the highest-priority ready key first.

    Guarantees: all of :class:`~kubectrl.workqueue.RateLimitingQueue`'s (deduplication, one
    worker per key, every ``add`` followed by a ``get`` starting after it, delays, backoff).
    Ready keys go out by priority (higher first, any ``int``), then in the order they became
    ready. A key's priority only rises while it is queued (or re-added while processing); it is
    forgotten when a worker takes the key.

    Caveats: a steady stream of high-priority keys starves lower ones, by design.

    Example::

        >>> import asyncio
        >>> async def main():
        ...     queue = PriorityQueue()
        ...     for i in range(3):
        ...         queue.add(f"ns/unchanged-{i}", priority=LOW_PRIORITY)
        ...     queue.add("ns/fresh")
        ...     return [await queue.get() for _ in range(2)]
        >>> asyncio.run(main())
        ['ns/fresh', 'ns/unchanged-0']
    """

    def __init__(
        self,
        rate_limiter: RateLimiter[T] | None = None,
        *,
        name: str | None = None,
        clock: Clock | None = None,
        metrics_provider: MetricsProvider | None = None,
        registry: CollectorRegistry | None = None,
    ) -> None:
        super().__init__(
            rate_limiter,
            name=name,
            clock=clock,
            metrics_provider=metrics_provider,
            registry=registry,
        )
        #: The priority of every dirty key (queued, or re-added while processing).
        self._priority: dict[T, int] = {}
        #: The priority a delayed key will be queued with.
        self._delayed_priority: dict[T, int] = {}
        #: The priority of the add in progress (``None``: a delayed key becoming ready).
        self._adding: int | None = None
        self._heap: _Heap[T] = _Heap(lambda item: self._priority.get(item, DEFAULT_PRIORITY))
        self._queue = self._heap

    def add(self, item: T, priority: int = DEFAULT_PRIORITY) -> None:
        """Queue ``item`` with ``priority`` (see :meth:`Queue.add`; a queued key moves up to the
        higher priority)."""
        priority = _check(priority)
        with self._lock:
            self._promote_locked()
            self._adding = priority
            try:
                self._add_locked(item)
            finally:
                self._adding = None

    def add_after(self, item: T, delay: float, priority: int = DEFAULT_PRIORITY) -> None:
        """Queue ``item`` with ``priority`` after ``delay`` seconds (see
        :meth:`DelayingQueue.add_after`)."""
        priority = _check(priority)
        if delay <= 0:
            with self._lock:
                if self._shutting_down:
                    return
                if self._metrics is not None:
                    self._metrics.retry()
            self.add(item, priority)
            return
        with self._lock:
            current = self._delayed_priority.get(item)
            self._delayed_priority[item] = priority if current is None else max(current, priority)
        super().add_after(item, delay)

    def add_rate_limited(self, item: T, priority: int = DEFAULT_PRIORITY) -> None:
        """Queue ``item`` with ``priority`` after its backoff."""
        if self.shutting_down:
            return
        self.add_after(item, self._rate_limiter.when(item), priority)

    def priority_of(self, item: T) -> int | None:
        """The priority ``item`` is queued with (``None`` when it is not queued)."""
        with self._lock:
            self._promote_locked()
            return self._priority.get(item) if item in self._dirty else None

    # -- hooks of the plain queue -------------------------------------------------------------

    def _add_locked(self, item: T) -> None:
        if self._adding is not None:
            priority = self._adding
        else:
            priority = self._delayed_priority.pop(item, DEFAULT_PRIORITY)
        if self._shutting_down:
            return
        if item in self._dirty:
            current = self._priority.get(item, DEFAULT_PRIORITY)
            if priority > current:
                self._priority[item] = priority
                if item in self._heap:
                    self._heap.push(item, priority)
            return
        self._priority[item] = priority
        super()._add_locked(item)

    def _take_locked(self) -> T:
        item = super()._take_locked()
        self._priority.pop(item, None)
        return item

    def _drop_waiting_locked(self) -> None:
        super()._drop_waiting_locked()
        self._delayed_priority.clear()


def _check(priority: object) -> int:
    if not isinstance(priority, int) or isinstance(priority, bool):
        raise TypeError(f"a workqueue priority must be an int, not {priority!r}")
    return priority
