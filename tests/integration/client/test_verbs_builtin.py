"""Every verb and subresource on built-in types, against the real kube-apiserver."""

from __future__ import annotations

import asyncio
import copy

import pytest
from client_helpers import configmap

from kubectrl.client import (
    AsyncClient,
    BlockingClient,
    ClientConfig,
    EventType,
    Preconditions,
    to_model,
)
from kubectrl.errors import (
    AlreadyExistsError,
    ConflictError,
    InvalidError,
    NotFoundError,
    ResourceNotFoundError,
)
from kubectrl.objects import GroupVersionResource

pytestmark = pytest.mark.integration

CM = ("v1", "ConfigMap")
DEPLOY = ("apps/v1", "Deployment")


def deployment(name: str, namespace: str, replicas: int = 1) -> dict:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "web", "image": "nginx:latest"}]},
            },
        },
    }


async def test_configmap_crud_selectors_and_patches(client: AsyncClient, namespace: str) -> None:
    created = await client.create(configmap("a", namespace, {"k": "1"}, labels={"app": "x"}))
    assert created["metadata"]["uid"]
    await client.create(configmap("b", namespace, {"k": "2"}, labels={"app": "y"}))
    with pytest.raises(AlreadyExistsError) as info:
        await client.create(configmap("a", namespace))
    assert f"create configmaps {namespace}/a" in str(info.value)

    got = await client.get(CM, "a", namespace=namespace)
    assert got["data"] == {"k": "1"}

    listed = await client.list(CM, namespace=namespace, label_selector="app=x")
    assert [i["metadata"]["name"] for i in listed["items"]] == ["a"]
    assert listed["items"][0]["kind"] == "ConfigMap"
    by_field = await client.list(CM, namespace=namespace, field_selector="metadata.name=b")
    assert [i["metadata"]["name"] for i in by_field["items"]] == ["b"]
    everywhere = await client.list(
        GroupVersionResource("", "v1", "configmaps"), label_selector="app=y"
    )
    assert any(i["metadata"]["namespace"] == namespace for i in everywhere["items"])

    got["data"]["k"] = "updated"
    stale = copy.deepcopy(got)
    updated = await client.update(got)
    assert updated["data"]["k"] == "updated"
    assert got == updated  # the object written is refreshed in place
    with pytest.raises(ConflictError) as conflict:
        await client.update(stale)  # stale resourceVersion
    assert conflict.value.code == 409
    assert "update configmaps" in str(conflict.value)

    merged = await client.patch(CM, "a", {"data": {"m": "merge"}}, namespace=namespace)
    assert merged["data"] == {"k": "updated", "m": "merge"}
    jsoned = await client.patch(
        CM,
        "a",
        [{"op": "add", "path": "/data/j", "value": "json"}],
        namespace=namespace,
        patch_type="json",
    )
    assert jsoned["data"]["j"] == "json"
    strategic = await client.patch(
        CM, "a", {"metadata": {"labels": {"s": "1"}}}, namespace=namespace, patch_type="strategic"
    )
    assert strategic["metadata"]["labels"] == {"app": "x", "s": "1"}

    with pytest.raises(ConflictError):
        await client.delete(CM, "a", namespace=namespace, preconditions=Preconditions(uid="wrong"))
    await client.delete(
        CM,
        "a",
        namespace=namespace,
        preconditions=Preconditions(uid=created["metadata"]["uid"]),
        grace_period_seconds=0,
    )
    with pytest.raises(NotFoundError) as missing:
        await client.get(CM, "a", namespace=namespace)
    assert f"get configmaps {namespace}/a: NotFound (404)" in str(missing.value)

    await client.delete_collection(CM, namespace=namespace, label_selector="app=y")
    left = await client.list(CM, namespace=namespace, label_selector="app")
    assert left["items"] == []


async def test_invalid_lists_field_causes(client: AsyncClient, namespace: str) -> None:
    with pytest.raises(InvalidError) as info:
        await client.create(configmap("Bad_Name", namespace, {"bad key!": "v"}))
    fields = {cause.field for cause in info.value.causes}
    assert "metadata.name" in fields
    assert any(f.startswith("data") for f in fields)
    assert "metadata.name" in str(info.value)


