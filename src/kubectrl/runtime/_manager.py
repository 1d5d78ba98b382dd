"""The Manager: runs controllers and their shared pieces as one process (``manager.Manager``).

It owns what controllers share: one :class:`~kubectrl.client.AsyncClient`, one
:class:`~kubectrl.cache.InformerFactory` (so two controllers watching a kind make one watch), a
:class:`CachedClient` for reconcilers, one Prometheus registry, the probe and metrics servers and,
if enabled, the leader elector.

Start and stop order are data: every part runs as a runnable in one of the groups of
``_runnables`` (HTTP servers, webhooks, caches, runnables without leader election, warm-up,
leader election, leader-only runnables), started in its ``START_ORDER`` and stopped in reverse.
Stop order: leader-only runnables drain their in-flight reconciles (up to the graceful shutdown
timeout, 30 s); the lease is released at once if configured (so a successor need not wait for
anything else); then the other runnables stop, the event broadcaster writing what it still holds
for at most ``event_flush_timeout`` (5 s); caches stop; webhooks and HTTP servers stop.

A lost lease stops the manager at once (in-flight reconciles are cancelled: another replica
may already lead) and :meth:`Manager.start` raises
:class:`~kubectrl.leaderelection.LeaderElectionLostError`; the process must exit.

The rest of the manager lives beside it: its options (``_manager_options``), the runnable groups
(``_runnables``), the runnables it adds itself (``_manager_runnables``), its metrics and probe
servers (``_http_servers``), signals and the shutdown watchdog (``_shutdown``), and a sharding
manager's controller templates (``_shard_templates``).
"""

from __future__ import annotations

import asyncio
import logging
import os
from typing import TYPE_CHECKING

from kubectrl._internal.aio import call_in_loop
from kubectrl._internal.clock import Clock, RealClock
from kubectrl.cache import InformerFactory
from kubectrl.client import AsyncClient, ClientConfig, load_config, load_kubeconfig
from kubectrl.client.metrics import RestClientMetrics
from kubectrl.events import CORE_V1, EVENTS_V1, ClientEventSink, EventBroadcaster, EventRecorder
from kubectrl.leaderelection import default_identity
from kubectrl.runtime._cache_client import BlockingCachedClient, CachedClient
from kubectrl.runtime._controller import Controller
from kubectrl.runtime._field_index import FieldIndexer
from kubectrl.runtime._http_servers import ServerRunnable, new_metrics_server, new_probe_server
from kubectrl.runtime._manager_options import ManagerOptions
from kubectrl.runtime._manager_runnables import (
    BroadcasterRunnable,
    CacheRunnable,
    LeaderElectionRunnable,
    WarmUpRunnable,
    WebhookRunnable,
)
from kubectrl.runtime._runnables import (
    Group,
    ManagerError,
    Runnable,
    RunnableHandle,
    RunnableLike,
    Runnables,
)
from kubectrl.runtime._server import Checker, HTTPServer
from kubectrl.runtime._shutdown import (
    SHUTDOWN_MARGIN,
    ShutdownWatchdog,
    SignalHandlers,
    exit_stuck,
    stuck_controllers,
)

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

    from kubectrl.runtime._shard_templates import ShardTemplates
    from kubectrl.runtime._sharding import ShardedRunner
    from kubectrl.webhook import WebhookServer

__all__ = [
    "SHUTDOWN_MARGIN",
    "Manager",
    "ManagerError",
    "ManagerOptions",
    "Runnable",
    "RunnableLike",
]

