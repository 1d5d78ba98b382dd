"""The clock's thread-friendly wait, added for workqueue getters that run in threads."""

from __future__ import annotations

import asyncio
import datetime
import threading

from kubectrl._internal.clock import FakeClock, RealClock, wait_event_blocking


def _start_waiter(clock: FakeClock, timeout: float) -> tuple[threading.Thread, list[bool]]:
    event = threading.Event()
    result: list[bool] = []
    thread = threading.Thread(target=lambda: result.append(clock.wait_blocking(event, timeout)))
    thread.start()
    for _ in range(10_000):
        if clock.sleepers():
            break
        threading.Event().wait(0.001)
    return thread, result


def test_fake_clock_wakes_a_thread_at_its_deadline() -> None:
    clock = FakeClock()
    thread, result = _start_waiter(clock, 5.0)
    assert clock.sleepers() == 1
    assert clock.next_deadline() == clock.now() + 5.0
    clock.advance(4.0)
    assert thread.is_alive()
    clock.advance(1.0)
    thread.join(10)
    assert result == [False]
    assert clock.sleepers() == 0


def test_fake_clock_thread_wait_ends_when_the_event_is_set() -> None:
    clock = FakeClock()
    event = threading.Event()
    result: list[bool] = []
    thread = threading.Thread(target=lambda: result.append(clock.wait_blocking(event, 5.0)))
    thread.start()
    for _ in range(10_000):
        if clock.sleepers():
            break
        threading.Event().wait(0.001)
    event.set()
    thread.join(10)
    assert result == [True]
    assert clock.sleepers() == 0
    assert clock.next_deadline() is None


def test_fake_clock_thread_wait_without_timeout_or_with_none_left() -> None:
    clock = FakeClock()
    event = threading.Event()
    assert clock.wait_blocking(event, 0.0) is False
    event.set()
    assert clock.wait_blocking(event, None) is True


def test_real_clock_and_fallback_wait() -> None:
    event = threading.Event()
    assert RealClock().wait_blocking(event, 0.0) is False
    event.set()
    assert wait_event_blocking(RealClock(), event, 1.0) is True

    class MinimalClock:  # a third-party Clock with only the protocol's methods
        def now(self) -> float:
            return 0.0

        def wall(self) -> datetime.datetime:
            return datetime.datetime.now(datetime.timezone.utc)

        async def sleep(self, seconds: float) -> None:
            await asyncio.sleep(seconds)

    assert wait_event_blocking(MinimalClock(), event, 1.0) is True
    assert wait_event_blocking(MinimalClock(), threading.Event(), 0.0) is False


async def test_fake_clock_sleep_counts_from_the_call_not_from_the_first_step() -> None:
    """A sleep's task scheduled after the clock moved still wakes at the deadline of its call.

    As a timer from Go's fake clock (k8s.io/utils/clock/testing/fake_clock.go: ``After`` registers
    its waiter when called). The example in FakeClock's docstring does exactly this.
    """
    clock = FakeClock()
    late = asyncio.ensure_future(clock.sleep(5))
    short = asyncio.ensure_future(clock.sleep(3))
    longer = asyncio.ensure_future(clock.sleep(8))
    clock.advance(5)  # before any of the three tasks has run once
    await asyncio.wait_for(asyncio.gather(late, short), 5)
    assert not longer.done()
    assert clock.next_deadline() == clock.now() + 3
    clock.advance(3)
    await asyncio.wait_for(longer, 5)
    assert clock.sleepers() == 0
