"""Static typing of the client interfaces: one declaration, the same overloads on every client.

Checked by mypy --strict (``tests/typing/test_mypy_passes.py``); the functions are never called.
Lines marked ``# type: ignore[...]`` must be errors: strict mypy warns about an unused ignore, so
if a misspelled keyword were accepted the check would fail.
"""

from __future__ import annotations

from typing import Any

from kubernetes.client.models import V1ConfigMap, V1Deployment
from typing_extensions import assert_type

from kubectrl.client import AsyncClient, BlockingClient, ModelList
from kubectrl.client._interfaces import KubeClient, StatusWriter, SubResourceClient
from kubectrl.client._interfaces_blocking import (
    BlockingKubeClient,
    BlockingStatusWriter,
    BlockingSubResourceClient,
)
from kubectrl.runtime import BlockingCachedClient, CachedClient, Manager


async def every_async_client_is_a_kube_client(
    api: AsyncClient, cached: CachedClient, cm: V1ConfigMap
) -> None:
    clients: list[KubeClient] = [api, cached]
    for client in clients:
        assert_type(await client.get(V1Deployment, "web", namespace="a"), V1Deployment)
        assert_type(
            await client.get(("apps/v1", "Deployment"), "web", namespace="a"), dict[str, Any]
        )
        assert_type(await client.list(V1ConfigMap, namespace="a"), ModelList[V1ConfigMap])
        assert_type(
            await client.list(("v1", "ConfigMap"), label_selector={"a": "b"}), dict[str, Any]
        )
        assert_type(await client.create(cm), V1ConfigMap)
        assert_type(await client.update(cm, field_manager="me"), V1ConfigMap)
        assert_type(await client.patch(V1ConfigMap, "x", {}, namespace="a"), V1ConfigMap)
        assert_type(await client.apply(cm, field_manager="me", force=True), V1ConfigMap)
        assert_type(await client.patch_merge_from(cm, cm), V1ConfigMap)
        assert_type(await client.delete(V1ConfigMap, "x", namespace="a"), dict[str, Any])
        assert_type(await client.delete_collection(("v1", "ConfigMap")), dict[str, Any])


async def status_and_subresource_on_async_clients(
    api: AsyncClient, cached: CachedClient, cm: V1ConfigMap
) -> None:
    for client in (api, cached):
        status: StatusWriter = client.status()
        assert_type(await status.update(cm), V1ConfigMap)
        assert_type(await status.patch(V1ConfigMap, "x", {}, namespace="a"), V1ConfigMap)
        assert_type(await status.patch(("v1", "ConfigMap"), "x", {}), dict[str, Any])
        assert_type(await status.apply(cm, field_manager="me"), V1ConfigMap)
        assert_type(await status.patch_merge_from(cm, cm, optimistic_lock=True), V1ConfigMap)
        scale: SubResourceClient = client.subresource("scale")
        assert_type(await scale.get(V1Deployment, "web", namespace="a"), dict[str, Any])
        assert_type(await scale.update({}, resource=V1Deployment), dict[str, Any])
        assert_type(await scale.patch(V1Deployment, "web", {}, namespace="a"), dict[str, Any])


def every_blocking_client_is_a_blocking_kube_client(
    api: BlockingClient, cached: BlockingCachedClient, cm: V1ConfigMap
) -> None:
    clients: list[BlockingKubeClient] = [api, cached]
    for client in clients:
        assert_type(client.get(V1Deployment, "web", namespace="a"), V1Deployment)
        assert_type(client.get(("apps/v1", "Deployment"), "web", namespace="a"), dict[str, Any])
        assert_type(client.list(V1ConfigMap, namespace="a").items, list[V1ConfigMap])
        assert_type(client.create(cm, dry_run=True), V1ConfigMap)
        assert_type(client.update(cm), V1ConfigMap)
        assert_type(client.patch(V1ConfigMap, "x", {}, namespace="a"), V1ConfigMap)
        assert_type(client.apply(cm, field_manager="me"), V1ConfigMap)
        assert_type(client.patch_merge_from(cm, cm), V1ConfigMap)
        assert_type(client.delete(("v1", "ConfigMap"), "x", namespace="a"), dict[str, Any])
        status: BlockingStatusWriter = client.status()
        assert_type(status.update(cm), V1ConfigMap)
        assert_type(status.patch(V1ConfigMap, "x", {}, namespace="a"), V1ConfigMap)
        assert_type(status.apply(cm, field_manager="me"), V1ConfigMap)
        scale: BlockingSubResourceClient = client.subresource("scale")
        assert_type(scale.get(V1Deployment, "web", namespace="a"), dict[str, Any])
    for page in api.list_pages(V1ConfigMap, namespace="a"):
        assert_type(page, ModelList[V1ConfigMap])


async def misspelled_keywords_are_errors(manager: Manager, api: AsyncClient) -> None:
    await manager.client.list(("v1", "ConfigMap"), namspace="a")  # type: ignore[call-overload]
    await manager.client.get(V1ConfigMap, "x", namespace="a", resource_versoin="1")  # type: ignore[call-overload]
    await manager.client.delete(V1ConfigMap, "x", propagation="Foreground")  # type: ignore[call-arg]
    await manager.client.status().update({}, namspace="a")  # type: ignore[call-overload]
    manager.blocking_client.list(V1ConfigMap, label_selectr="a=b")  # type: ignore[call-overload]
    manager.blocking_client.status().patch(V1ConfigMap, "x", {}, subresource="status")  # type: ignore[call-overload]
    await api.apply({"kind": "ConfigMap"}, forse=True)  # type: ignore[call-overload]


async def status_is_written_one_way(api: AsyncClient, cm: V1ConfigMap) -> None:
    # the status subresource is written through status() only: the object verbs take no
    # subresource, and the former update_status is gone
    await api.update(cm, subresource="status")  # type: ignore[call-overload]
    await api.patch(V1ConfigMap, "x", {}, subresource="status")  # type: ignore[call-overload]
    await api.apply(cm, subresource="status")  # type: ignore[call-overload]
    await api.update_status(cm)  # type: ignore[attr-defined]
