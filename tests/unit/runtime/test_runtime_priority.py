"""The controller's priority queue: initial-list and unchanged events go to the back, a
Result's priority is the requeue's (controller-runtime v0.23's default queue)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from kubectrl._internal.clock import FakeClock
from kubectrl.runtime import Controller, Request, Result
from kubectrl.runtime._reconcile import low_priority
from kubectrl.runtime.source import KindSource
from kubectrl.workqueue._priority import LOW_PRIORITY


class CapturingInformer:
    last_error = None

    def __init__(self) -> None:
        self.handlers: dict[str, Any] = {}

    def add_handler(self, **kwargs: Any) -> Any:
        self.handlers = kwargs
        return object()

    def start(self) -> None:
        pass


class Factory:
    def __init__(self) -> None:
        self.clock = FakeClock()
        self.client = None
        self.made = CapturingInformer()

    def informer(self, *_: Any, **__: Any) -> CapturingInformer:
        return self.made


def cm(name: str, rv: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "ns", "resourceVersion": rv}}


async def start_source(controller: Controller) -> CapturingInformer:
    factory = Factory()
    source = KindSource(factory, ("v1", "ConfigMap"))  # type: ignore[arg-type]
    await source.start(controller._enqueue)
    return factory.made


async def test_initial_list_and_resyncs_queue_behind_fresh_changes() -> None:
    controller = Controller("prio", lambda r: None, clock=FakeClock())
    informer = await start_source(controller)
    on_add, on_update = informer.handlers["on_add"], informer.handlers["on_update"]
    for i in range(1000):
        on_add(cm(f"old-{i}", "5"), True)
    on_update(cm("resynced", "7"), cm("resynced", "7"))
    on_update(cm("changed", "7"), cm("changed", "8"))
    on_add(cm("new", "9"), False)
    queue = controller.queue
    assert queue.priority_of(Request("ns", "old-0")) == LOW_PRIORITY
    assert queue.priority_of(Request("ns", "resynced")) == LOW_PRIORITY
    first = [queue.get_blocking() for _ in range(3)]
    assert first == [Request("ns", "changed"), Request("ns", "new"), Request("ns", "old-0")]


async def test_fifo_when_low_priority_is_off() -> None:
    from kubectrl.runtime import ControllerOptions

    options = ControllerOptions(low_priority_when_unchanged=False)
    controller = Controller("fifo", lambda r: None, options=options, clock=FakeClock())
    informer = await start_source(controller)
    informer.handlers["on_add"](cm("old", "1"), True)
    informer.handlers["on_add"](cm("new", "2"), False)
    assert controller.queue.get_blocking() == Request("ns", "old")


async def test_a_result_priority_is_the_requeue_priority() -> None:
    clock = FakeClock()
    seen: list[str] = []
    release = asyncio.Event()
    finished = asyncio.Event()

    async def reconcile(request: Request) -> Result | None:
        seen.append(request.name)
        if request.name == "again" and seen.count("again") == 1:
            return Result(requeue_after=10, priority=5)
        if request.name == "blocker":
            await release.wait()
        if len(seen) == 4:
            finished.set()
        return None

    controller = Controller("result-prio", reconcile, clock=clock)
    queue = controller.queue
    await controller.start()
    try:
        queue.add(Request("ns", "again"))
        await asyncio.wait_for(_until(lambda: clock.next_deadline() is not None), 10)
        queue.add(Request("ns", "blocker"))
        await asyncio.wait_for(_until(lambda: "blocker" in seen), 10)
        queue.add(Request("ns", "low"), LOW_PRIORITY)
        clock.advance(10)  # "again" is ready now, at priority 5, behind "low" in time
        assert queue.priority_of(Request("ns", "again")) == 5
        release.set()
        await asyncio.wait_for(finished.wait(), 10)
    finally:
        await controller.stop()
    assert seen == ["again", "blocker", "again", "low"]


async def _until(cond: Any, timeout: float = 10.0) -> None:
    end = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < end, "condition not reached"
        await asyncio.sleep(0.001)


def test_result_priority_must_be_an_int() -> None:
    assert Result(requeue=True, priority=-3).priority == -3
    with pytest.raises(TypeError, match="priority must be an int or None, got 'high'"):
        Result(requeue=True, priority="high")  # type: ignore[arg-type]


def test_low_priority_of_a_plain_function_is_itself() -> None:
    def plain(r: Request) -> None:
        pass

    assert low_priority(plain) is plain
