"""add_after, add_rate_limited, forget, num_requeues: all on a FakeClock, no real sleeps."""

from __future__ import annotations

import asyncio
import threading

import pytest

from kubectrl._internal.clock import FakeClock
from kubectrl.workqueue import (
    DelayingQueue,
    ItemExponentialFailureRateLimiter,
    QueueShutDown,
    RateLimitingQueue,
)


def test_add_after_adds_when_the_delay_has_passed(clock: FakeClock) -> None:
    queue: DelayingQueue[str] = DelayingQueue(clock=clock)
    queue.add_after("a", 5.0)
    assert len(queue) == 0
    assert queue.statistics().waiting == 1
    clock.advance(4.999)
    assert len(queue) == 0
    clock.advance(0.001)
    assert len(queue) == 1
    assert queue.statistics().waiting == 0


@pytest.mark.parametrize("delay", [0.0, -1.0])
def test_non_positive_delay_adds_now(clock: FakeClock, delay: float) -> None:
    queue: DelayingQueue[str] = DelayingQueue(clock=clock)
    queue.add_after("a", delay)
    assert len(queue) == 1
    assert queue.statistics().waiting == 0


def test_earliest_ready_time_wins(clock: FakeClock) -> None:
    queue: DelayingQueue[str] = DelayingQueue(clock=clock)
    queue.add_after("a", 10.0)
    queue.add_after("a", 2.0)
    queue.add_after("a", 5.0)  # later than the pending 2 s: ignored
    assert queue.statistics().waiting == 1
    clock.advance(2.0)
    assert len(queue) == 1
    queue.get_blocking()
    queue.done("a")
    clock.advance(100.0)
    assert len(queue) == 0  # the superseded 10 s and 5 s entries never fire


def test_ready_keys_enter_in_ready_time_order(clock: FakeClock) -> None:
    queue: DelayingQueue[str] = DelayingQueue(clock=clock)
    queue.add_after("late", 3.0)
    queue.add_after("early", 1.0)
    queue.add_after("middle", 2.0)
    clock.advance(3.0)
    queue.add("added-after-ready")
    assert [queue.get_blocking() for _ in range(4)] == [
        "early",
        "middle",
        "late",
        "added-after-ready",
    ]


def test_add_does_not_cancel_a_pending_add_after(clock: FakeClock) -> None:
    queue: DelayingQueue[str] = DelayingQueue(clock=clock)
    queue.add_after("a", 5.0)
    queue.add("a")
    queue.done(queue.get_blocking())
    clock.advance(5.0)
    assert len(queue) == 1  # runs again later, as in client-go


def test_delayed_key_of_a_queued_key_is_deduplicated(clock: FakeClock) -> None:
    queue: DelayingQueue[str] = DelayingQueue(clock=clock)
    queue.add("a")
    queue.add_after("a", 1.0)
    clock.advance(1.0)
    assert len(queue) == 1


async def test_waiting_getter_wakes_at_the_ready_time(clock: FakeClock, eventually) -> None:
    queue: DelayingQueue[str] = DelayingQueue(clock=clock)
    queue.add_after("a", 5.0)
    getter = asyncio.ensure_future(queue.get())
    await eventually(lambda: clock.sleepers() == 1)
    assert clock.next_deadline() == pytest.approx(clock.now() + 5.0)
    clock.advance(5.0)
    assert await asyncio.wait_for(getter, 10) == "a"


async def test_first_add_after_arms_a_parked_getter(clock: FakeClock, eventually) -> None:
    queue: DelayingQueue[str] = DelayingQueue(clock=clock)
    getter = asyncio.ensure_future(queue.get())
    await eventually(lambda: queue.statistics().getters == 1)
    assert clock.sleepers() == 0  # nothing delayed: no timer
    queue.add_after("a", 2.0)
    await eventually(lambda: clock.sleepers() == 1)
    clock.advance(2.0)
    assert await asyncio.wait_for(getter, 10) == "a"


