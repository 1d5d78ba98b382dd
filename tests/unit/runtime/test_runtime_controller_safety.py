"""The controller's safety rules on a FakeClock: reconcile timeout, leader fence, stuck threads,
one deadline for all sources, terminal errors, and how reconcile errors are logged.

controller-runtime's reconcile loop (pkg/internal/controller/controller.go, ``reconcileHandler``
and ``Start``) is the reference for what is not kubectrl's own addition.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from kubectrl._internal.clock import FakeClock
from kubectrl.errors import ConflictError
from kubectrl.runtime import Controller, ControllerOptions, Request, TerminalError
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


def idle(c: Controller) -> bool:
    return c.queue.statistics().processing == 0


# ------------------------------------------------------------------ defect 14: TerminalError


async def test_terminal_error_keeps_the_rate_limiter_history(clock: FakeClock) -> None:
    """controller-runtime's reconcileHandler (pkg/internal/controller/controller.go) neither
    retries nor ``Forget``s a key whose reconcile returned a TerminalError: only success and
    ``RequeueAfter`` reset the backoff. So a key that failed before keeps its failure count."""
    calls = 0

    async def rec(request: Request) -> None:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise RuntimeError("transient")
        raise TerminalError("spec is invalid")

    c = Controller("t", rec, clock=clock)
    await c.start()
    c.enqueue(R)
    await eventually(lambda: c.queue.num_requeues(R) == 1)
    deadline = clock.next_deadline()
    assert deadline is not None
    clock.set(deadline)
    await eventually(lambda: calls == 2 and idle(c))
    assert c.queue.num_requeues(R) == 1  # not forgotten
    assert clock.next_deadline() is None  # and not retried
    assert len(c.queue) == 0
    await c.stop()


# ------------------------------------------------------------------ defect 10: source sync


class NeverSyncs:
    def __init__(self, name: str, last_error: str | None = None) -> None:
        self.name = name
        self.last_sync_error = last_error

    async def start(self, enqueue: Any) -> None:
        pass

    async def wait_for_sync(self, timeout: float) -> None:
        await asyncio.Event().wait()


async def test_sources_are_waited_for_in_parallel_under_one_deadline(clock: FakeClock) -> None:
    """As controller-runtime's Controller.Start (pkg/internal/controller/controller.go) starts
    every source and waits for all of them at once, each bounded by CacheSyncTimeout: N sources
    that never sync fail after ONE timeout, and the error names every one of them."""
    foo = NeverSyncs("kind source: example.com/v1, Kind=Foo", "the server could not find it")
    bar = NeverSyncs("kind source: v1, Kind=Secret")
    c = Controller(
        "t",
        lambda r: None,
        sources=[foo, ChannelSource("ok"), bar],
        clock=clock,
        options=ControllerOptions(cache_sync_timeout=30),
    )
    task = asyncio.create_task(c.start())
    await eventually(lambda: clock.next_deadline() is not None)
    assert clock.next_deadline() == pytest.approx(clock.now() + 30)
    clock.advance(30)
    await eventually(task.done)
    with pytest.raises(SourceSyncError) as info:
        task.result()
    message = str(info.value)
    assert "Kind=Foo" in message
    assert "Kind=Secret" in message
    assert "could not find it" in message
    assert "ok" not in info.value.sources
    assert info.value.sources == (foo.name, bar.name)
    assert info.value.source == foo.name


async def test_a_failing_source_is_named_with_its_error_and_others_still_waited(
    clock: FakeClock,
) -> None:
    class Broken:
        name = "kind source: v1, Kind=Secret"

        async def start(self, enqueue: Any) -> None:
            pass

        async def wait_for_sync(self, timeout: float) -> None:
            raise PermissionError('secrets is forbidden: cannot list resource "secrets"')

    never = NeverSyncs("kind source: v1, Kind=Pod")
    c = Controller("t", lambda r: None, sources=[Broken(), never], clock=clock)
    task = asyncio.create_task(c.start())
    await eventually(lambda: clock.next_deadline() is not None)
    clock.advance(120)
    await eventually(task.done)
    with pytest.raises(SourceSyncError, match=r"Kind=Secret.*forbidden") as info:
        task.result()
    assert "Kind=Pod" in str(info.value)
    assert info.value.sources == ("kind source: v1, Kind=Secret", never.name)


# ------------------------------------------------------------------ defect 12: error logs


def reconcile_errors(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [
        r
        for r in caplog.records
        if r.name == "kubectrl.runtime.controller" and r.levelno >= logging.ERROR
    ]


async def test_api_errors_are_logged_as_one_line_without_traceback(
    clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    async def rec(request: Request) -> None:
        raise ConflictError(
            'Operation cannot be fulfilled on configmaps "a": the object has been modified',
            reason="Conflict",
            verb="update",
            resource="configmaps",
            namespace="ns",
            name="a",
        )

    c = Controller("cm", rec, clock=clock)
    await c.start()
    with caplog.at_level(logging.DEBUG, "kubectrl.runtime.controller"):
        c.enqueue(R)
        await eventually(lambda: c.queue.num_requeues(R) == 1)
    await c.stop()
    [record] = reconcile_errors(caplog)
    assert record.exc_info is None
    text = record.getMessage()
    for fact in (
        "cm",
        "ConflictError",
        "update",
        "configmaps",
        "ns/a",
        "(409)",
        "has been modified",
    ):
        assert fact in text, (fact, text)
    assert "\n" not in text
    assert record.error_reason == "Conflict"  # type: ignore[attr-defined]
    assert record.verb == "update"  # type: ignore[attr-defined]
    assert record.resource == "configmaps"  # type: ignore[attr-defined]
    assert record.object_name == "a"  # type: ignore[attr-defined]


async def test_unexpected_exceptions_keep_their_traceback(
    clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    async def rec(request: Request) -> None:
        raise KeyError("spec")

    c = Controller("cm", rec, clock=clock)
    await c.start()
    with caplog.at_level(logging.ERROR, "kubectrl.runtime.controller"):
        c.enqueue(R)
        await eventually(lambda: c.queue.num_requeues(R) == 1)
    await c.stop()
    [record] = reconcile_errors(caplog)
    assert record.exc_info is not None
    assert record.exc_info[0] is KeyError
    assert "KeyError" in record.getMessage()
    assert "ns/a" in record.getMessage()


# ------------------------------------------------------------------ defect 5: reconcile timeout


async def test_async_reconcile_timeout_cancels_counts_and_retries_with_backoff(
    clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    cancelled: list[Request] = []
    calls = 0

    async def rec(request: Request) -> None:
        nonlocal calls
        calls += 1
        if calls == 1:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                cancelled.append(request)
                raise

    other: list[Request] = []

    async def route(request: Request) -> None:
        if request.name == "other":
            other.append(request)
            return
        await rec(request)

    c = Controller("t", route, clock=clock, options=ControllerOptions(reconcile_timeout=10))
    await c.start()
    with caplog.at_level(logging.ERROR, "kubectrl.runtime.controller"):
        c.enqueue(R)
        await eventually(lambda: calls == 1 and clock.next_deadline() is not None)
        assert clock.next_deadline() == pytest.approx(clock.now() + 10)
        clock.advance(10)
        await eventually(lambda: cancelled == [R] and c.queue.num_requeues(R) == 1)
    [record] = reconcile_errors(caplog)
    assert "timed out after 10" in record.getMessage()
    assert "ns/a" in record.getMessage()
    assert record.exc_info is None
    # The one worker is free again: another key is reconciled, then the retry after backoff.
    c.enqueue(Request("ns", "other"))
    await eventually(lambda: other == [Request("ns", "other")])

    def only_the_backoff_is_due() -> bool:
        # The other reconcile's own timeout timer goes once its wrapper has returned.
        deadline = clock.next_deadline()
        return deadline is not None and deadline - clock.now() == pytest.approx(0.005)

    await eventually(only_the_backoff_is_due)
    deadline = clock.next_deadline()
    assert deadline is not None
    clock.set(deadline)
    await eventually(lambda: calls == 2 and idle(c))
    assert c.queue.num_requeues(R) == 0
    await c.stop()


async def test_timeout_is_off_by_default(clock: FakeClock) -> None:
    assert ControllerOptions().reconcile_timeout is None
    with pytest.raises(ValueError, match="reconcile_timeout"):
        ControllerOptions(reconcile_timeout=0)


async def test_sync_reconcile_timeout_frees_the_worker_but_never_runs_the_key_twice(
    clock: FakeClock,
) -> None:
    release = threading.Event()
    started = threading.Event()
    runs: list[str] = []
    lock = threading.Lock()
    active: set[Request] = set()
    overlaps: list[Request] = []

    def rec(request: Request) -> None:
        with lock:
            if request in active:
                overlaps.append(request)
            active.add(request)
            runs.append(request.name)
        try:
            if request == R and runs.count("a") == 1:
                started.set()
                release.wait(30)
        finally:
            with lock:
                active.discard(request)

    c = Controller("s", rec, clock=clock, options=ControllerOptions(reconcile_timeout=5))
    await c.start()
    try:
        c.enqueue(R)
        await eventually(started.is_set)
        await eventually(lambda: clock.next_deadline() is not None)
        clock.advance(5)
        # Timed out: counted as a failure, the worker takes other keys...
        await eventually(lambda: c.queue.num_requeues(R) == 1)
        c.enqueue(Request("ns", "b"))
        await eventually(lambda: "b" in runs)
        # ...but the key stays held while its thread still runs, whatever the backoff says.
        clock.advance(60)
        c.enqueue(R)
        for _ in range(50):
            await asyncio.sleep(0)
        assert runs.count("a") == 1
    finally:
        release.set()
    # Once the thread ends, the key is retried (with backoff) and succeeds.
    await eventually(lambda: runs.count("a") == 2 or clock.next_deadline() is not None)
    if runs.count("a") < 2:
        deadline = clock.next_deadline()
        assert deadline is not None
        clock.set(deadline)
    await eventually(lambda: runs.count("a") == 2 and idle(c))
    assert overlaps == []
    await c.stop()


# ------------------------------------------------------------------ defects 3 and 4


async def test_closed_leader_fence_starts_no_reconcile_and_keeps_the_key(
    clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    leading = True
    seen: list[Request] = []

    async def rec(request: Request) -> None:
        seen.append(request)

    c = Controller("f", rec, clock=clock, options=ControllerOptions(max_concurrent_reconciles=2))
    c.set_leader_fence(lambda: leading)
    await c.start()
    c.enqueue(Request("ns", "first"))
    await eventually(lambda: len(seen) == 1 and idle(c))
    leading = False
    with caplog.at_level(logging.WARNING, "kubectrl.runtime.controller"):
        c.enqueue(R)
        await eventually(lambda: len(c.queue) == 1 and idle(c))
        for _ in range(50):
            await asyncio.sleep(0)
    assert seen == [Request("ns", "first")]  # no reconcile started after the fence closed
    assert len(c.queue) == 1  # the key was put back, not lost
    assert c.queue.num_requeues(R) == 0  # not rate-limited
    assert clock.next_deadline() is None
    assert any("leader fence" in r.getMessage() for r in caplog.records)
    await c.stop(timeout=5)


async def test_fence_none_means_unfenced(clock: FakeClock) -> None:
    seen: list[Request] = []
    c = Controller("f", seen.append, clock=clock)
    c.set_leader_fence(None)
    await c.start()
    c.enqueue(R)
    await eventually(lambda: seen == [R])
    await c.stop()


async def test_stop_does_not_hang_on_a_stuck_sync_reconciler(
    clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    release = threading.Event()
    entered = threading.Event()
    threads: list[threading.Thread] = []

    def stuck(request: Request) -> None:
        threads.append(threading.current_thread())
        entered.set()
        release.wait()

    c = Controller("stuck", stuck, clock=clock)
    await c.start()
    try:
        c.enqueue(R)
        await eventually(entered.is_set)
        # The thread never keeps the interpreter alive at exit.
        assert threads[0].daemon
        with caplog.at_level(logging.WARNING, "kubectrl.runtime.controller"):
            stopping = asyncio.create_task(c.stop(timeout=5))
            await eventually(lambda: clock.next_deadline() is not None)
            clock.advance(5)  # the stop timeout, on the controller's clock
            await eventually(stopping.done)  # returns although the thread is still blocked
        stopping.result()
        assert threads[0].is_alive()
        assert c.in_flight == (R,)  # what a manager reports when its grace period ends
        assert any(
            "still running" in r.getMessage() and "ns/a" in r.getMessage() for r in caplog.records
        )
    finally:
        release.set()
    threads[0].join(10)
    assert not threads[0].is_alive()
    await eventually(lambda: c.in_flight == ())


async def test_starting_sources_counts_against_the_same_deadline(clock: FakeClock) -> None:
    """controller-runtime starts each source inside the CacheSyncTimeout context
    (pkg/internal/controller/controller.go, Start): a source whose start hangs (say, discovery
    of an owner kind on an unreachable server) fails within the one deadline, named, and the
    other sources start meanwhile."""

    class HangsOnStart(NeverSyncs):
        async def start(self, enqueue: Any) -> None:
            await asyncio.Event().wait()

    class Fails(NeverSyncs):
        async def start(self, enqueue: Any) -> None:
            raise LookupError("no kind 'Foo' in example.com/v1")

    hangs = HangsOnStart("kind source: v1, Kind=Pod")
    fails = Fails("kind source: example.com/v1, Kind=Foo")
    ok = ChannelSource("ok")
    c = Controller("t", lambda r: None, sources=[hangs, fails, ok], clock=clock)
    task = asyncio.create_task(c.start())
    await eventually(lambda: clock.next_deadline() is not None)
    assert clock.next_deadline() == pytest.approx(clock.now() + 120)
    clock.advance(120)
    await eventually(task.done)
    with pytest.raises(SourceSyncError) as info:
        task.result()
    assert info.value.sources == (hangs.name, fails.name)
    assert "failed to start: LookupError: no kind 'Foo'" in str(info.value)
