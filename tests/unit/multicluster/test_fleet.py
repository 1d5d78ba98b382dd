"""Replicas sharing a fleet: rendezvous hashing, one fencing Lease per cluster, takeover.

Upstream: multicluster-runtime ``docs/designs/coordination.md`` (peer Leases, HRW sharder,
per-cluster fencing Leases; failover after the Lease duration) and
``pkg/manager/coordinator/sharded/sharder/hrw.go`` (FNV-1a 64 of ``cluster|peer``, highest
wins). Two replicas over six FakeAPI clusters, their Leases in a management FakeAPI.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections import Counter

import pytest

from kubectrl.multicluster import (
    ClusterRequest,
    FleetOptions,
    MultiClusterBuilder,
    MultiClusterManager,
    StaticProvider,
    rendezvous_owner,
)
from kubectrl.testing import FakeAPI, eventually

from .conftest import Cuttable

CM = ("v1", "ConfigMap")
FLEET = FleetOptions(
    name="copier", namespace="kube-system", lease_duration=3, renew_deadline=2, retry_period=0.5
)


def test_rendezvous_is_deterministic_and_moves_only_the_leavers_clusters() -> None:
    clusters = [f"c{i}" for i in range(200)]
    three = ["a", "b", "c"]
    before = {c: rendezvous_owner(c, three) for c in clusters}
    assert before == {c: rendezvous_owner(c, list(reversed(three))) for c in clusters}
    assert set(Counter(before.values())) == set(three)
    after = {c: rendezvous_owner(c, ["a", "b"]) for c in clusters}
    moved = {c for c in clusters if before[c] != after[c]}
    assert moved == {c for c in clusters if before[c] == "c"}
    assert rendezvous_owner("x", []) is None


def test_fleet_options_refuse_bad_timings() -> None:
    with pytest.raises(ValueError, match="renew_deadline"):
        FleetOptions(name="f", namespace="ns", lease_duration=2, renew_deadline=3)
    with pytest.raises(ValueError, match="namespace"):
        FleetOptions(name="f", namespace="")


@dataclasses.dataclass
class Replica:
    identity: str
    manager: MultiClusterManager
    management: Cuttable
    intervals: list[tuple[str, str, float, float]]


def replica(identity: str, management: FakeAPI, clusters: dict[str, FakeAPI], log: list) -> Replica:
    cut = Cuttable(management)
    provider = StaticProvider({n: api.config() for n, api in clusters.items()})
    manager = MultiClusterManager(
        provider, local=cut.config(), fleet=dataclasses.replace(FLEET, identity=identity)
    )

    async def reconcile(request: ClusterRequest) -> None:
        start = time.monotonic()
        await asyncio.sleep(0.01)  # a reconcile that takes time, to make overlaps visible
        log.append((request.cluster, identity, start, time.monotonic()))

    MultiClusterBuilder(manager).for_(CM).named("record").complete(reconcile)
    return Replica(identity, manager, cut, log)


def overlaps(log: list[tuple[str, str, float, float]]) -> list[tuple[str, str, str]]:
    found = []
    for i, (c1, r1, s1, e1) in enumerate(log):
        for c2, r2, s2, e2 in log[i + 1 :]:
            if c1 == c2 and r1 != r2 and s1 < e2 and s2 < e1:
                found.append((c1, r1, r2))
    return found


@pytest.mark.asyncio
async def test_two_replicas_split_six_clusters_and_take_over_a_dead_ones() -> None:
    management = FakeAPI()
    clusters = {f"c{i}": FakeAPI() for i in range(6)}
    for api in clusters.values():
        api.seed(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "x", "namespace": "default"},
            }
        )
    log: list[tuple[str, str, float, float]] = []
    a = replica("replica-a", management, clusters, log)
    b = replica("replica-b", management, clusters, log)
    expected = {n: rendezvous_owner(n, ["replica-a", "replica-b"]) for n in clusters}
    assert set(expected.values()) == {"replica-a", "replica-b"}  # both get some

    async with a.manager, b.manager:
        # Each cluster is engaged on exactly the replica rendezvous hashing picks.
        await eventually(
            lambda: (
                {n: "replica-a" for n in a.manager.ready_clusters}
                | {n: "replica-b" for n in b.manager.ready_clusters}
                == expected
            ),
            timeout=60,
        )
        assert not a.manager.clusters & b.manager.clusters
        # (a started alone and held every cluster until b's peer Lease appeared: the hand-over
        # is part of the run, and the overlap check below covers it.) From now on a new event
        # in a cluster is reconciled by its owner only.
        settled = time.monotonic()
        for api in clusters.values():
            api.seed(
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": "settled", "namespace": "default"},
                }
            )
        await eventually(
            lambda: {c for c, _, s, _ in log if s > settled} == set(clusters), timeout=60
        )
        assert {(c, r) for c, r, s, _ in log if s > settled} == set(expected.items())

        # b is cut off from the management cluster (as a killed or partitioned replica): its
        # Leases stop being renewed; a takes every cluster, none reconciled by both at once.
        killed_at = time.monotonic()
        b.management.cut()
        await eventually(lambda: a.manager.ready_clusters == set(clusters), timeout=60)
        takeover = time.monotonic() - killed_at
        await eventually(lambda: not b.manager.clusters, timeout=30)
        for api in clusters.values():  # a new event in every cluster: a reconciles all
            api.seed(
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": "y", "namespace": "default"},
                }
            )
        await eventually(
            lambda: (
                {c for c, r, s, _ in log if r == "replica-a" and s > killed_at + takeover}
                == set(clusters)
            ),
            timeout=60,
        )
        assert overlaps(log) == []
        print(
            f"\ntakeover after cutting replica-b: {takeover:.2f} s "
            f"(lease_duration {FLEET.lease_duration} s, retry_period {FLEET.retry_period} s)"
        )
        b.management.restore()


@pytest.mark.asyncio
async def test_a_hand_over_releases_the_lease_it_created(caplog: pytest.LogCaptureFixture) -> None:
    """A replica alone creates every cluster's Lease; when a peer joins it hands the peer's
    clusters over by releasing their Leases (client-go's ``ReleaseOnCancel``), which must not be
    refused by the rendezvous gate: the Lease is its own."""
    management = FakeAPI()
    clusters = {f"c{i}": FakeAPI() for i in range(6)}
    log: list[tuple[str, str, float, float]] = []
    a = replica("replica-a", management, clusters, log)
    b = replica("replica-b", management, clusters, log)
    expected_b = {
        n for n in clusters if rendezvous_owner(n, ["replica-a", "replica-b"]) == "replica-b"
    }
    async with a.manager:
        await eventually(lambda: a.manager.ready_clusters == set(clusters), timeout=60)
        async with b.manager:
            await eventually(lambda: b.manager.ready_clusters == expected_b, timeout=60)
    refused = [r.getMessage() for r in caplog.records if "failed to release" in r.getMessage()]
    assert refused == []
