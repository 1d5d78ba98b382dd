"""Owner handlers against the real API server: a cluster-scoped owner has one key.

controller-runtime's EnqueueRequestForOwner (pkg/handler/enqueue_owner.go) asks the RESTMapper
for the owner kind's scope and leaves the request's namespace empty for a root-scoped owner;
here the scope comes from the real server's discovery.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from kubectrl.cache import InformerFactory
from kubectrl.client import AsyncClient, load_kubeconfig
from kubectrl.objects import key_of
from kubectrl.runtime import Controller, Request
from kubectrl.runtime.handler import enqueue_request_for_owner
from kubectrl.runtime.source import KindSource

pytestmark = pytest.mark.integration
DEADLINE = 60.0
CM = ("v1", "ConfigMap")
CLUSTER_ROLE = ("rbac.authorization.k8s.io/v1", "ClusterRole")


async def eventually(cond: Callable[[], bool], timeout: float = DEADLINE) -> None:
    end = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < end, "condition not reached before the deadline"
        await asyncio.sleep(0.05)


@pytest.fixture
async def client(kubeconfig: Path) -> AsyncIterator[AsyncClient]:
    async with AsyncClient(load_kubeconfig(kubeconfig)) as c:
        yield c


def owned_config_map(namespace: str, name: str, owner: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "ownerReferences": [
                {
                    "apiVersion": owner["apiVersion"],
                    "kind": owner["kind"],
                    "name": owner["metadata"]["name"],
                    "uid": owner["metadata"]["uid"],
                    "controller": True,
                }
            ],
        },
    }


async def test_cluster_scoped_owner_of_config_maps_in_two_namespaces_is_one_key(
    client: AsyncClient, namespace: str
) -> None:
    suffix = uuid.uuid4().hex[:8]
    other_ns = f"owner-scope-b-{suffix}"
    owner_name = f"kubectrl-owner-{suffix}"
    await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": other_ns}})
    owner = await client.create(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": owner_name},
            "rules": [],
        }
    )
    seen: list[Request] = []
    active: set[Request] = set()
    overlaps: list[Request] = []

    async def reconcile(request: Request) -> None:
        if request in active:
            overlaps.append(request)
        active.add(request)
        seen.append(request)
        await asyncio.sleep(0)
        active.discard(request)

    factory = InformerFactory(client)
    handler = enqueue_request_for_owner("rbac.authorization.k8s.io/v1", "ClusterRole")
    source = KindSource(factory, CM, handler=handler)
    controller = Controller(
        "owner-scope",
        reconcile,
        sources=[source],
        options=None,
    )
    await controller.start()
    try:
        assert handler.namespaced is False  # discovery said: ClusterRole is cluster-scoped
        for ns in (namespace, other_ns):
            await client.create(owned_config_map(ns, "t1", owner))
        store = source.informer.indexer
        await eventually(
            lambda: (
                {(namespace, "t1"), (other_ns, "t1")} <= {tuple(key_of(o)) for o in store.list()}
            )
        )
        await eventually(lambda: Request("", owner_name) in seen)
        await eventually(
            lambda: len(controller.queue) == 0 and controller.queue.statistics().processing == 0
        )
        # Both ConfigMaps map to the one cluster-scoped key, never ("<ns>", name).
        assert set(seen) == {Request("", owner_name)}
        assert overlaps == []
    finally:
        await controller.stop()
        await source.stop()
        await factory.shutdown()
        await client.delete(CLUSTER_ROLE, owner_name)
        await client.delete(("v1", "Namespace"), other_ns)
