"""The controller: a rate-limited workqueue, sources feeding it, and N workers reconciling.

The worker loop is controller-runtime's ``reconcileHandler``:

====================================  =============================================  ===========
reconcile outcome                     queue                                          ``result``
====================================  =============================================  ===========
returns ``None`` / ``Result()``       ``forget`` (reset backoff)                     success
returns ``Result(requeue_after=s)``   ``forget`` + ``add_after(s)``                  requeue_after
returns ``Result(requeue=True)``      ``add_rate_limited``                           requeue
raises :class:`TerminalError`         ``forget``; not retried; counted as terminal   error
raises anything else                  ``add_rate_limited`` (growing backoff)         error
====================================  =============================================  ===========

Exceptions never end a worker. The queue guarantees a key is never reconciled by two workers at
once and that a change during a reconcile brings the key back afterwards.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import dataclasses
import functools
import logging
import uuid
from collections.abc import Hashable, Iterable
from typing import TYPE_CHECKING, Any

from kubectrl._clock import Clock, RealClock
from kubectrl.errors import KubectrlError
from kubectrl.runtime._metrics import ControllerMetrics
from kubectrl.runtime._reconcile import (
    ReconcileLike,
    Request,
    Result,
    TerminalError,
    resolve_reconcile,
)
from kubectrl.runtime._source import Source
from kubectrl.workqueue import (
    QueueShutDown,
    RateLimiter,
    RateLimitingQueue,
    default_controller_rate_limiter,
)

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

__all__ = [
    "Controller",
    "ControllerOptions",
    "SourceSyncError",
    "current_reconcile",
]

log = logging.getLogger("kubectrl.runtime.controller")


@dataclasses.dataclass(frozen=True)
class ReconcileInfo:
    """The reconcile running in this context: controller name, request and reconcile id."""

    controller: str
    request: Request
    reconcile_id: str


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
    """A controller's source did not sync; the controller did not start.

    The message names the source and the reason (its error, or a timeout). Not retryable as is:
    fix RBAC, install the CRD, or raise the timeout.

    Example::

        try:
            await controller.start()
        except SourceSyncError as err:
            print(err.source, err.__cause__)
    """

    def __init__(self, message: str, *, source: str) -> None:
        super().__init__(message)
        self.source = source


@dataclasses.dataclass(frozen=True)
class ControllerOptions:
    """A controller's knobs, with controller-runtime's defaults.

    ``max_concurrent_reconciles`` 1; ``cache_sync_timeout`` 120 s (wait for every source to
    sync before the first reconcile); ``rate_limiter`` ``None`` means
    :func:`~kubectrl.workqueue.default_controller_rate_limiter` (5 ms doubling to 1000 s per key,
    10 QPS burst 100 overall); ``need_leader_election`` ``True`` (a Manager starts the
    controller only on the leader).

    Example::

        >>> ControllerOptions(max_concurrent_reconciles=4).cache_sync_timeout
        120.0
    """

    max_concurrent_reconciles: int = 1
    cache_sync_timeout: float = 120.0
    rate_limiter: RateLimiter[Hashable] | None = None
    need_leader_election: bool = True

    def __post_init__(self) -> None:
        if self.max_concurrent_reconciles < 1:
            raise ValueError("max_concurrent_reconciles must be >= 1")
        if self.cache_sync_timeout <= 0:
            raise ValueError("cache_sync_timeout must be > 0")


class Controller:
    """Runs a reconciler on keys from its sources, with a workqueue and N workers.

    ``reconciler`` is a :class:`~kubectrl.runtime.Reconciler`, an object with a ``reconcile``
    method, or a plain function of a :class:`Request`; ``async def`` runs on the loop, ``def``
    in one of the controller's ``max_concurrent_reconciles`` threads.

    Lifecycle: :meth:`start` starts the sources, waits for them to sync (up to
    ``cache_sync_timeout``; else :class:`SourceSyncError` naming the source) and starts the
    workers; :meth:`stop` stops taking keys and waits for in-flight reconciles (up to its
    timeout); :meth:`run` is ``start`` then wait until stopped or cancelled.

    Guarantees: a key is never reconciled concurrently; an exception never kills a worker;
    each reconcile is logged (debug on start and finish, error on failure) with ``controller``,
    ``namespace``, ``object_name`` and ``reconcile_id`` in ``extra`` (``name`` is taken by
    :class:`logging.LogRecord`). Caveats: a sync reconcile still
    running when the stop timeout passes cannot be interrupted; its thread finishes in the
    background.

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
        self._options = options if options is not None else ControllerOptions()
        self._reconcile, self._is_async = resolve_reconcile(reconciler)
        self._sources: list[Source] = list(sources)
        self._clock: Clock = clock if clock is not None else RealClock()
        limiter = self._options.rate_limiter or default_controller_rate_limiter(clock=self._clock)
        self._queue: RateLimitingQueue[Request] = RateLimitingQueue(
            limiter, name=name, clock=self._clock, registry=registry
        )
        self._metrics = ControllerMetrics(registry, name)
        self._workers: list[asyncio.Task[None]] = []
        self._executor: concurrent.futures.ThreadPoolExecutor | None = None
        self._started = False
        self._stopping = False
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
    def queue(self) -> RateLimitingQueue[Request]:
        """The workqueue (for ``num_requeues`` and tests; sources add to it)."""
        return self._queue

    @property
    def need_leader_election(self) -> bool:
        """Whether a Manager must start this controller only on the leader."""
        return self._options.need_leader_election

    def watch(self, source: Source) -> None:
        """Add a source; before :meth:`start` only."""
        if self._started:
            raise RuntimeError(f"controller {self._name}: watch() after start()")
        self._sources.append(source)

    def enqueue(self, request: Request) -> None:
        """Add a key to the queue (what sources call)."""
        self._queue.add(request)

    async def start(self) -> None:
        """Start sources, wait for them to sync, then start the workers; returns once running."""
        if self._started:
            raise RuntimeError(f"controller {self._name} was already started")
        self._started = True
        self._stopped = asyncio.Event()
        log.info("Starting EventSource", extra={"controller": self._name})
        for source in self._sources:
            await source.start(self.enqueue)
        await self._wait_for_sources()
        workers = self._options.max_concurrent_reconciles
        if not self._is_async:
            self._executor = concurrent.futures.ThreadPoolExecutor(
                max_workers=workers, thread_name_prefix=f"reconcile-{self._name}"
            )
        self._metrics.set_max_concurrent(workers)
        log.info("Starting workers", extra={"controller": self._name, "worker_count": workers})
        self._workers = [
            asyncio.create_task(self._worker(), name=f"{self._name}-worker-{i}")
            for i in range(workers)
        ]

    async def stop(self, timeout: float | None = 30.0) -> None:
        """Stop taking keys and wait up to ``timeout`` s for in-flight reconciles to finish.

        Keys still queued are not reconciled (the next leader or start will). Workers still
        busy after the timeout are cancelled (async reconciles see ``CancelledError``).
        """
        if self._stopping:
            if self._stopped is not None:
                await self._stopped.wait()
            return
        self._stopping = True
        self._queue.shutdown()
        if self._workers:
            _, pending = await asyncio.wait(self._workers, timeout=timeout)
            if pending:
                log.warning(
                    "reconciles still running after the stop timeout; cancelling",
                    extra={"controller": self._name, "count": len(pending)},
                )
                for task in pending:
                    task.cancel()
                await asyncio.gather(*pending, return_exceptions=True)
        if self._executor is not None:
            self._executor.shutdown(wait=False)
        log.info("All workers finished", extra={"controller": self._name})
        if self._stopped is not None:
            self._stopped.set()

    async def run(self) -> None:
        """:meth:`start`, then wait until :meth:`stop` (cancelling ``run`` stops gracefully)."""
        await self.start()
        assert self._stopped is not None
        try:
            await self._stopped.wait()
        finally:
            if not self._stopped.is_set():
                await self.stop()

    def __repr__(self) -> str:
        return f"Controller({self._name!r}, workers={self._options.max_concurrent_reconciles})"

    # ------------------------------------------------------------------ internals

    async def _wait_for_sources(self) -> None:
        timeout = self._options.cache_sync_timeout
        for source in self._sources:
            waiter = asyncio.ensure_future(source.wait_for_sync(timeout))
            timer = asyncio.ensure_future(self._clock.sleep(timeout))
            try:
                await asyncio.wait({waiter, timer}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                timer.cancel()
                if not waiter.done():
                    waiter.cancel()
                await asyncio.gather(waiter, timer, return_exceptions=True)
            if waiter.cancelled():
                reason = getattr(source, "last_sync_error", None)
                detail = f": last error: {reason}" if reason else ""
                raise SourceSyncError(
                    f"controller {self._name}: timed out after {timeout} s waiting for source "
                    f"{source.name} to sync{detail}",
                    source=source.name,
                )
            err = waiter.exception()
            if err is not None:
                raise SourceSyncError(
                    f"controller {self._name}: source {source.name} failed to sync: "
                    f"{type(err).__name__}: {err}",
                    source=source.name,
                ) from err

    async def _worker(self) -> None:
        while True:
            try:
                request = await self._queue.get()
            except QueueShutDown:
                return
            if self._stopping:
                self._queue.done(request)
                continue
            self._metrics.worker_active(1)
            try:
                await self._reconcile_handler(request)
            except asyncio.CancelledError:
                raise
            except Exception:  # pragma: no cover - _reconcile_handler catches everything
                log.exception("unexpected error in worker", extra={"controller": self._name})
            finally:
                self._metrics.worker_active(-1)
                self._queue.done(request)

    async def _call(self, request: Request) -> Any:
        if self._is_async:
            return await self._reconcile(request)
        loop = asyncio.get_running_loop()
        context = contextvars.copy_context()
        call = functools.partial(context.run, self._reconcile, request)
        return await loop.run_in_executor(self._executor, call)

    async def _reconcile_handler(self, request: Request) -> None:
        reconcile_id = str(uuid.uuid4())
        extra = {
            "controller": self._name,
            "namespace": request.namespace,
            # "name" is reserved by logging.LogRecord (the logger's name), hence "object_name".
            "object_name": request.name,
            "reconcile_id": reconcile_id,
        }
        token = _current.set(ReconcileInfo(self._name, request, reconcile_id))
        log.debug("Reconciling", extra=extra)
        started = self._clock.now()
        try:
            returned = await self._call(request)
        except asyncio.CancelledError:
            raise
        except TerminalError as err:
            self._queue.forget(request)
            self._metrics.reconciled("error", seconds=self._clock.now() - started, terminal=True)
            log.error(
                "Reconciler error (terminal, not retried)",
                exc_info=err,
                extra={**extra, "error": str(err)},
            )
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
            log.error("Reconciler error", exc_info=err, extra={**extra, "error": str(err)})
            return
        finally:
            _current.reset(token)
        elapsed = self._clock.now() - started
        result = _as_result(returned, extra)
        if result.requeue_after > 0:
            self._queue.forget(request)
            self._queue.add_after(request, result.requeue_after)
            self._metrics.reconciled("requeue_after", seconds=elapsed)
        elif result.requeue:
            self._queue.add_rate_limited(request)
            self._metrics.reconciled("requeue", seconds=elapsed)
        else:
            self._queue.forget(request)
            self._metrics.reconciled("success", seconds=elapsed)
        log.debug("Reconcile successful", extra=extra)


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
