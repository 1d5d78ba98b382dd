"""Injected time.

Every kubectrl component that waits or measures time takes a :class:`Clock`, so unit tests can
drive time by hand with :class:`FakeClock` instead of sleeping (DESIGN.md, principle 6).

``now()`` is monotonic seconds and is what deadlines, backoff and rate limits use. ``wall()`` is
the wall-clock time, used only where Kubernetes stores a timestamp (Lease renew times, Event
timestamps). ``sleep()`` is the one way a component waits.
"""

from __future__ import annotations

import asyncio
import datetime
import heapq
import itertools
import threading
import time
from typing import Protocol, runtime_checkable

__all__ = ["Clock", "FakeClock", "RealClock"]


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


class RealClock:
    """The machine's clocks: :func:`time.monotonic` and :func:`asyncio.sleep`."""

    def now(self) -> float:
        return time.monotonic()

    def wall(self) -> datetime.datetime:
        return datetime.datetime.now(datetime.timezone.utc)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))

    def __repr__(self) -> str:
        return "RealClock()"


class FakeClock:
    """A clock that only moves when told to, for tests.

    ``sleep`` suspends the calling task until :meth:`advance` (or :meth:`set`) moves the clock past
    its deadline. ``advance`` may be called from any thread; sleepers are woken on their own event
    loops.

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

    def now(self) -> float:
        with self._lock:
            return self._now

    def wall(self) -> datetime.datetime:
        with self._lock:
            elapsed = self._now - self._start
        return self._wall_start + datetime.timedelta(seconds=elapsed)

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        with self._lock:
            heapq.heappush(self._sleepers, (self._now + seconds, next(self._counter), fut))
        try:
            await fut
        finally:
            if not fut.done():
                fut.cancel()

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
        for fut in due:
            fut.get_loop().call_soon_threadsafe(_resolve, fut)

    def next_deadline(self) -> float | None:
        """When the earliest pending sleeper is due, or ``None`` if nobody sleeps."""
        with self._lock:
            live = [entry for entry in self._sleepers if not entry[2].done()]
            return min(entry[0] for entry in live) if live else None

    def sleepers(self) -> int:
        """How many sleepers are pending (handy to wait until a task has gone to sleep)."""
        with self._lock:
            return sum(1 for entry in self._sleepers if not entry[2].done())

    def __repr__(self) -> str:
        return f"FakeClock(now={self.now()!r})"


def _resolve(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)
