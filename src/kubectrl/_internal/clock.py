"""Injected time.

Every kubectrl component that waits or measures time takes a :class:`Clock`, so unit tests can
drive time by hand with :class:`FakeClock` instead of sleeping.

``now()`` is monotonic seconds and is what deadlines, backoff and rate limits use. ``wall()`` is
the wall-clock time, used only where Kubernetes stores a timestamp (Lease renew times, Event
timestamps). ``sleep()`` is the one way a component waits.

Threads wait too (a sync reconciler's worker thread blocks in the workqueue), and a thread cannot
``await``. :func:`wait_event_blocking` is their way to wait: it blocks until a
:class:`threading.Event` is set or a timeout on the clock passes. Both clocks here implement it as
the method ``wait_blocking``; a third-party :class:`Clock` without that method falls back to the
machine's time, which is right for any clock that follows real time.
"""

from __future__ import annotations

import asyncio
import datetime
import heapq
import itertools
import threading
import time
from collections.abc import Coroutine
from typing import Any, Protocol, runtime_checkable

from kubectrl._internal.aio import call_in_loop

__all__ = ["BlockingClock", "Clock", "FakeClock", "RealClock", "wait_event_blocking"]


@runtime_checkable
class Clock(Protocol):
    """Source of time for everything that waits."""

    def now(self) -> float:
        """Monotonic seconds; only differences are meaningful."""
        ...

    def wall(self) -> datetime.datetime:
        """The current UTC wall-clock time."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` on this clock (returns at once when ``seconds <= 0``)."""
        ...


@runtime_checkable
class BlockingClock(Clock, Protocol):
    """A :class:`Clock` that can also block a thread (not an event loop) until a deadline."""

    def wait_blocking(self, event: threading.Event, timeout: float | None) -> bool:
        """Block the calling thread until ``event`` is set or ``timeout`` seconds pass.

        Returns ``False`` when the timeout passed, ``True`` otherwise. The clock may set
        ``event`` itself to end the wait, so pass an event that belongs to this one wait.
        """
        ...


def wait_event_blocking(clock: Clock, event: threading.Event, timeout: float | None) -> bool:
    """Block the calling thread until ``event`` is set or ``timeout`` seconds of ``clock`` pass.

    Uses ``clock.wait_blocking`` when the clock has it (both kubectrl clocks do); otherwise waits on
    the machine's time, which is exact for clocks that follow real time. Returns ``False`` when the
    timeout passed. ``event`` may be set by the clock to end the wait; use one event per wait.

    Example::

        event = threading.Event()
        wait_event_blocking(RealClock(), event, 0.01)   # False: nobody set the event
    """
    wait_blocking = getattr(clock, "wait_blocking", None)
    if wait_blocking is not None:
        return bool(wait_blocking(event, timeout))
    return event.wait(None if timeout is None else max(0.0, timeout))


class RealClock:
    """The machine's clocks: :func:`time.monotonic` and :func:`asyncio.sleep`."""

    def now(self) -> float:
        return time.monotonic()

    def wall(self) -> datetime.datetime:
        return datetime.datetime.now(datetime.timezone.utc)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))

    def wait_blocking(self, event: threading.Event, timeout: float | None) -> bool:
        """Block the calling thread until ``event`` is set or ``timeout`` seconds pass."""
        return event.wait(None if timeout is None else max(0.0, timeout))

    def __repr__(self) -> str:
        return "RealClock()"


