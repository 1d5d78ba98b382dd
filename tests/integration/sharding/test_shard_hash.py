"""kubectrl's shard of each object equals the one kube-apiserver assigns (KEP-5866).

kube-apiserver v1.36 with ``ShardedListAndWatch=true`` lists, for
``shardSelector=shardRange(object.metadata.uid, ...)``, the objects whose FNV-1a 64 hash of
the field is in the range (``staging/src/k8s.io/apimachinery/pkg/sharding/hash.go`` and
``selector.go``), and echoes the selector in ``metadata.shardInfo``. For N ConfigMaps (1,000
here; ``KUBECTRL_SHARD_HASH_OBJECTS=10000`` for the acceptance count, documented in
docs/scaling.md) each server shard must be exactly the objects :func:`shard_index` puts there.
The same for namespace sharding, and with the gate off the parameter is ignored (no shardInfo),
which is what the reflector's fallback relies on.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

import pytest

from kubectrl.cache._shard import ShardSelector, shard_index
from kubectrl.client import AsyncClient, load_kubeconfig
from kubectrl.envtest import ControlPlane

pytestmark = pytest.mark.integration

OBJECTS = int(os.environ.get("KUBECTRL_SHARD_HASH_OBJECTS", "1000"))
SHARDS = 6
NAMESPACE = {"apiVersion": "v1", "kind": "Namespace"}


async def _create(client: AsyncClient, namespace: str, names: list[str]) -> None:
    sem = asyncio.Semaphore(32)

    async def one(name: str) -> None:
        async with sem:
            await client.create(
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": name, "namespace": namespace},
                    "data": {"k": "v"},
                }
            )

    await asyncio.gather(*(one(n) for n in names))


async def _shard_listing(
    client: AsyncClient, selector: ShardSelector, namespace: str | None
) -> tuple[set[str], dict[str, Any]]:
    uids: set[str] = set()
    first: dict[str, Any] = {}
    async for page in client.list_pages(
        ("v1", "ConfigMap"), namespace=namespace, shard_selector=str(selector), limit=500
    ):
        first = first or page["metadata"]
        uids.update(item["metadata"]["uid"] for item in page["items"])
    return uids, first


def _client(cp: ControlPlane) -> AsyncClient:
    return AsyncClient(load_kubeconfig(str(cp.kubeconfig.path)).with_options(rate_limit=None))


async def test_uid_shards_equal_the_apiservers(sharded_control_plane: ControlPlane) -> None:
    async with _client(sharded_control_plane) as client:
        ns = "shard-hash-uid"
        await client.create(NAMESPACE | {"metadata": {"name": ns}})
        await _create(client, ns, [f"cm-{i}" for i in range(OBJECTS)])
        listing = await client.list(("v1", "ConfigMap"), namespace=ns)
        everything = {item["metadata"]["uid"]: item for item in listing["items"]}
        assert len(everything) == OBJECTS
        seen: set[str] = set()
        for i in range(SHARDS):
            selector = ShardSelector.of(i, SHARDS)
            uids, meta = await _shard_listing(client, selector, ns)
            assert ShardSelector.parse(meta["shardInfo"]["selector"]) == selector
            ours = {u for u, obj in everything.items() if shard_index(obj, SHARDS) == i}
            assert uids == ours, f"shard {i}: {len(uids ^ ours)} objects differ"
            assert not uids & seen
            seen |= uids
        assert seen == set(everything)


async def test_namespace_shards_equal_the_apiservers(sharded_control_plane: ControlPlane) -> None:
    async with _client(sharded_control_plane) as client:
        namespaces = [f"shard-hash-ns-{i}" for i in range(24)]
        for ns in namespaces:
            await client.create(NAMESPACE | {"metadata": {"name": ns}})
            await _create(client, ns, ["a", "b"])
        by_uid: dict[str, dict[str, Any]] = {}
        for ns in namespaces:
            for item in (await client.list(("v1", "ConfigMap"), namespace=ns))["items"]:
                by_uid[item["metadata"]["uid"]] = item
        for i in range(3):
            selector = ShardSelector.of(i, 3, "namespace")
            uids, meta = await _shard_listing(client, selector, None)
            assert "shardInfo" in meta
            ours = {u for u, o in by_uid.items() if selector.matches(o)}
            assert uids & set(by_uid) == ours, f"namespace shard {i}"


async def test_without_the_gate_the_selector_is_ignored(control_plane: ControlPlane) -> None:
    async with _client(control_plane) as client:
        ns = "shard-hash-gate-off"
        await client.create(NAMESPACE | {"metadata": {"name": ns}})
        await _create(client, ns, [f"cm-{i}" for i in range(10)])
        uids, meta = await _shard_listing(client, ShardSelector.of(0, 2), ns)
        assert len(uids) == 10
        assert "shardInfo" not in meta
