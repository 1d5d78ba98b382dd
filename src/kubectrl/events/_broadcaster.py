"""The event broadcaster: a bounded queue and one writer task that correlates and writes.

client-go's shape, kept deliberately: recording an event never blocks and never fails (a
controller must not stall because the Event API is slow), so events go into a queue of 1000 and
are dropped, with a log line, when it is full. One writer task takes them in order, runs the
:class:`EventCorrelator` and writes through an :class:`EventSink`, retrying a failed write up to
12 times, 10 s apart (the first wait randomised so that many processes do not retry in step).
"""

from __future__ import annotations

import asyncio
import collections
import logging
import random
import socket
import threading
from collections.abc import Awaitable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from kubectrl._internal.aio import call_in_loop
from kubectrl._internal.clock import Clock, RealClock
from kubectrl.errors import KubectrlError, NotFoundError
from kubectrl.events._correlator import CorrelationResult, CorrelatorOptions, EventCorrelator
from kubectrl.events._recorder import CORE_V1, EVENTS_V1, EventRecorder
from kubectrl.events._series import SeriesCorrelator

if TYPE_CHECKING:
    from kubectrl.client import AsyncClient

__all__ = ["ClientEventSink", "EventBroadcaster", "EventSink"]

log = logging.getLogger("kubectrl.events")

EVENT = ("v1", "Event")


