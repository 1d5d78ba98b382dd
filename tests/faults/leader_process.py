"""A leader-elected manager process for the SIGSTOP test (run as a script).

Environment: KUBECONFIG, NAMESPACE, LOG (a file every process appends to), IDENTITY.

The manager holds the Lease ``fault-leader`` (lease 4 s, renew deadline 3 s, retry 1 s) and
reconciles ConfigMaps: each reconcile reads the ConfigMap from the cache and writes through the
manager's client (it stamps ``reconciled-by: <identity>`` on the ConfigMap; a write that changes
nothing causes no event, so there is no reconcile loop). Every line of LOG is
``<event> <identity> <name> <time.time()>`` written with one O_APPEND write, so the lines of
several processes never interleave: ``started``, ``leading`` (leader-only work began), ``begin``
(a reconcile started), ``write`` (a write is about to be sent), ``exit``.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import time

from kubectrl.runtime import Builder, Manager, ManagerOptions, Request

CM = ("v1", "ConfigMap")


def main() -> int:
    # Read at run time, not import time: pytest's --doctest-modules imports this file.
    identity = os.environ["IDENTITY"]
    namespace = os.environ["NAMESPACE"]
    log_fd = os.open(os.environ["LOG"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def record(event: str, name: str = "-") -> None:
        os.write(log_fd, f"{event} {identity} {name} {time.time():.6f}\n".encode())

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)
    manager = Manager(
        os.environ["KUBECONFIG"],
        options=ManagerOptions(
            metrics_bind_address="0",
            health_probe_bind_address="0",
            cache_namespace=namespace,
            leader_election=True,
            leader_election_id="fault-leader",
            leader_election_namespace=namespace,
            identity=identity,
            lease_duration=4,
            renew_deadline=3,
            retry_period=1,
        ),
    )

    async def reconcile(request: Request) -> None:
        record("begin", request.name)
        cm = await manager.client.get(CM, request.name, namespace=namespace)
        if (cm["metadata"].get("annotations") or {}).get("reconciled-by") == identity:
            return
        record("write", request.name)
        await manager.client.patch(
            CM,
            request.name,
            {"metadata": {"annotations": {"reconciled-by": identity}}},
            namespace=namespace,
        )

    Builder(manager).for_(CM).complete(reconcile)

    async def leading() -> None:
        record("leading")
        await asyncio.get_running_loop().create_future()

    manager.add(leading)  # leader-only by default
    record("started")
    try:
        manager.run()
    finally:
        record("exit")
    return 0


if __name__ == "__main__":
    sys.exit(main())
