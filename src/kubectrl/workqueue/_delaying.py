"""The delaying queue: ``add_after(key, delay)``.

Delayed keys wait in a heap ordered by ready time, with one entry per key (client-go's
``waitingForQueue``): adding a key that already waits keeps the earlier ready time.

Why no background timer: client-go runs a goroutine per queue that moves keys from the heap into
the queue when they become ready. kubectrl instead moves ready keys lazily, under the lock, at the
start of every queue operation, and a getter that finds nothing ready sleeps on the injected clock
until the earliest ready time (or until woken). That needs no thread or task per queue, works the
same from asyncio and from threads, and makes tests exact: after ``FakeClock.advance``, ``len``
already counts the keys that became ready. Ready keys enter the queue in ready-time order, before
any key added later, as with client-go's timer.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Hashable
from typing import TYPE_CHECKING, TypeVar

from kubectrl._internal.clock import Clock
from kubectrl.workqueue._metrics import MetricsProvider
from kubectrl.workqueue._queue import Queue

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

__all__ = ["DelayingQueue"]

T = TypeVar("T", bound=Hashable)


class DelayingQueue(Queue[T]):
    """A :class:`Queue` that can also add a key after a delay.

    Guarantees: a key given to ``add_after(key, delay)`` is added (with :meth:`Queue.add`
    semantics) once ``delay`` seconds of the queue's clock have passed; a non-positive delay adds
    it at once. A key waits at most once: a second ``add_after`` keeps whichever ready time is
    earlier. ``add`` does not cancel a pending ``add_after`` (the key runs now and again later),
    as in client-go.

    Caveats: waiting keys are not in ``len()``; they are dropped by shutdown. Getters blocked
    on an empty queue wake at the earliest ready time, so with all workers busy a key that
    became ready waits for the next free worker, as expected.

    Example::

        >>> from kubectrl._internal.clock import FakeClock
        >>> clock = FakeClock()
        >>> queue = DelayingQueue(clock=clock)
        >>> queue.add_after("default/foo", 5.0)
        >>> len(queue)
        0
        >>> clock.advance(5.0)
        >>> len(queue)
        1
    """

    def __init__(
        self,
        *,
        name: str | None = None,
        clock: Clock | None = None,
        metrics_provider: MetricsProvider | None = None,
        registry: CollectorRegistry | None = None,
    ) -> None:
        super().__init__(
            name=name, clock=clock, metrics_provider=metrics_provider, registry=registry
        )
        # Heap of (ready_at, sequence, key); entries whose sequence is no longer the key's
        # current one in _ready_at are stale (superseded by an earlier time) and skipped.
        self._waiting: list[tuple[float, int, T]] = []
        self._ready_at: dict[T, tuple[float, int]] = {}
        self._sequence = itertools.count()

    def add_after(self, item: T, delay: float) -> None:
        """Add ``item`` after ``delay`` seconds; at once when ``delay <= 0``.

        Ignored once shutting down. If ``item`` already waits, the earlier ready time wins.
        Counts as a retry in ``workqueue_retries_total``, as client-go does.
        """
        with self._lock:
            if self._shutting_down:
                return
            if self._metrics is not None:
                self._metrics.retry()
            self._promote_locked()
            if delay <= 0:
                self._add_locked(item)
                return
            ready_at = self._clock.now() + delay
            current = self._ready_at.get(item)
            if current is not None and current[0] <= ready_at:
                return
            entry = (ready_at, next(self._sequence), item)
            self._ready_at[item] = entry[:2]
            heapq.heappush(self._waiting, entry)
            if self._waiting[0] is entry:
                # The earliest ready time moved closer: one parked getter must re-arm its timer.
                self._wake_getter_locked()

    def _promote_locked(self) -> None:
        if not self._waiting:
            return
        now = self._clock.now()
        while self._waiting and self._waiting[0][0] <= now:
            ready_at, sequence, item = heapq.heappop(self._waiting)
            if self._ready_at.get(item) == (ready_at, sequence):
                del self._ready_at[item]
                self._add_locked(item)

    def _next_ready_locked(self) -> float | None:
        while self._waiting:
            ready_at, sequence, item = self._waiting[0]
            if self._ready_at.get(item) == (ready_at, sequence):
                return ready_at
            heapq.heappop(self._waiting)
        return None

    def _waiting_count_locked(self) -> int:
        return len(self._ready_at)

    def _drop_waiting_locked(self) -> None:
        self._waiting.clear()
        self._ready_at.clear()
