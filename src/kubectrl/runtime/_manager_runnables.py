"""The runnables a Manager adds itself, one kind per runnable group (see ``_runnables``).

- :class:`CacheRunnable` (``CACHES``): the informer factory, started and synced.
- :class:`WebhookRunnable` (``WEBHOOKS``): the webhook server, iff something is registered.
- :class:`WarmUpRunnable` (``WARMUP``): a warm controller's sources, before the election.
- :class:`LeaderElectionRunnable` (``LEADER_ELECTION``): the leader elector on a Lease.
- :class:`BroadcasterRunnable` (``OTHERS``): the event broadcaster's writer.

The metrics and probe servers (``HTTP_SERVERS``) are in ``_http_servers``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from kubectrl._internal.clock import Clock
from kubectrl.cache import InformerFactory
from kubectrl.client import AsyncClient
from kubectrl.events import EventBroadcaster
from kubectrl.leaderelection import LeaderElector, LeaseLock
from kubectrl.runtime._controller import Controller
from kubectrl.runtime._manager_options import ManagerOptions

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

    from kubectrl.webhook import WebhookServer

__all__ = [
    "BroadcasterRunnable",
    "CacheRunnable",
    "LeaderElectionRunnable",
    "WarmUpRunnable",
    "WebhookRunnable",
]

log = logging.getLogger("kubectrl.runtime.manager")

_IN_CLUSTER_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")


class CacheRunnable:
    """The manager's cache: every informer asked for so far started, then all synced.

    ``before_start`` runs first (a sharding manager drops the informers its shards cache
    instead); ``on_synced`` once every informer synced (``/readyz`` passes from then on);
    ``before_stop`` first thing on stop (the blocking client refuses calls from then on).
    A cache that does not sync within ``sync_timeout`` raises
    :class:`~kubectrl.cache.CacheSyncError` naming it.
    """

    name = "caches"
    need_leader_election = False

    def __init__(
        self,
        factory: InformerFactory,
        sync_timeout: float,
        *,
        before_start: Callable[[], None],
        on_synced: Callable[[], None],
        before_stop: Callable[[], None],
    ) -> None:
        self._factory = factory
        self._sync_timeout = sync_timeout
        self._before_start = before_start
        self._on_synced = on_synced
        self._before_stop = before_stop

    async def start(self) -> None:
        self._before_start()
        self._factory.start()
        log.info("Waiting for caches to sync", extra={"informers": len(self._factory.informers)})
        await self._factory.wait_for_cache_sync(self._sync_timeout, raise_on_failure=True)
        self._on_synced()

    async def stop(self, timeout: float | None = 30.0) -> None:
        self._before_stop()
        await self._factory.shutdown()


class WebhookRunnable:
    """The webhook server (made on first use, so read through ``server()``), on every replica.

    Started iff something is registered on it by then; once it serves, ``on_serving`` gets
    its readiness check (the manager adds it to ``/readyz`` as ``webhook``).
    """

    name = "webhook server"
    need_leader_election = False

    def __init__(
        self,
        server: Callable[[], WebhookServer | None],
        on_serving: Callable[[Callable[[], None]], None],
    ) -> None:
        self._server = server
        self._on_serving = on_serving

    async def start(self) -> None:
        webhooks = self._server()
        if webhooks is not None and webhooks.registrations:
            await webhooks.start()
            self._on_serving(webhooks.check_serving)

    async def stop(self, timeout: float | None = 30.0) -> None:
        webhooks = self._server()
        if webhooks is not None:
            await webhooks.stop()


class WarmUpRunnable:
    """A leader-only controller's sources, started and synced on every replica
    (``ControllerOptions.enable_warmup``, controller-runtime's ``Warmup`` group): its queue
    fills before the election, and once leading only its workers start. Stopping is the
    controller's own (with the leader-only runnables) and the caches'."""

    need_leader_election = False

    def __init__(self, controller: Controller) -> None:
        self.controller = controller
        self.name = f"warmup {controller.name}"

    async def start(self) -> None:
        await self.controller.warm_up()

    async def stop(self, timeout: float | None = 30.0) -> None:
        return None


class LeaderElectionRunnable:
    """The leader elector on the ``coordination.k8s.io/v1`` Lease the options name.

    ``start`` makes the elector (the Lease's namespace: the options', else the pod's, else a
    ``ValueError``), calls ``before_run`` and runs the elector in a task of its own, which
    calls ``on_elected`` once this replica leads and ``on_done`` when it ends (a lost lease).
    ``stop`` stops it (releasing the lease when configured), waiting up to ``timeout`` s,
    at least 5 s.
    """

    name = "leader election"
    need_leader_election = False

    def __init__(
        self,
        api: AsyncClient,
        options: ManagerOptions,
        identity: str,
        *,
        clock: Clock,
        registry: CollectorRegistry | None,
        before_run: Callable[[], None],
        on_elected: Callable[[], None],
        on_done: Callable[[asyncio.Task[None]], None],
    ) -> None:
        self._api = api
        self._options = options
        self._identity = identity
        self._clock = clock
        self._registry = registry
        self._before_run = before_run
        self._on_elected = on_elected
        self._on_done = on_done
        self.elector: LeaderElector | None = None
        self.task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        options = self._options
        lock = LeaseLock(
            self._api,
            namespace=options.leader_election_namespace or in_cluster_namespace(),
            name=options.leader_election_id,
            identity=self._identity,
        )
        self.elector = LeaderElector(
            lock,
            options.leader_election_config(),
            on_started_leading=self._on_elected,
            registry=self._registry,
            clock=self._clock,
        )
        self._before_run()
        self.task = asyncio.ensure_future(self.elector.run())
        self.task.add_done_callback(self._on_done)

    async def stop(self, timeout: float | None = 30.0) -> None:
        elector, task = self.elector, self.task
        if elector is None or task is None:
            return
        # Releases the lease when configured; bounded by renew_deadline.
        elector.stop()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait({task}, timeout=max(timeout or 0.0, 5.0))
        if not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    def check_running(self) -> None:
        """A readiness check: raises unless the elector runs (``/readyz``'s
        ``leader-election``)."""
        if self.task is None or self.task.done():
            raise RuntimeError("leader election is not running")


class BroadcasterRunnable:
    """Runs an event broadcaster's writer task for the manager's lifetime."""

    name = "event-broadcaster"
    need_leader_election = False

    def __init__(self, broadcaster: EventBroadcaster, flush_timeout: float) -> None:
        self.name = f"event-broadcaster ({broadcaster.api})"
        self._broadcaster = broadcaster
        self._flush_timeout = flush_timeout

    async def start(self) -> None:
        self._broadcaster.start()

    async def stop(self, timeout: float | None = 30.0) -> None:
        bound = self._flush_timeout if timeout is None else min(timeout, self._flush_timeout)
        await self._broadcaster.shutdown(bound)


def in_cluster_namespace() -> str:
    """The pod's namespace (``POD_NAMESPACE``, else the service account's), else ``ValueError``."""
    env = os.environ.get("POD_NAMESPACE")
    if env:
        return env
    try:
        return _IN_CLUSTER_NAMESPACE.read_text().strip()
    except OSError as err:
        raise ValueError(
            "leader_election_namespace must be set when not running in a cluster"
        ) from err
