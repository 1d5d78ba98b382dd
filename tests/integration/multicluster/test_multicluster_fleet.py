"""Two replica processes over six clusters on real control planes; one replica SIGKILLed.

multicluster-runtime's sharded coordinator (``docs/designs/coordination.md``): peer Leases,
HRW assignment (``pkg/manager/coordinator/sharded/sharder/hrw.go``), one fencing Lease per
cluster, failover once a dead peer's Leases expire. Here the Leases live in the session's
control plane and the six clusters are six names over the three fleet control planes (two
names per plane: the assignment and the fencing are per name). Each replica is a process
(fleet_replica.py) so that killing one is a real SIGKILL: no Lease released, nothing cleaned
up. Asserted: each cluster reconciled by its rendezvous owner only; no cluster reconciled by
both at once; the survivor takes every cluster over before a deadline far above
``lease_duration + retry_period``. The takeover time is printed (``-s``), not asserted.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kubectrl.client import AsyncClient, load_kubeconfig
from kubectrl.envtest import ControlPlane
from kubectrl.errors import AlreadyExistsError
from kubectrl.multicluster import FleetOptions, rendezvous_owner
from kubectrl.testing import eventually

from .test_multicluster_envtest import NAMES, fleet_planes  # noqa: F401 - the module fixture

pytestmark = pytest.mark.integration

SCRIPT = Path(__file__).with_name("fleet_replica.py")
SRC = Path(__file__).resolve().parents[3] / "src"
LEASE_DURATION, RETRY_PERIOD = 4.0, 1.0
LEASE = ("coordination.k8s.io/v1", "Lease")


def read(log: Path) -> list[tuple[str, str, float, float]]:
    if not log.exists():
        return []
    rows = []
    for line in log.read_text().splitlines():
        parts = line.split()
        if len(parts) == 4:
            rows.append((parts[0], parts[1], float(parts[2]), float(parts[3])))
    return rows


def overlaps(rows: list[tuple[str, str, float, float]]) -> list[tuple[str, str, str]]:
    found = []
    for i, (c1, r1, s1, e1) in enumerate(rows):
        for c2, r2, s2, e2 in rows[i + 1 :]:
            if c1 == c2 and r1 != r2 and s1 < e2 and s2 < e1:
                found.append((c1, r1, r2))
    return found


async def seed(client: AsyncClient, namespace: str, name: str) -> None:
    with contextlib.suppress(AlreadyExistsError):
        await client.create(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": name, "namespace": namespace},
            }
        )


def start_replica(
    identity: str, management: ControlPlane, namespace: str, log: Path, pairs: list[str]
) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    argv = [sys.executable, str(SCRIPT), identity, str(management.kubeconfig.path), namespace]
    return subprocess.Popen([*argv, str(log), *pairs], env=env)


@pytest.mark.asyncio
async def test_two_replicas_share_six_clusters_and_one_takes_over_after_a_kill(
    control_plane: ControlPlane,
    fleet_planes: dict[str, ControlPlane],  # noqa: F811 - the imported fixture
    namespace: str,
    tmp_path: Path,
) -> None:
    management = AsyncClient(load_kubeconfig(control_plane.kubeconfig.path))
    clients = {
        p: AsyncClient(load_kubeconfig(cp.kubeconfig.path)) for p, cp in fleet_planes.items()
    }
    for client in clients.values():
        with contextlib.suppress(AlreadyExistsError):
            await client.create(
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
            )
        await seed(client, namespace, "first")
    pairs = [f"{p}-{i}={fleet_planes[p].kubeconfig.path}" for p in NAMES for i in (1, 2)]
    clusters = [pair.split("=")[0] for pair in pairs]
    identities = ["replica-a", "replica-b"]
    expected = {c: rendezvous_owner(c, identities) for c in clusters}
    log = tmp_path / "reconciles.log"
    procs = {
        identity: start_replica(identity, control_plane, namespace, log, pairs)
        for identity in identities
    }
    try:
        # Settled: a new object in every plane is reconciled, per cluster name, by its owner.
        await eventually(lambda: {r for _, r, _, _ in read(log)} == set(identities), timeout=120)

        async def settled() -> bool:
            mark = time.time()
            for client in clients.values():
                await seed(client, namespace, f"settle-{int(mark * 1000)}")
            await eventually(
                lambda: {c for c, _, s, _ in read(log) if s > mark} == set(clusters), timeout=60
            )
            return {(c, r) for c, r, s, _ in read(log) if s > mark} == set(expected.items())

        await eventually(settled, timeout=120, interval=1.0)

        # SIGKILL b: a takes its clusters over once their Leases expire.
        killed_at = time.time()
        procs["replica-b"].send_signal(signal.SIGKILL)
        procs["replica-b"].wait(30)
        b_clusters = {c for c, o in expected.items() if o == "replica-b"}
        for client in clients.values():
            await seed(client, namespace, "after-kill")
        fleet = FleetOptions(name="fleet-test", namespace=namespace)
        acquired: dict[str, float] = {}

        async def leases_taken() -> bool:
            for c in b_clusters - set(acquired):
                lease = await management.get(LEASE, fleet.cluster_lease(c), namespace=namespace)
                if lease["spec"].get("holderIdentity") == "replica-a":
                    acquired[c] = time.time()
            return set(acquired) == b_clusters

        await eventually(leases_taken, timeout=120, interval=0.1)
        await eventually(
            lambda: (
                {c for c, r, s, _ in read(log) if r == "replica-a" and s > killed_at} >= b_clusters
            ),
            timeout=120,
        )
        rows = read(log)
        takeover = (
            max(
                min(s for c2, r, s, _ in rows if c2 == c and r == "replica-a" and s > killed_at)
                for c in b_clusters
            )
            - killed_at
        )
        leases = max(acquired.values()) - killed_at
        assert overlaps(rows) == []
        assert takeover < 60
        print(
            f"\nload {os.getloadavg()[0]:.1f}; after SIGKILL of replica-b, its "
            f"{len(b_clusters)} clusters' Leases held by replica-a after {leases:.2f} s, first "
            f"reconcile of each on replica-a after {takeover:.2f} s (lease_duration "
            f"{LEASE_DURATION} s, retry_period {RETRY_PERIOD} s)"
        )
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(30)
                except subprocess.TimeoutExpired:
                    proc.kill()
        for client in (management, *clients.values()):
            await client.aclose()
