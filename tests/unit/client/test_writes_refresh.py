"""Every write of an object refreshes the object passed in, as controller-runtime's do.

controller-runtime's client decodes the server's answer into the object it was given: in
``pkg/client/typed_client.go`` (and ``unstructured_client.go``) ``Create``, ``Update``,
``Patch``, ``UpdateSubResource`` and ``PatchSubResource`` end in ``Do(ctx).Into(obj)``, and
``Apply`` decodes into its configuration. Go code keeps using the same variable after
``r.Status().Update(ctx, obj)``, so its next write carries the new ``resourceVersion``. Here every
write verb, given a dict or a model instance, leaves it equal to what the server returned
(metadata, spec, status), and still returns that answer as another object. Run on the FakeAPI,
through the asyncio, blocking and cache-backed clients.
"""

from __future__ import annotations

import copy
import types
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from fake_objects import deployment, fake_api
from kubernetes.client.models import V1ConfigMap, V1Deployment, V1DeploymentStatus
from pydantic import ConfigDict

from kubectrl import kinds
from kubectrl.cache import InformerFactory
from kubectrl.client import AsyncClient, BlockingClient
from kubectrl.runtime import CachedClient

DEPLOY = ("apps/v1", "Deployment")


def _as(typed: bool, data: dict[str, Any]) -> Any:
    return kinds.from_dict(V1Deployment, data) if typed else copy.deepcopy(data)


def _wire(obj: Any) -> dict[str, Any]:
    return kinds.to_dict(obj)


def _set_replicas(obj: Any, replicas: int) -> None:
    if isinstance(obj, dict):
        obj["spec"]["replicas"] = replicas
    else:
        obj.spec.replicas = replicas


def _set_status(obj: Any, replicas: int) -> None:
    if isinstance(obj, dict):
        obj["status"] = {"replicas": replicas}
    else:
        obj.status = V1DeploymentStatus(replicas=replicas)


def _kind(obj: Any) -> Any:
    return DEPLOY if isinstance(obj, dict) else V1Deployment


Write = Callable[[AsyncClient, Any], Awaitable[Any]]


async def _update(client: AsyncClient, obj: Any) -> Any:
    _set_replicas(obj, 2)
    return await client.update(obj)


async def _update_status(client: AsyncClient, obj: Any) -> Any:
    _set_status(obj, 4)
    return await client.status().update(obj)


async def _status_update(client: AsyncClient, obj: Any) -> Any:
    _set_status(obj, 5)
    return await client.status().update(obj)


async def _patch(client: AsyncClient, obj: Any) -> Any:
    # The object itself as the merge patch (controller-runtime's Patch(ctx, obj, ...)).
    _set_replicas(obj, 3)
    return await client.patch(_kind(obj), "web", obj, namespace="ns")


async def _status_patch(client: AsyncClient, obj: Any) -> Any:
    _set_status(obj, 6)
    return await client.status().patch(_kind(obj), "web", obj, namespace="ns")


async def _patch_merge_from(client: AsyncClient, obj: Any) -> Any:
    original = copy.deepcopy(obj)
    _set_replicas(obj, 5)
    return await client.patch_merge_from(original, obj, optimistic_lock=True)


async def _status_patch_merge_from(client: AsyncClient, obj: Any) -> Any:
    original = copy.deepcopy(obj)
    _set_status(obj, 7)
    return await client.status().patch_merge_from(original, obj, optimistic_lock=True)


WRITES: dict[str, Write] = {
    "update": _update,
    "update_status": _update_status,
    "status().update": _status_update,
    "patch": _patch,
    "status().patch": _status_patch,
    "patch_merge_from": _patch_merge_from,
    "status().patch_merge_from": _status_patch_merge_from,
}


def _assert_refreshed(obj: Any, result: Any, before: dict[str, Any]) -> None:
    """``obj`` holds exactly what the server answered, and is not the answer itself."""
    assert obj is not result
    assert type(obj) is type(result)
    wire = _wire(obj)
    assert wire == _wire(result)
    meta, old = wire["metadata"], before["metadata"]
    assert meta["resourceVersion"] != old.get("resourceVersion")
    assert meta["uid"]
    assert meta["generation"] >= 1
    # The two are independent: changing the answer leaves the refreshed object alone.
    if isinstance(result, dict):
        result["metadata"]["labels"] = {"changed": "yes"}
        assert "labels" not in obj["metadata"]
    else:
        result.metadata.labels = {"changed": "yes"}
        assert obj.metadata.labels is None


