"""A manager process for the leader election and SIGTERM tests (run as a script).

Environment: KUBECONFIG, NAMESPACE, LOG (a file appended to by every process), IDENTITY,
SLOW (seconds a reconcile of a ConfigMap with data.slow takes), RELEASE ("1": release the lease
on shutdown). Every line is ``<event> <identity> <name> <time.time()>``, written with one
O_APPEND write so lines of several processes never interleave.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time

from kubectrl.runtime import Request
from kubectrl.runtime._builder import Builder
from kubectrl.runtime._manager import Manager, ManagerOptions

IDENTITY = os.environ["IDENTITY"]
NAMESPACE = os.environ["NAMESPACE"]
SLOW = float(os.environ.get("SLOW", "3"))
LOG_FD = os.open(os.environ["LOG"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)


def record(event: str, name: str = "-") -> None:
    os.write(LOG_FD, f"{event} {IDENTITY} {name} {time.time():.6f}\n".encode())


def main() -> int:
    manager = Manager(
        os.environ["KUBECONFIG"],
        options=ManagerOptions(
            metrics_bind_address="0",
            cache_namespace=NAMESPACE,
            leader_election=True,
            leader_election_id="manager-test",
            leader_election_namespace=NAMESPACE,
            leader_election_release_on_cancel=os.environ.get("RELEASE") == "1",
            identity=IDENTITY,
            lease_duration=4,
            renew_deadline=3,
            retry_period=0.5,
        ),
    )

    async def reconcile(request: Request) -> None:
        record("begin", request.name)
        cm = await manager.client.get(("v1", "ConfigMap"), request.name, namespace=NAMESPACE)
        # The reconcile's own work: slow on purpose for the SIGTERM test.
        await asyncio.sleep(SLOW if "slow" in (cm.get("data") or {}) else 0.05)
        record("end", request.name)

    Builder(manager).for_(("v1", "ConfigMap")).complete(reconcile)

    async def leading() -> None:
        record("leading")
        await asyncio.get_running_loop().create_future()

    manager.add(leading)  # leader-only by default
    record("started")
    manager.run()
    record("exit")
    return 0


if __name__ == "__main__":
    sys.exit(main())
