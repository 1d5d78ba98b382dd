"""The priority queue's ordering (controller-runtime v0.23's priorityqueue), on a FakeClock."""

from __future__ import annotations

import asyncio

import pytest

from kubectrl._internal.clock import FakeClock
from kubectrl.workqueue._priority import LOW_PRIORITY, PriorityQueue
from kubectrl.workqueue._rate_limiters import ItemExponentialFailureRateLimiter


def drain(queue: PriorityQueue[str]) -> list[str]:
    out: list[str] = []
    while len(queue):
        key = queue.get_blocking()
        queue.done(key)
        out.append(key)
    return out


def test_higher_priority_first_then_arrival_order(clock: FakeClock) -> None:
    queue: PriorityQueue[str] = PriorityQueue(clock=clock)
    for i in range(3):
        queue.add(f"low-{i}", priority=LOW_PRIORITY)
    queue.add("a")
    queue.add("urgent", priority=10)
    queue.add("b")
    assert drain(queue) == ["urgent", "a", "b", "low-0", "low-1", "low-2"]


def test_a_fresh_change_overtakes_ten_thousand_unchanged_keys(clock: FakeClock) -> None:
    queue: PriorityQueue[str] = PriorityQueue(clock=clock)
    for i in range(10_000):
        queue.add(f"ns/cm-{i}", priority=LOW_PRIORITY)
    queue.add("ns/new")
    assert queue.get_blocking() == "ns/new"


def test_adding_again_raises_the_priority_never_lowers_it(clock: FakeClock) -> None:
    queue: PriorityQueue[str] = PriorityQueue(clock=clock)
    queue.add("x", priority=LOW_PRIORITY)
    queue.add("y", priority=LOW_PRIORITY)
    queue.add("y")  # moves up
    assert queue.priority_of("y") == 0
    queue.add("z", priority=5)
    queue.add("z", priority=LOW_PRIORITY)  # stays at 5
    assert queue.priority_of("z") == 5
    assert drain(queue) == ["z", "y", "x"]
    assert queue.priority_of("x") is None


def test_a_key_re_added_while_processing_comes_back_with_its_highest_priority(
    clock: FakeClock,
) -> None:
    queue: PriorityQueue[str] = PriorityQueue(clock=clock)
    queue.add("k")
    key = queue.get_blocking()
    queue.add("other")
    queue.add("k", priority=LOW_PRIORITY)
    queue.add("k", priority=3)
    assert len(queue) == 1  # only "other": k is still processing
    queue.done(key)
    assert drain(queue) == ["k", "other"]


def test_delayed_keys_enter_with_their_priority_when_ready(clock: FakeClock) -> None:
    queue: PriorityQueue[str] = PriorityQueue(clock=clock)
    queue.add("now-low", priority=LOW_PRIORITY)
    queue.add_after("later-high", 5.0, priority=7)
    queue.add_after("later-low", 1.0, priority=LOW_PRIORITY)
    assert len(queue) == 1
    clock.advance(5.0)
    assert len(queue) == 3
    assert drain(queue) == ["later-high", "now-low", "later-low"]


def test_rate_limited_retries_keep_their_priority(clock: FakeClock) -> None:
    limiter = ItemExponentialFailureRateLimiter[str](base_delay=1.0, max_delay=10.0)
    queue: PriorityQueue[str] = PriorityQueue(limiter, clock=clock)
    queue.add("plain")
    queue.add_rate_limited("retry", priority=2)
    assert queue.num_requeues("retry") == 1
    clock.advance(1.0)
    assert drain(queue) == ["retry", "plain"]


def test_a_getter_waiting_on_an_empty_queue_gets_the_first_key(clock: FakeClock) -> None:
    async def main() -> str:
        queue: PriorityQueue[str] = PriorityQueue(clock=clock)
        getter = asyncio.ensure_future(queue.get())
        await asyncio.sleep(0)
        queue.add("only", priority=LOW_PRIORITY)
        return await asyncio.wait_for(getter, 5)

    assert asyncio.run(main()) == "only"


def test_priorities_must_be_ints(clock: FakeClock) -> None:
    queue: PriorityQueue[str] = PriorityQueue(clock=clock)
    with pytest.raises(TypeError, match="priority must be an int, not 'high'"):
        queue.add("x", priority="high")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="not True"):
        queue.add_after("x", 1.0, priority=True)


def test_shutdown_drops_delayed_priorities(clock: FakeClock) -> None:
    queue: PriorityQueue[str] = PriorityQueue(clock=clock)
    queue.add_after("x", 5.0, priority=3)
    queue.shutdown()
    assert queue._delayed_priority == {}
