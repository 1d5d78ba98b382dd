"""The Manager: runs controllers and their shared pieces as one process (``manager.Manager``).

It owns what controllers share: one :class:`~kubectrl.client.AsyncClient`, one
:class:`~kubectrl.cache.InformerFactory` (so two controllers watching a kind make one watch), a
:class:`CachedClient` for reconcilers, one Prometheus registry, the probe and metrics servers and,
if enabled, the leader elector.

Start order (controller-runtime's): HTTP servers; caches (started and synced, which makes
``/readyz`` pass); runnables that do not need leader election; the sources of warm leader-only
controllers (``ControllerOptions.enable_warmup``: their queues fill on every replica); leader
election; then, once leading (or at once without leader election), leader-only runnables such as
controllers. Stop order: leader-only runnables drain their in-flight reconciles (up to the
graceful shutdown timeout, 30 s); the lease is released at once if configured (so a successor
need not wait for anything else); then the other runnables stop, the event broadcaster writing
what it still holds for at most ``event_flush_timeout`` (5 s); caches stop; servers stop.

A lost lease stops the manager at once (in-flight reconciles are cancelled: another replica
may already lead) and :meth:`Manager.start` raises
:class:`~kubectrl.leaderelection.LeaderElectionLostError`; the process must exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import inspect
import ipaddress
import logging
import os
import signal
import sys
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeAlias, runtime_checkable

from kubectrl._aio import call_in_loop
from kubectrl._clock import Clock, RealClock
from kubectrl.cache import InformerFactory
from kubectrl.client import AsyncClient, ClientConfig, KindRef, load_config, load_kubeconfig
from kubectrl.errors import KubectrlError
from kubectrl.events import ClientEventSink, EventBroadcaster, EventRecorder
from kubectrl.leaderelection import (
    LeaderElectionConfig,
    LeaderElector,
    LeaseLock,
    default_identity,
)
from kubectrl.runtime._cache_client import BlockingCachedClient, CachedClient
from kubectrl.runtime._controller import Controller
from kubectrl.runtime._field_index import FieldIndexer
from kubectrl.runtime._server import (
    Checker,
    HTTPServer,
    KubernetesAuthFilter,
    metrics_tls_context,
    parse_bind_address,
    ping,
)

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

    from kubectrl.runtime._sharding import ShardContext, ShardedRunner, ShardingOptions
    from kubectrl.webhook import WebhookServer, WebhookServerOptions

__all__ = ["Manager", "ManagerOptions", "Runnable", "RunnableLike"]

log = logging.getLogger("kubectrl.runtime.manager")

#: How long past the graceful shutdown period :meth:`Manager.run` waits for the rest of the
#: shutdown (caches, servers, the lease release) before it exits the process regardless.
SHUTDOWN_MARGIN = 15.0

_IN_CLUSTER_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")


@runtime_checkable
class Runnable(Protocol):
    """A long-running part of the process the manager starts and stops (``manager.Runnable``).

    ``start()`` returns once running; ``stop(timeout)`` stops and waits up to ``timeout`` s
    (a :class:`~kubectrl.runtime.Controller` is one). An optional ``need_leader_election``
    attribute (default ``True``, as controller-runtime) says whether it runs on the leader only.
    A leader-only runnable with a ``set_leader_fence(fence)`` method (a Controller has one) is
    given the elector's :meth:`~kubectrl.leaderelection.LeaderElector.fence` before it starts
    (``None`` without leader election), to ask before each step it takes.
    A plain ``async def run() -> None`` that runs until cancelled is accepted too.

    Example::

        class Ticker:
            need_leader_election = False
            async def start(self) -> None: ...
            async def stop(self, timeout: float | None = 30.0) -> None: ...
    """

    async def start(self) -> None:
        """Start; return once running."""
        ...

    async def stop(self, timeout: float | None = 30.0) -> None:
        """Stop; wait up to ``timeout`` s for in-flight work."""
        ...


RunnableLike: TypeAlias = "Runnable | Callable[[], Awaitable[None]]"


#: Where metrics are served when ``ManagerOptions.metrics_bind_address`` is left ``None``.
_DEFAULT_METRICS_BIND_ADDRESS = "127.0.0.1:8080"


@dataclasses.dataclass(frozen=True)
class ManagerOptions:
    """A manager's settings, with controller-runtime's defaults.

    - ``metrics_bind_address`` ``None``: ``"127.0.0.1:8080"``, loopback only; but off when the
      client config brings its own transport (``ClientConfig.transport``: an API server in the
      process, such as ``kubectrl.testing.FakeAPI``), so that test managers bind no fixed port
      and several run at once. ``"0"`` disables; port 0 picks a free port.
      controller-runtime's ``":8080"`` served metrics in plain HTTP to anyone who could reach
      the pod; on loopback only processes in the pod (a sidecar scraper,
      ``kubectl port-forward``) can. To serve the network, turn ``metrics_secure`` on
      and bind, say, ``":8443"``; a plain non-loopback address is allowed but logged as a
      warning.
    - ``metrics_secure`` ``False``: serve ``/metrics`` over TLS, only to bearer tokens the
      cluster authenticates (TokenReview) and authorizes for ``get`` on the non-resource URL
      ``/metrics`` (SubjectAccessReview): 401 / 403 otherwise. controller-runtime's
      ``SecureServing`` with ``filters.WithAuthenticationAndAuthorization``.
    - ``metrics_cert_dir`` ``""``: with ``metrics_secure``, the directory holding ``tls.crt``
      and ``tls.key``; empty makes a self-signed certificate at start (needs
      ``cryptography``).
    - ``health_probe_bind_address`` ``"0"``: probes off unless an address is given. Probes are
      always plain HTTP without authentication: the kubelet's probes cannot authenticate, and
      they reveal only ``ok`` or which check failed.
    - ``leader_election`` ``False``; ``leader_election_id`` names the Lease (required when on);
      ``leader_election_namespace`` defaults to the pod's namespace when in a cluster (else
      required); ``lease_duration``/``renew_deadline``/``retry_period`` 15/10/2 s;
      ``leader_election_release_on_cancel`` ``False`` (release the lease on a clean shutdown so
      a successor takes over at once); ``identity`` defaults to ``hostname_uuid``.
    - ``graceful_shutdown_timeout`` 30 s: how long in-flight reconciles may take to finish.
    - ``event_flush_timeout`` 5 s: how long, after the lease was released, queued events may
      take to be written on shutdown (also bounded by what is left of the graceful period).
      controller-runtime flushes its recorder within the graceful period, after the release.
    - ``cache_namespace`` ``None``: cache every namespace; a name restricts every informer.
    - ``cache_sync_timeout`` 120 s (controller-runtime's controller ``CacheSyncTimeout``).
    - ``sync_period`` ``None``: no periodic resync. controller-runtime uses 10 h with jitter;
      level-triggered reconcilers with ``requeue_after`` rarely need it.
    - ``cache_keep_managed_fields`` ``False``: cached objects carry no ``metadata.managedFields``
      (server-side apply bookkeeping, often the largest part of an object; reads from the API
      reader still have it). ``True`` keeps it in every informer of the manager.
    - ``webhook_server`` ``None``: the :class:`~kubectrl.webhook.WebhookServerOptions` of
      :attr:`Manager.webhook_server` (port 9443, certificates from the default cert dir).
    - ``sharding`` ``None``: a :class:`~kubectrl.runtime.ShardingOptions` shards every
      leader-only controller (those the Builder makes): the manager runs a
      :class:`~kubectrl.runtime.ShardedRunner` on every replica, and each controller runs once
      per shard this replica holds, on that shard's cache, fenced by the shard's Lease (see
      docs/scaling.md). Other leader-only runnables still follow ``leader_election``.

    Example::

        >>> ManagerOptions(leader_election=True, leader_election_id="x").lease_duration
        15.0
    """

    metrics_bind_address: str | None = None
    metrics_secure: bool = False
    metrics_cert_dir: str = ""
    health_probe_bind_address: str = "0"
    leader_election: bool = False
    leader_election_id: str = ""
    leader_election_namespace: str = ""
    leader_election_release_on_cancel: bool = False
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    identity: str = ""
    graceful_shutdown_timeout: float = 30.0
    event_flush_timeout: float = 5.0
    cache_namespace: str | None = None
    cache_sync_timeout: float = 120.0
    sync_period: float | None = None
    cache_keep_managed_fields: bool = False
    webhook_server: WebhookServerOptions | None = None
    sharding: ShardingOptions | None = None

    def __post_init__(self) -> None:
        if self.leader_election and not self.leader_election_id:
            raise ValueError("leader_election needs leader_election_id (the Lease's name)")
        if self.graceful_shutdown_timeout < 0:
            raise ValueError("graceful_shutdown_timeout must be >= 0")
        if self.event_flush_timeout < 0:
            raise ValueError("event_flush_timeout must be >= 0")
        if self.cache_sync_timeout <= 0:
            raise ValueError("cache_sync_timeout must be > 0")
        if self.leader_election:
            self.leader_election_config()  # validates the timings

    def leader_election_config(self) -> LeaderElectionConfig:
        """The elector's timing (validated: lease > renew > 1.2 x retry > 0)."""
        return LeaderElectionConfig(
            lease_duration=self.lease_duration,
            renew_deadline=self.renew_deadline,
            retry_period=self.retry_period,
            release_on_cancel=self.leader_election_release_on_cancel,
            name=self.leader_election_id,
        )


class ManagerError(KubectrlError):
    """A runnable failed, so the manager stopped; ``__cause__`` is the runnable's error.

    Not retryable as is (e.g. a cache that never synced: fix RBAC or install the CRD).

    Example::

        try:
            await manager.start()
        except ManagerError as err:
            print(err.__cause__)
    """


class _Handle:
    """One added runnable and its task."""

    def __init__(self, runnable: RunnableLike, need_leader_election: bool) -> None:
        self.runnable = runnable
        self.need_leader_election = need_leader_election
        self.task: asyncio.Task[None] | None = None
        self.started = False
        self.name = str(getattr(runnable, "name", "") or getattr(runnable, "__qualname__", "")) or (
            type(runnable).__name__
        )

    def launch(self, on_done: Callable[[_Handle], None]) -> None:
        self.task = asyncio.ensure_future(self._run())
        self.task.add_done_callback(lambda _: on_done(self))

    async def _run(self) -> None:
        if isinstance(self.runnable, Runnable):
            await self.runnable.start()
            self.started = True
            await asyncio.get_running_loop().create_future()  # until cancelled by stop()
        else:
            self.started = True
            result = self.runnable()
            if inspect.isawaitable(result):
                await result

    async def stop(self, timeout: float) -> None:
        task = self.task
        if task is None:
            return
        if task.done():
            return
        if isinstance(self.runnable, Runnable) and self.started:
            try:
                await self.runnable.stop(timeout)
            except Exception:
                log.exception("runnable failed to stop", extra={"runnable": self.name})
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            return
        # A plain coroutine (or a Runnable still starting, e.g. waiting for its caches): cancel
        # and give it the timeout to unwind.
        task.cancel()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait({task}, timeout=timeout)


class _BroadcasterRunnable:
    """Runs an event broadcaster's writer task for the manager's lifetime."""

    name = "event-broadcaster"
    need_leader_election = False

    def __init__(self, broadcaster: EventBroadcaster, flush_timeout: float) -> None:
        self._broadcaster = broadcaster
        self._flush_timeout = flush_timeout

    async def start(self) -> None:
        self._broadcaster.start()

    async def stop(self, timeout: float | None = 30.0) -> None:
        bound = self._flush_timeout if timeout is None else min(timeout, self._flush_timeout)
        await self._broadcaster.shutdown(bound)


class Manager:
    """Runs controllers with a shared cache, client, metrics, probes and leader election.

    ``config`` is a :class:`~kubectrl.client.ClientConfig`, a kubeconfig path, or ``None``
    (:func:`~kubectrl.client.load_config`: ``KUBECONFIG``, in-cluster, ``~/.kube/config``).
    ``registry`` is the Prometheus registry every controller, workqueue and the elector report
    to (a fresh one by default, served on ``/metrics``). ``clock`` (default the machine's) is the
    time every part the manager builds waits on: the informers (resyncs, relists' backoff,
    sync timeouts), the event broadcaster, the leader elector and the shutdown's deadlines;
    controllers run on it too when given ``clock=manager.clock`` (:attr:`clock`), so
    ``requeue_after`` and the failure backoff run on it. A
    :class:`~kubectrl._clock.FakeClock` there lets a test move time by hand instead of sleeping
    (see :func:`kubectrl.testing.run_manager`).

    Guarantees: runnables start in controller-runtime's order (see the module docs) and stop in
    reverse; controllers start only after every cache synced and, with leader election, only on
    the leader; ``/readyz`` is 503 until the caches synced (and, with leader election, while the
    elector is not running), then 200; ``/healthz`` is 200 while the process runs. A runnable
    that fails stops the manager, and :meth:`start` raises :class:`ManagerError` from it.

    Caveats: one manager per event loop; the client and caches belong to the loop
    :meth:`start` runs on. Build controllers (:class:`~kubectrl.runtime.Builder`) before
    starting.

    Example::

        manager = Manager(options=ManagerOptions(health_probe_bind_address=":8081"))
        Builder(manager).for_(("v1", "ConfigMap")).owns(("v1", "Secret")).complete(reconcile)
        manager.run()   # blocks; SIGTERM/SIGINT shut down gracefully and return
    """

    def __init__(
        self,
        config: ClientConfig | str | os.PathLike[str] | None = None,
        *,
        options: ManagerOptions | None = None,
        registry: CollectorRegistry | None = None,
        clock: Clock | None = None,
    ) -> None:
        self._options = options if options is not None else ManagerOptions()
        self._clock: Clock = clock if clock is not None else RealClock()
        if config is None:
            config = load_config()
        elif not isinstance(config, ClientConfig):
            config = load_kubeconfig(config)
        self._config = config
        self._api = AsyncClient(config)
        self._shard_templates: list[Controller] = []
        self._shard_kinds: set[KindRef] = set()
        self._sharded: ShardedRunner | None = None
        factory_type = InformerFactory
        if self._options.sharding is not None:
            from kubectrl.runtime._sharding import _RoutingInformerFactory

            factory_type = _RoutingInformerFactory
        self._factory = factory_type(
            self._api,
            namespace=self._options.cache_namespace,
            resync_period=self._options.sync_period,
            clock=self._clock,
            keep_managed_fields=self._options.cache_keep_managed_fields,
        )
        self._client = CachedClient(
            self._api, self._factory, sync_timeout=self._options.cache_sync_timeout
        )
        self._blocking_client = BlockingCachedClient(self._client)
        self._registry = registry if registry is not None else _new_registry()
        self._metrics_server = self._new_metrics_server()
        self._probe_server = HTTPServer(self._options.health_probe_bind_address)
        self._probe_server.add_healthz_check("ping", ping)
        self._probe_server.add_readyz_check("informers", self._check_caches)
        if self._options.leader_election:
            self._probe_server.add_readyz_check("leader-election", self._check_elector)
        self._identity = self._options.identity or default_identity()
        self._handles: list[_Handle] = []
        self._names: set[str] = set()
        self._elector: LeaderElector | None = None
        self._elector_task: asyncio.Task[None] | None = None
        self._caches_synced = False
        self._leading_started = False
        self._started = False
        self._stop_event: asyncio.Event | None = None
        self._stop_requested = False
        self._failure: BaseException | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._signals = 0
        self._lost = False
        self._background: asyncio.Task[None] | None = None
        self._broadcaster: EventBroadcaster | None = None
        self._events_api: AsyncClient | None = None
        self._in_run = False
        self._run_done = threading.Event()
        self._webhook_server: WebhookServer | None = None
        if self._options.sharding is not None:
            self._sharded = self._new_sharded_runner(self._options.sharding)
            self.add(self._sharded, need_leader_election=False)
            # A shard's reconciles write only while its Lease is held (see _write_fence).
            self._client.set_leader_fence(self._write_fence)

    # ------------------------------------------------------------------ accessors

    @property
    def options(self) -> ManagerOptions:
        """The options in use."""
        return self._options

    @property
    def clock(self) -> Clock:
        """The clock the manager's parts wait on (give it to controllers built by hand).

        Example::

            >>> from kubectrl._clock import FakeClock
            >>> from kubectrl.client import ClientConfig
            >>> clock = FakeClock()
            >>> config = ClientConfig(server="https://example.invalid")
            >>> options = ManagerOptions(metrics_bind_address="0")
            >>> Manager(config, options=options, clock=clock).clock is clock
            True
        """
        return self._clock

    @property
    def client(self) -> CachedClient:
        """The client for reconcilers: cached reads, server writes."""
        return self._client

    @property
    def blocking_client(self) -> BlockingCachedClient:
        """:attr:`client` for sync (``def``) reconcilers: the same methods, blocking.

        Calls run on the manager's loop and wait; reads are cached, writes fenced. Calling it
        on the loop's own thread (from ``async`` code) raises ``RuntimeError``.

        Example::

            client = manager.blocking_client

            def reconcile(request: Request) -> None:
                cm = client.get(("v1", "ConfigMap"), request.name, namespace=request.namespace)
        """
        return self._blocking_client

    @property
    def api_reader(self) -> AsyncClient:
        """The uncached client (live reads, and the client every cache uses)."""
        return self._api

    @property
    def informer_factory(self) -> InformerFactory:
        """The shared informer factory (the manager's cache)."""
        return self._factory

    @property
    def field_indexer(self) -> FieldIndexer:
        """Field indexes on the cache (controller-runtime's ``GetFieldIndexer()``): register one
        with ``index_field(kind, field, fn)``, then list by it from :attr:`client` with
        ``matching_fields``.

        Example::

            manager.field_indexer.index_field(V1Job, "metadata.controller", job_owner)
            jobs = await manager.client.list(
                V1Job, namespace="ns", matching_fields={"metadata.controller": "backup"}
            )
        """
        return self._client.field_indexer

    @property
    def registry(self) -> CollectorRegistry | None:
        """The Prometheus registry served on ``/metrics`` (``None`` without prometheus-client)."""
        return self._registry

    @property
    def identity(self) -> str:
        """This replica's leader election identity (``hostname_uuid`` by default)."""
        return self._identity

    @property
    def metrics_port(self) -> int | None:
        """The metrics server's bound port once started (``None`` when disabled)."""
        return self._metrics_server.port

    @property
    def probe_port(self) -> int | None:
        """The probe server's bound port once started (``None`` when disabled)."""
        return self._probe_server.port

    @property
    def caches_synced(self) -> bool:
        """Whether the caches synced (what ``/readyz`` reports)."""
        return self._caches_synced

    @property
    def webhook_server(self) -> WebhookServer:
        """The :class:`~kubectrl.webhook.WebhookServer` (made on first use from
        ``options.webhook_server``).

        The manager starts it, on every replica (webhooks are not leader-elected), before the
        caches, iff something is registered on it, adds the ``webhook`` readiness check once it
        serves, and stops it last on shutdown. Register through
        :class:`~kubectrl.runtime.WebhookBuilder`.

        Example::

            >>> from kubectrl.client import ClientConfig
            >>> manager = Manager(ClientConfig(server="https://example.invalid"),
            ...                   options=ManagerOptions(metrics_bind_address="0"))
            >>> manager.webhook_server.options.port
            9443
        """
        if self._webhook_server is None:
            from kubectrl.webhook import WebhookServer

            self._webhook_server = WebhookServer(
                self._options.webhook_server, registry=self._registry, clock=self._clock
            )
        return self._webhook_server

    def is_leader(self) -> bool:
        """Whether leader-only runnables run here (always, once started, without election)."""
        return self._leading_started

    # ------------------------------------------------------------------ configuration

    def add(self, runnable: RunnableLike, *, need_leader_election: bool | None = None) -> None:
        """Add a runnable (a controller, a :class:`Runnable`, or an ``async def`` function).

        ``need_leader_election`` overrides the runnable's own attribute (default ``True``).
        Runnables added after :meth:`start` start at once (respecting leadership).

        Example::

            async def heartbeat() -> None:
                while True:
                    await asyncio.sleep(60)
            manager.add(heartbeat, need_leader_election=False)
        """
        if need_leader_election is None:
            need_leader_election = bool(getattr(runnable, "need_leader_election", True))
        if self._sharded is not None and need_leader_election and isinstance(runnable, Controller):
            self._add_shard_template(runnable)
            return
        handle = _Handle(runnable, need_leader_election)
        name = getattr(runnable, "name", None)
        if isinstance(name, str) and name and hasattr(runnable, "queue"):
            if name in self._names:
                raise ValueError(f"a controller named {name!r} was already added; use named()")
            self._names.add(name)
        self._handles.append(handle)
        running = self._started and not self._stop_requested
        if running and (not need_leader_election or self._leading_started):
            self._launch(handle)

    @property
    def sharded_runner(self) -> ShardedRunner | None:
        """The runner of the sharded controllers (with ``ManagerOptions.sharding``), else
        ``None``: which shards this replica holds (``held``), its identity, its history."""
        return self._sharded

    def _new_sharded_runner(self, sharding: ShardingOptions) -> ShardedRunner:
        from kubectrl.runtime._sharding import ShardedRunner, shard_controllers

        options = self._options

        def setup(context: ShardContext) -> list[Controller]:
            return shard_controllers(self._shard_templates, context, self._factory)

        return ShardedRunner(
            self._api,
            sharding,
            setup,
            clock=self._clock,
            registry=self._registry,
            factory_options={
                "namespace": options.cache_namespace,
                "resync_period": options.sync_period,
                "keep_managed_fields": options.cache_keep_managed_fields,
            },
            stop_timeout=options.graceful_shutdown_timeout,
            kinds=self._shard_kinds,  # read as each shard starts
        )

    def _add_shard_template(self, controller: Controller) -> None:
        from kubectrl.runtime._kind_source import KindSource

        if self._started:
            raise RuntimeError(
                f"controller {controller.name}: a sharding manager takes its controllers before "
                "start() (each shard builds its copies when it starts)"
            )
        sources = [s for s in controller.sources if isinstance(s, KindSource)]
        if not sources or len(sources) != len(controller.sources):
            raise ValueError(
                f"sharded controller {controller.name}: every source must be a KindSource on "
                "the manager's cache (a shard rebuilds them on its own cache); add it with "
                "need_leader_election=False to run it unsharded on every replica"
            )
        if controller.name in self._names:
            raise ValueError(f"a controller named {controller.name!r} was already added")
        self._names.add(controller.name)
        self._shard_templates.append(controller)
        sharding = self._options.sharding
        if sharding is None:  # pragma: no cover - only called when sharding is configured
            raise RuntimeError(f"controller {controller.name}: the manager is not sharded")
        for index, source in enumerate(sources):
            if index == 0 or sharding.field == "namespace":
                self._shard_kinds.add(source.kind)

    def event_recorder(self, component: str) -> EventRecorder:
        """An :class:`~kubectrl.events.EventRecorder` reporting as ``component``.

        controller-runtime's ``GetEventRecorderFor``. Every recorder of a manager shares one
        broadcaster (correlation, spam filter, retries), which runs on every replica (not only
        the leader) and is flushed on shutdown after the controllers stopped and the lease was
        released, for at most ``event_flush_timeout``: a broadcaster that cannot write (the
        server is gone, events are retried) never delays the successor's takeover. Events are
        written through a client of their own (same config, its own rate limiter and
        connections, as controller-runtime's recorder provider builds its own clientset), so a
        burst of events never spends the reconcilers' QPS.

        Example::

            recorder = manager.event_recorder("sample-controller")
            recorder.event(foo, "Normal", "Synced", "Foo synced successfully")
        """
        if self._broadcaster is None:
            self._events_api = AsyncClient(self._config)
            self._broadcaster = EventBroadcaster(
                ClientEventSink(self._events_api), clock=self._clock
            )
            self.add(
                _BroadcasterRunnable(self._broadcaster, self._options.event_flush_timeout),
                need_leader_election=False,
            )
        return self._broadcaster.new_recorder(component, reporting_instance=self._identity)

    def add_healthz_check(self, name: str, check: Checker) -> None:
        """Add a liveness check served on ``/healthz`` (with the probe server on)."""
        self._probe_server.add_healthz_check(name, check)

    def add_readyz_check(self, name: str, check: Checker) -> None:
        """Add a readiness check served on ``/readyz``."""
        self._probe_server.add_readyz_check(name, check)

    # ------------------------------------------------------------------ lifecycle

    def stop(self) -> None:
        """Ask :meth:`start` to shut down gracefully (safe from a signal handler or thread).

        Example: ``loop.call_later(60, manager.stop)``.
        """
        loop = self._loop
        if loop is None:
            self._stop_requested = True
            return
        if not call_in_loop(loop, self._request_stop):
            # The loop that ran start() is closed: a later start() stops at once.
            self._stop_requested = True

    def run(self, *, handle_signals: bool = True) -> None:
        """Blocking entry point: ``asyncio.run(start())`` with SIGTERM/SIGINT handlers.

        The first signal shuts down gracefully (in-flight reconciles get up to
        ``graceful_shutdown_timeout``) and ``run`` returns, so the process exits 0; a second
        signal exits at once with status 1. A lost lease or a failed runnable raises.

        A sync (``def``) reconcile cannot be interrupted: if one is still running when the
        graceful period has ended, ``run`` logs one error naming the controllers and ends the
        process with status 1 (``os._exit``: its thread would otherwise keep it alive). The
        same happens if the shutdown as a whole is still not done ``SHUTDOWN_MARGIN`` (15 s)
        after the graceful period.

        Example::

            if __name__ == "__main__":
                manager.run()
        """
        self._in_run = True
        try:
            asyncio.run(self.start(handle_signals=handle_signals))
        finally:
            self._run_done.set()
            stuck = self._stuck_controllers()
            if stuck:
                self._exit_stuck(stuck, "the graceful shutdown period ended")

    async def start(self, *, handle_signals: bool = False) -> None:
        """Start everything in order and block until stopped; then shut down in reverse.

        Returns after a graceful stop (:meth:`stop`, a signal with ``handle_signals``, or
        cancellation, which is treated as a stop and re-raised). Raises
        :class:`~kubectrl.leaderelection.LeaderElectionLostError` when the lease is lost and
        :class:`ManagerError` when a runnable (say, a controller whose cache never synced)
        fails.
        """
        if self._started:
            raise RuntimeError("a Manager can be started once")
        self._started = True
        self._loop = loop = asyncio.get_running_loop()
        self._blocking_client.bind_loop(loop)
        self._stop_event = asyncio.Event()
        if self._stop_requested:
            self._stop_event.set()
        if handle_signals:
            self._install_signal_handlers(loop)
        cancelled = False
        starter = asyncio.ensure_future(self._start_all())
        try:
            stopper = asyncio.ensure_future(self._stop_event.wait())
            try:
                await asyncio.wait({starter, stopper}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                stopper.cancel()
            if starter.done():
                starter.result()  # raises a cache-sync failure
                await self._stop_event.wait()
        except asyncio.CancelledError:
            cancelled = True
        except Exception as err:
            self._fail(err)
        finally:
            if not starter.done():
                starter.cancel()
                await asyncio.gather(starter, return_exceptions=True)
            await self._shutdown()
            if handle_signals:
                self._remove_signal_handlers(loop)
        if self._failure is not None:
            raise self._failure
        if cancelled:
            raise asyncio.CancelledError

    async def __aenter__(self) -> Manager:
        """Start in a background task; ``async with`` exit stops gracefully."""
        self._background = asyncio.ensure_future(self.start())
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.stop()
        if self._background is not None:
            await self._background

    # ------------------------------------------------------------------ internals

    async def _start_all(self) -> None:
        # 1. HTTP servers, so probes answer (503 on /readyz) while caches sync.
        await self._metrics_server.start()
        await self._probe_server.start()
        if self._metrics_server.enabled:
            log.info("Starting metrics server", extra={"port": self.metrics_port})
        # Webhooks serve on every replica, before the caches (controller-runtime's
        # WebhookServers runnable group): the API server may need them to admit anything.
        webhooks = self._webhook_server
        if webhooks is not None and webhooks.registrations:
            await webhooks.start()
            self._probe_server.add_readyz_check("webhook", webhooks.check_serving)
        # 2. Caches: every informer asked for so far (by Builder sources), synced; a sharded
        # controller's own kinds are cached per shard instead.
        self._discard_template_informers()
        self._factory.start()
        log.info("Waiting for caches to sync", extra={"informers": len(self._factory.informers)})
        await self._factory.wait_for_cache_sync(
            self._options.cache_sync_timeout, raise_on_failure=True
        )
        self._caches_synced = True
        if self._stop_event is not None and self._stop_event.is_set():
            return
        # 3. Runnables that do not need leadership, and the sources of warm leader-only
        # controllers (ControllerOptions.enable_warmup): their queues fill before the election.
        for handle in list(self._handles):
            if not handle.need_leader_election:
                self._launch(handle)
        await self._warm_up()
        # 4. Leader election, then 5. leader-only runnables.
        if not self._options.leader_election:
            self._start_leader_runnables()
            return
        namespace = self._options.leader_election_namespace or _in_cluster_namespace()
        lock = LeaseLock(
            self._api,
            namespace=namespace,
            name=self._options.leader_election_id,
            identity=self._identity,
        )
        self._elector = LeaderElector(
            lock,
            self._options.leader_election_config(),
            on_started_leading=self._start_leader_runnables,
            registry=self._registry,
            clock=self._clock,
        )
        self._client.set_leader_fence(self._write_fence)
        self._elector_task = asyncio.ensure_future(self._elector.run())
        self._elector_task.add_done_callback(self._on_elector_done)

    async def _warm_up(self) -> None:
        warm = [
            handle.runnable
            for handle in self._handles
            if handle.need_leader_election
            and isinstance(handle.runnable, Controller)
            and handle.runnable.options.enable_warmup
        ]
        if warm and self._options.leader_election:
            await asyncio.gather(*(controller.warm_up() for controller in warm))

    def _start_leader_runnables(self) -> None:
        if self._stop_requested or self._leading_started:
            return
        self._leading_started = True
        log.info("Starting leader-only runnables", extra={"identity": self._identity})
        for handle in list(self._handles):
            if handle.need_leader_election and handle.task is None:
                self._launch(handle)

    def _launch(self, handle: _Handle) -> None:
        if handle.need_leader_election:
            # Controllers ask the elector's fence before each reconcile, so a leader resumed
            # after a pause past its renew deadline starts no reconcile (issue: split brain).
            set_fence = getattr(handle.runnable, "set_leader_fence", None)
            if callable(set_fence):
                set_fence(self._elector.fence if self._elector is not None else None)
        handle.launch(self._on_runnable_done)

    def _discard_template_informers(self) -> None:
        from kubectrl.runtime._kind_source import KindSource
        from kubectrl.runtime._sharding import _kind_key, _RoutingInformerFactory

        factory = self._factory
        if self._sharded is None or not isinstance(factory, _RoutingInformerFactory):
            return
        kinds = {_kind_key(k) for k in self._shard_kinds}
        used = {
            id(source.informer)
            for handle in self._handles
            for source in getattr(handle.runnable, "sources", ())
            if isinstance(source, KindSource)
        }
        for template in self._shard_templates:
            for source in template.sources:
                if (
                    isinstance(source, KindSource)
                    and _kind_key(source.kind) in kinds
                    and id(source.informer) not in used
                ):
                    factory.discard(source.informer)

    def _write_fence(self) -> bool:
        # A sharded controller's reconcile writes only while its shard's Lease is held.
        from kubectrl.runtime._sharding import current_shard

        shard = current_shard()
        if shard is not None:
            return shard.fence()
        # Before leading, only runnables that need no leadership run, and their writes are not
        # the leader's: they pass. Once leader-only work has started, a write needs the lease.
        elector = self._elector
        return elector is None or not self._leading_started or elector.fence()

    def _on_runnable_done(self, handle: _Handle) -> None:
        task = handle.task
        if task is None or task.cancelled() or self._stop_requested:
            return
        err = task.exception()
        if err is not None:
            failure = ManagerError(f"runnable {handle.name} failed: {type(err).__name__}: {err}")
            failure.__cause__ = err
            self._fail(failure)

    def _on_elector_done(self, task: asyncio.Task[None]) -> None:
        if task.cancelled() or self._stop_requested:
            return
        err = task.exception()
        if err is None:
            err = ManagerError("leader election stopped unexpectedly")
        log.error("leader election lost; stopping: %s", err, extra={"error": str(err)})
        self._lost = True
        self._fail(err)

    def _fail(self, err: BaseException) -> None:
        if self._failure is None:
            self._failure = err
        self._request_stop()

    def _request_stop(self) -> None:
        self._stop_requested = True
        if self._stop_event is not None:
            self._stop_event.set()

    async def _shutdown(self) -> None:
        self._stop_requested = True
        lost = self._lost
        # A lost lease: another replica may lead already, so do not let reconciles finish.
        budget = 0.0 if lost else self._options.graceful_shutdown_timeout
        deadline = self._clock.now() + budget
        if self._in_run:
            self._start_watchdog(budget + SHUTDOWN_MARGIN)
        log.info("Stopping and waiting for leader election runnables", extra={"timeout": budget})
        await asyncio.gather(
            *(h.stop(self._left(deadline)) for h in self._handles if h.need_leader_election)
        )
        # Leader-only work has stopped: release the lease now, before anything that may take
        # long (flushing events to a server that is gone), so a successor takes over at once.
        if self._elector is not None and self._elector_task is not None:
            self._elector.stop()  # releases the lease when configured; bounded by renew_deadline
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait({self._elector_task}, timeout=max(self._left(deadline), 5.0))
            if not self._elector_task.done():
                self._elector_task.cancel()
                await asyncio.gather(self._elector_task, return_exceptions=True)
        log.info("Stopping and waiting for non leader election runnables")
        await asyncio.gather(
            *(h.stop(self._left(deadline)) for h in self._handles if not h.need_leader_election)
        )
        # Abandoned sync reconciles (stuck past the grace period) may not use the loop any more.
        self._blocking_client.unbind_loop()
        log.info("Stopping and waiting for caches")
        await self._factory.shutdown()
        log.info("Stopping and waiting for HTTP servers")
        await self._probe_server.stop()
        await self._metrics_server.stop()
        if self._webhook_server is not None:
            await self._webhook_server.stop()
        await self._api.aclose()
        if self._events_api is not None:
            await self._events_api.aclose()
        log.info("Wait completed, proceeding to shutdown the manager")

    def _left(self, deadline: float) -> float:
        """Seconds from now to ``deadline`` on the manager's clock (never negative)."""
        return max(deadline - self._clock.now(), 0.0)

    def _new_metrics_server(self) -> HTTPServer:
        options = self._options
        bind = options.metrics_bind_address
        if bind is None:
            # In-process API server (a test's FakeAPI): no fixed port unless one is asked for.
            if self._config.transport is not None:
                log.info(
                    "metrics not served: the client config has its own transport (an in-process "
                    "API server); set ManagerOptions(metrics_bind_address=...) to serve them",
                    extra={"default_bind_address": _DEFAULT_METRICS_BIND_ADDRESS},
                )
                bind = "0"
            else:
                bind = _DEFAULT_METRICS_BIND_ADDRESS
        address = parse_bind_address(bind)
        if address is None:
            return HTTPServer("0")
        if options.metrics_secure:
            return HTTPServer(
                bind,
                registry=self._registry,
                serve_probes=False,
                tls=metrics_tls_context(options.metrics_cert_dir or None),
                request_filter=KubernetesAuthFilter(self._api),
            )
        if not _is_loopback(address[0]):
            log.warning(
                "metrics served on %s over plain HTTP without authentication: anyone who can "
                "reach it can read them; bind 127.0.0.1 or set metrics_secure=True",
                bind,
                extra={"address": bind},
            )
        return HTTPServer(bind, registry=self._registry, serve_probes=False)

    def _stuck_controllers(self) -> list[str]:
        """Names of controllers with a reconcile still running (``Controller.in_flight``)."""
        stuck = set()
        for handle in self._handles:
            try:
                # Read from the shutdown watchdog's thread too: a set resized meanwhile is
                # retried on the next look, never fatal.
                running = getattr(handle.runnable, "in_flight", ())
            except RuntimeError:
                running = ("?",)
            if running:
                stuck.add(handle.name)
        return sorted(stuck)

    def _exit_stuck(self, stuck: list[str], when: str) -> None:
        log.error(
            "%s with sync reconciles still running in controller(s) %s; exiting with status 1",
            when,
            ", ".join(stuck) or "(unknown)",
            extra={
                "controllers": stuck,
                "graceful_shutdown_timeout": self._options.graceful_shutdown_timeout,
            },
        )
        for handler in logging.getLogger().handlers + log.handlers:
            with contextlib.suppress(Exception):
                handler.flush()
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(1)

    def _start_watchdog(self, seconds: float) -> None:
        def watch() -> None:
            if not self._run_done.wait(seconds):
                self._exit_stuck(
                    self._stuck_controllers(),
                    f"the shutdown did not finish within {seconds:g} s",
                )

        threading.Thread(target=watch, name="kubectrl-shutdown-watchdog", daemon=True).start()

    def _check_caches(self) -> None:
        if not self._caches_synced:
            raise RuntimeError("caches not synced yet")
        unsynced = [str(k) for k, i in self._factory.informers.items() if not i.has_synced()]
        if unsynced:
            raise RuntimeError(f"not synced: {', '.join(unsynced)}")

    def _check_elector(self) -> None:
        if self._elector_task is None or self._elector_task.done():
            raise RuntimeError("leader election is not running")

    def _install_signal_handlers(self, loop: asyncio.AbstractEventLoop) -> None:
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, self._on_signal, sig)

    def _remove_signal_handlers(self, loop: asyncio.AbstractEventLoop) -> None:
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(sig)

    def _on_signal(self, sig: signal.Signals) -> None:
        self._signals += 1
        if self._signals > 1:
            log.error("second signal received; exiting at once", extra={"signal": sig.name})
            os._exit(1)
        log.info("signal received; shutting down gracefully", extra={"signal": sig.name})
        self._request_stop()

    def __repr__(self) -> str:
        return (
            f"<Manager runnables={len(self._handles)} synced={self._caches_synced} "
            f"leader={self._leading_started}>"
        )


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # "" (every interface) or a name: not known to be loopback


def _in_cluster_namespace() -> str:
    env = os.environ.get("POD_NAMESPACE")
    if env:
        return env
    try:
        return _IN_CLUSTER_NAMESPACE.read_text().strip()
    except OSError as err:
        raise ValueError(
            "leader_election_namespace must be set when not running in a cluster"
        ) from err


def _new_registry() -> CollectorRegistry | None:
    try:
        from prometheus_client import CollectorRegistry
    except ImportError:  # pragma: no cover - depends on the installation
        return None
    return CollectorRegistry()
