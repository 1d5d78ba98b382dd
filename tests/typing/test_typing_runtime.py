"""Static typing of the cache-backed client and of typed reconcilers.

Checked by mypy --strict (``tests/typing`` is in mypy's ``files``, and
``tests/typing/test_mypy_passes.py`` runs it); the functions are never called, so pytest only
imports this file.
"""

from __future__ import annotations

from typing import Any

from kubernetes.client.models import V1ConfigMap, V1Deployment
from typing_extensions import assert_type

from kubectrl.client import ModelList
from kubectrl.resources import CustomResource, ResourceModel
from kubectrl.runtime import BlockingCachedClient, Builder, CachedClient, Manager, Request
from kubectrl.runtime.controllerutil import create_or_update, set_controller_reference


class FooSpec(ResourceModel):
    replicas: int = 1
    deployment_name: str = ""


class FooStatus(ResourceModel):
    available_replicas: int = 0


class Foo(CustomResource, group="example.com", version="v1", kind="Foo"):
    spec: FooSpec
    status: FooStatus | None = None


async def cached_reads(client: CachedClient) -> None:
    deployment = await client.get(V1Deployment, "web", namespace="a")
    assert_type(deployment, V1Deployment)
    foos = await client.list(Foo, namespace="a")
    assert_type(foos, ModelList[Foo])
    assert_type(foos.items, list[Foo])
    assert_type(await client.get(("v1", "ConfigMap"), "x", namespace="a"), dict[str, Any])
    assert_type(await client.list(("v1", "ConfigMap"), namespace="a"), dict[str, Any])


async def cached_writes(client: CachedClient, foo: Foo, raw: dict[str, Any]) -> None:
    assert_type(await client.create(foo), Foo)
    assert_type(await client.update(foo), Foo)
    assert_type(await client.status().update(foo), Foo)
    assert_type(await client.apply(foo, field_manager="me"), Foo)
    assert_type(await client.patch(Foo, "x", {"spec": {}}, namespace="a"), Foo)
    assert_type(await client.patch_merge_from(foo, foo), Foo)
    assert_type(await client.status().update(foo), Foo)
    assert_type(await client.status().patch(Foo, "x", {}, namespace="a"), Foo)
    assert_type(await client.status().apply(foo, field_manager="me"), Foo)
    assert_type(await client.create(raw), dict[str, Any])
    assert_type(await client.patch(("v1", "ConfigMap"), "x", {}, namespace="a"), dict[str, Any])


def blocking_cached(client: BlockingCachedClient, foo: Foo) -> None:
    assert_type(client.get(V1Deployment, "web", namespace="a"), V1Deployment)
    assert_type(client.get(("apps/v1", "Deployment"), "web", namespace="a"), dict[str, Any])
    assert_type(client.list(Foo, namespace="a").items, list[Foo])
    assert_type(client.create(foo), Foo)
    assert_type(client.update(foo), Foo)
    assert_type(client.patch(Foo, "x", {}, namespace="a"), Foo)
    assert_type(client.status().update(foo), Foo)
    assert_type(client.status().patch(Foo, "x", {}, namespace="a"), Foo)


def typed_reconciler(manager: Manager) -> None:
    client = manager.client

    async def reconcile(request: Request) -> None:
        foo = await client.get(Foo, request.name, namespace=request.namespace)
        assert_type(foo, Foo)
        assert_type(foo.spec.replicas, int)
        cm = V1ConfigMap()
        set_controller_reference(foo, cm)

        def mutate(obj: V1ConfigMap) -> None:
            obj.data = {"replicas": str(foo.spec.replicas)}

        await create_or_update(client, cm, mutate)

    Builder(manager).for_(Foo).owns(V1Deployment).complete(reconcile)