@runtime_checkable
class EventSink(Protocol):
    """Where events are written: create a new Event, or patch an existing one's count."""

    async def create(self, event: Mapping[str, Any]) -> dict[str, Any]:
        """Create ``event``; return what the server stored."""
        ...

    async def patch(self, event: Mapping[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
        """Merge-patch the Event named by ``event``'s metadata; return the result."""
        ...


class ClientEventSink:
    """An :class:`EventSink` writing Events (core ``v1`` or ``events.k8s.io/v1``, as each event
    says) with an :class:`~kubectrl.client.AsyncClient`.

    Example::

        sink = ClientEventSink(client)
    """

    def __init__(self, client: AsyncClient) -> None:
        self._client = client

    async def create(self, event: Mapping[str, Any]) -> dict[str, Any]:
        """POST the Event."""
        return await self._client.create(event)

    async def patch(self, event: Mapping[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
        """PATCH (merge) the Event's ``count``, ``lastTimestamp`` and ``message`` (core v1),
        or its ``series`` (events.k8s.io/v1)."""
        metadata = event.get("metadata") or {}
        kind = (str(event.get("apiVersion") or EVENT[0]), "Event")
        return await self._client.patch(
            kind, str(metadata["name"]), dict(patch), namespace=str(metadata["namespace"])
        )


class EventBroadcaster:
    """Queues events from any thread and writes them, correlated, from one asyncio task.

    ``api`` is the API its recorders write through: :data:`CORE_V1` (the default; client-go's
    ``tools/record``: an identical event PATCHes ``count``, similar ones are combined, a spam
    filter drops the rest; :class:`EventCorrelator`) or :data:`EVENTS_V1` (client-go's
    ``tools/events``, what controller-runtime 0.23 and ``manager.event_recorder`` use:
    isomorphic events become one Event with a ``series`` whose count is written when the series
    ends, every 30 minutes, and on :meth:`shutdown`; :class:`SeriesCorrelator`).

    Defaults are client-go's: ``queue_size`` 1000 (events beyond it are dropped),
    ``max_tries`` 12 and ``retry_interval`` 10 s per event. Write errors that cannot succeed on a
    retry (validation, RBAC, an Event that already exists) are logged and the event dropped, as
    client-go does; transport errors and retryable server errors (429, 5xx) are retried.

    Guarantees: :meth:`action` never blocks and is safe from any thread; the events of one
    object (its ``involvedObject``) are written in the order they were recorded, one write at a
    time (events queued together that become the same Event, a create and its count patches, are
    one write of their last state, placed where the first of them was); the events of different
    objects are written up to ``max_concurrent_writes`` at a time (default 8; 1 writes every event
    in recorded order, as client-go's broadcaster does), so that a busy controller's Events do not
    trail its work by a queue of round trips; the queue's memory is bounded. Caveats: events
    recorded before :meth:`start` wait in the queue; :meth:`shutdown` writes what is queued,
    within its timeout.

    Example::

        broadcaster = EventBroadcaster(ClientEventSink(client))
        broadcaster.start()
        recorder = broadcaster.new_recorder("my-controller")
        recorder.event(obj, "Normal", "Synced", "synced successfully")
        await broadcaster.shutdown()
    """

    def __init__(
        self,
        sink: EventSink,
        *,
        clock: Clock | None = None,
        queue_size: int = 1000,
        max_tries: int = 12,
        retry_interval: float = 10.0,
        correlator_options: CorrelatorOptions | None = None,
        rng: random.Random | None = None,
        max_concurrent_writes: int = 8,
        api: str = CORE_V1,
    ) -> None:
        if api not in (EVENTS_V1, CORE_V1):
            raise ValueError(f"api must be {EVENTS_V1!r} or {CORE_V1!r}, not {api!r}")
        if max_concurrent_writes < 1:
            raise ValueError(
                f"max_concurrent_writes must be at least 1, not {max_concurrent_writes}"
            )
        self._sink = sink
        self._concurrency = max_concurrent_writes
        self._clock: Clock = clock if clock is not None else RealClock()
        self._queue_size = queue_size
        self._max_tries = max_tries
        self._retry_interval = retry_interval
        self._rng = rng if rng is not None else random.Random()  # noqa: S311 - jitter only
        self._api = api
        self.correlator: EventCorrelator | SeriesCorrelator = (
            SeriesCorrelator(self._clock)
            if api == EVENTS_V1
            else EventCorrelator(self._clock, correlator_options)
        )
        self._lock = threading.Lock()
        self._pending: collections.deque[dict[str, Any]] = collections.deque()
        self._dropped = 0
        self._closed = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wakeup: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self._idle: asyncio.Event | None = None
        self._last_name_nanos = 0
        self._unwritten = 0  # Events of the batch being written, not written yet

    @property
    def clock(self) -> Clock:
        """The clock used for timestamps, retries and the correlator."""
        return self._clock

    @property
    def api(self) -> str:
        """The API the events are written through: :data:`EVENTS_V1` or :data:`CORE_V1`."""
        return self._api

    @property
    def dropped(self) -> int:
        """How many events were dropped because the queue was full."""
        with self._lock:
            return self._dropped

    def new_recorder(
        self, component: str, *, host: str = "", reporting_instance: str | None = None
    ) -> EventRecorder:
        """An :class:`EventRecorder` reporting as ``component`` (and ``host``) through this.

        Through events.k8s.io/v1 the reporting instance defaults, as client-go's, to
        ``"<component>-<hostname>"``; ``component`` must be a qualified name (``ValueError``).
        """
        if self._api == EVENTS_V1 and reporting_instance is None and not host:
            reporting_instance = f"{component}-{socket.gethostname()}"[:128]
        return EventRecorder(
            self,
            component=component,
            host=host,
            reporting_instance=reporting_instance,
            api=self._api,
        )

    def unique_name_suffix(self) -> str:
        """A hex suffix for a new Event name: wall-clock nanoseconds, strictly increasing."""
        nanos = int(self._clock.wall().timestamp() * 1e9)
        with self._lock:
            nanos = max(nanos, self._last_name_nanos + 1)
            self._last_name_nanos = nanos
        return f"{nanos:x}"

    def action(self, event: dict[str, Any]) -> bool:
        """Queue ``event`` for writing; ``False`` (logged) when the queue is full or closed."""
        with self._lock:
            if self._closed:
                return False
            if len(self._pending) >= self._queue_size:
                self._dropped += 1
                log.warning(
                    "event queue full, dropping event",
                    extra={"reason": event.get("reason"), "queue_size": self._queue_size},
                )
                return False
            self._pending.append(event)
            loop, wakeup = self._loop, self._wakeup
        if loop is not None and wakeup is not None:
            call_in_loop(loop, wakeup.set)  # False: the loop is closed, nobody to wake
        return True

    def start(self) -> asyncio.Task[None]:
        """Start the writer task on the running loop (idempotent); returns it."""
        if self._task is not None:
            return self._task
        loop = asyncio.get_running_loop()
        wakeup = asyncio.Event()
        self._idle = idle = asyncio.Event()
        with self._lock:
            self._loop = loop
            self._wakeup = wakeup
            if self._pending:
                wakeup.set()
        self._task = loop.create_task(self._run(wakeup, idle), name="kubectrl-event-writer")
        return self._task

    async def wait_idle(self) -> None:
        """Wait until every queued event has been handled (written, dropped or given up)."""
        while True:
            with self._lock:
                if not self._pending and self._idle is not None and self._idle.is_set():
                    return
            await asyncio.sleep(0)
            if self._idle is not None:
                await self._idle.wait()

    async def shutdown(self, timeout: float | None = 30.0) -> None:
        """Stop accepting events, write what is queued (up to ``timeout`` s), stop the task."""
        with self._lock:
            self._closed = True
            if self._wakeup is not None:
                self._wakeup.set()
        task = self._task
        if task is None:
            return
        done, _ = await asyncio.wait({task}, timeout=timeout)
        if not done:
            with self._lock:
                # The ones taken for writing (or waiting for a retry) count too.
                left = len(self._pending) + self._unwritten
            log.warning(
                "event broadcaster: %d events not written within the shutdown timeout of %s s; "
                "dropping them",
                left,
                timeout,
                extra={"events": left, "timeout": timeout},
            )
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def _run(self, wakeup: asyncio.Event, idle: asyncio.Event) -> None:
        while True:
            with self._lock:
                batch = list(self._pending)
                self._pending.clear()
                self._unwritten = len(batch)
                closed = self._closed
            if not batch:
                later = self._later(closed)
                if later:
                    idle.clear()
                    await self._guarded(self._write_results(later))
                    continue
                if closed:
                    idle.set()
                    return
                idle.set()
                wakeup.clear()
                with self._lock:
                    if self._pending or self._closed:
                        continue
                await self._idle_wait(wakeup)
                continue
            idle.clear()
            await self._guarded(self._record(batch))

    async def _guarded(self, writes: Awaitable[None]) -> None:
        try:
            await writes
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("unexpected error writing events")

    def _later(self, closing: bool) -> list[CorrelationResult]:
        """Writes the correlator held back that are due now (a series' count), or all of
        them when closing."""
        correlator = self.correlator
        if not isinstance(correlator, SeriesCorrelator):
            return []
        return correlator.flush() if closing else correlator.due()

    async def _idle_wait(self, wakeup: asyncio.Event) -> None:
        """Wait for a new event, or until the correlator has a write due."""
        correlator = self.correlator
        delay = correlator.next_due() if isinstance(correlator, SeriesCorrelator) else None
        if delay is None:
            await wakeup.wait()
            return
        woken = asyncio.ensure_future(wakeup.wait())
        timer = asyncio.ensure_future(self._clock.sleep(delay))
        try:
            await asyncio.wait({woken, timer}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            woken.cancel()
            timer.cancel()
            await asyncio.gather(woken, timer, return_exceptions=True)

    async def _record(self, batch: list[dict[str, Any]]) -> None:
        """Correlate every queued event, in order, then write each Event once: the events
        that became the same Event (a create and the count patches after it, or several
        patches) are one write of the last state, which is what the server would hold after
        writing them one by one."""
        results: list[CorrelationResult] = []
        for event in batch:
            result = self.correlator.correlate(event)
            if result.skip:
                # Dropped by the spam filter (core v1), or counted in a series (written later).
                log.debug("event not written now", extra={"reason": event.get("reason")})
                continue
            results.append(result)
        await self._write_results(results)

    async def _write_results(self, results: list[CorrelationResult]) -> None:
        writes: dict[tuple[str, str], list[CorrelationResult]] = {}
        for result in results:
            metadata = result.event.get("metadata") or {}
            target = (str(metadata.get("namespace") or ""), str(metadata.get("name") or ""))
            writes.setdefault(target, []).append(result)
        with self._lock:
            self._unwritten = len(writes)
        # One queue of writes per object, in recorded order; objects side by side.
        per_object: dict[tuple[str, ...], list[CorrelationResult]] = {}
        for results in writes.values():
            write = _coalesced(results)
            per_object.setdefault(_involved(write.event), []).append(write)
        queues = list(per_object.values())
        if self._concurrency == 1 or len(queues) == 1:
            for queue in queues:
                await self._record_queue(queue)
            return
        slots = asyncio.Semaphore(self._concurrency)

        async def record(queue: list[CorrelationResult]) -> None:
            async with slots:
                await self._record_queue(queue)

        outcomes = await asyncio.gather(*(record(q) for q in queues), return_exceptions=True)
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                raise outcome

    async def _record_queue(self, queue: list[CorrelationResult]) -> None:
        for write in queue:
            await self._record_one(write)
            with self._lock:
                self._unwritten -= 1

    async def _record_one(self, result: CorrelationResult) -> None:
        event = result.event
        for attempt in range(1, self._max_tries + 1):
            if await self._write(result):
                return
            if attempt >= self._max_tries:
                break
            delay = self._retry_interval
            if attempt == 1:
                delay *= self._rng.random()
            await self._clock.sleep(delay)
        log.error(
            "unable to write event (retry limit exceeded)",
            extra={"reason": event.get("reason"), "tries": self._max_tries},
        )

    async def _write(self, result: CorrelationResult) -> bool:
        """One attempt; ``True`` when done (written or not worth retrying)."""
        event = result.event
        try:
            if result.patch is not None:
                try:
                    stored = await self._sink.patch(event, result.patch)
                except NotFoundError:
                    # The Event was deleted (TTL, 1 h by default): create it afresh.
                    stored = await self._sink.create(_without_resource_version(event))
            else:
                stored = await self._sink.create(_without_resource_version(event))
        except KubectrlError as err:
            if err.retryable:
                log.info("unable to write event, will retry", extra={"error": str(err)})
                return False
            log.warning(
                "server rejected event",
                extra={"reason": event.get("reason"), "error": f"{type(err).__name__}: {err}"},
            )
            return True
        self.correlator.update_state(stored)
        return True

    def __repr__(self) -> str:
        return f"EventBroadcaster(sink={self._sink!r}, pending={len(self._pending)})"


def _coalesced(results: list[CorrelationResult]) -> CorrelationResult:
    """One write for correlation results that target the same Event, in order: a create
    followed by patches is a create of the last state; patches are the last patch."""
    last = results[-1]
    if len(results) == 1:
        return last
    if results[0].patch is None:
        return CorrelationResult(last.event, None)
    return last


def _involved(event: Mapping[str, Any]) -> tuple[str, ...]:
    """The object an Event is about: the key its writes are ordered by."""
    ref = event.get("involvedObject") or event.get("regarding") or {}
    if not isinstance(ref, Mapping):
        return ()
    fields = ("apiVersion", "kind", "namespace", "name", "uid")
    return tuple(str(ref.get(field) or "") for field in fields)


def _without_resource_version(event: dict[str, Any]) -> dict[str, Any]:
    metadata = dict(event.get("metadata") or {})
    metadata.pop("resourceVersion", None)
    return {**event, "metadata": metadata}
