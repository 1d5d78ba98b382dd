"""One fleet replica in its own process, for test_multicluster_fleet.py (killed with SIGKILL).

Usage: ``python fleet_replica.py IDENTITY MANAGEMENT_KUBECONFIG NAMESPACE LOG NAME=KUBECONFIG...``.
Every reconcile of a ConfigMap in NAMESPACE appends ``cluster identity start end`` (wall-clock
seconds) to LOG.
"""

from __future__ import annotations

import asyncio
import sys
import time

from kubectrl.client import load_kubeconfig
from kubectrl.multicluster import (
    ClusterRequest,
    FleetOptions,
    MultiClusterBuilder,
    MultiClusterManager,
    StaticProvider,
)
from kubectrl.runtime.predicate import new_predicate_funcs

LEASE_DURATION, RENEW_DEADLINE, RETRY_PERIOD = 4.0, 3.0, 1.0


def _append(path: str, line: str) -> None:
    with open(path, "a", encoding="utf-8") as out:
        out.write(line)


async def main(identity: str, management: str, namespace: str, log: str, pairs: list[str]) -> None:
    clusters = {}
    for pair in pairs:
        name, path = pair.split("=", 1)
        clusters[name] = load_kubeconfig(path)
    fleet = FleetOptions(
        name="fleet-test",
        namespace=namespace,
        lease_duration=LEASE_DURATION,
        renew_deadline=RENEW_DEADLINE,
        retry_period=RETRY_PERIOD,
        identity=identity,
    )
    manager = MultiClusterManager(
        StaticProvider(clusters), local=load_kubeconfig(management), fleet=fleet
    )

    async def reconcile(request: ClusterRequest) -> None:
        start = time.time()
        await asyncio.sleep(0.05)  # long enough for an overlap to show
        _append(log, f"{request.cluster} {identity} {start:.6f} {time.time():.6f}\n")

    in_namespace = new_predicate_funcs(lambda o: o["metadata"].get("namespace") == namespace)
    MultiClusterBuilder(manager).for_(("v1", "ConfigMap"), predicates=[in_namespace]).complete(
        reconcile
    )
    await manager.start()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]))