@pytest.mark.parametrize("typed", [False, True], ids=["dict", "model"])
async def test_create_refreshes_the_object(typed: bool) -> None:
    async with AsyncClient(fake_api().config()) as client:
        obj = _as(typed, deployment("web"))
        before = _wire(copy.deepcopy(obj))
        result = await client.create(obj)
        _assert_refreshed(obj, result, before)
        assert _wire(obj)["metadata"]["resourceVersion"]


@pytest.mark.parametrize("typed", [False, True], ids=["dict", "model"])
@pytest.mark.parametrize("verb", list(WRITES))
async def test_write_refreshes_the_object(verb: str, typed: bool) -> None:
    async with AsyncClient(fake_api().config()) as client:
        obj = _as(typed, await client.create(deployment("web")))
        before = _wire(copy.deepcopy(obj))
        result = await WRITES[verb](client, obj)
        _assert_refreshed(obj, result, before)
        # The refreshed object is the current one: writing it again does not conflict.
        live = await client.get(DEPLOY, "web", namespace="ns")
        assert _wire(obj)["metadata"]["resourceVersion"] == live["metadata"]["resourceVersion"]
        _set_replicas(obj, 8)
        again = await client.update(obj)
        assert _wire(again)["metadata"]["resourceVersion"] != live["metadata"]["resourceVersion"]


@pytest.mark.parametrize("typed", [False, True], ids=["dict", "model"])
@pytest.mark.parametrize("subresource", ["", "status"])
async def test_apply_refreshes_the_object(typed: bool, subresource: str) -> None:
    async with AsyncClient(fake_api().config()) as client:
        created = await client.create(deployment("web"))
        body: dict[str, Any] = {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "ns"},
        }
        # The model's spec is required: on the status subresource the server ignores it.
        body["spec"] = deployment("web")["spec"] | {"replicas": 4}
        if subresource:
            body["status"] = {"replicas": 9}
        obj = _as(typed, body)
        writer = client.status() if subresource else client
        result = await writer.apply(obj, field_manager="refresh-test", force=True)
        _assert_refreshed(obj, result, created)
        assert _wire(obj)["metadata"]["managedFields"]
        assert _wire(obj)["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx"


async def test_patch_leaves_a_patch_that_is_not_an_object_alone() -> None:
    async with AsyncClient(fake_api().config()) as client:
        await client.create(deployment("web"))
        patch = {"spec": {"replicas": 2}}
        ops = [{"op": "replace", "path": "/spec/replicas", "value": 3}]
        await client.patch(DEPLOY, "web", patch, namespace="ns")
        await client.patch(DEPLOY, "web", ops, namespace="ns", patch_type="json")
        assert patch == {"spec": {"replicas": 2}}
        assert ops == [{"op": "replace", "path": "/spec/replicas", "value": 3}]


class FrozenConfigMap(V1ConfigMap):
    model_config = ConfigDict(frozen=True)


async def test_frozen_models_and_read_only_mappings_are_left_as_they_are() -> None:
    async with AsyncClient(fake_api().config()) as client:
        frozen = FrozenConfigMap(
            api_version="v1", kind="ConfigMap", metadata={"name": "f", "namespace": "ns"}
        )
        created = await client.create(frozen)
        assert created.metadata.resource_version
        assert frozen.metadata.resource_version is None

        body = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "m", "namespace": "ns"},
        }
        read_only = types.MappingProxyType(body)
        answer = await client.create(read_only)
        assert answer["metadata"]["resourceVersion"]
        assert "resourceVersion" not in body["metadata"]


def test_the_blocking_client_refreshes_the_object() -> None:
    with BlockingClient(fake_api().config()) as client:
        obj = client.create(deployment("web"))
        model = kinds.from_dict(V1Deployment, obj)
        model.status = V1DeploymentStatus(replicas=2)
        result = client.status().update(model)
        assert model.metadata.resource_version == result.metadata.resource_version
        obj = client.get(DEPLOY, "web", namespace="ns")
        obj["spec"]["replicas"] = 3
        result = client.update(obj)
        assert obj == result
        assert obj is not result
        client.update(obj)  # no conflict: obj carries the new resourceVersion


async def test_the_cached_client_refreshes_the_object() -> None:
    async with AsyncClient(fake_api().config()) as client:
        cached = CachedClient(client, InformerFactory(client))
        obj = await cached.create(deployment("web"))
        obj = kinds.from_dict(V1Deployment, obj)
        obj.status = V1DeploymentStatus(replicas=2)
        result = await cached.status().update(obj)
        assert _wire(obj) == _wire(result)
        original = copy.deepcopy(obj)
        obj.spec.replicas = 4
        result = await cached.patch_merge_from(original, obj, optimistic_lock=True)
        assert _wire(obj) == _wire(result)
        await cached.update(obj)  # no conflict
