"""The controller's worker loop on a FakeClock: outcomes, backoff, concurrency, sync, stop."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from kubectrl._internal.clock import FakeClock
from kubectrl.runtime import (
    Controller,
    ControllerOptions,
    Reconciler,
    Request,
    Result,
    TerminalError,
    current_reconcile,
    reconcile_func,
)
from kubectrl.runtime.source import ChannelSource, SourceSyncError

R = Request("ns", "a")


async def eventually(cond: Callable[[], bool], timeout: float = 10.0) -> None:
    end = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < end, "condition not reached"
        await asyncio.sleep(0.001)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


class Counting:
    def __init__(self, outcome: Callable[[int], Any] = lambda n: None) -> None:
        self.calls: list[Request] = []
        self.outcome = outcome

    async def __call__(self, request: Request) -> Result | None:
        self.calls.append(request)
        result: Result | None = self.outcome(len(self.calls))
        return result


async def started(controller: Controller) -> Controller:
    await controller.start()
    return controller


async def test_success_forgets_and_reconciles_once(clock: FakeClock) -> None:
    rec = Counting()
    c = await started(Controller("t", rec, clock=clock))
    c.enqueue(R)
    c.enqueue(R)
    await eventually(lambda: len(rec.calls) == 1)
    await eventually(lambda: c.queue.statistics().processing == 0)
    assert c.queue.num_requeues(R) == 0
    await c.stop()
    assert rec.calls == [R]


async def test_errors_requeue_with_growing_backoff_and_never_kill_the_worker(
    clock: FakeClock,
) -> None:
    def outcome(n: int) -> None:
        if n <= 4:
            raise RuntimeError(f"fail {n}")

    rec = Counting(outcome)
    c = await started(Controller("t", rec, clock=clock))
    c.enqueue(R)
    delays = []
    for n in range(1, 5):
        await eventually(lambda n=n: len(rec.calls) == n and c.queue.num_requeues(R) == n)
        await eventually(lambda: clock.next_deadline() is not None)
        deadline = clock.next_deadline()
        assert deadline is not None
        delays.append(round(deadline - clock.now(), 6))
        clock.set(deadline)
    # Per-key exponential backoff: 5 ms doubling.
    assert delays == [0.005, 0.01, 0.02, 0.04]
    await eventually(lambda: len(rec.calls) == 5)
    await eventually(lambda: c.queue.num_requeues(R) == 0)  # success forgets
    await c.stop()


async def test_terminal_error_is_not_retried(clock: FakeClock) -> None:
    def outcome(n: int) -> None:
        raise TerminalError("bad spec")

    rec = Counting(outcome)
    c = await started(Controller("t", rec, clock=clock))
    c.enqueue(R)
    await eventually(lambda: len(rec.calls) == 1)
    await eventually(lambda: c.queue.statistics().processing == 0)
    assert clock.next_deadline() is None
    assert c.queue.num_requeues(R) == 0
    assert len(c.queue) == 0
    await c.stop()


async def test_requeue_after_forgets_and_brings_the_key_back(clock: FakeClock) -> None:
    rec = Counting(lambda n: Result(requeue_after=30) if n == 1 else None)
    c = await started(Controller("t", rec, clock=clock))
    c.enqueue(R)
    await eventually(lambda: clock.next_deadline() is not None)
    assert clock.next_deadline() == pytest.approx(clock.now() + 30)
    assert c.queue.num_requeues(R) == 0
    clock.advance(30)
    await eventually(lambda: len(rec.calls) == 2)
    await c.stop()


async def test_requeue_true_is_rate_limited(clock: FakeClock) -> None:
    rec = Counting(lambda n: Result(requeue=True) if n < 3 else None)
    c = await started(Controller("t", rec, clock=clock))
    c.enqueue(R)
    await eventually(lambda: c.queue.num_requeues(R) == 1)
    clock.advance(0.005)
    await eventually(lambda: c.queue.num_requeues(R) == 2)
    clock.advance(0.01)
    await eventually(lambda: len(rec.calls) == 3)
    await eventually(lambda: c.queue.num_requeues(R) == 0)
    await c.stop()


async def test_requeue_after_carried_by_an_error_is_ignored_with_a_warning(
    clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    class WithResultError(Exception):
        result = Result(requeue_after=60)

    def outcome(n: int) -> None:
        raise WithResultError("x")

    rec = Counting(outcome)
    c = await started(Controller("t", rec, clock=clock))
    with caplog.at_level(logging.WARNING, "kubectrl.runtime.controller"):
        c.enqueue(R)
        await eventually(lambda: c.queue.num_requeues(R) == 1)
    assert any("requeue_after is ignored" in r.message for r in caplog.records)
    deadline = clock.next_deadline()
    assert deadline is not None
    assert deadline - clock.now() == pytest.approx(0.005)  # backoff, not 60 s
    await c.stop()


async def test_sync_reconciler_runs_in_a_worker_thread(clock: FakeClock) -> None:
    threads: list[str] = []
    infos: list[Any] = []

    class Sync(Reconciler):
        def reconcile(self, request: Request) -> Result | None:
            threads.append(threading.current_thread().name)
            infos.append(current_reconcile())
            return None

    c = await started(Controller("sync", Sync(), clock=clock))
    c.enqueue(R)
    await eventually(lambda: len(threads) == 1)
    assert threads[0].startswith("reconcile-sync")
    assert infos[0].request == R
    assert infos[0].controller == "sync"
    await c.stop()


async def test_plain_sync_function_and_reconcile_func(clock: FakeClock) -> None:
    seen: list[Request] = []
    c = await started(Controller("f", seen.append, clock=clock))
    c.enqueue(R)
    await eventually(lambda: seen == [R])
    await c.stop()

    @reconcile_func
    async def rec(request: Request) -> None:
        seen.append(request)

    c2 = await started(Controller("g", rec, clock=clock))
    c2.enqueue(Request("ns", "b"))
    await eventually(lambda: len(seen) == 2)
    await c2.stop()


async def test_no_key_is_reconciled_concurrently_with_four_workers() -> None:
    active: set[Request] = set()
    overlaps: list[Request] = []
    count = 0
    max_parallel = 0

    async def rec(request: Request) -> None:
        nonlocal count, max_parallel
        if request in active:
            overlaps.append(request)
        active.add(request)
        max_parallel = max(max_parallel, len(active))
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        active.discard(request)
        count += 1

    c = await started(
        Controller("par", rec, options=ControllerOptions(max_concurrent_reconciles=4))
    )
    keys = [Request("ns", f"k{i}") for i in range(50)]
    for _ in range(20):
        for k in keys:
            c.enqueue(k)
        await asyncio.sleep(0)
    await eventually(lambda: len(c.queue) == 0 and c.queue.statistics().processing == 0)
    await c.stop()
    assert overlaps == []
    assert max_parallel > 1  # the workers did run in parallel


async def test_waits_for_sources_and_names_the_failing_one(clock: FakeClock) -> None:
    class Broken:
        name = "kind source: v1, Kind=Secret"

        async def start(self, enqueue: Any) -> None:
            pass

        async def wait_for_sync(self, timeout: float) -> None:
            raise PermissionError('secrets is forbidden: cannot list resource "secrets"')

    c = Controller("t", Counting(), sources=[ChannelSource(), Broken()], clock=clock)
    with pytest.raises(
        SourceSyncError, match=r"did not sync.*Kind=Secret: PermissionError: .*forbidden"
    ) as info:
        await c.start()
    assert info.value.source == "kind source: v1, Kind=Secret"


async def test_sync_timeout_uses_the_clock_and_names_the_source(clock: FakeClock) -> None:
    class Never:
        name = "kind source: example.com/v1, Kind=Foo"
        last_sync_error = "the server could not find the requested resource"

        async def start(self, enqueue: Any) -> None:
            pass

        async def wait_for_sync(self, timeout: float) -> None:
            await asyncio.Event().wait()

    c = Controller("t", Counting(), sources=[Never()], clock=clock, options=ControllerOptions())
    task = asyncio.create_task(c.start())
    await eventually(lambda: clock.next_deadline() is not None)
    assert clock.next_deadline() == pytest.approx(clock.now() + 120)  # default 2 min
    clock.advance(120)
    with pytest.raises(SourceSyncError, match=r"within 120 s.*Kind=Foo: timed out.*could not find"):
        await task


async def test_channel_source_delivers_backlog_and_later_events(clock: FakeClock) -> None:
    rec = Counting()
    src = ChannelSource("ext")
    src.send({"metadata": {"namespace": "ns", "name": "early"}})
    c = await started(Controller("t", rec, sources=[src], clock=clock))
    src.send({"metadata": {"namespace": "ns", "name": "late"}})
    await eventually(lambda: len(rec.calls) == 2)
    assert {r.name for r in rec.calls} == {"early", "late"}
    await c.stop()


async def test_stop_lets_in_flight_reconciles_finish_and_skips_queued(clock: FakeClock) -> None:
    gate = asyncio.Event()
    finished: list[Request] = []

    async def slow(request: Request) -> None:
        await gate.wait()
        finished.append(request)

    c = await started(Controller("t", slow, clock=clock))
    c.enqueue(Request("ns", "first"))
    await eventually(lambda: c.queue.statistics().processing == 1)
    c.enqueue(Request("ns", "queued"))
    stopping = asyncio.create_task(c.stop(timeout=30))
    await asyncio.sleep(0)
    assert not stopping.done()
    gate.set()
    await stopping
    assert finished == [Request("ns", "first")]


async def test_stop_timeout_cancels_stuck_async_reconciles(clock: FakeClock) -> None:
    async def stuck(request: Request) -> None:
        await asyncio.Event().wait()

    c = await started(Controller("t", stuck, clock=clock))
    c.enqueue(R)
    await eventually(lambda: c.queue.statistics().processing == 1)
    stopping = asyncio.create_task(c.stop(timeout=5))
    await eventually(lambda: clock.next_deadline() is not None)
    clock.advance(5)
    await stopping


async def test_run_is_start_then_wait_and_cancel_stops(clock: FakeClock) -> None:
    rec = Counting()
    c = Controller("t", rec, clock=clock)
    task = asyncio.create_task(c.run())
    await eventually(lambda: bool(c._workers))
    c.enqueue(R)
    await eventually(lambda: len(rec.calls) == 1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert c.queue.shutting_down


async def test_each_reconcile_logs_structured_fields(
    clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    def outcome(n: int) -> None:
        raise RuntimeError("boom")

    c = await started(Controller("logs", Counting(outcome), clock=clock))
    with caplog.at_level(logging.DEBUG, "kubectrl.runtime.controller"):
        c.enqueue(R)
        await eventually(lambda: c.queue.num_requeues(R) == 1)
    records = [r for r in caplog.records if getattr(r, "reconcile_id", None)]
    assert {r.getMessage().split(":")[0] for r in records} >= {
        "Reconciling ns/a",
        "Reconciler error",
    }
    for r in records:
        assert r.controller == "logs"  # type: ignore[attr-defined]
        assert r.namespace == "ns"  # type: ignore[attr-defined]
        assert r.object_name == "a"  # type: ignore[attr-defined]
    assert len({r.reconcile_id for r in records}) == 1  # type: ignore[attr-defined]
    await c.stop()


async def test_metrics_have_controller_runtime_names(clock: FakeClock) -> None:
    prometheus_client = pytest.importorskip("prometheus_client")
    registry = prometheus_client.CollectorRegistry()

    def outcome(n: int) -> Result | None:
        if n == 1:
            raise RuntimeError("x")
        if n == 2:
            raise TerminalError("y")
        if n == 3:
            return Result(requeue_after=5)
        if n == 4:
            return Result(requeue=True)
        return None

    rec = Counting(outcome)
    c = Controller(
        "m",
        rec,
        clock=clock,
        registry=registry,
        options=ControllerOptions(max_concurrent_reconciles=3),
    )
    await c.start()
    for i in range(5):
        c.enqueue(Request("ns", f"k{i}"))
    await eventually(lambda: len(rec.calls) == 5 and c.queue.statistics().processing == 0)

    def value(name: str, **labels: str) -> float | None:
        return registry.get_sample_value(name, {"controller": "m", **labels})

    assert value("controller_runtime_reconcile_total", result="success") == 1
    assert value("controller_runtime_reconcile_total", result="error") == 2
    assert value("controller_runtime_reconcile_total", result="requeue_after") == 1
    assert value("controller_runtime_reconcile_total", result="requeue") == 1
    assert value("controller_runtime_reconcile_errors_total") == 2
    assert value("controller_runtime_terminal_reconcile_errors_total") == 1
    assert value("controller_runtime_reconcile_panics_total") == 0
    assert value("controller_runtime_reconcile_time_seconds_count") == 5
    assert value("controller_runtime_max_concurrent_reconciles") == 3
    assert value("controller_runtime_active_workers") == 0
    assert registry.get_sample_value("workqueue_adds_total", {"name": "m", "controller": "m"}) == 5
    await c.stop()


def test_options_validation() -> None:
    with pytest.raises(ValueError, match="max_concurrent"):
        ControllerOptions(max_concurrent_reconciles=0)
    with pytest.raises(ValueError, match="name"):
        Controller("", lambda r: None)
    with pytest.raises(TypeError):
        Controller("x", object())  # type: ignore[arg-type]
