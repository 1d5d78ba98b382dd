"""The multicluster manager: engages the clusters a provider finds and runs controllers on all.

multicluster-runtime's ``mcmanager`` (``pkg/manager/manager.go``) and ``mcbuilder``
(``pkg/builder``), in kubectrl's idiom:

- each controller is one :class:`~kubectrl.runtime.Controller` (one workqueue, its workers,
  its backoff) whose keys are :class:`ClusterRequest`\\ s;
- engaging a cluster builds its :class:`Cluster` (client, own informer cache) and starts, for
  every controller, that cluster's sources (``for_``, ``owns``, ``watches``) feeding the shared
  queue with the cluster's name; disengaging stops them, waits for the cluster's in-flight
  reconciles and closes its cache and connections;
- a cluster whose caches do not sync is retried with backoff, alone: the other clusters go on;
- ``watches_local`` watches the manager's own (management) cluster and fans each request out
  to every engaged cluster (and to each cluster engaged later).
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any, cast

from kubectrl._internal.clock import Clock, RealClock
from kubectrl.client import ClientConfig, KindRef, load_kubeconfig
from kubectrl.errors import KubectrlError
from kubectrl.kinds import is_model_class, kind_info
from kubectrl.multicluster._cluster import Cluster, ClusterNotEngagedError, _current
from kubectrl.multicluster._metrics import ClusterMetrics
from kubectrl.multicluster._provider import Provider
from kubectrl.multicluster._request import ClusterRequest
from kubectrl.objects import GroupVersionKind
from kubectrl.runtime import (
    CachedClient,
    Controller,
    ControllerOptions,
    Request,
    Result,
    TerminalError,
)
from kubectrl.runtime.handler import enqueue_request_for_object, enqueue_request_for_owner
from kubectrl.runtime.source import KindSource
from kubectrl.workqueue import LOW_PRIORITY

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

    from kubectrl.multicluster._fleet import FleetOptions, _Fleet

__all__ = [
    "ClusterReconciler",
    "MultiClusterBuilder",
    "MultiClusterError",
    "MultiClusterManager",
    "MultiClusterOptions",
]

log = logging.getLogger("kubectrl.multicluster")

ClusterReconcileFunc = Callable[[ClusterRequest], Awaitable[Result | None]]


class MultiClusterError(KubectrlError):
    """The manager stopped because its provider (or fleet coordination) failed; the cause is
    chained."""


@dataclasses.dataclass(frozen=True)
class MultiClusterOptions:
    """How clusters are engaged.

    ``cache_sync_timeout``: seconds a cluster's sources get to sync before the engagement is
    counted failed and retried; ``engage_backoff`` / ``engage_backoff_max``: the retry delay,
    doubling from the first to the second; ``disengage_timeout``: seconds disengaging waits for
    the cluster's in-flight reconciles; ``resync_period``: the per-cluster informers' resync.

    Example::

        >>> MultiClusterOptions(cache_sync_timeout=10).engage_backoff
        1.0
    """

    cache_sync_timeout: float = 30.0
    engage_backoff: float = 1.0
    engage_backoff_max: float = 30.0
    disengage_timeout: float = 30.0
    resync_period: float | None = None

    def __post_init__(self) -> None:
        for field in ("cache_sync_timeout", "engage_backoff", "engage_backoff_max"):
            value = getattr(self, field)
            if not isinstance(value, int | float) or value <= 0:
                raise ValueError(f"MultiClusterOptions.{field} must be > 0, not {value!r}")


@dataclasses.dataclass
class _Watch:
    kind: KindRef
    handler: Any
    predicates: list[Any]
    owned: bool = False
    controller_only: bool = True
    local: bool = False


@dataclasses.dataclass
class _Spec:
    controller: Controller
    watches: list[_Watch]
    owner: tuple[str, str]
    local_sources: list[KindSource] = dataclasses.field(default_factory=list)
    local_keys: set[Request] = dataclasses.field(default_factory=set)


class _Engagement:
    def __init__(self, name: str, config: ClientConfig, fence: Callable[[], bool] | None) -> None:
        self.name = name
        self.config = config
        self.fence = fence
        self.cluster: Cluster | None = None
        self.accepting = False
        self.ready = asyncio.Event()
        self.in_flight = 0
        self.idle = asyncio.Event()
        self.idle.set()
        self.task: asyncio.Task[None] | None = None

    def enter(self) -> None:
        self.in_flight += 1
        self.idle.clear()

    def leave(self) -> None:
        self.in_flight -= 1
        if self.in_flight == 0:
            self.idle.set()


def _owner_of(kind: KindRef) -> tuple[str, str]:
    """(apiVersion, kind) of a kind given as a tuple, a GroupVersionKind or a model class."""
    if isinstance(kind, GroupVersionKind):
        return (kind.api_version, kind.kind)
    if isinstance(kind, tuple) and len(kind) == 2:
        return (str(kind[0]), str(kind[1]))
    if isinstance(kind, type) and is_model_class(kind):
        info = kind_info(kind)
        return (info.api_version, info.kind)
    raise TypeError(
        f"for_(): give the kind as (apiVersion, kind), a GroupVersionKind or a model class, "
        f"not {kind!r}"
    )


class MultiClusterManager:
    """Runs multicluster controllers over the clusters ``provider`` engages.

    ``local`` is the management cluster (a :class:`~kubectrl.client.ClientConfig` or a
    kubeconfig path; optional): ``watches_local`` sources and, with ``fleet``, the peer and
    fencing Leases live there. ``fleet``
    (:class:`~kubectrl.multicluster.FleetOptions`) shares the clusters between replicas:
    each cluster is engaged only on the replica rendezvous hashing picks and that holds the
    cluster's Lease. ``registry`` gets the per-cluster metrics (``kubectrl.multicluster``'s
    ``_metrics``) and the controllers' own.

    Guarantees: each engaged cluster has its own client and informers, started on engagement
    and stopped on disengagement; one cluster failing to sync (or its apiserver going away
    later) does not stop the others: its engagement is retried with backoff and its informers
    reconnect when it is back; a request of a cluster that is no longer engaged (or, in a
    fleet, whose Lease this replica no longer holds) is not reconciled, and is counted in
    ``multicluster_dropped_requests_total`` and logged; disengaging waits for the cluster's
    in-flight reconciles (up to ``disengage_timeout``). Reconcilers must be ``async``.

    Caveats: the controllers' workers are shared by all clusters: a cluster whose apiserver
    hangs (rather than refusing connections) holds a worker per reconcile until the request
    times out; give controllers ``reconcile_timeout`` and enough
    ``max_concurrent_reconciles``.

    Example::

        provider = StaticProvider({"east": east.config(), "west": west.config()})
        manager = MultiClusterManager(provider)
        MultiClusterBuilder(manager).for_(("v1", "ConfigMap")).complete(reconcile)
        async with manager:
            ...
    """

    def __init__(
        self,
        provider: Provider,
        *,
        local: ClientConfig | str | None = None,
        options: MultiClusterOptions | None = None,
        fleet: FleetOptions | None = None,
        registry: CollectorRegistry | None = None,
        clock: Clock | None = None,
    ) -> None:
        if not callable(getattr(provider, "run", None)):
            raise TypeError(f"provider {provider!r} has no run(aware) method")
        self._provider = provider
        self._options = options if options is not None else MultiClusterOptions()
        self._clock: Clock = clock if clock is not None else RealClock()
        self._registry = registry
        self._metrics = ClusterMetrics(registry)
        self._local: Cluster | None = None
        if local is not None:
            config = local if isinstance(local, ClientConfig) else load_kubeconfig(local)
            self._local = Cluster(
                "", config, clock=self._clock, sync_timeout=self._options.cache_sync_timeout
            )
        self._specs: list[_Spec] = []
        self._names: set[str] = set()
        self._engaged: dict[str, _Engagement] = {}
        self._lock: asyncio.Lock | None = None
        self._stop_event: asyncio.Event | None = None
        self._running = asyncio.Event()
        self._failure: BaseException | None = None
        self._task: asyncio.Task[None] | None = None
        self._started = False
        self._fleet: _Fleet | None = None
        if fleet is not None:
            if self._local is None:
                raise ValueError("a fleet needs local= (the cluster its Leases live in)")
            from kubectrl.multicluster._fleet import _Fleet

            self._fleet = _Fleet(self, self._local.api, fleet, clock=self._clock)

    # ------------------------------------------------------------------ accessors

    @property
    def options(self) -> MultiClusterOptions:
        """The options in use."""
        return self._options

    @property
    def clock(self) -> Clock:
        """The clock the manager, its clusters and controllers wait on."""
        return self._clock

    @property
    def registry(self) -> CollectorRegistry | None:
        """The Prometheus registry (``None``: no metrics)."""
        return self._registry

    @property
    def local(self) -> Cluster:
        """The management cluster (``local=``); ``ValueError`` when none was given."""
        if self._local is None:
            raise ValueError("this MultiClusterManager has no local cluster (pass local=)")
        return self._local

    @property
    def identity(self) -> str:
        """This replica's identity in the fleet (``""`` without a fleet)."""
        return self._fleet.identity if self._fleet is not None else ""

    @property
    def clusters(self) -> frozenset[str]:
        """The clusters engaged on this replica now (ready or still syncing)."""
        return frozenset(self._engaged)

    @property
    def ready_clusters(self) -> frozenset[str]:
        """The engaged clusters whose caches synced."""
        return frozenset(n for n, e in self._engaged.items() if e.ready.is_set())

    @property
    def controllers(self) -> tuple[Controller, ...]:
        """The controllers built with :class:`MultiClusterBuilder`."""
        return tuple(s.controller for s in self._specs)

    def get_cluster(self, name: str) -> Cluster:
        """The engaged cluster ``name``; :class:`ClusterNotEngagedError` if it is not engaged."""
        engagement = self._engaged.get(name)
        if engagement is None or engagement.cluster is None:
            known = ", ".join(sorted(self._engaged)) or "none"
            raise ClusterNotEngagedError(
                f"cluster {name!r} is not engaged here (engaged: {known})", cluster=name
            )
        return engagement.cluster

    # ------------------------------------------------------------------ Aware

    async def engage(self, name: str, config: ClientConfig) -> None:
        """Engage ``name`` (the provider's call; re-engages a name already engaged)."""
        if not name:
            raise ValueError("engage: a cluster needs a non-empty name")
        if self._fleet is not None:
            self._fleet.add(name, config)
            return
        await self._engage(name, config, None)

    async def disengage(self, name: str) -> None:
        """Disengage ``name`` (the provider's call; a name not engaged is a no-op)."""
        if self._fleet is not None:
            await self._fleet.remove(name)
            return
        await self._disengage(name)

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Run until :meth:`stop` (or cancellation): start the controllers, the local sources,
        the fleet and the provider; on the way out disengage every cluster.

        Raises :class:`MultiClusterError` when the provider or the fleet failed."""
        if self._started:
            raise RuntimeError("this MultiClusterManager was already started")
        self._started = True
        self._stop_event = stop = asyncio.Event()
        self._lock = asyncio.Lock()
        provider_task: asyncio.Task[None] | None = None
        try:
            await self._start_local()
            for spec in self._specs:
                await spec.controller.start()
            if self._fleet is not None:
                await self._fleet.start()
            provider_task = asyncio.create_task(self._run_provider(), name="multicluster-provider")
            self._running.set()
            await stop.wait()
        finally:
            await self._shutdown(provider_task)
        if self._failure is not None:
            raise MultiClusterError(f"multicluster manager stopped: {self._failure}") from (
                self._failure
            )

    def stop(self) -> None:
        """Ask :meth:`start` to return (idempotent)."""
        if self._stop_event is not None:
            self._stop_event.set()

    async def __aenter__(self) -> MultiClusterManager:
        self._task = asyncio.create_task(self.start(), name="multicluster-manager")
        running = asyncio.ensure_future(self._running.wait())
        await asyncio.wait({running, self._task}, return_when=asyncio.FIRST_COMPLETED)
        running.cancel()
        if self._task.done():
            await self._task
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.stop()
        if self._task is not None:
            await self._task

    async def _run_provider(self) -> None:
        try:
            await self._provider.run(self)
        except asyncio.CancelledError:
            raise
        except Exception as err:
            log.error("provider %r failed; stopping the manager: %s", self._provider, err)
            self._fail(err)
            return
        log.info("provider %r returned; the engaged clusters stay engaged", self._provider)

    def _fail(self, err: BaseException) -> None:
        if self._failure is None:
            self._failure = err
        self.stop()

    async def _start_local(self) -> None:
        local_sources = [s for spec in self._specs for s in spec.local_sources]
        if not local_sources or self._local is None:
            return
        for spec in self._specs:
            for source in spec.local_sources:
                await source.start(self._fan_out(spec))
        self._local.informer_factory.start()
        await asyncio.gather(
            *(s.wait_for_sync(self._options.cache_sync_timeout) for s in local_sources)
        )

    async def _shutdown(self, provider_task: asyncio.Task[None] | None) -> None:
        if provider_task is not None:
            provider_task.cancel()
            await asyncio.wait({provider_task})
        if self._fleet is not None:
            await self._fleet.stop()
        for name in list(self._engaged):
            await self._disengage(name)
        for spec in self._specs:
            await spec.controller.stop(self._options.disengage_timeout)
            for source in spec.local_sources:
                await source.stop()
        if self._local is not None:
            await self._local.close()

    # ------------------------------------------------------------------ engagement

    async def _engage(
        self, name: str, config: ClientConfig, fence: Callable[[], bool] | None
    ) -> None:
        if name in self._engaged:
            await self._disengage(name)
        engagement = _Engagement(name, config, fence)
        self._engaged[name] = engagement
        engagement.task = asyncio.create_task(
            self._run_engagement(engagement), name=f"multicluster-engage-{name}"
        )
        log.info("engaging cluster %s (%s)", name, config.server, extra={"cluster": name})

    async def _disengage(self, name: str) -> None:
        engagement = self._engaged.pop(name, None)
        if engagement is None or engagement.task is None:
            return
        engagement.task.cancel()
        await asyncio.wait({engagement.task})
        self._metrics.disengaged(name)
        log.info("disengaged cluster %s", name, extra={"cluster": name})

    async def _run_engagement(self, engagement: _Engagement) -> None:
        name = engagement.name
        delay = self._options.engage_backoff
        attempt = 0
        while True:
            attempt += 1
            cluster = Cluster(
                name,
                engagement.config,
                clock=self._clock,
                sync_timeout=self._options.cache_sync_timeout,
                resync_period=self._options.resync_period,
            )
            if engagement.fence is not None:
                cluster.client.set_leader_fence(engagement.fence)
            sources: list[KindSource] = []
            try:
                self._metrics.engaged(name, False)
                engagement.cluster = cluster
                engagement.accepting = True
                for spec in self._specs:
                    for watch in spec.watches:
                        if watch.local:
                            continue
                        source = KindSource(
                            cluster.informer_factory,
                            watch.kind,
                            handler=self._handler_for(spec, watch),
                            predicates=watch.predicates,
                        )
                        sources.append(source)
                        await source.start(self._tagger(spec, name))
                await asyncio.gather(
                    *(s.wait_for_sync(self._options.cache_sync_timeout) for s in sources)
                )
            except asyncio.CancelledError:
                await self._teardown(engagement, cluster, sources)
                raise
            except Exception as err:
                self._metrics.engage_failed(name)
                log.error(
                    "cluster %s: caches did not sync (attempt %d), retrying in %g s: %s",
                    name,
                    attempt,
                    delay,
                    err,
                    extra={"cluster": name},
                )
                await self._teardown(engagement, cluster, sources)
                await self._clock.sleep(delay)
                delay = min(delay * 2, self._options.engage_backoff_max)
                continue
            engagement.ready.set()
            self._metrics.engaged(name, True)
            log.info("cluster %s engaged: caches synced", name, extra={"cluster": name})
            for spec in self._specs:
                for key in list(spec.local_keys):
                    spec.controller.enqueue(ClusterRequest(key.namespace, key.name, cluster=name))
            try:
                await asyncio.Event().wait()  # until cancelled by _disengage
            finally:
                await self._teardown(engagement, cluster, sources)

    async def _teardown(
        self, engagement: _Engagement, cluster: Cluster, sources: list[KindSource]
    ) -> None:
        engagement.accepting = False
        engagement.ready.clear()
        for source in sources:
            await source.stop()
        if not engagement.idle.is_set():
            idle = asyncio.ensure_future(engagement.idle.wait())
            timer = asyncio.ensure_future(self._clock.sleep(self._options.disengage_timeout))
            try:
                await asyncio.wait({idle, timer}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                idle.cancel()
                timer.cancel()
            if not engagement.idle.is_set():
                log.warning(
                    "cluster %s: %d reconciles still running after %g s; closing anyway",
                    engagement.name,
                    engagement.in_flight,
                    self._options.disengage_timeout,
                    extra={"cluster": engagement.name},
                )
        await cluster.close()
        engagement.cluster = None

    # ------------------------------------------------------------------ requests

    def _tagger(self, spec: _Spec, name: str) -> Callable[[Request], None]:
        queue = spec.controller.queue

        class _Tag:
            def __call__(self, request: Request) -> None:
                queue.add(ClusterRequest(request.namespace, request.name, cluster=name))

            def low_priority(self, request: Request) -> None:
                queue.add(
                    ClusterRequest(request.namespace, request.name, cluster=name),
                    priority=LOW_PRIORITY,
                )

        return _Tag()

    def _fan_out(self, spec: _Spec) -> Callable[[Request], None]:
        def enqueue(request: Request) -> None:
            spec.local_keys.add(Request(request.namespace, request.name))
            for name, engagement in list(self._engaged.items()):
                if engagement.ready.is_set():
                    spec.controller.enqueue(
                        ClusterRequest(request.namespace, request.name, cluster=name)
                    )

        return enqueue

    def _handler_for(self, spec: _Spec, watch: _Watch) -> Any:
        if watch.owned:
            api_version, kind = spec.owner
            return enqueue_request_for_owner(
                api_version, kind, controller_only=watch.controller_only
            )
        return watch.handler

    def _wrap(self, controller_name: str, func: ClusterReconcileFunc) -> ClusterReconcileFunc:
        async def reconcile(request: ClusterRequest) -> Result | None:
            if not isinstance(request, ClusterRequest):
                raise TerminalError(
                    f"controller {controller_name}: {request!r} names no cluster; a multicluster "
                    "controller's keys must be ClusterRequests"
                )
            engagement = self._engaged.get(request.cluster)
            reason = ""
            if engagement is None or engagement.cluster is None or not engagement.accepting:
                reason = "is not engaged on this replica"
            elif engagement.fence is not None and not engagement.fence():
                reason = "is no longer owned by this replica (its Lease is not held)"
            if reason or engagement is None or engagement.cluster is None:
                self._metrics.dropped(controller_name, request.cluster)
                log.info(
                    "controller %s: cluster %s %s; request %s not reconciled",
                    controller_name,
                    request.cluster,
                    reason,
                    request,
                    extra={"controller": controller_name, "cluster": request.cluster},
                )
                return None
            engagement.enter()
            token = _current.set(engagement.cluster)
            started = self._clock.now()
            result = "error"
            try:
                out = await func(request)
                if isinstance(out, Result) and out.requeue_after:
                    result = "requeue_after"
                elif isinstance(out, Result) and out.requeue:
                    result = "requeue"
                else:
                    result = "success"
                return out
            finally:
                _current.reset(token)
                engagement.leave()
                self._metrics.reconciled(
                    controller_name, request.cluster, result, self._clock.now() - started
                )

        return reconcile

    def _add(self, spec: _Spec) -> None:
        if self._started:
            raise RuntimeError("build controllers before starting the MultiClusterManager")
        if spec.controller.name in self._names:
            raise ValueError(f"a controller named {spec.controller.name!r} already exists")
        self._names.add(spec.controller.name)
        self._specs.append(spec)

    def __repr__(self) -> str:
        return (
            f"<MultiClusterManager provider={self._provider!r} "
            f"clusters={sorted(self._engaged)} controllers={len(self._specs)}>"
        )


class ClusterReconciler:
    """Base of a class reconciler of :class:`ClusterRequest`\\ s, bound to its manager.

    :meth:`MultiClusterBuilder.complete` sets :attr:`manager`; :meth:`cluster` and
    :meth:`client` give the request's cluster and its cached client.

    Example::

        class Copy(ClusterReconciler):
            async def reconcile(self, request: ClusterRequest) -> Result | None:
                cm = await self.client(request).get(("v1", "ConfigMap"), request.name,
                                                     namespace=request.namespace)
                ...
    """

    manager: MultiClusterManager | None = None

    def cluster(self, request: ClusterRequest) -> Cluster:
        """The request's cluster (:class:`ClusterNotEngagedError` once it is gone)."""
        if self.manager is None:
            raise RuntimeError(f"{type(self).__name__} is not bound: pass it to complete()")
        return self.manager.get_cluster(request.cluster)

    def client(self, request: ClusterRequest) -> CachedClient:
        """The request's cluster's :class:`~kubectrl.runtime.CachedClient`."""
        return self.cluster(request).client

    async def reconcile(self, request: ClusterRequest) -> Result | None:
        """Make the request's object in its cluster match the desired state."""
        raise NotImplementedError(f"{type(self).__name__}.reconcile")