log = logging.getLogger("kubectrl.runtime.manager")


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
    :class:`~kubectrl.FakeClock` there lets a test move time by hand instead of sleeping
    (see :func:`kubectrl.testing.run_manager`).

    Guarantees: runnables start group by group in controller-runtime's order (``START_ORDER``
    in ``_runnables``: HTTP servers, webhooks, caches, runnables without leader election,
    warm-up, leader election, leader-only runnables) and stop in reverse; controllers start
    only after every cache synced and, with leader election, only on the leader; ``/readyz`` is
    503 until the caches synced (and, with leader election, while the elector is not running),
    then 200; ``/healthz`` is 200 while the process runs. A runnable that fails stops the
    manager, and :meth:`start` raises :class:`ManagerError` from it.

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
        options = self._options = options if options is not None else ManagerOptions()
        self._clock: Clock = clock if clock is not None else RealClock()
        if config is None:
            config = load_config()
        elif not isinstance(config, ClientConfig):
            config = load_kubeconfig(config)
        self._config = config
        self._api = AsyncClient(config)
        self._registry = registry if registry is not None else _new_registry()
        # client-go's rest_client_* metrics on the registry, as controller-runtime registers
        # them (pkg/metrics/client_go_adapter.go): every client's requests, until shutdown.
        self._rest_metrics = (
            RestClientMetrics(self._registry) if self._registry is not None else None
        )
        factory_type = InformerFactory
        if options.sharding is not None:
            # Imported only by a sharding manager (kubectrl.runtime does not load sharding).
            from kubectrl.runtime._shard_templates import routing_informer_factory

            factory_type = routing_informer_factory()
        self._factory = factory_type(
            self._api,
            namespace=options.cache_namespace,
            resync_period=options.sync_period,
            clock=self._clock,
            keep_managed_fields=options.cache_keep_managed_fields,
        )
        self._client = CachedClient(
            self._api, self._factory, sync_timeout=options.cache_sync_timeout
        )
        self._blocking_client = BlockingCachedClient(self._client)
        self._identity = options.identity or default_identity()
        self._names: set[str] = set()
        self._caches_synced = False
        self._started = False
        self._stop_event: asyncio.Event | None = None
        self._stop_requested = False
        self._failure: BaseException | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lost = False
        self._background: asyncio.Task[None] | None = None
        self._broadcasters: dict[str, EventBroadcaster] = {}
        self._events_api: AsyncClient | None = None
        self._in_run = False
        self._signals = SignalHandlers(self._request_stop)
        self._watchdog = ShutdownWatchdog(
            self._stuck_controllers, options.graceful_shutdown_timeout
        )
        self._webhook_server: WebhookServer | None = None
        self._runnables = Runnables(
            self._on_runnable_done,
            leader_election=options.leader_election,
            before_launch=self._before_launch,
        )
        # The manager's own runnables, in the groups they belong to (_runnables.START_ORDER).
        self._metrics_server = self._new_metrics_server()
        self._probe_server = new_probe_server(options, self._check_caches, self._check_elector)
        for name, server in (
            ("metrics server", self._metrics_server),
            ("health probe server", self._probe_server),
        ):
            self._runnables.add(ServerRunnable(name, server), Group.HTTP_SERVERS)
        webhooks = WebhookRunnable(lambda: self._webhook_server, self._add_webhook_check)
        self._runnables.add(webhooks, Group.WEBHOOKS)
        caches = CacheRunnable(
            self._factory,
            options.cache_sync_timeout,
            before_start=self._discard_template_informers,
            on_synced=self._on_caches_synced,
            before_stop=self._blocking_client.unbind_loop,
        )
        self._runnables.add(caches, Group.CACHES)
        self._leader_election: LeaderElectionRunnable | None = None
        if options.leader_election:
            self._leader_election = LeaderElectionRunnable(
                self._api,
                options,
                self._identity,
                clock=self._clock,
                registry=self._registry,
                before_run=lambda: self._client.set_leader_fence(self._write_fence),
                on_elected=self._runnables.elected,
                on_done=self._on_elector_done,
            )
            self._runnables.add(self._leader_election, Group.LEADER_ELECTION)
        self._shards: ShardTemplates | None = None
        if options.sharding is not None:
            from kubectrl.runtime._shard_templates import ShardTemplates

            self._shards = ShardTemplates(
                self._api,
                options,
                options.sharding,
                self._factory,
                clock=self._clock,
                registry=self._registry,
            )
            self.add(self._shards.runner, need_leader_election=False)
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

            >>> from kubectrl._internal.clock import FakeClock
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
        serves, and stops it after the caches, before the HTTP servers, on shutdown. Register
        through :class:`~kubectrl.runtime.WebhookBuilder`.

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
        return self._runnables.started(Group.LEADER_ONLY)

    # ------------------------------------------------------------------ configuration

    def add(self, runnable: RunnableLike, *, need_leader_election: bool | None = None) -> None:
        """Add a runnable (a controller, a :class:`Runnable`, or an ``async def`` function).

        ``need_leader_election`` overrides the runnable's own attribute (default ``True``) and
        picks its group: leader-only runnables, or runnables without leader election (see
        ``START_ORDER`` in ``_runnables``). A runnable starts with its group, or at once when
        added after its group started (a leader-only one: once leading).

        Example::

            async def heartbeat() -> None:
                while True:
                    await asyncio.sleep(60)
            manager.add(heartbeat, need_leader_election=False)
        """
        if need_leader_election is None:
            need_leader_election = bool(getattr(runnable, "need_leader_election", True))
        if self._shards is not None and need_leader_election and isinstance(runnable, Controller):
            self._shards.add(runnable, started=self._started, names=self._names)
            return
        name = getattr(runnable, "name", None)
        if isinstance(name, str) and name and hasattr(runnable, "queue"):
            if name in self._names:
                raise ValueError(f"a controller named {name!r} was already added; use named()")
            self._names.add(name)
        self._runnables.add(runnable, Group.LEADER_ONLY if need_leader_election else Group.OTHERS)
        if (
            need_leader_election
            and self._options.leader_election
            and not self._runnables.started(Group.WARMUP)
            and isinstance(runnable, Controller)
            and runnable.options.enable_warmup
        ):
            # Its sources start on every replica before the election (controller-runtime's
            # Warmup group); once leading, only its workers start.
            self._runnables.add(WarmUpRunnable(runnable), Group.WARMUP)

    @property
    def sharded_runner(self) -> ShardedRunner | None:
        """The runner of the sharded controllers (with ``ManagerOptions.sharding``), else
        ``None``: which shards this replica holds (``held``), its identity, its history."""
        return self._shards.runner if self._shards is not None else None

    def event_recorder(self, component: str, *, api: str = EVENTS_V1) -> EventRecorder:
        """An :class:`~kubectrl.events.EventRecorder` reporting as ``component``.

        controller-runtime 0.23's ``GetEventRecorder``: events are written through
        ``events.k8s.io/v1`` (``regarding``, ``related``, ``action``, a ``series`` for repeats);
        ``api="v1"`` gives its ``GetEventRecorderFor``, core v1 Events with a ``count``.
        ``component`` is the ``reportingController`` (a qualified name, else ``ValueError``),
        the manager's identity the ``reportingInstance``. The recorders of one API share one
        broadcaster (correlation, retries), which runs on every replica (not only the leader)
        and is flushed on shutdown after the controllers stopped and the lease was released,
        for at most ``event_flush_timeout``: a broadcaster that cannot write (the server is
        gone, events are retried) never delays the successor's takeover. Events are written
        through a client of their own (same config, its own rate limiter and connections, as
        controller-runtime's recorder provider builds its own clientset), so a burst of events
        never spends the reconcilers' QPS.

        Example::

            recorder = manager.event_recorder("sample-controller")
            recorder.event(foo, "Normal", "Synced", "Foo synced successfully")
            legacy = manager.event_recorder("sample-controller", api="v1")
        """
        if api not in (EVENTS_V1, CORE_V1):
            raise ValueError(f"api must be {EVENTS_V1!r} or {CORE_V1!r}, not {api!r}")
        broadcaster = self._broadcasters.get(api)
        if broadcaster is None:
            if self._events_api is None:
                self._events_api = AsyncClient(self._config)
            broadcaster = EventBroadcaster(
                ClientEventSink(self._events_api), clock=self._clock, api=api
            )
            self._broadcasters[api] = broadcaster
            self.add(
                BroadcasterRunnable(broadcaster, self._options.event_flush_timeout),
                need_leader_election=False,
            )
        return broadcaster.new_recorder(component, reporting_instance=self._identity)

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
            self._watchdog.done()
            stuck = self._stuck_controllers()
            if stuck:
                exit_stuck(
                    stuck,
                    "the graceful shutdown period ended",
                    self._options.graceful_shutdown_timeout,
                )

    async def start(self, *, handle_signals: bool = False) -> None:
        """Start the runnable groups in ``START_ORDER``, block until stopped, then stop them in
        reverse.

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
            self._request_stop()
        if handle_signals:
            self._signals.install(loop)
        cancelled = False
        starter = asyncio.ensure_future(self._runnables.start())
        try:
            stopper = asyncio.ensure_future(self._stop_event.wait())
            try:
                await asyncio.wait({starter, stopper}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                stopper.cancel()
            if starter.done():
                starter.result()  # raises what a group failed to start with (a cache sync)
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
                self._signals.remove(loop)
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

    @property
    def _handles(self) -> list[RunnableHandle]:
        """Every runnable (the manager's own and the added ones), group by group."""
        return self._runnables.handles()

    def _before_launch(self, handle: RunnableHandle) -> None:
        if handle.group is Group.LEADER_ONLY:
            # Controllers ask the elector's fence before each reconcile, so a leader resumed
            # after a pause past its renew deadline starts no reconcile (issue: split brain).
            set_fence = getattr(handle.runnable, "set_leader_fence", None)
            if callable(set_fence):
                elector = self._leader_election.elector if self._leader_election else None
                set_fence(elector.fence if elector is not None else None)

    def _discard_template_informers(self) -> None:
        if self._shards is not None:
            self._shards.discard_unused_informers(h.runnable for h in self._handles)

    def _write_fence(self) -> bool:
        # A sharded controller's reconcile writes only while its shard's Lease is held.
        from kubectrl.runtime._sharding import current_shard

        shard = current_shard()
        if shard is not None:
            return shard.fence()
        # Before leading, only runnables that need no leadership run, and their writes are not
        # the leader's: they pass. Once leader-only work has started, a write needs the lease.
        elector = self._leader_election.elector if self._leader_election else None
        return elector is None or not self.is_leader() or elector.fence()

    def _new_metrics_server(self) -> HTTPServer:
        return new_metrics_server(self._options, self._config, self._api, self._registry)

    def _on_caches_synced(self) -> None:
        self._caches_synced = True

    def _add_webhook_check(self, check: Checker) -> None:
        self._probe_server.add_readyz_check("webhook", check)

    def _on_runnable_done(self, handle: RunnableHandle) -> None:
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
        self._runnables.request_stop()
        if self._stop_event is not None:
            self._stop_event.set()

    async def _shutdown(self) -> None:
        self._request_stop()
        # A lost lease: another replica may lead already, so do not let reconciles finish.
        budget = 0.0 if self._lost else self._options.graceful_shutdown_timeout
        deadline = self._clock.now() + budget
        if self._in_run:
            self._watchdog.arm(budget + SHUTDOWN_MARGIN)
        log.info("Stopping the manager", extra={"timeout": budget})
        # Group by group, in reverse start order (_runnables.STOP_ORDER): leader-only
        # runnables, then the lease (released now, before anything that may take long, such
        # as flushing events to a server that is gone, so a successor takes over at once),
        # the other runnables, caches, webhooks, HTTP servers.
        await self._runnables.stop(lambda: max(deadline - self._clock.now(), 0.0))
        await self._api.aclose()
        if self._events_api is not None:
            await self._events_api.aclose()
        if self._rest_metrics is not None:
            self._rest_metrics.close()
        log.info("Wait completed, proceeding to shutdown the manager")

    def _stuck_controllers(self) -> list[str]:
        """Names of controllers with a reconcile still running (``Controller.in_flight``)."""
        return stuck_controllers((handle.name, handle.runnable) for handle in self._handles)

    def _check_caches(self) -> None:
        if not self._caches_synced:
            raise RuntimeError("caches not synced yet")
        unsynced = [str(k) for k, i in self._factory.informers.items() if not i.has_synced()]
        if unsynced:
            raise RuntimeError(f"not synced: {', '.join(unsynced)}")

    def _check_elector(self) -> None:
        if self._leader_election is None:
            raise RuntimeError("leader election is not running")
        self._leader_election.check_running()

    def __repr__(self) -> str:
        return (
            f"<Manager runnables={len(self._handles)} synced={self._caches_synced} "
            f"leader={self.is_leader()}>"
        )


def _new_registry() -> CollectorRegistry | None:
    try:
        from prometheus_client import CollectorRegistry
    except ImportError:  # pragma: no cover - depends on the installation
        return None
    return CollectorRegistry()
