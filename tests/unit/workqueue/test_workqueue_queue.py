"""The basic queue's rules: dedup, dirty-while-processing, FIFO, shutdown, drain, threads."""

from __future__ import annotations

import asyncio
import threading

import pytest

from kubectrl.workqueue import Queue, QueueShutDown


async def test_fifo_order() -> None:
    queue: Queue[str] = Queue()
    for key in ["a", "b", "c"]:
        queue.add(key)
    assert [await queue.get() for _ in range(3)] == ["a", "b", "c"]


async def test_adding_a_queued_key_does_nothing() -> None:
    queue: Queue[str] = Queue()
    queue.add("a")
    queue.add("b")
    queue.add("a")
    assert len(queue) == 2
    assert [await queue.get(), await queue.get()] == ["a", "b"]


async def test_key_added_while_processing_runs_once_more_after_done() -> None:
    queue: Queue[str] = Queue()
    queue.add("a")
    key = await queue.get()
    queue.add("a")
    queue.add("a")
    assert len(queue) == 0  # not handed out while held
    queue.done(key)
    assert len(queue) == 1
    assert await queue.get() == "a"
    queue.done("a")
    assert len(queue) == 0
    assert queue.statistics().dirty == 0


async def test_key_never_held_by_two_workers(eventually) -> None:
    queue: Queue[str] = Queue()
    queue.add("a")
    first = await queue.get()
    queue.add("a")
    second = asyncio.ensure_future(queue.get())
    await eventually(lambda: queue.statistics().getters == 1)
    assert not second.done()
    queue.done(first)
    assert await asyncio.wait_for(second, 10) == "a"


async def test_done_of_key_not_processing_raises() -> None:
    queue: Queue[str] = Queue()
    queue.add("a")
    with pytest.raises(ValueError, match="not being processed"):
        queue.done("a")
    key = await queue.get()
    queue.done(key)
    with pytest.raises(ValueError, match="not being processed"):
        queue.done(key)


async def test_get_waits_for_add(eventually) -> None:
    queue: Queue[str] = Queue()
    getter = asyncio.ensure_future(queue.get())
    await eventually(lambda: queue.statistics().getters == 1)
    queue.add("a")
    assert await asyncio.wait_for(getter, 10) == "a"


async def test_one_add_wakes_one_getter_and_the_rest_keep_waiting(eventually) -> None:
    queue: Queue[str] = Queue()
    getters = [asyncio.ensure_future(queue.get()) for _ in range(3)]
    await eventually(lambda: queue.statistics().getters == 3)
    queue.add("a")
    await eventually(lambda: sum(g.done() for g in getters) == 1)
    await eventually(lambda: queue.statistics().getters == 2)
    queue.add("b")
    queue.add("c")
    results = await asyncio.wait_for(asyncio.gather(*getters), 10)
    assert sorted(results) == ["a", "b", "c"]


async def test_cancelled_getter_passes_its_wakeup_on(eventually) -> None:
    queue: Queue[str] = Queue()
    first = asyncio.ensure_future(queue.get())
    second = asyncio.ensure_future(queue.get())
    await eventually(lambda: queue.statistics().getters == 2)
    queue.add("a")  # wakes `first`...
    first.cancel()  # ...which is cancelled before it runs
    assert await asyncio.wait_for(second, 10) == "a"
    assert first.cancelled()
    assert queue.statistics().getters == 0


async def test_cancelled_getter_takes_nothing(eventually) -> None:
    queue: Queue[str] = Queue()
    getter = asyncio.ensure_future(queue.get())
    await eventually(lambda: queue.statistics().getters == 1)
    getter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await getter
    assert queue.statistics().getters == 0
    queue.add("a")
    assert len(queue) == 1


async def test_shutdown_lets_get_drain_then_reports_shutdown() -> None:
    queue: Queue[str] = Queue()
    queue.add("a")
    queue.add("b")
    queue.shutdown()
    assert queue.shutting_down
    queue.add("c")  # ignored
    assert await queue.get() == "a"
    assert await queue.get() == "b"
    with pytest.raises(QueueShutDown):
        await queue.get()


async def test_shutdown_wakes_waiting_getters(eventually) -> None:
    queue: Queue[str] = Queue()
    getters = [asyncio.ensure_future(queue.get()) for _ in range(2)]
    await eventually(lambda: queue.statistics().getters == 2)
    queue.shutdown()
    for getter in getters:
        with pytest.raises(QueueShutDown):
            await asyncio.wait_for(getter, 10)


async def test_dirty_key_still_runs_after_shutdown() -> None:
    queue: Queue[str] = Queue()
    queue.add("a")
    key = await queue.get()
    queue.add("a")  # added before the shutdown: must still run
    queue.shutdown()
    queue.done(key)
    assert await queue.get() == "a"
    queue.done("a")
    with pytest.raises(QueueShutDown):
        await queue.get()


async def test_async_iteration_ends_at_shutdown() -> None:
    queue: Queue[str] = Queue()
    queue.add("a")
    queue.add("b")
    queue.shutdown()
    seen = []
    async for key in queue:
        seen.append(key)
        queue.done(key)
    assert seen == ["a", "b"]


