"""The controller: a rate-limited workqueue, sources feeding it, and N workers reconciling.

The worker loop is controller-runtime's ``reconcileHandler``
(pkg/internal/controller/controller.go):

====================================  =============================================  ===========
reconcile outcome                     queue                                          ``result``
====================================  =============================================  ===========
returns ``None`` / ``Result()``       ``forget`` (reset backoff)                     success
returns ``Result(requeue_after=s)``   ``forget`` + ``add_after(s)``                  requeue_after
returns ``Result(requeue=True)``      ``add_rate_limited``                           requeue
(either with ``priority=p``)          the add with priority ``p``
raises :class:`TerminalError`         not retried, backoff history kept; counted     error
                                      as terminal
raises anything else                  ``add_rate_limited`` (growing backoff)         error
exceeds ``reconcile_timeout``         cancelled; ``add_rate_limited``                error
====================================  =============================================  ===========

Exceptions never end a worker. The queue guarantees a key is never reconciled by two workers at
once and that a change during a reconcile brings the key back afterwards; a sync reconcile whose
thread outlives its timeout (or the controller's stop) keeps its key held until the thread ends.

Errors are logged as one line when they are kubectrl's own (an API error names verb, resource,
object, reason and the server's message; a connection error names what failed): a 409 or 404 is
routine for a controller and needs no traceback. Anything else keeps its traceback.
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import itertools
import logging
import math
import threading
import uuid
from collections.abc import Awaitable, Callable, Hashable, Iterable
from typing import TYPE_CHECKING, Any

from kubectrl._internal.aio import call_in_loop
from kubectrl._internal.clock import Clock, RealClock
from kubectrl.errors import APIError, KubectrlError
from kubectrl.runtime import _read_your_writes as read_your_writes
from kubectrl.runtime._log_context import install as install_log_context
from kubectrl.runtime._metrics import ControllerMetrics
from kubectrl.runtime._none_fields import none_field
from kubectrl.runtime._read_your_writes import GIVE_UP_AFTER, WriteTracker
from kubectrl.runtime._reconcile import (
    ReconcileLike,
    Request,
    Result,
    TerminalError,
    resolve_reconcile,
)
from kubectrl.runtime._source import Source
from kubectrl.workqueue import (
    DEFAULT_PRIORITY,
    LOW_PRIORITY,
    PriorityQueue,
    QueueShutDown,
    RateLimiter,
    default_controller_rate_limiter,
)

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

__all__ = [
    "Controller",
    "ControllerOptions",
    "ReconcileTimeoutError",
    "SourceSyncError",
    "current_reconcile",
]

log = logging.getLogger("kubectrl.runtime.controller")


@dataclasses.dataclass(frozen=True)
class ReconcileInfo:
    """The reconcile running in this context: controller name, request and reconcile id (and
    the group and kind the controller reconciles, when a Builder made it)."""

    controller: str
    request: Request
    reconcile_id: str
    controller_group: str = ""
    controller_kind: str = ""


_current: contextvars.ContextVar[ReconcileInfo | None] = contextvars.ContextVar(
    "kubectrl_reconcile", default=None
)


def current_reconcile() -> ReconcileInfo | None:
    """The reconcile being run by the calling task or thread, for log correlation.

    Example::

        info = current_reconcile()
        log.info("creating deployment", extra={"reconcile_id": info.reconcile_id})
    """
    return _current.get()


class SourceSyncError(KubectrlError):
    """One or more of a controller's sources did not sync; the controller did not start.

    The message names every source that failed or timed out, with its reason (its error, or its
    last list/watch error). ``sources`` lists their names in the controller's order; ``source``
    is the first of them. Not retryable as is: fix RBAC, install the CRD, or raise the timeout.

    Example::

        try:
            await controller.start()
        except SourceSyncError as err:
            print(err.sources, err)
    """

    def __init__(self, message: str, *, source: str, sources: Iterable[str] = ()) -> None:
        super().__init__(message)
        self.sources: tuple[str, ...] = tuple(sources) or (source,)
        self.source = source


class ReconcileTimeoutError(KubectrlError):
    """A reconcile ran longer than its controller's ``reconcile_timeout``.

    The controller cancelled it (an ``async`` reconcile sees ``CancelledError`` at its current
    ``await``), counted it as an error and requeued the key with backoff. ``request`` is the key,
    ``timeout`` the limit in seconds.

    Example::

        ControllerOptions(reconcile_timeout=60)   # a reconcile gets at most a minute
    """

    def __init__(self, message: str, *, request: Request, timeout: float) -> None:
        super().__init__(message)
        self.request = request
        self.timeout = timeout


@dataclasses.dataclass(frozen=True)
class ControllerOptions:
    """A controller's knobs, with controller-runtime's defaults.

    ``max_concurrent_reconciles`` 1; ``cache_sync_timeout`` 120 s (one deadline for all sources
    to sync, waited for in parallel, before the first reconcile); ``rate_limiter`` ``None``
    means :func:`~kubectrl.workqueue.default_controller_rate_limiter` (5 ms doubling to 1000 s
    per key, 10 QPS burst 100 overall); ``need_leader_election`` ``True`` (a Manager starts the
    controller only on the leader); ``reconcile_timeout`` ``None`` (no limit, as
    controller-runtime's ``ReconciliationTimeout`` unset): else seconds after which a reconcile
    is cancelled, logged and counted as an error, and retried with backoff.

    Example::

        >>> ControllerOptions(max_concurrent_reconciles=4).cache_sync_timeout
        120.0
        >>> ControllerOptions(reconcile_timeout=60).reconcile_timeout
        60
    """

    max_concurrent_reconciles: int = 1
    cache_sync_timeout: float = 120.0
    rate_limiter: RateLimiter[Hashable] | None = None
    need_leader_election: bool = True
    reconcile_timeout: float | None = None
    #: Objects of the initial list and unchanged updates (resyncs) go to the back of the queue
    #: (controller-runtime v0.23's default priority queue); ``False`` queues every event FIFO.
    low_priority_when_unchanged: bool = True
    #: A warm replica (controller-runtime's ``EnableWarmup``): a Manager with leader election
    #: starts this controller's sources on every replica before the election (their handlers
    #: fill the queue from the synced caches), and only its workers once leading; a new
    #: leader then reconciles at once, with no LIST and no replay of the cache.
    enable_warmup: bool = False
    #: Read your own writes (Kubernetes 1.36's stale controller mitigation, KEP-5647): the
    #: manager's client notes the resourceVersion of every write a reconcile makes, and the
    #: next reconcile of that key first waits until the informers of the written kinds have
    #: seen it, so it does not act on a cache older than its own last write. ``False`` turns
    #: this off (every reconcile starts at once, the cache as it is).
    read_your_writes: bool = True
    #: How long (seconds) a reconcile waits for the cache to catch up with the key's writes;
    #: past it the key is requeued with backoff and waits again on its next turn.
    read_your_writes_timeout: float = 5.0

    def __post_init__(self) -> None:
        if self.max_concurrent_reconciles < 1:
            raise ValueError(
                f"max_concurrent_reconciles must be >= 1, got {self.max_concurrent_reconciles}"
            )
        if not self.cache_sync_timeout > 0:
            raise ValueError(f"cache_sync_timeout must be > 0, got {self.cache_sync_timeout}")
        if self.reconcile_timeout is not None and not (
            self.reconcile_timeout > 0 and math.isfinite(self.reconcile_timeout)
        ):
            raise ValueError(
                f"reconcile_timeout must be None (no limit) or a finite number of seconds > 0, "
                f"got {self.reconcile_timeout}"
            )
        if not (self.read_your_writes_timeout > 0 and math.isfinite(self.read_your_writes_timeout)):
            raise ValueError(
                "read_your_writes_timeout must be a finite number of seconds > 0, got "
                f"{self.read_your_writes_timeout}"
            )


class Controller:
    """Runs a reconciler on keys from its sources, with a workqueue and N workers.

    ``reconciler`` is a :class:`~kubectrl.runtime.Reconciler`, an object with a ``reconcile``
    method, or a plain function of a :class:`Request`; ``async def`` runs on the loop, ``def``
    in a daemon thread of its own per reconcile (at most ``max_concurrent_reconciles`` running
    for workers at once).

    Lifecycle: :meth:`start` starts the sources and waits for all of them to sync, in parallel
    under one ``cache_sync_timeout`` deadline (else :class:`SourceSyncError` naming each source
    that did not start or sync), then starts the workers; :meth:`stop` stops taking keys and
    waits for in-flight reconciles (up to its timeout); :meth:`run` is ``start`` then wait until
    stopped or cancelled.

    Guarantees: a key is never reconciled concurrently; an exception never kills a worker;
    with a leader fence (:meth:`set_leader_fence`), no reconcile starts once it is closed; each
    reconcile is logged (debug on start and finish, error on failure) with ``controller``,
    ``namespace``, ``object_name`` and ``reconcile_id`` in ``extra`` (``name`` is taken by
    :class:`logging.LogRecord`). Caveats: a sync reconcile cannot be interrupted; when it
    outlives ``reconcile_timeout`` or the stop timeout its thread finishes in the background
    (a daemon thread: it never keeps the process alive) while its key stays held.

    Example::

        controller = Controller("configmaps", reconcile, sources=[source])
        await controller.start()
        ...
        await controller.stop()
    """

    def __init__(
        self,
        name: str,
        reconciler: ReconcileLike,
        *,
        options: ControllerOptions | None = None,
        sources: Iterable[Source] = (),
        clock: Clock | None = None,
        registry: CollectorRegistry | None = None,
    ) -> None:
        if not name:
            raise ValueError("a controller needs a name (it labels logs, metrics and the queue)")
        self._name = name
        self._for_group_kind = ("", "")  # the Builder's for_ kind, for the log fields
        self._options = options if options is not None else ControllerOptions()
        self._reconciler = reconciler
        self._registry = registry
        self._reconcile, self._is_async = resolve_reconcile(reconciler)
        self._sources: list[Source] = list(sources)
        self._clock: Clock = clock if clock is not None else RealClock()
        limiter = self._options.rate_limiter or default_controller_rate_limiter(clock=self._clock)
        self._queue: PriorityQueue[Request] = PriorityQueue(
            limiter, name=name, clock=self._clock, registry=registry
        )
        self._enqueue = _Enqueue(self._queue, self._options.low_priority_when_unchanged)
        self._metrics = ControllerMetrics(registry, name)
        self._writes = WriteTracker(name, self._clock) if self._options.read_your_writes else None
        self._workers: list[asyncio.Task[None]] = []
        self._fence: Callable[[], bool] | None = None
        self._fence_closed = False
        # Keys whose reconcile is running now (for the stop log), and keys held by a sync
        # reconcile's thread that the controller stopped waiting for.
        self._running: dict[Request, str] = {}
        self._held: set[Request] = set()
        self._thread_ids = itertools.count()
        self._started = False
        self._warmed = False
        self._stopping = False
        self._halt: asyncio.Event | None = None
        self._stopped: asyncio.Event | None = None

    # ------------------------------------------------------------------ public

    @property
    def name(self) -> str:
        """The controller's name (logs, metrics, the queue's metrics name)."""
        return self._name

    @property
    def options(self) -> ControllerOptions:
        """The options in use."""
        return self._options

    @property
    def queue(self) -> PriorityQueue[Request]:
        """The workqueue, a :class:`~kubectrl.workqueue.PriorityQueue` (for ``num_requeues``
        and tests; sources add to it)."""
        return self._queue

    @property
    def need_leader_election(self) -> bool:
        """Whether a Manager must start this controller only on the leader."""
        return self._options.need_leader_election

    @property
    def in_flight(self) -> tuple[Request, ...]:
        """Keys whose reconcile is still running, sorted: by a worker, or by a sync reconcile's
        thread the controller stopped waiting for (after ``reconcile_timeout`` or
        :meth:`stop`'s timeout). Empty after a clean stop.

        Example::

            await controller.stop(timeout=30)
            if controller.in_flight:
                log.error("reconciles still running: %s", controller.in_flight)
        """
        return tuple(sorted({*self._running, *self._held}))

    def set_leader_fence(self, fence: Callable[[], bool] | None) -> None:
        """Check ``fence()`` before every reconcile; ``None`` removes the check.

        A Manager with leader election passes its elector's ``fence`` to every leader-only
        controller. Before a worker calls the reconciler for a key it calls ``fence()``; when it
        returns ``False`` the reconciler is not called, the key is put back in the queue (not
        lost, not counted as an error, not rate-limited) and the worker takes no further keys
        until :meth:`stop`. Limit: a reconcile that already started is not interrupted (nor a
        write it has in flight).

        Example::

            controller.set_leader_fence(elector.fence)
        """
        self._fence = fence

    @property
    def sources(self) -> tuple[Source, ...]:
        """The sources added so far, in order."""
        return tuple(self._sources)

    def copy(self, name: str, sources: Iterable[Source]) -> Controller:
        """A new, unstarted controller with this one's reconciler, options, clock and registry,
        named ``name`` and fed by ``sources`` (what a sharded manager runs per held shard).

        Example::

            shard_controller = controller.copy("configmap-shard-0", [source_on_shard])
        """
        return Controller(
            name,
            self._reconciler,
            options=self._options,
            sources=sources,
            clock=self._clock,
            registry=self._registry,
        )

    def watch(self, source: Source) -> None:
        """Add a source; before :meth:`start` only."""
        if self._started:
            raise RuntimeError(f"controller {self._name}: watch() after start()")
        self._sources.append(source)

    def enqueue(self, request: Request) -> None:
        """Add a key to the queue (what sources call)."""
        self._queue.add(request)

    async def warm_up(self) -> None:
        """Start the sources and wait for them to sync, without workers (a warm replica).

        The queue fills from the sources meanwhile; :meth:`start` then starts only the workers.
        Raises as :meth:`start` does when a source does not sync. Idempotent.

        Example::

            await controller.warm_up()   # on every replica, before the election
            await controller.start()     # once leading: workers only
        """
        if self._warmed or self._started:
            return
        self._warmed = True
        log.info(
            "Warming up EventSources for controller %s",
            self._name,
            extra={"controller": self._name, "sources": [s.name for s in self._sources]},
        )
        await self._start_sources()

    async def start(self) -> None:
        """Start sources, wait for them to sync, then start the workers; returns once running.

        After :meth:`warm_up`, only the workers start."""
        if self._started:
            raise RuntimeError(f"controller {self._name} was already started")
        self._started = True
        install_log_context(current_reconcile)  # log lines in a reconcile carry its fields
        self._halt = halt = asyncio.Event()
        self._stopped = asyncio.Event()
        if not self._warmed:
            log.info(
                "Starting EventSources for controller %s",
                self._name,
                extra={"controller": self._name, "sources": [s.name for s in self._sources]},
            )
            await self._start_sources()
        workers = self._options.max_concurrent_reconciles
        self._metrics.set_max_concurrent(workers)
        log.info(
            "Starting %d workers for controller %s",
            workers,
            self._name,
            extra={"controller": self._name, "worker_count": workers},
        )
        self._workers = [
            asyncio.create_task(self._worker(halt), name=f"{self._name}-worker-{i}")
            for i in range(workers)
        ]

    async def stop(self, timeout: float | None = 30.0) -> None:
        """Stop taking keys and wait up to ``timeout`` s (on the controller's clock) for
        in-flight reconciles to finish.

        Keys still queued are not reconciled (the next leader or start will). Workers still
        busy after the timeout are cancelled (async reconciles see ``CancelledError``); a sync
        reconcile's thread cannot be, so it is logged and left to finish in the background
        (a daemon thread) — ``stop`` never waits for it past ``timeout``.
        """
        if self._stopping:
            if self._stopped is not None:
                await self._stopped.wait()
            return
        self._stopping = True
        self._queue.shutdown()
        if self._halt is not None:
            self._halt.set()
        if self._workers:
            pending = await _wait_all(self._workers, timeout, self._clock)
            if pending:
                running = [str(r) for r in self.in_flight]
                log.warning(
                    "controller %s: %d reconciles still running after the stop timeout of "
                    "%s s, cancelling them: %s",
                    self._name,
                    len(running),
                    timeout,
                    ", ".join(running),
                    extra={"controller": self._name, "count": len(running), "keys": running},
                )
                for task in pending:
                    task.cancel()
                await asyncio.gather(*pending, return_exceptions=True)
        if self._held:
            held = [str(r) for r in sorted(self._held)]
            log.warning(
                "controller %s: sync reconciles still running in background threads: %s",
                self._name,
                ", ".join(held),
                extra={"controller": self._name, "count": len(held), "keys": held},
            )
        if self._writes is not None:
            self._writes.clear()
        log.info(
            "All workers finished for controller %s", self._name, extra={"controller": self._name}
        )
        if self._stopped is not None:
            self._stopped.set()

    async def run(self) -> None:
        """:meth:`start`, then wait until :meth:`stop` (cancelling ``run`` stops gracefully)."""
        await self.start()
        stopped = self._stopped
        if stopped is None:  # start() makes it
            raise RuntimeError(f"controller {self._name}: start() returned without starting")
        try:
            await stopped.wait()
        finally:
            if not stopped.is_set():
                await self.stop()

    def __repr__(self) -> str:
        return f"Controller({self._name!r}, workers={self._options.max_concurrent_reconciles})"

    # ------------------------------------------------------------------ internals

    async def _start_sources(self) -> None:
        # Every source starts and syncs concurrently under ONE deadline, as controller-runtime
        # starts each source inside the CacheSyncTimeout context: N slow sources cost one
        # timeout, not N, and a source whose start hangs (discovery on an unreachable server)
        # is bounded too.
        if not self._sources:
            return
        timeout = self._options.cache_sync_timeout
        waiters = [asyncio.ensure_future(self._start_source(s, timeout)) for s in self._sources]
        try:
            await _wait_all(waiters, timeout, self._clock)
        finally:
            for waiter in waiters:
                if not waiter.done():
                    waiter.cancel()
            await asyncio.gather(*waiters, return_exceptions=True)
        failures: list[tuple[str, str, BaseException | None]] = []
        for source, waiter in zip(self._sources, waiters, strict=True):
            if waiter.cancelled():
                reason = getattr(source, "last_sync_error", None)
                detail = f" (last error: {reason})" if reason else ""
                failures.append((source.name, f"timed out{detail}", None))
            elif isinstance(err := waiter.exception(), _SourceStartError):
                cause = err.__cause__
                failures.append(
                    (source.name, f"failed to start: {type(cause).__name__}: {cause}", cause)
                )
            elif err is not None:
                failures.append((source.name, f"{type(err).__name__}: {err}", err))
        if not failures:
            return
        what = "; ".join(f"{name}: {why}" for name, why, _ in failures)
        cause = next((err for _, _, err in failures if err is not None), None)
        raise SourceSyncError(
            f"controller {self._name}: {len(failures)} of {len(self._sources)} sources did not "
            f"sync within {timeout:g} s: {what}",
            source=failures[0][0],
            sources=[name for name, _, _ in failures],
        ) from cause

    async def _start_source(self, source: Source, timeout: float) -> None:
        try:
            await source.start(self._enqueue)
        except Exception as err:
            raise _SourceStartError from err
        await source.wait_for_sync(timeout)

    def _fence_open(self) -> bool:
        if self._fence is None:
            return True
        try:
            open_ = bool(self._fence())
        except Exception:
            log.exception(
                "controller %s: leader fence raised; treating it as closed",
                self._name,
                extra={"controller": self._name},
            )
            open_ = False
        if not open_ and not self._fence_closed:
            self._fence_closed = True
            log.warning(
                "controller %s: leader fence closed; starting no further reconciles",
                self._name,
                extra={"controller": self._name},
            )
        return open_

    async def _worker(self, halt: asyncio.Event) -> None:
        while not halt.is_set():
            try:
                request = await self._queue.get()
            except QueueShutDown:
                return
            if self._stopping:
                self._queue.done(request)
                continue
            if not self._fence_open():
                # Put it back for whoever leads next: add while processing marks it dirty, and
                # done() queues it again, with no backoff.
                self._queue.add(request)
                self._queue.done(request)
                await halt.wait()
                return
            self._metrics.worker_active(1)
            try:
                await self._reconcile_handler(request)
            finally:
                self._metrics.worker_active(-1)
                if request not in self._held:
                    self._queue.done(request)

    async def _call(self, request: Request) -> Any:
        timeout = self._options.reconcile_timeout
        if self._is_async:
            if timeout is None:
                return await self._reconcile(request)
            task = asyncio.ensure_future(self._reconcile(request))
            try:
                finished = not await _wait_all([task], timeout, self._clock)
            except asyncio.CancelledError:
                task.cancel()
                raise
            if not finished:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
                raise self._timeout_error(request, timeout)
            return task.result()
        future = self._start_thread(request)
        try:
            finished = not await _wait_all([future], timeout, self._clock)
        except asyncio.CancelledError:
            if not future.done():
                self._hold_until_done(request, future)
            raise
        if not finished:
            self._hold_until_done(request, future)
            raise self._timeout_error(request, timeout)
        return future.result()

    def _timeout_error(self, request: Request, timeout: float | None) -> ReconcileTimeoutError:
        self._metrics.reconcile_timed_out()
        return ReconcileTimeoutError(
            f"reconcile of {request} timed out after {timeout:g} s",
            request=request,
            timeout=float(timeout or 0),
        )

    def _start_thread(self, request: Request) -> asyncio.Future[Any]:
        # One daemon thread per reconcile rather than a ThreadPoolExecutor: the executor's
        # threads are joined at interpreter exit, so one stuck reconcile would keep the process
        # alive after shutdown. The workers bound how many run for the queue at once.
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        context = contextvars.copy_context()

        def target() -> None:
            try:
                outcome: tuple[bool, Any] = (True, context.run(self._reconcile, request))
            except BaseException as err:
                outcome = (False, err)
            # A closed loop drops the call: nobody waits for this result any more.
            call_in_loop(loop, _settle, future, outcome)

        thread = threading.Thread(
            target=target, name=f"reconcile-{self._name}-{next(self._thread_ids)}", daemon=True
        )
        thread.start()
        return future

    def _hold_until_done(self, request: Request, future: asyncio.Future[Any]) -> None:
        # The thread still runs the reconcile: keep the key processing so no other worker can
        # start it, and release it when the thread ends.
        self._held.add(request)

        def release(done: asyncio.Future[Any]) -> None:
            self._held.discard(request)
            error = done.exception() if not done.cancelled() else None
            log.warning(
                "controller %s: abandoned sync reconcile of %s finished%s",
                self._name,
                request,
                f" with {type(error).__name__}: {error}" if error is not None else "",
                extra={"controller": self._name, **_request_fields(request)},
            )
            self._queue.done(request)

        future.add_done_callback(release)

    async def _caught_up(self, request: Request) -> bool:
        """Wait (bounded) until the informers have seen the key's earlier writes; ``False``
        when they have not: the key is then requeued with backoff."""
        writes = self._writes
        if writes is None:
            return True
        pending = writes.take(request)
        if not pending:
            return True
        timeout = self._options.read_your_writes_timeout
        deadline = self._clock.now() + timeout
        unseen = []
        for expectation in pending:
            remaining = max(0.0, deadline - self._clock.now())
            try:
                seen = await expectation.informer.wait_for_resource_version(
                    expectation.resource_version, remaining
                )
            except ValueError:  # the informer's position cannot be ordered
                seen = True
            if not seen:
                unseen.append(expectation)
        if not unseen:
            self._metrics.stale_cache("waited")
            return True
        now = self._clock.now()
        extra = {"controller": self._name, **_request_fields(request)}
        what = ", ".join(
            f"{e.what} at resourceVersion {e.resource_version} (informer {e.informer.name} at "
            f"{e.informer.last_sync_resource_version or 'none'})"
            for e in unseen
        )
        if all(now - e.since >= GIVE_UP_AFTER for e in unseen):
            log.warning(
                "controller %s: the cache has not seen the writes of %s after %g s: %s; "
                "reconciling without waiting any longer",
                self._name,
                request,
                GIVE_UP_AFTER,
                what,
                extra=extra,
            )
            self._metrics.stale_cache("gave_up")
            return True
        writes.keep(request, unseen)
        log.info(
            "controller %s: the cache has not seen the writes of %s within %g s: %s; "
            "requeued with backoff",
            self._name,
            request,
            timeout,
            what,
            extra=extra,
        )
        self._metrics.stale_cache("requeued")
        self._queue.add_rate_limited(request)
        return False

    async def _reconcile_handler(self, request: Request) -> None:
        if not await self._caught_up(request):
            return
        reconcile_id = str(uuid.uuid4())
        extra: dict[str, Any] = {
            "controller": self._name,
            **_request_fields(request),
            "reconcile_id": reconcile_id,
        }
        token = _current.set(
            ReconcileInfo(self._name, request, reconcile_id, *self._for_group_kind)
        )
        log.debug("Reconciling %s", request, extra=extra)
        started = self._clock.now()
        self._running[request] = reconcile_id
        writes = self._writes
        noting = read_your_writes.enter(writes, request) if writes is not None else None
        try:
            returned = await self._call(request)
        except asyncio.CancelledError:
            raise
        except TerminalError as err:
            # controller-runtime neither retries nor forgets a terminal error: the key keeps its
            # backoff history and comes back only with the next change to the object.
            self._metrics.reconciled("error", seconds=self._clock.now() - started, terminal=True)
            self._log_error(request, err, extra, terminal=True)
            return
        except Exception as err:
            carried = getattr(err, "result", None)
            if isinstance(carried, Result) and carried.requeue_after > 0:
                log.warning(
                    "Warning: Reconciler raised an error together with a requeue_after; "
                    "the requeue_after is ignored and the key retried with backoff",
                    extra=extra,
                )
            self._queue.add_rate_limited(request)
            self._metrics.reconciled("error", seconds=self._clock.now() - started)
            self._log_error(request, err, extra, terminal=False)
            return
        finally:
            self._running.pop(request, None)
            if noting is not None:
                read_your_writes.leave(noting)
            _current.reset(token)
        elapsed = self._clock.now() - started
        result = _as_result(returned, extra)
        priority = DEFAULT_PRIORITY if result.priority is None else result.priority
        if result.requeue_after > 0:
            self._queue.forget(request)
            self._queue.add_after(request, result.requeue_after, priority)
            self._metrics.reconciled("requeue_after", seconds=elapsed)
        elif result.requeue:
            self._queue.add_rate_limited(request, priority)
            self._metrics.reconciled("requeue", seconds=elapsed)
        else:
            self._queue.forget(request)
            self._metrics.reconciled("success", seconds=elapsed)
        log.debug("Reconcile successful", extra=extra)

    def _log_error(
        self, request: Request, err: BaseException, extra: dict[str, Any], *, terminal: bool
    ) -> None:
        what = "Reconciler error (terminal, not retried)" if terminal else "Reconciler error"
        fields = {**extra, **_error_fields(err)}
        expected = _is_expected(err)
        described = _describe_error(err)
        # A TypeError/AttributeError about None: name the optional model field it came from.
        found = none_field(err) if not expected else None
        if found is not None:
            described += f"; {found.describe()}"
            fields["none_field"] = found.field
        log.error(
            "%s: controller %s, %s: %s",
            what,
            self._name,
            request,
            described,
            exc_info=None if expected else err,
            extra=fields,
        )


class _Enqueue:
    """What sources call: ``enqueue(request)`` at the default priority, and
    ``enqueue.low_priority(request)`` for events that changed nothing
    (:func:`~kubectrl.runtime.low_priority`)."""

    def __init__(self, queue: PriorityQueue[Request], low: bool) -> None:
        self._queue = queue
        self._low = LOW_PRIORITY if low else DEFAULT_PRIORITY

    def __call__(self, request: Request) -> None:
        self._queue.add(request)

    def low_priority(self, request: Request) -> None:
        self._queue.add(request, self._low)


class _SourceStartError(Exception):
    """Marks a source's ``start`` failing (its cause), as opposed to its sync."""


def _request_fields(request: Request) -> dict[str, Any]:
    # "name" is reserved by logging.LogRecord (the logger's name), hence "object_name".
    return {"namespace": request.namespace, "object_name": request.name}


def _is_expected(err: BaseException) -> bool:
    """kubectrl's own errors (and terminal errors caused by them, or by nothing) say everything
    in their message; a traceback through the client and retry internals adds only noise."""
    if isinstance(err, TerminalError):
        inner = err.__cause__ or next((a for a in err.args if isinstance(a, BaseException)), None)
        return inner is None or _is_expected(inner)
    return isinstance(err, KubectrlError)


def _describe_error(err: BaseException) -> str:
    # The class name first, so a plain log line can be grepped and counted by error kind.
    text = str(err)
    return f"{type(err).__name__}: {text}" if text else type(err).__name__


def _error_fields(err: BaseException) -> dict[str, Any]:
    fields: dict[str, Any] = {"error": _describe_error(err), "error_type": type(err).__name__}
    if isinstance(err, TerminalError):
        inner = err.__cause__ or next((a for a in err.args if isinstance(a, BaseException)), None)
        if isinstance(inner, APIError):
            err = inner
    if isinstance(err, APIError):
        fields.update(
            verb=err.verb,
            resource=err.resource,
            error_reason=err.reason,
            error_code=err.code,
            server_message=err.server_message,
        )
    elif isinstance(err, KubectrlError):
        for attr in ("verb", "resource"):
            value = getattr(err, attr, None)
            if isinstance(value, str) and value:
                fields[attr] = value
    return fields


def _settle(future: asyncio.Future[Any], outcome: tuple[bool, Any]) -> None:
    if future.done():
        return
    ok, value = outcome
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)


async def _wait_all(
    aws: Iterable[Awaitable[Any]], timeout: float | None, clock: Clock
) -> set[asyncio.Future[Any]]:
    """Wait for every awaitable, up to ``timeout`` seconds on ``clock``; return those not done.

    Never cancels them (the caller decides): ``asyncio.wait`` leaves what it waits for alone
    when the caller is cancelled. No ``asyncio.shield`` around them: a shield's outer future
    would hold the reconciler's exception unread, and asyncio logs "Future exception was never
    retrieved" when it is collected; the caller reads each future's own result.
    """
    pending: set[asyncio.Future[Any]] = {asyncio.ensure_future(a) for a in aws}
    if not pending:
        return pending
    if timeout is None:
        await asyncio.wait(pending)
        return set()
    timer = asyncio.ensure_future(clock.sleep(timeout))
    try:
        while pending and not timer.done():
            _, _ = await asyncio.wait({*pending, timer}, return_when=asyncio.FIRST_COMPLETED)
            pending = {f for f in pending if not f.done()}
    finally:
        timer.cancel()
    return pending


def _as_result(returned: Any, extra: dict[str, Any]) -> Result:
    if returned is None:
        return Result()
    if isinstance(returned, Result):
        return returned
    log.warning(
        "reconcile returned neither a Result nor None; treated as success",
        extra={**extra, "returned_type": type(returned).__name__},
    )
    return Result()
