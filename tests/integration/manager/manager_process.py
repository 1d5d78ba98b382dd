"""A manager process for the leader election and SIGTERM tests (run as a script).

Environment: KUBECONFIG, NAMESPACE, LOG (a file appended to by every process), IDENTITY,
SLOW (seconds a reconcile of a ConfigMap with data.slow takes), RELEASE ("1": release the lease
on shutdown), LEASE/RENEW/RETRY (the leader election timing, default 4/3/0.5 s), WRITE ("1": each
reconcile server-side applies a Secret ``out-<name>`` through the manager's client, recording
``wrote`` or ``refused``), SYNC ("hang": the reconciler is a ``def`` that never returns), GRACE
(graceful_shutdown_timeout, default 30 s). Every line is
``<event> <identity> <name> <time.time()>``, written with one O_APPEND write so lines of several
processes never interleave.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import time

from kubectrl.leaderelection import LeaderElectionLostError
from kubectrl.runtime import Request
from kubectrl.runtime._builder import Builder
from kubectrl.runtime._manager import Manager, ManagerOptions

IDENTITY = os.environ["IDENTITY"]
NAMESPACE = os.environ["NAMESPACE"]
SLOW = float(os.environ.get("SLOW", "3"))
WRITE = os.environ.get("WRITE") == "1"
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
            lease_duration=float(os.environ.get("LEASE", "4")),
            renew_deadline=float(os.environ.get("RENEW", "3")),
            retry_period=float(os.environ.get("RETRY", "0.5")),
            graceful_shutdown_timeout=float(os.environ.get("GRACE", "30")),
        ),
    )

    async def reconcile(request: Request) -> None:
        record("begin", request.name)
        cm = await manager.client.get(("v1", "ConfigMap"), request.name, namespace=NAMESPACE)
        # The reconcile's own work: slow on purpose for the SIGTERM test.
        await asyncio.sleep(SLOW if "slow" in (cm.get("data") or {}) else 0.05)
        if WRITE:
            secret = {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": f"out-{request.name}", "namespace": NAMESPACE},
                "stringData": {"by": IDENTITY, "n": str((cm.get("data") or {}).get("n"))},
            }
            try:
                await manager.client.apply(secret, field_manager="manager-test", force=True)
                record("wrote", request.name)
            except LeaderElectionLostError:
                record("refused", request.name)
                raise
        record("end", request.name)

    def hang(request: Request) -> None:
        record("begin", request.name)
        threading.Event().wait()  # a sync reconcile stuck for good (a call without a timeout)

    if os.environ.get("SYNC") == "hang":
        Builder(manager).for_(("v1", "ConfigMap")).complete(hang)
    else:
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
