"""The informer factory keys informers by what the server resolves, not by how a kind is spelled.

Against the real apiserver: discovery decides that ``("apps/v1", "Deployment")``, a
GroupVersionKind and a GroupVersionResource name one resource, so they must share one informer
(one list+watch, one store), as client-go's ``sharedInformerFactory`` (informers/factory.go,
keyed by ``reflect.Type``) and controller-runtime's informer cache (pkg/cache/internal/
informers.go, keyed by the GVK the RESTMapper resolved) do.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import pytest

from kubectrl.cache import InformerFactory
from kubectrl.client import AsyncClient
from kubectrl.objects import GroupVersionKind, GroupVersionResource

pytestmark = pytest.mark.integration

DEADLINE = 60.0

SPELLINGS: list[Any] = [
    ("apps/v1", "Deployment"),
    GroupVersionKind("apps", "v1", "Deployment"),
    GroupVersionResource("apps", "v1", "deployments"),
]


def deployment(name: str, namespace: str) -> dict[str, Any]:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "c", "image": "registry.invalid/none"}]},
            },
        },
    }


async def wait_until(predicate: Callable[[], bool], timeout: float = DEADLINE) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached before the deadline")
        await asyncio.sleep(0.02)


def count_watches(client: AsyncClient) -> list[Any]:
    """Record every watch the client opens (the real call still goes to the server)."""
    opened: list[Any] = []
    real_watch = client.watch

    def watch(resource: Any, **kwargs: Any) -> Any:
        opened.append(resource)
        return real_watch(resource, **kwargs)

    client.watch = watch  # type: ignore[method-assign]
    return opened


@pytest.mark.parametrize("first", range(3), ids=["tuple-first", "gvk-first", "gvr-first"])
async def test_every_spelling_of_a_kind_shares_one_informer_and_one_watch(
    clients: Callable[..., AsyncClient], namespace: str, first: int
) -> None:
    client = clients()
    opened = count_watches(client)
    factory = InformerFactory(client)
    order = SPELLINGS[first:] + SPELLINGS[:first]
    informers = [await factory.get_informer(s, namespace=namespace) for s in order]
    # The synchronous path agrees once the kind was resolved.
    informers += [factory.informer(s, namespace=namespace) for s in SPELLINGS]
    assert all(i is informers[0] for i in informers)
    assert len(factory.informers) == 1
    [key] = factory.informers
    assert key.resource == "deployments.v1.apps"
    factory.start()
    try:
        await factory.wait_for_cache_sync(timeout=DEADLINE, raise_on_failure=True)
        await client.create(deployment("web", namespace))
        await wait_until(lambda: informers[0].indexer.get_by_key(f"{namespace}/web") is not None)
        assert len(opened) == 1
    finally:
        await factory.shutdown()


async def test_sync_requests_before_resolution_are_adopted_by_the_resolved_informer(
    clients: Callable[..., AsyncClient], namespace: str
) -> None:
    """Runtime code asks synchronously (before any discovery); a later resolved request for
    another spelling must find that same informer rather than make a second one."""
    client = clients()
    factory = InformerFactory(client)
    by_tuple = factory.informer(("apps/v1", "Deployment"), namespace=namespace)
    by_gvk = factory.informer(GroupVersionKind("apps", "v1", "Deployment"), namespace=namespace)
    assert by_gvk is by_tuple
    by_gvr = await factory.get_informer(
        GroupVersionResource("apps", "v1", "deployments"), namespace=namespace
    )
    assert by_gvr is by_tuple
    assert (
        factory.informer(GroupVersionResource("apps", "v1", "deployments"), namespace=namespace)
        is by_tuple
    )
    assert [k.resource for k in factory.informers] == ["deployments.v1.apps"]


async def test_selector_forms_and_cluster_scope_are_normalised_in_the_key(
    clients: Callable[..., AsyncClient], namespace: str
) -> None:
    client = clients()
    factory = InformerFactory(client)
    forms: list[Any] = [
        "tier=front,app=web",
        "app=web, tier=front",
        {"app": "web", "tier": "front"},
        {"matchLabels": {"tier": "front"}, "matchExpressions": [
            {"key": "app", "operator": "In", "values": ["web"]}]},
    ]  # fmt: skip
    found = [
        await factory.get_informer(("v1", "ConfigMap"), namespace=namespace, label_selector=f)
        for f in forms
    ]
    assert all(i is found[0] for i in found)
    assert found[0].list_watch.label_selector in ("app=web,tier=front", "tier=front,app=web")
    # Namespaces are cluster-scoped: a namespace argument does not make another informer.
    a = await factory.get_informer(("v1", "Namespace"), namespace=namespace)
    b = await factory.get_informer(GroupVersionResource("", "v1", "namespaces"))
    assert a is b
    assert len(factory.informers) == 2
