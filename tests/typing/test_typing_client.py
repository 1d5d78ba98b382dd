"""Static typing of the client: mypy --strict infers results from the kind argument.

Checked by mypy (``tests/typing`` is in mypy's ``files``; ``tests/unit/kinds/test_typing_run.py``
runs it); the functions are never called, so pytest only imports this file.
"""

from __future__ import annotations

from typing import Any

from kubernetes.client.models import V1ConfigMap, V1Deployment
from typing_extensions import assert_type

from kubectrl.client import AsyncClient, BlockingClient, ModelList, WatchEvent


async def typed_async_reads(client: AsyncClient) -> None:
    deployment = await client.get(V1Deployment, "web", namespace="a")
    assert_type(deployment, V1Deployment)
    assert_type(deployment.spec.replicas, int | None)

    configmaps = await client.list(V1ConfigMap, namespace="a")
    assert_type(configmaps, ModelList[V1ConfigMap])
    assert_type(configmaps.items, list[V1ConfigMap])

    async for page in client.list_pages(V1ConfigMap, namespace="a", limit=10):
        assert_type(page, ModelList[V1ConfigMap])
    async for item in client.list_items(V1ConfigMap, namespace="a"):
        assert_type(item, V1ConfigMap)


async def untyped_async_reads(client: AsyncClient) -> None:
    raw = await client.get(("apps/v1", "Deployment"), "web", namespace="a")
    assert_type(raw, dict[str, Any])
    listed = await client.list(("v1", "ConfigMap"), namespace="a")
    assert_type(listed, dict[str, Any])
    async for item in client.list_items(("v1", "ConfigMap"), namespace="a"):
        assert_type(item, dict[str, Any])


async def typed_async_writes(client: AsyncClient, cm: V1ConfigMap, raw: dict[str, Any]) -> None:
    assert_type(await client.create(cm), V1ConfigMap)
    assert_type(await client.update(cm), V1ConfigMap)
    assert_type(await client.status().update(cm), V1ConfigMap)
    assert_type(await client.apply(cm, field_manager="me"), V1ConfigMap)
    assert_type(await client.patch(V1ConfigMap, "x", {"data": {}}, namespace="a"), V1ConfigMap)
    assert_type(await client.create(raw), dict[str, Any])
    assert_type(await client.update(raw), dict[str, Any])
    assert_type(await client.patch(("v1", "ConfigMap"), "x", {}, namespace="a"), dict[str, Any])


async def typed_watch(client: AsyncClient) -> None:
    async with client.watch(V1ConfigMap, namespace="a") as events:
        async for event in events:
            assert_type(event, WatchEvent)
            assert_type(event.as_model(V1ConfigMap), V1ConfigMap)


def blocking_client(client: BlockingClient, cm: V1ConfigMap) -> None:
    assert_type(client.get(V1Deployment, "web", namespace="a"), V1Deployment)
    assert_type(client.get(("apps/v1", "Deployment"), "web", namespace="a"), dict[str, Any])
    assert_type(client.list(V1ConfigMap, namespace="a").items, list[V1ConfigMap])
    for item in client.list_items(V1ConfigMap, namespace="a"):
        assert_type(item, V1ConfigMap)
    for page in client.list_pages(("v1", "ConfigMap"), namespace="a"):
        assert_type(page, dict[str, Any])
    assert_type(client.create(cm), V1ConfigMap)
    assert_type(client.update(cm), V1ConfigMap)
    assert_type(client.status().update(cm), V1ConfigMap)
    assert_type(client.apply(cm, field_manager="me"), V1ConfigMap)
    assert_type(client.patch(V1ConfigMap, "x", {}, namespace="a"), V1ConfigMap)