async def test_earlier_add_after_rearms_a_waiting_getter(clock: FakeClock, eventually) -> None:
    queue: DelayingQueue[str] = DelayingQueue(clock=clock)
    queue.add_after("late", 100.0)
    getter = asyncio.ensure_future(queue.get())
    await eventually(lambda: clock.next_deadline() == clock.now() + 100.0)
    queue.add_after("soon", 1.0)
    await eventually(lambda: clock.next_deadline() == clock.now() + 1.0)
    clock.advance(1.0)
    assert await asyncio.wait_for(getter, 10) == "soon"


def test_thread_getter_wakes_at_the_ready_time(clock: FakeClock) -> None:
    queue: DelayingQueue[str] = DelayingQueue(clock=clock)
    queue.add_after("a", 5.0)
    result: list[str] = []
    thread = threading.Thread(target=lambda: result.append(queue.get_blocking()))
    thread.start()
    deadline = threading.Event()
    for _ in range(10_000):
        if clock.sleepers() == 1:
            break
        deadline.wait(0.001)
    assert clock.sleepers() == 1
    clock.advance(5.0)
    thread.join(10)
    assert result == ["a"]


def test_shutdown_drops_waiting_keys_and_ignores_add_after(clock: FakeClock) -> None:
    queue: DelayingQueue[str] = DelayingQueue(clock=clock)
    queue.add_after("a", 1.0)
    queue.shutdown()
    queue.add_after("b", 0.0)
    queue.add_after("c", 1.0)
    clock.advance(10.0)
    assert queue.statistics().waiting == 0
    with pytest.raises(QueueShutDown):
        queue.get_blocking()


def test_shutdown_keeps_keys_whose_time_has_come(clock: FakeClock) -> None:
    queue: DelayingQueue[str] = DelayingQueue(clock=clock)
    queue.add_after("ready", 1.0)
    queue.add_after("not-ready", 2.0)
    clock.advance(1.0)  # no queue operation notices before the shutdown
    queue.shutdown()
    assert queue.get_blocking() == "ready"
    with pytest.raises(QueueShutDown):
        queue.get_blocking()


async def test_shutdown_wakes_getter_waiting_on_a_delay(clock: FakeClock, eventually) -> None:
    queue: DelayingQueue[str] = DelayingQueue(clock=clock)
    queue.add_after("a", 5.0)
    getter = asyncio.ensure_future(queue.get())
    await eventually(lambda: clock.sleepers() == 1)
    queue.shutdown()
    with pytest.raises(QueueShutDown):
        await asyncio.wait_for(getter, 10)
    await eventually(lambda: clock.sleepers() == 0)  # its timer is cancelled too


def test_add_rate_limited_backs_off_exponentially(clock: FakeClock) -> None:
    limiter: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter()
    queue: RateLimitingQueue[str] = RateLimitingQueue(limiter, clock=clock)
    for attempt, delay in enumerate([0.005, 0.010, 0.020, 0.040]):
        queue.add_rate_limited("a")
        assert queue.num_requeues("a") == attempt + 1
        clock.advance(delay * 0.99)
        assert len(queue) == 0
        clock.advance(delay * 0.01 + 1e-9)
        assert len(queue) == 1
        queue.done(queue.get_blocking())
    queue.forget("a")
    assert queue.num_requeues("a") == 0
    queue.add_rate_limited("a")
    clock.advance(0.005)
    assert len(queue) == 1


def test_default_rate_limiter_is_the_controller_default(clock: FakeClock) -> None:
    queue: RateLimitingQueue[str] = RateLimitingQueue(clock=clock)
    assert queue.rate_limiter.when("x") == 0.005
    queue.add_rate_limited("a")
    assert queue.num_requeues("a") == 1


def test_add_rate_limited_is_ignored_after_shutdown(clock: FakeClock) -> None:
    queue: RateLimitingQueue[str] = RateLimitingQueue(clock=clock)
    queue.shutdown()
    queue.add_rate_limited("a")
    assert queue.num_requeues("a") == 0
    assert queue.statistics().waiting == 0


def test_forget_keeps_a_pending_retry(clock: FakeClock) -> None:
    queue: RateLimitingQueue[str] = RateLimitingQueue(clock=clock)
    queue.add_rate_limited("a")
    queue.forget("a")
    clock.advance(1.0)
    assert len(queue) == 1
