"""One controller, many clusters: providers, a multicluster manager, fleets of replicas.

multicluster-runtime (kubernetes-sigs/multicluster-runtime) in kubectrl's idiom. A
:class:`Provider` discovers clusters while the manager runs and engages or disengages them;
the :class:`MultiClusterManager` gives each engaged :class:`Cluster` its own client and
informer cache, and runs controllers built with :class:`MultiClusterBuilder` over all of
them: a reconcile gets a :class:`ClusterRequest` (``cluster``, ``namespace``, ``name``) and
reaches that cluster through ``manager.get_cluster(request.cluster).client``. With
:class:`FleetOptions`, replicas share the clusters by rendezvous hashing, each cluster fenced
by a Lease.

Providers: :class:`StaticProvider` (given configs), :class:`KubeconfigProvider` (a
kubeconfig's contexts), :class:`DirectoryProvider` (a watched directory of kubeconfigs),
:class:`SecretProvider` (kubeconfig Secrets, multicluster-runtime's and Cluster API's),
:class:`ClusterProfileProvider` (the Cluster Inventory API). Kubeconfigs from files, Secrets
and profiles are untrusted: :class:`KubeconfigPolicy` refuses exec plugins and file references
by default.

Example::

    from kubectrl.multicluster import (
        ClusterRequest, MultiClusterBuilder, MultiClusterManager, StaticProvider,
    )

    async def reconcile(request: ClusterRequest) -> None:
        client = manager.get_cluster(request.cluster).client
        ...

    manager = MultiClusterManager(StaticProvider({"east": east_config, "west": west_config}))
    MultiClusterBuilder(manager).for_(("v1", "ConfigMap")).complete(reconcile)
    async with manager:
        ...

See ``docs/multicluster.md``.
"""

from __future__ import annotations

from kubectrl._internal.exports import publish as _publish
from kubectrl.multicluster._cluster import Cluster, ClusterNotEngagedError, current_cluster
from kubectrl.multicluster._fleet import FLEET_LABEL, FleetOptions, rendezvous_owner
from kubectrl.multicluster._kubeconfig import (
    MAX_KUBECONFIG_BYTES,
    KubeconfigPolicy,
    load_untrusted_kubeconfig,
)
from kubectrl.multicluster._manager import (
    ClusterReconciler,
    MultiClusterBuilder,
    MultiClusterError,
    MultiClusterManager,
    MultiClusterOptions,
)
from kubectrl.multicluster._provider import (
    Aware,
    DesiredCluster,
    DesiredStateProvider,
    DirectoryProvider,
    KubeconfigProvider,
    Provider,
    StaticProvider,
)
from kubectrl.multicluster._request import ClusterRequest
from kubectrl.multicluster._secrets import CLUSTER_PROFILE, ClusterProfileProvider, SecretProvider

__all__ = [
    "CLUSTER_PROFILE",
    "FLEET_LABEL",
    "MAX_KUBECONFIG_BYTES",
    "Aware",
    "Cluster",
    "ClusterNotEngagedError",
    "ClusterProfileProvider",
    "ClusterReconciler",
    "ClusterRequest",
    "DesiredCluster",
    "DesiredStateProvider",
    "DirectoryProvider",
    "FleetOptions",
    "KubeconfigPolicy",
    "KubeconfigProvider",
    "MultiClusterBuilder",
    "MultiClusterError",
    "MultiClusterManager",
    "MultiClusterOptions",
    "Provider",
    "SecretProvider",
    "StaticProvider",
    "current_cluster",
    "load_untrusted_kubeconfig",
    "rendezvous_owner",
]

_publish(__name__, globals(), __all__)
