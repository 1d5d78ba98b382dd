"""Informers against the real control plane: initial sync, RBAC failure, metadata-only."""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Callable
from typing import Any

import pytest

from kubectrl.cache import NAMESPACE_INDEX, CacheSyncError, Informer, InformerFactory, ListWatch
from kubectrl.client import AsyncClient
from kubectrl.envtest import ControlPlane
from kubectrl.testing import eventually

pytestmark = pytest.mark.integration

DEADLINE = 120.0


async def wait_until(predicate: Callable[[], bool], timeout: float = DEADLINE) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached before the deadline")
        await asyncio.sleep(0.02)


async def create_all(client: AsyncClient, objects: list[dict[str, Any]], width: int = 24) -> None:
    sem = asyncio.Semaphore(width)

    async def one(obj: dict[str, Any]) -> None:
        async with sem:
            await client.create(obj)

    await asyncio.gather(*(one(o) for o in objects))


async def in_watch_cache(
    client: AsyncClient,
    count: int,
    *,
    namespace: str | None = None,
    label_selector: str = "",
    field_selector: str = "",
) -> None:
    """Wait until a ``resourceVersion="0"`` list of ConfigMaps holds ``count`` objects.

    An informer's first list is that list (client-go's reflector.go relistResourceVersion),
    served from the watch cache at whatever version it holds (apiserver
    pkg/storage/cacher/watch_cache.go WaitUntilFreshAndGetList waits for none when asked for
    "0"): objects created a moment before may be missing from it, and arrive as watch events
    after the informer synced. A case that checks the synced cache against what it created
    waits for this first.
    """

    async def listed() -> bool:
        page = await client.list(
            ("v1", "ConfigMap"),
            namespace=namespace,
            label_selector=label_selector,
            field_selector=field_selector,
            resource_version="0",
        )
        held = len(page["items"])
        assert held >= count, f"the watch cache held {held} of {count} objects"
        return True

    await eventually(listed, DEADLINE, describe=f"{count} ConfigMaps in the watch cache")


def by_shard(obj: dict[str, Any]) -> list[str]:
    shard = (obj["metadata"].get("labels") or {}).get("shard")
    return [shard] if shard else []


async def test_initial_sync_of_2000_configmaps_matches_server_and_indexes(
    clients: Callable[..., AsyncClient], control_plane: ControlPlane
) -> None:
    client = clients()
    suite = secrets.token_hex(4)
    namespaces = [f"sync2k-{suite}-{i}" for i in range(4)]
    for ns in namespaces:
        await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    try:
        objects = [
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {
                    "name": f"cm-{i:04d}",
                    "namespace": namespaces[i % 4],
                    "labels": {"suite": suite, "shard": f"s{i % 7}"},
                },
                "data": {"i": str(i)},
            }
            for i in range(2000)
        ]
        await create_all(client, objects)
        await in_watch_cache(client, 2000, label_selector=f"suite={suite}")

        factory = InformerFactory(clients())
        informer = factory.informer(
            ("v1", "ConfigMap"), label_selector=f"suite={suite}", indexers={"shard": by_shard}
        )
        factory.start()
        try:
            results = await factory.wait_for_cache_sync(timeout=DEADLINE)
            assert list(results.values()) == [True]

            server = await client.list(("v1", "ConfigMap"), label_selector=f"suite={suite}")
            expected = {
                f"{o['metadata']['namespace']}/{o['metadata']['name']}": o["metadata"][
                    "resourceVersion"
                ]
                for o in server["items"]
            }
            assert len(expected) == 2000
            cached = {
                k: o["metadata"]["resourceVersion"] for k, o in informer.indexer.items().items()
            }
            assert cached == expected

            for ns in namespaces:
                want = sorted(k for k in expected if k.startswith(f"{ns}/"))
                assert informer.indexer.index_keys(NAMESPACE_INDEX, ns) == want
                assert len(want) == 500
            for shard in range(7):
                want = sorted(
                    f"{namespaces[i % 4]}/cm-{i:04d}" for i in range(2000) if i % 7 == shard
                )
                assert informer.indexer.index_keys("shard", f"s{shard}") == want
            assert informer.indexer.list_index_func_values("shard") == [f"s{i}" for i in range(7)]
            # Listers over the same cache.
            lister = informer.lister
            assert len(lister.namespace(namespaces[0]).list("shard=s0")) == len(
                [i for i in range(0, 2000, 4) if i % 7 == 0]
            )
        finally:
            await factory.shutdown()
    finally:
        for ns in namespaces:
            # Without a namespace controller (plain mode) a deleted namespace keeps its objects;
            # 2,000 leftover ConfigMaps would flood every later test's cluster-wide controller.
            await client.delete_collection(("v1", "ConfigMap"), namespace=ns)
            await client.delete(("v1", "Namespace"), ns)


async def test_rbac_user_without_list_permission_fails_sync_naming_resource_and_forbidden(
    control_plane: ControlPlane, clients: Callable[..., AsyncClient], namespace: str
) -> None:
    from kubectrl.client import load_kubeconfig

    user = control_plane.add_user(f"nolist-{secrets.token_hex(3)}")
    client = clients(load_kubeconfig(str(user.path)))
    informer = Informer(ListWatch(client, ("v1", "ConfigMap"), namespace=namespace))
    informer.start()
    try:
        with pytest.raises(CacheSyncError) as info:
            await informer.wait_for_cache_sync(timeout=5)
    finally:
        await informer.stop()
    message = str(info.value)
    assert "ConfigMap" in message
    assert "configmaps" in message
    assert "Forbidden" in message
    assert user.user in message


async def test_missing_resource_fails_sync_naming_it(
    clients: Callable[..., AsyncClient], namespace: str
) -> None:
    informer = Informer(ListWatch(clients(), ("example.com/v1", "Widget"), namespace=namespace))
    informer.start()
    try:
        with pytest.raises(CacheSyncError) as info:
            await informer.wait_for_cache_sync(timeout=5)
    finally:
        await informer.stop()
    assert "Widget" in str(info.value)
    assert "example.com" in str(info.value)


async def test_metadata_only_informer_caches_partial_object_metadata(
    clients: Callable[..., AsyncClient], namespace: str
) -> None:
    client = clients()
    await client.create(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "big", "namespace": namespace},
            "data": {"blob": "x" * 10000},
        }
    )
    await in_watch_cache(client, 1, namespace=namespace, field_selector="metadata.name=big")
    factory = InformerFactory(clients())
    informer = factory.informer(("v1", "ConfigMap"), namespace=namespace, metadata_only=True)
    seen: list[str] = []
    informer.add_handler(on_update=lambda old, new: seen.append(new["metadata"]["name"]))
    factory.start()
    try:
        await factory.wait_for_cache_sync(timeout=DEADLINE)
        cached = informer.lister.namespace(namespace).get("big")
        assert cached["kind"] == "PartialObjectMetadata"
        assert "data" not in cached
        await client.patch(
            ("v1", "ConfigMap"), "big", {"metadata": {"labels": {"a": "b"}}}, namespace=namespace
        )
        await wait_until(lambda: seen == ["big"])
        assert informer.lister.namespace(namespace).get("big")["metadata"]["labels"] == {"a": "b"}
    finally:
        await factory.shutdown()
