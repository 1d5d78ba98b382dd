"""One engaged cluster: its API client, its own informer cache and a cached client over both."""

from __future__ import annotations

import contextvars

from kubectrl._internal.clock import Clock, RealClock
from kubectrl.cache import InformerFactory
from kubectrl.client import AsyncClient, ClientConfig
from kubectrl.errors import KubectrlError
from kubectrl.runtime import CachedClient

__all__ = ["Cluster", "ClusterNotEngagedError", "current_cluster"]


class ClusterNotEngagedError(KubectrlError):
    """The named cluster is not engaged (never was, or was disengaged or given to another
    replica). ``cluster`` is its name.

    Example::

        try:
            manager.get_cluster("gone")
        except ClusterNotEngagedError as err:
            print(err.cluster)
    """

    retryable = False

    def __init__(self, message: str, *, cluster: str) -> None:
        super().__init__(message)
        self.cluster = cluster


class Cluster:
    """A cluster as the manager engaged it.

    ``name`` is the provider's name for it; ``api`` an :class:`~kubectrl.client.AsyncClient` on
    its ``config``; ``informer_factory`` its own cache (never shared with another cluster);
    ``client`` a :class:`~kubectrl.runtime.CachedClient` reading that cache and writing to the
    cluster (fenced by the cluster's Lease when replicas share the fleet).

    Example::

        cluster = manager.get_cluster("east")
        cm = await cluster.client.get(("v1", "ConfigMap"), "settings", namespace="default")
    """

    def __init__(
        self,
        name: str,
        config: ClientConfig,
        *,
        clock: Clock | None = None,
        sync_timeout: float = 30.0,
        resync_period: float | None = None,
    ) -> None:
        self.name = name
        self.config = config
        self.clock: Clock = clock if clock is not None else RealClock()
        self.api = AsyncClient(config, clock=self.clock)
        self.informer_factory = InformerFactory(
            self.api, resync_period=resync_period, clock=self.clock
        )
        self.client = CachedClient(self.api, self.informer_factory, sync_timeout=sync_timeout)

    async def close(self) -> None:
        """Stop the informers and close the connections."""
        try:
            await self.informer_factory.shutdown()
        finally:
            await self.api.aclose()

    def __repr__(self) -> str:
        return f"<Cluster {self.name} {self.config.server}>"


_current: contextvars.ContextVar[Cluster | None] = contextvars.ContextVar(
    "kubectrl_multicluster_cluster", default=None
)


def current_cluster() -> Cluster | None:
    """The cluster of the reconcile running in this context (``None`` outside one).

    Example::

        async def reconcile(request: ClusterRequest) -> None:
            cluster = current_cluster()
            assert cluster is not None and cluster.name == request.cluster
    """
    return _current.get()
