"""An in-memory lock store and helpers to drive the elector on a FakeClock."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from kubectrl._internal.clock import FakeClock
from kubectrl.errors import AlreadyExistsError, ConflictError, InternalError, NotFoundError
from kubectrl.leaderelection import LeaderElectionRecord


class Store:
    """One lease record with a version, like the API server's optimistic concurrency."""

    def __init__(self) -> None:
        self.record: LeaderElectionRecord | None = None
        self.version = 0
        self.writes: list[LeaderElectionRecord] = []
        self.broken = False  # every call fails, as if the server were unreachable
        self.hang = False  # every call hangs, as if the server never answered

    def force(self, record: LeaderElectionRecord) -> None:
        self.record = record
        self.version += 1
        self.writes.append(record)


class FakeLock:
    def __init__(self, store: Store, identity: str) -> None:
        self.store = store
        self._identity = identity
        self._seen: int | None = None

    @property
    def identity(self) -> str:
        return self._identity

    def describe(self) -> str:
        return "ns/lease"

    async def _check(self) -> None:
        if self.store.hang:
            await asyncio.Event().wait()
        if self.store.broken:
            raise InternalError("server down")

    async def get(self) -> LeaderElectionRecord:
        await self._check()
        if self.store.record is None:
            raise NotFoundError("not found")
        self._seen = self.store.version
        return self.store.record

    async def create(self, record: LeaderElectionRecord) -> None:
        await self._check()
        if self.store.record is not None:
            raise AlreadyExistsError("exists")
        self.store.force(record)
        self._seen = self.store.version

    async def update(self, record: LeaderElectionRecord) -> None:
        await self._check()
        if self._seen != self.store.version:
            raise ConflictError("conflict")
        self.store.force(record)
        self._seen = self.store.version


async def settle() -> None:
    for _ in range(50):
        await asyncio.sleep(0)


async def advance_until(clock: FakeClock, condition: Callable[[], bool], limit: float) -> None:
    """Advance the fake clock sleeper by sleeper until ``condition`` holds (or ``limit`` s pass)."""
    end = clock.now() + limit
    await settle()
    while not condition():
        deadline = clock.next_deadline()
        if deadline is None or deadline > end:
            raise AssertionError(f"condition not reached within {limit} fake seconds")
        clock.set(max(deadline, clock.now()))
        await settle()


def jump(clock: FakeClock, seconds: float) -> None:
    """Move ``clock`` on without waking its sleepers: what a process frozen by SIGSTOP sees.

    Its monotonic clock kept running, but none of its timers has fired yet when it resumes, so
    whichever task runs first (a worker asking the fence) sees the new time before the renew loop.
    """
    with clock._lock:
        clock._now += seconds


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def store() -> Store:
    return Store()