async def test_cluster_scoped_and_unknown_kind(client: AsyncClient) -> None:
    ns = await client.get(("v1", "Namespace"), "default")
    assert ns["metadata"]["name"] == "default"
    with pytest.raises(ResourceNotFoundError, match="Gizmo"):
        await client.get(("v1", "Gizmo"), "x")


async def test_deployment_scale_status_and_propagation(client: AsyncClient, namespace: str) -> None:
    await client.create(deployment("web", namespace))
    scale = await client.get(DEPLOY, "web", namespace=namespace, subresource="scale")
    assert scale["kind"] == "Scale"
    assert scale["spec"]["replicas"] == 1
    scaled = await client.scale(DEPLOY, "web", 3, namespace=namespace)
    assert scaled["spec"]["replicas"] == 3
    scale = await client.get(DEPLOY, "web", namespace=namespace, subresource="scale")
    scale["spec"]["replicas"] = 4
    scale = await client.subresource("scale").update(scale, resource=DEPLOY)
    assert (await client.get(DEPLOY, "web", namespace=namespace))["spec"]["replicas"] == 4

    current = await client.get(DEPLOY, "web", namespace=namespace)
    current["status"] = {
        "observedGeneration": 1,
        "replicas": 0,
        "conditions": [
            {"type": "Available", "status": "False", "reason": "Test", "message": "by the test"}
        ],
    }
    current["spec"]["replicas"] = 9  # ignored: the status subresource writes only status
    written = await client.status().update(current)
    assert written["status"]["conditions"][0]["reason"] == "Test"
    assert written["spec"]["replicas"] == 4
    patched = await client.status().patch(
        DEPLOY,
        "web",
        {"status": {"observedGeneration": 2}},
        namespace=namespace,
    )
    assert patched["status"]["observedGeneration"] == 2

    gone = await client.delete(DEPLOY, "web", namespace=namespace, propagation_policy="Foreground")
    # Foreground deletion (and no garbage collector running) leaves the object with a finalizer.
    assert "foregroundDeletion" in gone["metadata"].get("finalizers", [])
    assert gone["metadata"].get("deletionTimestamp")


async def test_models_in_and_out(client: AsyncClient, namespace: str) -> None:
    from kubernetes.client import V1ConfigMap, V1ObjectMeta

    created = await client.create(
        V1ConfigMap(
            api_version="v1",
            kind="ConfigMap",
            metadata=V1ObjectMeta(name="model", namespace=namespace),
            data={"x": "1"},
        )
    )
    # A model in, the same class out.
    assert isinstance(created, V1ConfigMap)
    assert created.data == {"x": "1"}
    raw = await client.get(CM, "model", namespace=namespace)
    model = to_model(raw)
    assert isinstance(model, V1ConfigMap)
    assert model.metadata.name == "model"


def test_blocking_facade_same_behaviour(client_config: ClientConfig, namespace: str) -> None:
    with BlockingClient(client_config) as client:
        created = client.create(configmap("sync", namespace, {"a": "1"}))
        with pytest.raises(AlreadyExistsError):
            client.create(configmap("sync", namespace))
        pages = list(client.list_pages(CM, namespace=namespace, limit=1))
        assert sum(len(p["items"]) for p in pages) >= 1
        with client.watch(
            CM, namespace=namespace, resource_version=created["metadata"]["resourceVersion"]
        ) as events:
            client.patch(CM, "sync", {"data": {"a": "2"}}, namespace=namespace)
            event = next(events)
            assert event.type is EventType.MODIFIED
            assert event.object["data"] == {"a": "2"}
        client.delete(CM, "sync", namespace=namespace)
        with pytest.raises(NotFoundError):
            client.get(CM, "sync", namespace=namespace)


async def test_async_iterators(client: AsyncClient, namespace: str) -> None:
    await asyncio.gather(*(client.create(configmap(f"it-{i}", namespace)) for i in range(5)))
    names = [
        item["metadata"]["name"]
        async for item in client.list_items(CM, namespace=namespace, label_selector=None, limit=2)
    ]
    assert sorted(n for n in names if n.startswith("it-")) == [f"it-{i}" for i in range(5)]
