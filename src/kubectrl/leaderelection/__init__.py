"""Leader election on a ``coordination.k8s.io/v1`` Lease, with client-go's semantics.

Run several replicas of a controller and let exactly one do the work: each replica runs a
:class:`LeaderElector` on the same :class:`LeaseLock`; the one that holds the lease leads, the
others wait and take over when the leader stops renewing (after ``lease_duration``, 15 s) or
releases the lease (at once).

Expiry is judged by how long the lease has gone *unchanged on the local monotonic clock*, never by
comparing the server's timestamps with ours, so clock skew between machines does not matter.
The decisions are pure functions (:func:`observe`, :func:`plan_acquire_or_renew`,
:func:`plan_release`) around which the elector is a thin loop.

Example::

    from kubectrl.client import AsyncClient, load_config
    from kubectrl.leaderelection import (
        LeaderElectionConfig, LeaderElector, LeaseLock, default_identity,
    )

    async with AsyncClient(load_config()) as client:
        lock = LeaseLock(client, namespace="kube-system", name="my-controller",
                         identity=default_identity())
        elector = LeaderElector(lock, LeaderElectionConfig(release_on_cancel=True),
                                on_started_leading=run_controllers)
        await elector.run()

See ``docs/leaderelection.md``.
"""

from __future__ import annotations

from kubectrl._internal.exports import publish as _publish
from kubectrl._internal.lease import (
    LeaderElectionRecord,
)
from kubectrl.leaderelection._elector import (
    LeaderElectionConfig,
    LeaderElectionLostError,
    LeaderElector,
    default_identity,
)
from kubectrl.leaderelection._lock import LeaseLock, ResourceLock

__all__ = [
    "LeaderElectionConfig",
    "LeaderElectionLostError",
    "LeaderElectionRecord",
    "LeaderElector",
    "LeaseLock",
    "ResourceLock",
    "default_identity",
]

_publish(__name__, globals(), __all__)
