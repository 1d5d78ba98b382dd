"""One status and subresource API on every client: ``status()`` and ``subresource(name)``.

Run against the in-memory FakeAPI: the asyncio and blocking clients write the status and the
scale subresource (``status()`` is the one way to write a status); the cache-backed client refuses
by name the read options a cache cannot answer, reads subresources live and fences their writes.
"""

from __future__ import annotations

import copy

import pytest
from fake_objects import deployment, fake_api

from kubectrl.cache import InformerFactory
from kubectrl.client import AsyncClient, BlockingClient
from kubectrl.client._subresource import ClientSubResourceClient
from kubectrl.leaderelection import LeaderElectionLostError
from kubectrl.runtime import CachedClient

DEPLOY = ("apps/v1", "Deployment")


async def test_async_client_status_and_scale() -> None:
    api = fake_api()
    async with AsyncClient(api.config()) as client:
        created = await client.create(deployment("web"))
        created["status"] = {"observedGeneration": 1}
        written = await client.status().update(created)
        assert written["status"]["observedGeneration"] == 1

        patched = await client.status().patch(
            DEPLOY, "web", {"status": {"replicas": 4}}, namespace="ns"
        )
        assert patched["status"]["replicas"] == 4

        before = copy.deepcopy(patched)
        patched["status"]["readyReplicas"] = 2
        merged = await client.status().patch_merge_from(before, patched, optimistic_lock=True)
        assert merged["status"]["readyReplicas"] == 2

        # status().update: the whole object back, typed like the body.
        merged["status"]["availableReplicas"] = 1
        assert (await client.status().update(merged))["status"]["availableReplicas"] == 1

        scales = client.subresource("scale")
        scale = await scales.get(DEPLOY, "web", namespace="ns")
        assert (scale["kind"], scale["spec"]["replicas"]) == ("Scale", 1)
        scale["spec"]["replicas"] = 3
        assert (await scales.update(scale, resource=DEPLOY))["spec"]["replicas"] == 3
        await scales.patch(DEPLOY, "web", {"spec": {"replicas": 5}}, namespace="ns")
        assert (await client.get(DEPLOY, "web", namespace="ns"))["spec"]["replicas"] == 5


async def test_patch_merge_from_on_the_async_client_sends_only_the_change() -> None:
    api = fake_api()
    async with AsyncClient(api.config()) as client:
        cm = await client.create(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "x", "namespace": "ns"},
                "data": {"a": "1", "b": "2"},
            }
        )
        original = copy.deepcopy(cm)
        del cm["data"]["b"]
        cm["data"]["c"] = "3"
        result = await client.patch_merge_from(original, cm)
        assert result["data"] == {"a": "1", "c": "3"}
        with pytest.raises(ValueError, match="optimistic_lock needs"):
            await client.patch_merge_from({"metadata": {}}, cm, optimistic_lock=True)


def test_blocking_client_status_and_scale() -> None:
    api = fake_api()
    with BlockingClient(api.config()) as client:
        created = client.create(deployment("web"))
        created["status"] = {"replicas": 2}
        assert client.status().update(created)["status"]["replicas"] == 2
        patched = client.status().patch(DEPLOY, "web", {"status": {"replicas": 3}}, namespace="ns")
        assert patched["status"]["replicas"] == 3
        scale = client.subresource("scale").get(DEPLOY, "web", namespace="ns")
        assert scale["spec"]["replicas"] == 1
        client.subresource("scale").patch(DEPLOY, "web", {"spec": {"replicas": 2}}, namespace="ns")
        assert client.get(DEPLOY, "web", namespace="ns")["spec"]["replicas"] == 2


async def test_cached_client_refuses_what_the_cache_cannot_answer_by_name() -> None:
    api = fake_api()
    async with AsyncClient(api.config()) as client:
        cached = CachedClient(client, InformerFactory(client))
        with pytest.raises(ValueError, match=r"subresource is not served from the cache"):
            await cached.get(DEPLOY, "web", namespace="ns", subresource="scale")
        with pytest.raises(ValueError, match=r"resource_version is not served"):
            await cached.get(DEPLOY, "web", namespace="ns", resource_version="5")
        with pytest.raises(ValueError, match=r"field_selector, limit are not served.*reader"):
            await cached.list(DEPLOY, field_selector="metadata.name=x", limit=10)
        with pytest.raises(ValueError, match=r"metadata_only is not served"):
            await cached.list(DEPLOY, metadata_only=True)


async def test_cached_client_reads_subresources_live_and_fences_their_writes() -> None:
    api = fake_api()
    leader = True
    async with AsyncClient(api.config()) as client:
        await client.create(deployment("web"))
        cached = CachedClient(client, InformerFactory(client), leader_fence=lambda: leader)
        scale = await cached.subresource("scale").get(DEPLOY, "web", namespace="ns")
        assert scale["spec"]["replicas"] == 1
        await cached.status().patch(DEPLOY, "web", {"status": {"replicas": 1}}, namespace="ns")
        leader = False
        with pytest.raises(LeaderElectionLostError, match=r"patch scale of Deployment.*ns/web"):
            await cached.subresource("scale").patch(
                DEPLOY, "web", {"spec": {"replicas": 2}}, namespace="ns"
            )
        with pytest.raises(LeaderElectionLostError, match=r"delete collection of Deployment"):
            await cached.delete_collection(DEPLOY, namespace="ns")
        live = await client.get(DEPLOY, "web", namespace="ns")
        assert live["spec"]["replicas"] == 1  # nothing was sent
        assert live["status"]["replicas"] == 1


async def test_a_subresource_name_is_one_path_segment() -> None:
    api = fake_api()
    async with AsyncClient(api.config()) as client:
        for bad in ("", "scale/x"):
            with pytest.raises(ValueError, match="one path segment"):
                client.subresource(bad)
        assert isinstance(client.subresource("scale"), ClientSubResourceClient)