class MultiClusterBuilder:
    """Builds a multicluster controller, as :class:`~kubectrl.runtime.Builder` builds one.

    - ``for_(kind)``, ``owns(kind)``, ``watches(kind, handler)``: in every engaged cluster,
      each request tagged with the cluster the event came from;
    - ``watches_local(kind, handler=None)``: in the manager's ``local`` cluster; each request
      goes to every engaged cluster (the object's key, by default);
    - ``with_event_filter``, ``with_options``, ``named`` as in the runtime Builder.

    ``complete(reconciler)`` takes an ``async def reconcile(request: ClusterRequest)`` or a
    :class:`ClusterReconciler`, builds the controller, adds it to the manager, returns it.

    Example::

        MultiClusterBuilder(manager).for_(("v1", "ConfigMap")).owns(("v1", "Secret")).complete(
            reconcile
        )
    """

    def __init__(self, manager: MultiClusterManager) -> None:
        self._manager = manager
        self._for: _Watch | None = None
        self._watches: list[_Watch] = []
        self._filters: list[Any] = []
        self._options: ControllerOptions | None = None
        self._changes: dict[str, Any] = {}
        self._name = ""
        self._built = False

    def for_(self, kind: KindRef, *, predicates: Iterable[Any] = ()) -> MultiClusterBuilder:
        """Reconcile ``kind`` in every engaged cluster."""
        if self._for is not None:
            raise ValueError("for_() may only be called once (one controller reconciles one kind)")
        self._for = _Watch(kind, enqueue_request_for_object(), list(predicates))
        return self

    def owns(
        self, kind: KindRef, *, predicates: Iterable[Any] = (), controller_only: bool = True
    ) -> MultiClusterBuilder:
        """Watch ``kind`` in every cluster and enqueue its controlling ``for_`` owner there."""
        self._watches.append(
            _Watch(kind, None, list(predicates), owned=True, controller_only=controller_only)
        )
        return self

    def watches(
        self, kind: KindRef, handler: Any, *, predicates: Iterable[Any] = ()
    ) -> MultiClusterBuilder:
        """Watch ``kind`` in every cluster; ``handler``'s requests go to that cluster."""
        if handler is None:
            raise ValueError("watches(kind, handler) needs a handler")
        self._watches.append(_Watch(kind, handler, list(predicates)))
        return self

    def watches_local(
        self, kind: KindRef, handler: Any = None, *, predicates: Iterable[Any] = ()
    ) -> MultiClusterBuilder:
        """Watch ``kind`` in the local cluster; its requests go to every engaged cluster."""
        self._manager.local  # noqa: B018 - raises ValueError naming the missing local=
        chosen = handler if handler is not None else enqueue_request_for_object()
        self._watches.append(_Watch(kind, chosen, list(predicates), local=True))
        return self

    def with_event_filter(self, predicate: Any) -> MultiClusterBuilder:
        """Add a predicate every watch must pass."""
        self._filters.append(predicate)
        return self

    def with_options(
        self, options: ControllerOptions | None = None, **changes: Any
    ) -> MultiClusterBuilder:
        """Set :class:`~kubectrl.runtime.ControllerOptions` (an object and/or fields)."""
        if options is not None:
            self._options = options
        self._changes.update(changes)
        return self

    def named(self, name: str) -> MultiClusterBuilder:
        """Name the controller (default: the ``for_`` kind, lower-cased)."""
        self._name = name
        return self

    def complete(self, reconciler: ClusterReconciler | ClusterReconcileFunc) -> Controller:
        """Build the controller, add it to the manager and return it."""
        if self._built:
            raise RuntimeError("this MultiClusterBuilder already built its controller")
        if self._for is None:
            raise ValueError("MultiClusterBuilder needs for_(kind) before complete()")
        owner = _owner_of(self._for.kind)
        name = self._name or owner[1].lower()
        if isinstance(reconciler, ClusterReconciler):
            reconciler.manager = self._manager
            func = cast("ClusterReconcileFunc", reconciler.reconcile)
        else:
            func = reconciler
        if not inspect.iscoroutinefunction(func):
            raise TypeError(
                f"controller {name}: the reconciler must be async (async def reconcile(request))"
            )
        options = self._options or ControllerOptions()
        if self._changes:
            options = dataclasses.replace(options, **self._changes)
        watches = [self._for, *self._watches]
        for watch in watches:
            watch.predicates = [*self._filters, *watch.predicates]
        # The controller's keys are ClusterRequests (a Request subclass): only the sources this
        # manager starts feed its queue, and the wrapper refuses anything else.
        wrapped = cast(
            "Callable[[Request], Awaitable[Result | None]]", self._manager._wrap(name, func)
        )
        controller = Controller(
            name,
            wrapped,
            options=options,
            clock=self._manager.clock,
            registry=self._manager.registry,
        )
        spec = _Spec(controller, watches, owner)
        for watch in watches:
            if watch.local:
                spec.local_sources.append(
                    KindSource(
                        self._manager.local.informer_factory,
                        watch.kind,
                        handler=watch.handler,
                        predicates=watch.predicates,
                    )
                )
        self._manager._add(spec)
        self._built = True
        return controller
