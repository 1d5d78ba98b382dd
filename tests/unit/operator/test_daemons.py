"""Per-object daemons: kopf's ``@kopf.daemon`` semantics, driven by a FakeClock.

Expected behaviour from kopf (nolar/kopf): ``kopf/_core/engines/daemons.py`` (spawning, the
graceful-then-forced stop, no restart after a normal exit or a permanent error) and
``docs/daemons.rst`` (filters, ``initial_delay``, ``cancellation_timeout``, the ``stopped`` flag).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

import pytest

from kubectrl import FakeClock
from kubectrl.objects import ObjectKey
from kubectrl.operator._daemons import (
    BlockingDaemonStopped,
    Daemons,
    DaemonStopped,
    PermanentError,
    TemporaryError,
)
from kubectrl.testing import eventually

from . import daemons_kit
from .daemons_kit import KIND, StandInOperator, asleep_until, obj, until

# The kit's fixtures (kept out of conftest.py, which the operator's handler tests own).
clock = daemons_kit.clock
operator = daemons_kit.operator
daemons = daemons_kit.daemons

KEY = ObjectKey("ns", "one")


async def test_one_daemon_per_object_however_often_it_is_seen(daemons: Daemons) -> None:
    """kopf spawns a daemon once per object and handler (``spawn_daemons`` skips running ids)."""
    started: list[str] = []

    @daemons.daemon(KIND)
    async def watch(name: str, stopped: DaemonStopped, **_: Any) -> None:
        started.append(name)
        await stopped.wait()

    for rv in ("1", "2", "3"):
        await daemons.seen(KIND, obj("one", rv=rv))
        await daemons.seen(KIND, obj("two", rv=rv))
    await until(lambda: len(started) == 2)
    assert sorted(started) == ["one", "two"]
    assert len(daemons.running()) == 2


async def test_deletion_sets_stopped_and_gone_answers_true_once_it_ended(
    daemons: Daemons,
) -> None:
    """Deletion sets ``stopped`` first (kopf's ``stop_daemon``); a daemon that watches it ends."""
    reasons: list[str | None] = []

    @daemons.daemon(KIND)
    async def watch(stopped: DaemonStopped, **_: Any) -> None:
        while not stopped:
            await stopped.wait(10)
        reasons.append(stopped.reason)

    await daemons.seen(KIND, obj())
    await until(lambda: daemons.running())
    assert await daemons.gone(KIND, KEY, obj()) is True
    assert reasons == ["deleted"]
    assert daemons.running() == []


async def test_a_daemon_that_ignores_stopped_is_cancelled_after_its_backoff(
    daemons: Daemons, clock: FakeClock
) -> None:
    """``cancellation_backoff`` then ``cancellation_timeout``: stopped set, that long on the
    clock, then cancelled (``docs/daemons.rst``, Termination: graceful, then forced);
    ``gone`` stays ``False`` until the task has ended."""
    cancelled: list[bool] = []

    @daemons.daemon(KIND, cancellation_backoff=5, cancellation_timeout=1)
    async def stubborn(**_: Any) -> None:
        try:
            while True:
                await clock.sleep(1000)
        except asyncio.CancelledError:
            cancelled.append(True)
            raise

    await daemons.seen(KIND, obj())
    await asleep_until(clock, clock.now() + 1000)
    now = clock.now()
    assert await daemons.gone(KIND, KEY, obj()) is False
    await asleep_until(clock, now + 5)
    clock.advance(4.9)
    assert await daemons.gone(KIND, KEY, obj()) is False
    assert cancelled == []
    clock.advance(0.1)
    await until(lambda: cancelled)
    assert await daemons.gone(KIND, KEY, obj()) is True
    assert daemons.running() == []


async def test_a_daemon_that_survives_its_cancellation_is_abandoned(
    daemons: Daemons, clock: FakeClock
) -> None:
    """Stage 3a of ``docs/daemons.rst``: cancelled at once (no backoff), still running
    ``cancellation_timeout`` later, it is abandoned: ``gone`` answers ``True`` (the finalizer
    goes) and ``running()`` still shows the task, which nobody pretends has ended."""
    release = asyncio.Event()

    @daemons.daemon(KIND, cancellation_timeout=2)
    async def deaf(**_: Any) -> None:
        while not release.is_set():
            with contextlib.suppress(asyncio.CancelledError):
                await release.wait()

    try:
        await daemons.seen(KIND, obj())
        await until(lambda: len(daemons.running()) == 1)
        now = clock.now()
        assert await daemons.gone(KIND, KEY, obj()) is False  # cancelled, given 2 s
        await asleep_until(clock, now + 2)
        clock.advance(2)

        async def released() -> bool:  # abandoned: the object is let go
            return await daemons.gone(KIND, KEY, obj())

        await eventually(released, 5.0, interval=0.001)
        assert len(daemons.running()) == 1  # and the task is not pretended gone
    finally:
        release.set()
    await until(lambda: daemons.running() == [])


async def test_without_cancellation_timeout_it_is_never_cancelled(
    daemons: Daemons, clock: FakeClock
) -> None:
    """No ``cancellation_timeout``: kopf waits for the daemon (and keeps the finalizer)."""
    release = asyncio.Event()

    @daemons.daemon(KIND)
    async def slow(stopped: DaemonStopped, **_: Any) -> None:
        await release.wait()

    await daemons.seen(KIND, obj())
    await until(lambda: daemons.running())
    assert await daemons.gone(KIND, KEY, obj()) is False
    clock.advance(3600)
    assert await daemons.gone(KIND, KEY, obj()) is False
    release.set()
    await until(lambda: not daemons.running())
    assert await daemons.gone(KIND, KEY, obj()) is True


async def test_a_failing_daemon_is_restarted_after_its_backoff(
    daemons: Daemons, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    """An arbitrary error: called again after ``backoff`` with ``retry`` counting up; one log
    line per failure (kopf's ``ErrorsMode.TEMPORARY``, the default)."""
    retries: list[int] = []

    @daemons.daemon(KIND, backoff=10)
    async def flaky(retry: int, stopped: DaemonStopped, **_: Any) -> None:
        retries.append(retry)
        if retry < 2:
            raise RuntimeError(f"boom {retry}")
        await stopped.wait()

    caplog.set_level(logging.WARNING, logger="kubectrl.operator.daemons")
    start = clock.now()
    await daemons.seen(KIND, obj())
    await asleep_until(clock, start + 10)
    clock.advance(9.9)
    await daemons.seen(KIND, obj(rv="2"))  # a change does not restart it early
    await asyncio.sleep(0)
    assert retries == [0]
    clock.advance(0.1)
    await asleep_until(clock, start + 20)
    assert retries == [0, 1]
    clock.advance(10)
    await until(lambda: retries == [0, 1, 2])
    failures = [r for r in caplog.records if "failed" in r.getMessage()]
    assert [r.getMessage().split(": ", 1)[1] for r in failures] == [
        "RuntimeError('boom 0'); again in 10 s",
        "RuntimeError('boom 1'); again in 10 s",
    ]
    assert [getattr(r, "retry", None) for r in failures] == [0, 1]
    assert len(daemons.running()) == 1


async def test_temporary_error_delay_wins_over_backoff(daemons: Daemons, clock: FakeClock) -> None:
    """``TemporaryError(delay=...)`` sets the next attempt (kopf ``docs/daemons.rst``,
    Restarting)."""
    calls: list[float] = []

    @daemons.daemon(KIND, backoff=100)
    async def again(retry: int, stopped: DaemonStopped, **_: Any) -> None:
        calls.append(clock.now())
        if retry == 0:
            raise TemporaryError("later", delay=3)
        await stopped.wait()

    start = clock.now()
    await daemons.seen(KIND, obj())
    await asleep_until(clock, start + 3)
    clock.advance(3)
    await until(lambda: len(calls) == 2)
    assert calls == [start, start + 3]


async def test_permanent_error_and_normal_return_end_it_for_the_object(
    daemons: Daemons, clock: FakeClock
) -> None:
    """A permanent error or a normal return: not restarted while the object lives here
    (kopf's ``forever_stopped``), however often the object is seen again."""
    calls: list[str] = []

    @daemons.daemon(KIND)
    async def fatal(**_: Any) -> None:
        calls.append("fatal")
        raise PermanentError("no")

    @daemons.daemon(KIND)
    async def once(**_: Any) -> None:
        calls.append("once")

    await daemons.seen(KIND, obj())
    await until(lambda: not daemons.running() and len(calls) == 2)
    for rv in ("2", "3"):
        await daemons.seen(KIND, obj(rv=rv))
    clock.advance(3600)
    await asyncio.sleep(0)
    assert sorted(calls) == ["fatal", "once"]
    assert daemons.running() == []


async def test_retries_run_out(daemons: Daemons, clock: FakeClock) -> None:
    """``retries``: after that many failures it gives up (kopf's ``HandlerRetriesError``)."""
    calls: list[int] = []

    @daemons.daemon(KIND, backoff=1, retries=2)
    async def flaky(retry: int, **_: Any) -> None:
        calls.append(retry)
        raise RuntimeError("always")

    await daemons.seen(KIND, obj())
    for _ in range(5):
        await asyncio.sleep(0)
        clock.advance(1)
    await until(lambda: not daemons.running())
    assert calls == [0, 1, 2]


async def test_stop_stops_every_daemon_and_starts_none_after(
    daemons: Daemons, clock: FakeClock
) -> None:
    """Operator shutdown or lost leadership: every daemon gets ``stopped`` and ``stop()``
    returns with none running (kopf stops daemons on exit and on pausing)."""
    reasons: list[str | None] = []

    @daemons.daemon(KIND, cancellation_backoff=1, cancellation_timeout=1)
    async def watch(stopped: DaemonStopped, **_: Any) -> None:
        await stopped.wait()
        reasons.append(stopped.reason)

    @daemons.daemon(KIND, cancellation_backoff=1, cancellation_timeout=1)
    async def stubborn(**_: Any) -> None:
        await asyncio.Event().wait()

    for name in ("one", "two", "three"):
        await daemons.seen(KIND, obj(name))
    await until(lambda: len(daemons.running()) == 6)
    stopping = asyncio.ensure_future(daemons.stop())
    await until(lambda: len(reasons) == 3)
    assert not stopping.done()  # the stubborn ones wait out their cancellation timeout
    clock.advance(1)
    await stopping
    assert reasons == ["operator stopping"] * 3
    assert daemons.running() == []
    await daemons.seen(KIND, obj("four"))
    assert daemons.running() == []


async def test_initial_delay(daemons: Daemons, clock: FakeClock) -> None:
    """``initial_delay``: the first call waits that long (kopf ``docs/daemons.rst``,
    Postponing); a callable gets the handler arguments."""
    calls: list[float] = []

    @daemons.daemon(KIND, initial_delay=lambda spec, **_: spec["delay"])
    async def late(stopped: DaemonStopped, **_: Any) -> None:
        calls.append(clock.now())
        await stopped.wait()

    start = clock.now()
    await daemons.seen(KIND, obj(spec={"delay": 30}))
    await asleep_until(clock, start + 30)
    clock.advance(29.9)
    await asyncio.sleep(0)
    assert calls == []
    clock.advance(0.1)
    await until(lambda: calls == [start + 30])


async def test_filters_start_and_stop_it(daemons: Daemons) -> None:
    """Labels, annotations and ``when``: a daemon runs only while they match, is stopped when
    they no longer do, and starts again once they match (kopf ``docs/daemons.rst``,
    Filtering)."""
    events: list[str] = []

    @daemons.daemon(
        KIND,
        labels={"watch": "yes", "skip": False},
        annotations={"owner": True},
        when=lambda spec, **_: spec.get("on", True),
    )
    async def watch(stopped: DaemonStopped, **_: Any) -> None:
        events.append("start")
        await stopped.wait()
        events.append(f"stop: {stopped.reason}")

    ann = {"owner": "me"}
    await daemons.seen(KIND, obj("a", labels={"watch": "no"}, annotations=ann))
    await daemons.seen(KIND, obj("b", labels={"watch": "yes", "skip": "1"}, annotations=ann))
    await daemons.seen(KIND, obj("c", labels={"watch": "yes"}))
    await daemons.seen(KIND, obj("d", labels={"watch": "yes"}, annotations=ann, spec={"on": 0}))
    assert daemons.running() == []
    await daemons.seen(KIND, obj("e", labels={"watch": "yes"}, annotations=ann))
    await until(lambda: events == ["start"])
    await daemons.seen(KIND, obj("e", rv="2", labels={"watch": "no"}, annotations=ann))
    await until(lambda: events == ["start", "stop: filters no longer match"])
    await until(lambda: not daemons.running())
    await daemons.seen(KIND, obj("e", rv="3", labels={"watch": "yes"}, annotations=ann))
    await until(lambda: events[-1] == "start" and len(daemons.running()) == 1)


async def test_needs_finalizer_only_when_asked(operator: StandInOperator) -> None:
    """``requires_finalizer=True`` holds deletion until the daemon stopped (kopf
    ``docs/daemons.rst``, Deletion prevention); without it, no finalizer."""
    daemons = Daemons(operator)

    @daemons.daemon(KIND, labels={"hold": "yes"}, requires_finalizer=True)
    async def holding(stopped: DaemonStopped, **_: Any) -> None:
        await stopped.wait()

    @daemons.daemon(KIND)
    async def free(stopped: DaemonStopped, **_: Any) -> None:
        await stopped.wait()

    assert daemons.needs_finalizer(KIND, obj(labels={"hold": "yes"})) is True
    assert daemons.needs_finalizer(KIND, obj(labels={"hold": "no"})) is False
    assert daemons.needs_finalizer(("v1", "ConfigMap"), obj()) is False
    assert daemons.kinds() == {KIND}


async def test_a_sync_daemon_runs_in_a_thread_and_stops_on_stopped(
    daemons: Daemons, clock: FakeClock
) -> None:
    """A ``def`` daemon gets a blocking ``stopped`` (kopf gives sync daemons a sync flag);
    its ``wait`` wakes on the FakeClock and on stop."""
    ticks: list[float] = []

    @daemons.daemon(KIND)
    def poll(stopped: BlockingDaemonStopped, **_: Any) -> None:
        while not stopped:
            ticks.append(clock.now())
            stopped.wait(10)

    start = clock.now()
    await daemons.seen(KIND, obj())
    await asleep_until(clock, start + 10)
    clock.advance(10)
    await until(lambda: len(ticks) == 2)
    assert ticks == [start, start + 10]
    await until(lambda: daemons.gone(KIND, KEY, obj()))
    assert daemons.running() == []


async def test_handler_arguments_are_live_and_patches_are_written(
    daemons: Daemons, operator: StandInOperator
) -> None:
    """kopf gives daemons live views of the object; ``patch`` is written after each call and
    a returned value lands in ``status.<id>`` (``docs/daemons.rst``, Results delivery)."""
    seen_fields: list[Any] = []
    proceed = asyncio.Event()

    @daemons.daemon(KIND, id="watcher")
    async def watch(
        spec: Any, name: str, namespace: str, memo: Any, patch: dict[str, Any], **_: Any
    ) -> str:
        seen_fields.append(spec["field"])
        await proceed.wait()
        seen_fields.append(spec["field"])
        memo.visited = True
        patch["metadata"] = {"labels": {"seen": "yes"}}
        return f"{namespace}/{name}"

    await daemons.seen(KIND, obj(spec={"field": 1}))
    await until(lambda: seen_fields == [1])
    await daemons.seen(KIND, obj(rv="2", spec={"field": 2}))
    proceed.set()
    await until(lambda: operator.client.status_patches)
    assert seen_fields == [1, 2]
    assert operator.client.patches == [
        (KIND, "one", {"metadata": {"labels": {"seen": "yes"}}}, {"namespace": "ns"})
    ]
    assert operator.client.status_patches == [
        (KIND, "one", {"status": {"watcher": "ns/one"}}, {"namespace": "ns"})
    ]


async def test_a_new_object_with_the_same_name_gets_fresh_daemons(daemons: Daemons) -> None:
    """Another uid under the same name is another object: the old daemon ends first."""
    uids: list[str] = []

    @daemons.daemon(KIND)
    async def watch(uid: str, stopped: DaemonStopped, **_: Any) -> None:
        uids.append(uid)
        await stopped.wait()

    await daemons.seen(KIND, obj(uid="first"))
    await until(lambda: uids == ["first"])
    await daemons.seen(KIND, obj(rv="9", uid="second"))
    await until(lambda: uids == ["first", "second"])
    assert len(daemons.running()) == 1


@pytest.mark.parametrize(
    ("options", "error", "names"),
    [
        ({"backoff": -1}, ValueError, "backoff"),
        ({"cancellation_timeout": "5"}, TypeError, "cancellation_timeout"),
        ({"retries": 1.5}, ValueError, "retries"),
        ({"labels": {"a": 1}}, TypeError, "labels['a']"),
        ({"when": "yes"}, TypeError, "when"),
    ],
)
def test_bad_options_are_refused_by_name(
    operator: StandInOperator, options: dict[str, Any], error: type[Exception], names: str
) -> None:
    daemons = Daemons(operator)
    with pytest.raises(error, match=__import__("re").escape(names)):
        daemons.daemon(KIND, **options)


def test_bad_kind_and_duplicate_ids_are_refused(operator: StandInOperator) -> None:
    daemons = Daemons(operator)
    with pytest.raises(TypeError, match="apiVersion, kind"):
        daemons.daemon("Monitor")  # type: ignore[arg-type]

    @daemons.daemon(KIND, id="same")
    async def first(**_: Any) -> None: ...

    with pytest.raises(ValueError, match="'same' is already registered"):

        @daemons.daemon(KIND, id="same")
        async def second(**_: Any) -> None: ...


async def test_an_object_deleted_without_a_finalizer_is_forgotten_once_its_daemons_end(
    daemons: Daemons,
) -> None:
    """Without a finalizer ``gone`` is asked once (the object is already gone): what it
    remembers of the object goes when the last daemon ends, not never."""
    release = asyncio.Event()

    @daemons.daemon(KIND)
    async def slow(**_: Any) -> None:
        await release.wait()

    await daemons.seen(KIND, obj())
    await until(lambda: daemons.running())
    assert await daemons.gone(KIND, KEY, None) is False
    release.set()
    await until(lambda: not daemons.running())
    assert daemons._objects == {}  # the memory itself


async def test_daemons_share_the_operators_memo_for_the_object(operator: StandInOperator) -> None:
    """kopf passes one ``memo`` per object to all its handlers and daemons; with an operator
    that keeps them (``memo_for``), daemons get that one."""
    memos: dict[Any, Any] = {}

    def memo_for(kind: Any, key: ObjectKey) -> Any:
        return memos.setdefault((kind, key), __import__("types").SimpleNamespace(seen=[]))

    operator.memo_for = memo_for  # type: ignore[attr-defined]
    daemons = Daemons(operator)

    @daemons.daemon(KIND)
    async def note(memo: Any, **_: Any) -> None:
        memo.seen.append("daemon")

    await daemons.seen(KIND, obj())
    await until(lambda: memos[(KIND, KEY)].seen == ["daemon"])
    await daemons.stop()
