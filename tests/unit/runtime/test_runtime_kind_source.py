"""KindSource.wait_for_sync on the injected clock, without polling real time."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import pytest

from kubectrl._internal.clock import FakeClock
from kubectrl.runtime.source import KindSource


async def eventually(cond: Callable[[], bool], timeout: float = 10.0) -> None:
    end = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < end, "condition not reached"
        await asyncio.sleep(0.001)


class FakeRegistration:
    def __init__(self) -> None:
        self.synced = False
        self._idle = asyncio.Event()

    def has_synced(self) -> bool:
        return self.synced

    async def wait_idle(self) -> None:
        await self._idle.wait()

    def deliver_initial_list(self) -> None:
        self.synced = True
        self._idle.set()

    def remove(self) -> None:
        pass


class FakeInformer:
    """An informer whose cache synced but whose handler has not yet seen the initial list."""

    last_error = None

    def __init__(self) -> None:
        self.registration = FakeRegistration()

    def add_handler(self, **_: Any) -> FakeRegistration:
        return self.registration

    def start(self) -> None:
        pass

    async def wait_for_cache_sync(self, timeout: float | None = None) -> None:
        return None


class FakeFactory:
    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.client = None
        self.made = FakeInformer()

    def informer(self, *_: Any, **__: Any) -> FakeInformer:
        return self.made


async def test_wait_for_sync_times_out_on_the_injected_clock() -> None:
    clock = FakeClock()
    factory = FakeFactory(clock)
    source = KindSource(factory, ("v1", "ConfigMap"))  # type: ignore[arg-type]
    await source.start(lambda r: None)
    waiting = asyncio.create_task(source.wait_for_sync(5))
    # The deadline lives on the fake clock (before: time.monotonic() and asyncio.sleep polling).
    await eventually(lambda: clock.next_deadline() == pytest.approx(clock.now() + 5))
    clock.advance(5)
    with pytest.raises(TimeoutError, match=r"ConfigMap.*initial list.*5 s"):
        await waiting


async def test_wait_for_sync_returns_once_the_handler_received_the_initial_list() -> None:
    clock = FakeClock()
    factory = FakeFactory(clock)
    source = KindSource(factory, ("v1", "ConfigMap"))  # type: ignore[arg-type]
    await source.start(lambda r: None)
    waiting = asyncio.create_task(source.wait_for_sync(5))
    await eventually(lambda: clock.next_deadline() is not None)
    factory.made.registration.deliver_initial_list()
    await waiting
