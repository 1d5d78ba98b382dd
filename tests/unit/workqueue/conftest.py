"""Helpers for the workqueue tests: wait on conditions with deadlines, never sleep to settle."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

import pytest

from kubectrl._internal.clock import FakeClock

Eventually = Callable[[Callable[[], bool]], Awaitable[None]]

DEADLINE = 10.0  # real seconds; generous because CI machines are shared


async def _eventually(predicate: Callable[[], bool], timeout: float = DEADLINE) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached before the deadline")
        await asyncio.sleep(0.001)


@pytest.fixture
def eventually() -> Eventually:
    """``await eventually(lambda: cond)``: yield to the loop until ``cond`` holds (10 s cap)."""
    return _eventually


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()
