"""The work queue: deduplicated keys, never one key in two workers' hands.

Semantics are client-go's ``util/workqueue``. Three collections hold the
state, all guarded by one :class:`threading.Lock`:

- ``queue``: keys ready to be handed out, in FIFO order;
- ``dirty``: keys that need processing (everything in ``queue``, plus keys re-added while a
  worker holds them);
- ``processing``: keys a worker holds, from ``get`` until ``done``.

``add`` of a dirty key does nothing (deduplication). ``add`` of a key in ``processing`` only marks
it dirty; ``done`` then puts it back in ``queue``, so it runs exactly once more and never in two
workers at once. That is what makes level-based reconcilers correct.

Why one thread lock and two kinds of waiters: the controller runtime runs on one event loop, but a
plain ``def reconcile`` runs in a worker thread, which calls ``done`` and ``add`` (and may block in
``get_blocking``). Every operation takes the lock for a few dictionary operations only, never
across an ``await``, so it is safe from any thread and never blocks the loop for long. A getter
that must wait parks a waiter: a future on its own event loop (woken with
``call_soon_threadsafe`` when the waker is on another thread) or an event for a thread. Each key
made ready wakes one waiter; a woken waiter re-checks under the lock, so a wake-up is never
mistaken for an item, and a cancelled waiter passes its wake-up on.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import AsyncIterator, Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

from kubectrl._internal.aio import call_in_loop, running_loop
from kubectrl._internal.clock import Clock, RealClock, wait_event_blocking
from kubectrl.workqueue._metrics import MetricsProvider, queue_metrics

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

__all__ = ["Queue", "QueueShutDown", "QueueStatistics"]

T = TypeVar("T", bound=Hashable)


class _Pending(Protocol[T]):
    """The ready keys: a FIFO ``deque`` here, a priority heap in the priority queue."""

    def append(self, item: T, /) -> None: ...

    def popleft(self) -> T: ...

    def __len__(self) -> int: ...


class QueueShutDown(Exception):  # noqa: N818 - named as asyncio.QueueShutDown
    """Raised by ``get`` once the queue is shut down and has nothing left to hand out.

    It is how workers learn to stop, not a failure: not retryable, nothing to log. The name and
    behaviour follow :class:`asyncio.QueueShutDown` and :class:`queue.ShutDown` (Python 3.13),
    which is why kubectrl raises instead of returning client-go's ``(item, shutdown)`` pair: a
    worker loop cannot forget to check it, and ``async for key in queue`` simply ends.

    Example::

        while True:
            try:
                key = await queue.get()
            except QueueShutDown:
                return
    """


@dataclass(frozen=True)
class QueueStatistics:
    """A snapshot of a queue's state, from :meth:`Queue.statistics`.

    ``length`` counts keys ready to hand out (``len(queue)``); ``processing`` keys held by
    workers; ``dirty`` keys that need processing, ready or held; ``waiting`` keys delayed by
    ``add_after`` and not yet ready; ``getters`` tasks and threads blocked in ``get``.

    Example::

        >>> Queue().statistics().length
        0
    """

    name: str | None
    length: int
    processing: int
    dirty: int
    waiting: int
    getters: int
    shutting_down: bool


class _Waiter:
    """One parked ``get`` or ``shutdown_with_drain``. ``popped``: chosen to wake (under lock)."""

    __slots__ = ("popped",)

    def __init__(self) -> None:
        self.popped = False

    def wake(self) -> bool:
        """Wake the waiter; ``False`` when it can never run again (its event loop is closed)."""
        raise NotImplementedError


class _TaskWaiter(_Waiter):
    __slots__ = ("future", "loop")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__()
        self.loop = loop
        self.future: asyncio.Future[None] = loop.create_future()

    def wake(self) -> bool:
        # False: the loop is closed, this waiter will never run.
        return call_in_loop(self.loop, _resolve, self.future)


class _ThreadWaiter(_Waiter):
    __slots__ = ("event",)

    def __init__(self) -> None:
        super().__init__()
        self.event = threading.Event()

    def wake(self) -> bool:
        self.event.set()
        return True


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class Queue(Generic[T]):
    """A work queue of hashable keys with client-go's dirty and processing sets.

    Guarantees:

    - A key is handed to at most one worker at a time: between ``get`` and ``done`` it is
      *processing*, and ``get`` never returns it again until ``done``.
    - Adding a key that is queued does nothing. Adding a key that is processing makes it run
      exactly once more, after ``done``. So every ``add`` is followed by at least one ``get`` of
      that key that starts after the ``add``.
    - Otherwise keys are handed out in the order they were added (FIFO).
    - After :meth:`shutdown`, adds are ignored and ``get`` hands out what is queued, then raises
      :class:`QueueShutDown`. :meth:`shutdown_with_drain` also waits until nothing is queued or
      processing.
    - Every method is safe from any thread and from any event loop; ``await get()`` for tasks,
      :meth:`get_blocking` for threads, and they can be mixed on one queue.

    Caveats: keys must be hashable and should be immutable (``"namespace/name"`` strings or
    frozen dataclasses). Every ``get`` must be matched by exactly one ``done``, also when the work
    fails; ``done`` of a key not processing raises :class:`ValueError`. Getters are woken in the
    order they parked, but a ``get`` that finds a key ready takes it at once, so strict fairness
    between workers is not promised.

    ``name`` names the queue in metrics (only named queues report); pass ``registry`` (a
    ``prometheus_client.CollectorRegistry``) or any ``metrics_provider``. ``clock`` is used for
    metrics and, in the delaying queues, for every wait.

    Example::

        >>> import asyncio
        >>> async def main():
        ...     queue = Queue()
        ...     queue.add("default/foo")
        ...     queue.add("default/foo")        # deduplicated
        ...     key = await queue.get()
        ...     queue.add(key)                  # runs once more after done()
        ...     queue.done(key)
        ...     return key, len(queue)
        >>> asyncio.run(main())
        ('default/foo', 1)
    """

    def __init__(
        self,
        *,
        name: str | None = None,
        clock: Clock | None = None,
        metrics_provider: MetricsProvider | None = None,
        registry: CollectorRegistry | None = None,
    ) -> None:
        self._name = name
        self._clock: Clock = clock if clock is not None else RealClock()
        self._lock = threading.Lock()
        self._queue: _Pending[T] = deque()
        self._dirty: set[T] = set()
        self._processing: set[T] = set()
        self._getters: deque[_Waiter] = deque()
        self._drainers: list[_Waiter] = []
        self._shutting_down = False
        self._draining = False
        self._metrics = queue_metrics(
            name, self._clock, self._lock, provider=metrics_provider, registry=registry
        )

    @property
    def name(self) -> str | None:
        """The queue's name in metrics, or ``None``."""
        return self._name

    @property
    def shutting_down(self) -> bool:
        """Whether :meth:`shutdown` or :meth:`shutdown_with_drain` has been called."""
        with self._lock:
            return self._shutting_down

    def add(self, item: T) -> None:
        """Mark ``item`` as needing processing (ignored once shutting down).

        Does nothing if ``item`` is already queued; if a worker holds it, it is queued again
        when that worker calls :meth:`done`. Never blocks.
        """
        with self._lock:
            self._promote_locked()
            self._add_locked(item)

    def __len__(self) -> int:
        """How many keys are ready to hand out (not counting those being processed)."""
        with self._lock:
            self._promote_locked()
            return len(self._queue)

    async def get(self) -> T:
        """Wait for a key and take it; it is then *processing* until :meth:`done`.

        Returns at once when a key is ready. After shutdown, hands out the remaining keys and
        then raises :class:`QueueShutDown`. Cancelling a waiting ``get`` takes nothing.
        """
        waiter: _TaskWaiter | None = None
        while True:
            with self._lock:
                self._forget_waiter_locked(waiter)
                self._promote_locked()
                if self._queue:
                    return self._take_locked()
                if self._shutting_down:
                    raise QueueShutDown
                waiter = _TaskWaiter(asyncio.get_running_loop())
                self._getters.append(waiter)
                ready_at = self._next_ready_locked()
            await self._park_task(waiter, ready_at)

    def get_blocking(self) -> T:
        """Like :meth:`get`, blocking the calling thread; for worker threads only.

        Raises :class:`RuntimeError` instead of blocking when called on a running event loop,
        which would stop that loop (use ``await get()`` there).
        """
        waiter: _ThreadWaiter | None = None
        while True:
            with self._lock:
                self._forget_waiter_locked(waiter)
                self._promote_locked()
                if self._queue:
                    return self._take_locked()
                if self._shutting_down:
                    raise QueueShutDown
                if running_loop() is not None:
                    raise RuntimeError("get_blocking() would block the event loop; await get()")
                waiter = _ThreadWaiter()
                self._getters.append(waiter)
                ready_at = self._next_ready_locked()
            timeout = None if ready_at is None else ready_at - self._clock.now()
            try:
                wait_event_blocking(self._clock, waiter.event, timeout)
            except BaseException:  # KeyboardInterrupt in the main thread
                with self._lock:
                    self._abandon_getter_locked(waiter)
                raise

    def done(self, item: T) -> None:
        """Finish processing ``item``; if it was added meanwhile, queue it again.

        Raises :class:`ValueError` when ``item`` is not being processed (a second ``done`` for
        one ``get`` is a bug that would otherwise let two workers hold the key).
        """
        with self._lock:
            if item not in self._processing:
                raise ValueError(f"done({item!r}): the item is not being processed")
            self._promote_locked()
            self._processing.remove(item)
            if self._metrics is not None:
                self._metrics.done(item)
            if item in self._dirty:
                self._queue.append(item)
                self._wake_getter_locked()
            elif self._draining and not self._processing and not self._queue:
                self._wake_all_locked(self._drainers)

    def shutdown(self) -> None:
        """Stop accepting adds and let ``get`` drain what is queued; does not wait.

        Keys delayed by ``add_after`` and not yet ready are dropped, as in client-go (those
        already ready are kept). Calling it
        during :meth:`shutdown_with_drain` makes that drain return without waiting further.
        """
        with self._lock:
            self._shut_down_locked(drain=False)

    async def shutdown_with_drain(self) -> None:
        """Shut down, then wait until no key is queued or processing.

        Guarantee: when it returns, every key added before the shutdown has been handed out and
        ``done``, and no ``get`` will ever hand out a key again. So workers must keep calling
        ``get`` and ``done`` until :class:`QueueShutDown`; otherwise this waits forever (bound it
        with :func:`asyncio.wait_for`). client-go waits only for processing keys; waiting for the
        queued ones too is what makes "nothing runs after the drain" true.
        """
        loop = asyncio.get_running_loop()
        with self._lock:
            self._shut_down_locked(drain=True)
        while True:
            with self._lock:
                if self._drained_locked():
                    return
                waiter = _TaskWaiter(loop)
                self._drainers.append(waiter)
            try:
                await waiter.future
            finally:
                with self._lock:
                    if not waiter.popped:
                        self._drainers.remove(waiter)

    def shutdown_with_drain_blocking(self) -> None:
        """Like :meth:`shutdown_with_drain`, blocking the calling thread.

        Raises :class:`RuntimeError` instead of blocking when it would have to wait on a running
        event loop (use ``await shutdown_with_drain()`` there).
        """
        with self._lock:
            self._shut_down_locked(drain=True)
        while True:
            with self._lock:
                if self._drained_locked():
                    return
                if running_loop() is not None:
                    raise RuntimeError(
                        "shutdown_with_drain_blocking() would block the event loop; "
                        "await shutdown_with_drain()"
                    )
                waiter = _ThreadWaiter()
                self._drainers.append(waiter)
            waiter.event.wait()

    def statistics(self) -> QueueStatistics:
        """A consistent snapshot of the queue's state (see :class:`QueueStatistics`)."""
        with self._lock:
            self._promote_locked()
            return QueueStatistics(
                name=self._name,
                length=len(self._queue),
                processing=len(self._processing),
                dirty=len(self._dirty),
                waiting=self._waiting_count_locked(),
                getters=len(self._getters),
                shutting_down=self._shutting_down,
            )

    async def __aiter__(self) -> AsyncIterator[T]:
        """``async for key in queue``: ``get`` until shutdown; call ``done`` for each key."""
        while True:
            try:
                item = await self.get()
            except QueueShutDown:
                return
            yield item

    def __repr__(self) -> str:
        stats = self.statistics()
        return (
            f"<{type(self).__name__} name={self._name!r} length={stats.length} "
            f"processing={stats.processing} shutting_down={stats.shutting_down}>"
        )

    # Hooks for the delaying queue; a plain queue has nothing waiting.

    def _promote_locked(self) -> None:
        """Move delayed keys whose time has come into the queue."""

    def _next_ready_locked(self) -> float | None:
        """When the earliest delayed key becomes ready (clock time), or ``None``."""
        return None

    def _waiting_count_locked(self) -> int:
        return 0

    def _drop_waiting_locked(self) -> None:
        """Forget every delayed key (shutdown)."""

    # Internals; every *_locked method runs with self._lock held.

    def _add_locked(self, item: T) -> None:
        if self._shutting_down or item in self._dirty:
            return
        if self._metrics is not None:
            self._metrics.add(item)
        self._dirty.add(item)
        if item in self._processing:
            return
        self._queue.append(item)
        self._wake_getter_locked()

    def _take_locked(self) -> T:
        item = self._queue.popleft()
        self._processing.add(item)
        self._dirty.discard(item)
        if self._metrics is not None:
            self._metrics.get(item)
        return item

    def _wake_getter_locked(self) -> None:
        while self._getters:
            waiter = self._getters.popleft()
            waiter.popped = True
            if waiter.wake():
                return

    def _wake_all_locked(self, waiters: deque[_Waiter] | list[_Waiter]) -> None:
        for waiter in waiters:
            waiter.popped = True
            waiter.wake()
        waiters.clear()

    def _forget_waiter_locked(self, waiter: _Waiter | None) -> None:
        # A waiter woken by its timer, not by a waker, is still parked: unpark it.
        if waiter is not None and not waiter.popped:
            self._getters.remove(waiter)

    def _abandon_getter_locked(self, waiter: _Waiter) -> None:
        if not waiter.popped:
            self._getters.remove(waiter)
        elif self._queue:
            # This getter was chosen to take a key and now never will: pass the wake-up on.
            self._wake_getter_locked()

    async def _park_task(self, waiter: _TaskWaiter, ready_at: float | None) -> None:
        timer: asyncio.Future[None] | None = None
        if ready_at is not None:
            timer = asyncio.ensure_future(self._clock.sleep(ready_at - self._clock.now()))
            timer.add_done_callback(lambda _: _resolve(waiter.future))
        try:
            await waiter.future
        except BaseException:
            with self._lock:
                self._abandon_getter_locked(waiter)
            raise
        finally:
            if timer is not None:
                timer.cancel()

    def _shut_down_locked(self, *, drain: bool) -> None:
        # Keys whose time has come were added, even if no operation has noticed yet.
        self._promote_locked()
        self._shutting_down = True
        self._draining = drain
        self._drop_waiting_locked()
        self._wake_all_locked(self._getters)
        if self._drained_locked():
            self._wake_all_locked(self._drainers)

    def _drained_locked(self) -> bool:
        return not self._draining or (not self._queue and not self._processing)