class FakeClock:
    """A clock that only moves when told to, for tests.

    ``sleep`` suspends the calling task until :meth:`advance` (or :meth:`set`) moves the clock past
    its deadline. ``advance`` may be called from any thread; sleepers are woken on their own event
    loops. Threads blocked in :meth:`wait_blocking` count as sleepers too and are woken the same
    way.

    Example::

        clock = FakeClock()
        task = asyncio.ensure_future(clock.sleep(5))
        clock.advance(5)      # the task's sleep completes
    """

    def __init__(self, start: float = 1000.0, *, wall_start: datetime.datetime | None = None):
        self._now = start
        self._start = start
        self._wall_start = wall_start or datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
        self._lock = threading.Lock()
        self._counter = itertools.count()
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._thread_sleepers: list[tuple[float, int, threading.Event]] = []

    def now(self) -> float:
        with self._lock:
            return self._now

    def wall(self) -> datetime.datetime:
        with self._lock:
            elapsed = self._now - self._start
        return self._wall_start + datetime.timedelta(seconds=elapsed)

    def sleep(self, seconds: float) -> Coroutine[Any, Any, None]:
        """Wait until the clock reaches ``now() + seconds``, ``now()`` read at this call.

        The deadline is fixed when ``sleep`` is called, not when the returned coroutine first
        runs: a task made with ``asyncio.ensure_future(clock.sleep(5))`` and a clock advanced
        before that task was scheduled still wakes (as a timer made by Go's fake clock does).
        """
        with self._lock:
            due = self._now + seconds
        return self._sleep_until(due)

    async def _sleep_until(self, due: float) -> None:
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] | None = None
        with self._lock:
            if due > self._now:
                fut = loop.create_future()
                heapq.heappush(self._sleepers, (due, next(self._counter), fut))
        if fut is None:
            # Due already: no time asked for, or the clock passed the deadline before this
            # coroutine first ran. One step for the other tasks, as a zero sleep takes.
            await asyncio.sleep(0)
            return
        try:
            await fut
        finally:
            if not fut.done():
                fut.cancel()

    def wait_blocking(self, event: threading.Event, timeout: float | None) -> bool:
        """Block the calling thread until ``event`` is set or the clock moves ``timeout`` on.

        Returns ``False`` when the clock passed the deadline (the clock sets ``event`` to wake the
        thread, so pass an event that belongs to this one wait).
        """
        if timeout is None:
            event.wait()
            return True
        with self._lock:
            deadline = self._now + timeout
            if timeout <= 0:
                return event.is_set()
            entry = (deadline, next(self._counter), event)
            heapq.heappush(self._thread_sleepers, entry)
        event.wait()
        with self._lock:
            if entry in self._thread_sleepers:
                self._thread_sleepers.remove(entry)
                heapq.heapify(self._thread_sleepers)
            return self._now < deadline

    def advance(self, seconds: float) -> None:
        """Move the clock forward by ``seconds`` and wake every sleeper now due."""
        if seconds < 0:
            raise ValueError(f"FakeClock.advance: seconds must be >= 0, got {seconds}")
        with self._lock:
            target = self._now + seconds
        self.set(target)

    def set(self, now: float) -> None:
        """Move the clock to ``now`` (never backwards) and wake every sleeper now due."""
        due: list[asyncio.Future[None]] = []
        with self._lock:
            if now < self._now:
                raise ValueError(f"FakeClock.set: time cannot go back from {self._now} to {now}")
            self._now = now
            while self._sleepers and self._sleepers[0][0] <= now:
                due.append(heapq.heappop(self._sleepers)[2])
            while self._thread_sleepers and self._thread_sleepers[0][0] <= now:
                heapq.heappop(self._thread_sleepers)[2].set()
        for fut in due:
            call_in_loop(fut.get_loop(), _resolve, fut)  # False: its loop is closed, nobody waits

    def next_deadline(self) -> float | None:
        """When the earliest pending sleeper is due, or ``None`` if nobody sleeps."""
        with self._lock:
            live = [entry[0] for entry in self._sleepers if not entry[2].done()]
            live += [entry[0] for entry in self._thread_sleepers if not entry[2].is_set()]
            return min(live) if live else None

    def sleepers(self) -> int:
        """How many sleepers are pending (handy to wait until a task has gone to sleep)."""
        with self._lock:
            tasks = sum(1 for entry in self._sleepers if not entry[2].done())
            return tasks + sum(1 for entry in self._thread_sleepers if not entry[2].is_set())

    def __repr__(self) -> str:
        return f"FakeClock(now={self.now()!r})"


def _resolve(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)