async def test_shutdown_with_drain_waits_for_in_flight_items(eventually) -> None:
    queue: Queue[str] = Queue()
    queue.add("a")
    key = await queue.get()
    drain = asyncio.ensure_future(queue.shutdown_with_drain())
    await eventually(lambda: queue.shutting_down)
    await asyncio.sleep(0)
    assert not drain.done()
    queue.done(key)
    await asyncio.wait_for(drain, 10)
    with pytest.raises(QueueShutDown):
        await queue.get()


async def test_shutdown_with_drain_waits_for_queued_and_requeued_items(eventually) -> None:
    queue: Queue[str] = Queue()
    queue.add("a")
    queue.add("b")
    held = await queue.get()
    queue.add(held)  # dirty: runs again after done
    drain = asyncio.ensure_future(queue.shutdown_with_drain())
    processed = []
    queue.done(held)
    while True:
        try:
            key = await queue.get()
        except QueueShutDown:
            break
        processed.append(key)
        assert not drain.done()
        queue.done(key)
    await asyncio.wait_for(drain, 10)
    assert processed == ["b", "a"]


async def test_shutdown_with_drain_returns_at_once_when_idle() -> None:
    queue: Queue[str] = Queue()
    await asyncio.wait_for(queue.shutdown_with_drain(), 10)


async def test_shutdown_abandons_a_drain(eventually) -> None:
    queue: Queue[str] = Queue()
    queue.add("a")
    await queue.get()
    drain = asyncio.ensure_future(queue.shutdown_with_drain())
    await eventually(lambda: queue.shutting_down)
    queue.shutdown()
    await asyncio.wait_for(drain, 10)


async def test_cancelled_drain_leaves_no_waiter(eventually) -> None:
    queue: Queue[str] = Queue()
    queue.add("a")
    key = await queue.get()
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(queue.shutdown_with_drain(), 0.01)
    assert queue._drainers == []
    queue.done(key)


def test_thread_get_blocking_and_done() -> None:
    queue: Queue[str] = Queue()
    results: list[str] = []

    def worker() -> None:
        while True:
            try:
                key = queue.get_blocking()
            except QueueShutDown:
                return
            results.append(key)
            queue.done(key)

    thread = threading.Thread(target=worker)
    thread.start()
    for key in ["a", "b", "c"]:
        queue.add(key)
    queue.shutdown_with_drain_blocking()
    thread.join(10)
    assert not thread.is_alive()
    assert results == ["a", "b", "c"]


async def test_thread_done_wakes_async_getter(eventually) -> None:
    queue: Queue[str] = Queue()
    queue.add("a")
    key = await queue.get()
    queue.add("a")
    getter = asyncio.ensure_future(queue.get())
    await eventually(lambda: queue.statistics().getters == 1)
    thread = threading.Thread(target=queue.done, args=(key,))
    thread.start()
    assert await asyncio.wait_for(getter, 10) == "a"
    thread.join(10)


async def test_async_add_wakes_thread_getter() -> None:
    queue: Queue[str] = Queue()
    result: list[str] = []
    thread = threading.Thread(target=lambda: result.append(queue.get_blocking()))
    thread.start()
    deadline = asyncio.get_running_loop().time() + 10
    while queue.statistics().getters == 0:
        assert asyncio.get_running_loop().time() < deadline
        await asyncio.sleep(0.001)
    queue.add("a")
    await asyncio.to_thread(thread.join, 10)
    assert result == ["a"]


async def test_get_blocking_refuses_to_block_the_event_loop() -> None:
    queue: Queue[str] = Queue()
    with pytest.raises(RuntimeError, match="block the event loop"):
        queue.get_blocking()
    queue.add("a")
    assert queue.get_blocking() == "a"  # a ready key never blocks


async def test_blocking_drain_refuses_to_block_the_event_loop() -> None:
    queue: Queue[str] = Queue()
    queue.add("a")
    key = await queue.get()
    with pytest.raises(RuntimeError, match="block the event loop"):
        queue.shutdown_with_drain_blocking()
    queue.done(key)
    queue.shutdown_with_drain_blocking()  # nothing left to wait for: returns


async def test_getter_on_another_loop_is_woken() -> None:
    queue: Queue[str] = Queue()
    result: list[str] = []
    started = threading.Event()

    async def other_loop_get() -> None:
        started.set()
        result.append(await queue.get())

    thread = threading.Thread(target=asyncio.run, args=(other_loop_get(),))
    thread.start()
    assert await asyncio.to_thread(started.wait, 10)
    deadline = asyncio.get_running_loop().time() + 10
    while queue.statistics().getters == 0:
        assert asyncio.get_running_loop().time() < deadline
        await asyncio.sleep(0.001)
    queue.add("a")
    await asyncio.to_thread(thread.join, 10)
    assert result == ["a"]


def test_repr_and_statistics() -> None:
    queue: Queue[str] = Queue(name="foos")
    queue.add("a")
    stats = queue.statistics()
    assert (stats.name, stats.length, stats.processing, stats.dirty) == ("foos", 1, 0, 1)
    assert "name='foos'" in repr(queue)
    assert queue.name == "foos"
