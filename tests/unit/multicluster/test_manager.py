"""The multicluster manager on several FakeAPI clusters.

Upstream: multicluster-runtime ``pkg/manager/manager.go`` (engage: a cluster's own cache and
sources, started with it and stopped with its context), ``pkg/reconcile/request.go`` (the
request carries the cluster; ``cluster://<name>/<ns>/<name>``), ``pkg/builder`` (``For``,
``Owns``, ``Watches`` in every engaged cluster), ``pkg/source/kind.go`` (one source per
cluster).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from kubectrl.client import AsyncClient
from kubectrl.multicluster import (
    ClusterNotEngagedError,
    ClusterReconciler,
    ClusterRequest,
    FleetOptions,
    MultiClusterBuilder,
    MultiClusterError,
    MultiClusterManager,
    MultiClusterOptions,
    StaticProvider,
    current_cluster,
)
from kubectrl.runtime import Request, Result
from kubectrl.testing import FakeAPI, eventually

from .conftest import Cuttable

CM = ("v1", "ConfigMap")
SECRET = ("v1", "Secret")


def cm(name: str, **extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default", **extra},
    }


def test_cluster_request_carries_the_cluster() -> None:
    request = ClusterRequest("default", "web", cluster="east")
    assert str(request) == "cluster://east/default/web"
    assert request != ClusterRequest("default", "web", cluster="west")
    assert request != Request("default", "web")
    assert isinstance(request, Request)
    with pytest.raises(ValueError, match="cluster must not be empty"):
        ClusterRequest("default", "web", cluster="")


def test_builder_refuses_what_it_cannot_run() -> None:
    manager = MultiClusterManager(StaticProvider())

    def sync_reconcile(request: ClusterRequest) -> None:
        return None

    with pytest.raises(TypeError, match="must be async"):
        MultiClusterBuilder(manager).for_(CM).complete(sync_reconcile)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="needs for_"):
        MultiClusterBuilder(manager).complete(ClusterReconciler())
    with pytest.raises(ValueError, match="no local cluster"):
        MultiClusterBuilder(manager).for_(CM).watches_local(CM)
    fleet = FleetOptions(name="f", namespace="ns")
    with pytest.raises(ValueError, match="a fleet needs local="):
        MultiClusterManager(StaticProvider(), fleet=fleet)


@pytest.mark.asyncio
async def test_requests_carry_their_cluster_and_owns_maps_within_it() -> None:
    east, west = FakeAPI(), FakeAPI()
    registry = CollectorRegistry()
    manager = MultiClusterManager(
        StaticProvider({"east": east.config(), "west": west.config()}), registry=registry
    )
    seen: list[tuple[str, str, str]] = []

    class Record(ClusterReconciler):
        async def reconcile(self, request: ClusterRequest) -> Result | None:
            cluster = current_cluster()
            assert cluster is not None
            assert cluster is self.cluster(request)
            obj = await self.client(request).get(CM, request.name, namespace=request.namespace)
            seen.append((request.cluster, request.name, obj["metadata"]["uid"]))
            return None

    MultiClusterBuilder(manager).for_(CM).owns(SECRET).complete(Record())
    owner = east.seed(cm("a"))[0]
    west.seed(cm("a"), cm("b"))
    async with manager:
        await eventually(
            lambda: {(c, n) for c, n, _ in seen} == {("east", "a"), ("west", "a"), ("west", "b")}
        )
        uids = {c: u for c, n, u in seen if n == "a"}
        assert uids["east"] == owner["metadata"]["uid"] != uids["west"]
        # An owned Secret in east enqueues its owner in east only.
        before = len(seen)
        async with AsyncClient(east.config()) as client:
            await client.create(
                {
                    "apiVersion": "v1",
                    "kind": "Secret",
                    "metadata": {
                        "name": "s",
                        "namespace": "default",
                        "ownerReferences": [
                            {
                                "apiVersion": "v1",
                                "kind": "ConfigMap",
                                "name": "a",
                                "uid": owner["metadata"]["uid"],
                                "controller": True,
                            }
                        ],
                    },
                }
            )
        await eventually(lambda: len(seen) > before)
        assert {(c, n) for c, n, _ in seen[before:]} == {("east", "a")}
        with pytest.raises(ClusterNotEngagedError, match="'south' is not engaged"):
            manager.get_cluster("south")
    value = registry.get_sample_value(
        "multicluster_reconcile_total",
        {"controller": "configmap", "cluster": "west", "result": "success"},
    )
    assert value == 2.0


@pytest.mark.asyncio
async def test_one_cluster_down_leaves_the_others_reconciling_and_rejoins() -> None:
    apis = {name: FakeAPI() for name in ("east", "west", "north")}
    cut = Cuttable(apis["west"])
    provider = StaticProvider(
        {"east": apis["east"].config(), "west": cut.config(), "north": apis["north"].config()}
    )
    registry = CollectorRegistry()
    manager = MultiClusterManager(
        provider,
        registry=registry,
        options=MultiClusterOptions(cache_sync_timeout=2, engage_backoff=0.1),
    )
    seen: list[tuple[str, str]] = []

    async def reconcile(request: ClusterRequest) -> None:
        client = manager.get_cluster(request.cluster).client
        await client.get(CM, request.name, namespace=request.namespace)
        seen.append((request.cluster, request.name))

    MultiClusterBuilder(manager).for_(CM).complete(reconcile)
    for api in apis.values():
        api.seed(cm("first"))
    async with manager:
        await eventually(lambda: {c for c, _ in seen} == set(apis))
        cut.cut()
        for api in apis.values():
            api.seed(cm("second"))
        await eventually(lambda: {("east", "second"), ("north", "second")} <= set(seen))
        assert ("west", "second") not in seen
        cut.restore()
        await eventually(lambda: ("west", "second") in seen, timeout=60)


@pytest.mark.asyncio
async def test_an_unreachable_cluster_is_retried_without_stopping_the_others() -> None:
    east, west = FakeAPI(), FakeAPI()
    cut = Cuttable(west)
    cut.cut()
    registry = CollectorRegistry()
    manager = MultiClusterManager(
        StaticProvider({"east": east.config(), "west": cut.config()}),
        registry=registry,
        options=MultiClusterOptions(cache_sync_timeout=0.5, engage_backoff=0.1),
    )
    seen: list[str] = []

    async def reconcile(request: ClusterRequest) -> None:
        seen.append(request.cluster)

    MultiClusterBuilder(manager).for_(CM).complete(reconcile)
    east.seed(cm("a"))
    west.seed(cm("a"))
    async with manager:
        await eventually(lambda: "east" in seen)
        await eventually(
            lambda: (
                (
                    registry.get_sample_value(
                        "multicluster_cluster_engage_failures_total", {"cluster": "west"}
                    )
                    or 0
                )
                >= 2
            )
        )
        assert manager.ready_clusters == {"east"}
        assert registry.get_sample_value("multicluster_cluster_engaged", {"cluster": "west"}) == 0
        cut.restore()
        await eventually(lambda: "west" in seen, timeout=30)
        await eventually(lambda: manager.ready_clusters == {"east", "west"})


@pytest.mark.asyncio
async def test_a_request_of_a_disengaged_cluster_is_dropped_and_counted() -> None:
    east = FakeAPI()
    provider = StaticProvider({"east": east.config()})
    registry = CollectorRegistry()
    manager = MultiClusterManager(provider, registry=registry)
    gate = asyncio.Event()
    seen: list[ClusterRequest] = []

    async def reconcile(request: ClusterRequest) -> None:
        seen.append(request)
        await gate.wait()

    controller = MultiClusterBuilder(manager).for_(CM).complete(reconcile)
    east.seed(cm("a"))
    async with manager:
        await eventually(lambda: len(seen) == 1)
        controller.enqueue(ClusterRequest("default", "b", cluster="east"))
        provider.remove("east")  # disengaging waits for the running reconcile
        await eventually(lambda: manager.clusters == frozenset())
        gate.set()
        await eventually(
            lambda: (
                registry.get_sample_value(
                    "multicluster_dropped_requests_total",
                    {"controller": "configmap", "cluster": "east"},
                )
                == 1.0
            )
        )
    assert [r.name for r in seen] == ["a"]


@pytest.mark.asyncio
async def test_a_failing_provider_stops_the_manager_with_its_error() -> None:
    class Broken:
        async def run(self, aware: Any) -> None:
            raise RuntimeError("inventory unreachable")

    manager = MultiClusterManager(Broken())
    with pytest.raises(MultiClusterError, match="inventory unreachable"):
        await asyncio.wait_for(manager.start(), 30)
