"""A Manager's settings (controller-runtime's ``manager.Options``), with its defaults."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from kubectrl.leaderelection import LeaderElectionConfig

if TYPE_CHECKING:
    from kubectrl.runtime._sharding import ShardingOptions
    from kubectrl.webhook import WebhookServerOptions

__all__ = ["DEFAULT_METRICS_BIND_ADDRESS", "ManagerOptions"]

#: Where metrics are served when ``ManagerOptions.metrics_bind_address`` is left ``None``.
DEFAULT_METRICS_BIND_ADDRESS = "127.0.0.1:8080"


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
