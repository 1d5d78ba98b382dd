"""FakeAPI pieces: patch functions, server-side apply, CRDs, streaming lists, GC, fault timing."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import AsyncIterator
from typing import Any

import pytest

from kubectrl import errors
from kubectrl._internal.clock import FakeClock
from kubectrl.apiserver._patch import json_patch, merge_patch, strategic_merge_patch
from kubectrl.client import AsyncClient
from kubectrl.testing import FakeAPI

CM = ("v1", "ConfigMap")
DEPLOY = ("apps/v1", "Deployment")
FOO = ("example.com/v1", "Foo")
CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "foos.example.com"},
    "spec": {
        "group": "example.com",
        "scope": "Namespaced",
        "names": {"plural": "foos", "singular": "foo", "kind": "Foo", "listKind": "FooList"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "required": ["image"],
                                "properties": {
                                    "image": {"type": "string"},
                                    "replicas": {"type": "integer", "minimum": 0, "default": 1},
                                },
                            },
                            "status": {
                                "type": "object",
                                "properties": {"ready": {"type": "integer"}},
                            },
                        },
                    }
                },
            }
        ],
    },
}


def deployment(name: str, containers: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": containers}},
        },
    }


@pytest.fixture
def api() -> FakeAPI:
    return FakeAPI()


@pytest.fixture
async def client(api: FakeAPI) -> AsyncIterator[AsyncClient]:
    async with AsyncClient(api.config()) as c:
        yield c


def test_merge_json_and_strategic_patch_functions() -> None:
    assert merge_patch({"a": [1, 2], "b": 1}, {"a": [3], "b": None}) == {"a": [3]}
    doc = {"a": {"b": [1, 2]}}
    ops = [
        {"op": "test", "path": "/a/b/0", "value": 1},
        {"op": "move", "from": "/a/b", "path": "/c"},
        {"op": "copy", "from": "/c", "path": "/d"},
        {"op": "replace", "path": "/d/1", "value": 9},
    ]
    assert json_patch(doc, ops) == {"a": {}, "c": [1, 2], "d": [1, 9]}
    assert doc == {"a": {"b": [1, 2]}}  # inputs are never changed
    current = {"containers": [{"name": "a", "env": [{"name": "X", "value": "1"}]}, {"name": "b"}]}
    patched = strategic_merge_patch(
        current,
        {
            "containers": [
                {"name": "a", "env": [{"name": "Y", "value": "2"}]},
                {"name": "b", "$patch": "delete"},
            ]
        },
    )
    assert patched == {
        "containers": [
            {"name": "a", "env": [{"name": "Y", "value": "2"}, {"name": "X", "value": "1"}]}
        ]
    }
    assert strategic_merge_patch({"m": {"a": 1}}, {"m": {"$patch": "replace", "b": 2}}) == {
        "m": {"b": 2}
    }
    assert strategic_merge_patch({"finalizers": ["a"]}, {"finalizers": ["b"]}) == {
        "finalizers": ["b", "a"]  # patch items first (normalizeElementOrder)
    }
    assert strategic_merge_patch(
        {"finalizers": ["a", "b"]}, {"$setElementOrder/finalizers": ["b", "a"]}
    ) == {"finalizers": ["b", "a"]}


async def test_failed_json_patch_test_op_is_invalid(client: AsyncClient) -> None:
    await client.create(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "a", "namespace": "default"},
            "data": {"k": "1"},
        }
    )
    with pytest.raises(errors.InvalidError):
        await client.patch(
            CM,
            "a",
            [{"op": "test", "path": "/data/k", "value": "2"}],
            namespace="default",
            patch_type="json",
        )


async def test_strategic_patch_merges_containers_by_name(client: AsyncClient) -> None:
    await client.create(
        deployment("web", [{"name": "app", "image": "a:1"}, {"name": "side", "image": "s:1"}])
    )
    patched = await client.patch(
        DEPLOY,
        "web",
        {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "a:2"}]}}}},
        namespace="default",
        patch_type="strategic",
    )
    images = [c["image"] for c in patched["spec"]["template"]["spec"]["containers"]]
    assert images == ["a:2", "s:1"]
    assert patched["metadata"]["generation"] == 2
    assert patched["spec"]["replicas"] == 1  # defaulted on create


async def test_server_side_apply_ownership_conflict_and_force(client: AsyncClient) -> None:
    body = deployment("web", [{"name": "app", "image": "a:1"}])
    body["spec"]["replicas"] = 2
    # A copy: apply refreshes the body it is given, and ``body`` is applied again below.
    created = await client.apply(copy.deepcopy(body), field_manager="first")
    managers = {e["manager"]: e["operation"] for e in created["metadata"]["managedFields"]}
    assert managers == {"first": "Apply"}
    other = {**deployment("web", [{"name": "app", "image": "a:1"}]), "spec": {"replicas": 5}}
    other["spec"]["selector"] = body["spec"]["selector"]
    del other["spec"]["selector"]
    with pytest.raises(errors.ConflictError) as err:
        await client.apply(other, field_manager="second")
    assert (
        err.value.server_message
        == 'Apply failed with 1 conflict: conflict with "first": .spec.replicas'
    )
    assert err.value.causes[0].field == ".spec.replicas"
    forced = await client.apply(other, field_manager="second", force=True)
    assert forced["spec"]["replicas"] == 5
    # The first manager stops applying replicas: the field stays (the second one owns it).
    del body["spec"]["replicas"]
    again = await client.apply(body, field_manager="first")
    assert again["spec"]["replicas"] == 5


async def test_apply_removes_fields_the_manager_stops_applying(client: AsyncClient) -> None:
    cm = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "a", "namespace": "default"},
    }
    await client.apply({**cm, "data": {"x": "1", "y": "2"}}, field_manager="m")
    after = await client.apply({**cm, "data": {"x": "1"}}, field_manager="m")
    assert after["data"] == {"x": "1"}


async def test_crd_defaults_validation_status_and_generation(
    api: FakeAPI, client: AsyncClient
) -> None:
    api.install_crd(CRD)
    foo = {
        "apiVersion": "example.com/v1",
        "kind": "Foo",
        "metadata": {"name": "f", "namespace": "default"},
    }
    created = await client.create({**foo, "spec": {"image": "x"}, "status": {"ready": 3}})
    assert created["spec"] == {"image": "x", "replicas": 1}
    assert "status" not in created
    with pytest.raises(errors.InvalidError) as err:
        await client.create(
            {**foo, "metadata": {"name": "g", "namespace": "default"}, "spec": {"replicas": "many"}}
        )
    fields = sorted(c.field for c in err.value.causes)
    assert fields == ["spec.image", "spec.replicas"]
    assert err.value.status["details"]["kind"] == "Foo"
    status = await client.status().update(
        {**created, "status": {"ready": 1}, "spec": {"image": "ignored"}}
    )
    assert status["status"] == {"ready": 1}
    assert status["spec"]["image"] == "x"
    assert status["metadata"]["generation"] == 1
    bumped = await client.patch(FOO, "f", {"spec": {"image": "y"}}, namespace="default")
    assert bumped["metadata"]["generation"] == 2
    with pytest.raises(errors.APIError) as smp:
        await client.patch(
            FOO, "f", {"spec": {"image": "z"}}, namespace="default", patch_type="strategic"
        )
    assert smp.value.code == 415


async def test_discovery_serves_a_crd_created_through_the_client(client: AsyncClient) -> None:
    await client.create(CRD)
    resource = await client.resource(FOO)
    assert (resource.name, resource.namespaced, "status" in resource.subresources) == (
        "foos",
        True,
        True,
    )


async def test_streaming_list_ends_with_the_initial_events_bookmark(client: AsyncClient) -> None:
    await client.create(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "default"}}
    )
    async with client.watch(
        CM, namespace="default", send_initial_events=True, resource_version_match="NotOlderThan"
    ) as events:
        first = await events.__anext__()
        end = await events.__anext__()
    assert (first.type.value, first.object["metadata"]["name"]) == ("ADDED", "a")
    assert end.is_initial_events_end


async def test_watch_with_a_label_selector_sees_objects_leave_it(client: AsyncClient) -> None:
    cm = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "a", "namespace": "default", "labels": {"on": "yes"}},
    }
    created = await client.create(cm)
    async with client.watch(
        CM,
        namespace="default",
        label_selector="on=yes",
        resource_version=created["metadata"]["resourceVersion"],
    ) as events:
        await client.patch(CM, "a", {"metadata": {"labels": {"on": "no"}}}, namespace="default")
        left = await events.__anext__()
    assert left.type.value == "DELETED"
    # As cache_watcher.go sends it: the state that matched, at the change's resourceVersion.
    assert left.object["metadata"]["labels"] == {"on": "yes"}
    assert int(left.resource_version) > int(created["metadata"]["resourceVersion"])


async def test_foreground_and_orphan_deletion(client: AsyncClient) -> None:
    def cm(name: str, owner: dict[str, Any] | None = None) -> dict[str, Any]:
        meta: dict[str, Any] = {"name": name, "namespace": "default"}
        if owner is not None:
            meta["ownerReferences"] = [
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "name": owner["metadata"]["name"],
                    "uid": owner["metadata"]["uid"],
                }
            ]
        return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}

    owner = await client.create(cm("owner"))
    await client.create(cm("kept", owner))
    await client.delete(CM, "owner", namespace="default", propagation_policy="Orphan")
    kept = await client.get(CM, "kept", namespace="default")
    assert "ownerReferences" not in kept["metadata"]
    owner = await client.create(cm("owner2"))
    child = await client.create(
        {
            **cm("child", owner),
            "metadata": {**cm("child", owner)["metadata"], "finalizers": ["x/y"]},
        }
    )
    marked = await client.delete(CM, "owner2", namespace="default", propagation_policy="Foreground")
    assert "foregroundDeletion" in marked["metadata"]["finalizers"]
    child = await client.get(CM, "child", namespace="default")
    child["metadata"]["finalizers"] = []
    await client.update(child)
    for name in ("owner2", "child"):
        with pytest.raises(errors.NotFoundError):
            await client.get(CM, name, namespace="default")


async def test_namespace_deletion_removes_its_contents(client: AsyncClient) -> None:
    await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "gone"}})
    await client.create(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "gone"}}
    )
    await client.delete(("v1", "Namespace"), "gone")
    with pytest.raises(errors.NotFoundError):
        await client.get(("v1", "Namespace"), "gone")


async def test_delay_next_and_watch_timeout_run_on_the_fake_clock() -> None:
    clock = FakeClock()
    api = FakeAPI(clock=clock)
    async with AsyncClient(api.config()) as client:
        api.delay_next("list", "ConfigMap", 30)
        listing = asyncio.ensure_future(client.list(CM, namespace="default"))
        await _until_asleep(clock)
        assert not listing.done()
        clock.advance(30)
        rv = (await listing)["metadata"]["resourceVersion"]
        async with client.watch(
            CM, namespace="default", resource_version=rv, timeout_seconds=10
        ) as events:
            reader = asyncio.ensure_future(events.__anext__())
            await _until_asleep(clock)
            clock.advance(8)
            mark = await reader
            assert mark.type.value == "BOOKMARK"
            ending = asyncio.ensure_future(events.__anext__())
            await _until_asleep(clock)
            clock.advance(2)
            with pytest.raises(StopAsyncIteration):
                await ending


def test_seed_refuses_a_missing_namespace_and_reads_yaml(api: FakeAPI) -> None:
    with pytest.raises(ValueError, match='namespaces "nowhere" not found'):
        api.seed(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "a", "namespace": "nowhere"},
            }
        )
    api.seed(
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: team}\n---\n"
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: team}\nstatus: {}\n"
    )
    assert [o["metadata"]["name"] for o in api.objects("ConfigMap", "team")] == ["a"]


async def _until_asleep(clock: FakeClock) -> None:
    for _ in range(1000):  # bounded: yields to the loop until a task sleeps on the clock
        if clock.sleepers():
            return
        await asyncio.sleep(0)
    raise AssertionError("nothing went to sleep on the fake clock")


async def test_builtin_validation_subset(client: AsyncClient) -> None:
    cm = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "i", "namespace": "default"},
    }
    with pytest.raises(errors.InvalidError) as label:
        await client.create({**cm, "metadata": {**cm["metadata"], "labels": {"a": "not valid!"}}})
    assert [(c.type, c.field) for c in label.value.causes] == [
        ("FieldValueInvalid", "metadata.labels")
    ]
    await client.create({**cm, "data": {"k": "1"}, "immutable": True})
    with pytest.raises(errors.InvalidError) as frozen:
        await client.patch(CM, "i", {"data": {"k": "2"}}, namespace="default")
    assert [c.field for c in frozen.value.causes] == ["data"]
    await client.create(deployment("web", [{"name": "app", "image": "a:1"}]))
    moved = {
        "spec": {
            "selector": {"matchLabels": {"app": "x"}},
            "template": {"metadata": {"labels": {"app": "x"}}},
        }
    }
    with pytest.raises(errors.InvalidError) as selector:
        await client.patch(DEPLOY, "web", moved, namespace="default")
    assert [c.field for c in selector.value.causes] == ["spec.selector"]


async def test_custom_resource_update_needs_a_resource_version(
    api: FakeAPI, client: AsyncClient
) -> None:
    api.install_crd(CRD)
    foo = {
        "apiVersion": "example.com/v1",
        "kind": "Foo",
        "metadata": {"name": "f", "namespace": "default"},
        "spec": {"image": "x"},
    }
    await client.create(copy.deepcopy(foo))  # ``foo`` stays without a resourceVersion
    with pytest.raises(errors.InvalidError) as err:
        await client.update({**foo, "spec": {"image": "y"}})
    assert [c.field for c in err.value.causes] == ["metadata.resourceVersion"]


async def test_apply_to_the_status_subresource_records_its_manager(
    api: FakeAPI, client: AsyncClient
) -> None:
    api.install_crd(CRD)
    foo = {
        "apiVersion": "example.com/v1",
        "kind": "Foo",
        "metadata": {"name": "f", "namespace": "default"},
    }
    await client.create({**foo, "spec": {"image": "x"}})
    applied = await client.status().apply({**foo, "status": {"ready": 2}}, field_manager="st")
    entry = next(e for e in applied["metadata"]["managedFields"] if e["manager"] == "st")
    assert (entry["operation"], entry["subresource"]) == ("Apply", "status")
    assert applied["status"] == {"ready": 2}


async def test_apply_drops_whole_list_items_and_emptied_maps(client: AsyncClient) -> None:
    """Compared with kube-apiserver v1.36: an item the manager stops applying goes with its
    defaulted fields, and a label map left empty disappears."""
    two = deployment("web", [{"name": "a", "image": "x:1"}, {"name": "b", "image": "x:1"}])
    two["metadata"]["labels"] = {"team": "t"}
    await client.apply(two, field_manager="m")
    one = deployment("web", [{"name": "a", "image": "x:1"}])
    after = await client.apply(one, field_manager="m")
    assert [c["name"] for c in after["spec"]["template"]["spec"]["containers"]] == ["a"]
    assert "labels" not in after["metadata"]


async def test_without_garbage_collection_the_gc_finalizers_stay() -> None:
    """Like a control plane without kube-controller-manager: the apiserver adds
    foregroundDeletion/orphan (registry/store.go) and nothing removes them; an explicit
    policy swaps one for the other."""
    api = FakeAPI(garbage_collection=False)
    async with AsyncClient(api.config()) as client:
        cm = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "o", "namespace": "default"},
        }
        await client.create(cm)
        marked = await client.delete(CM, "o", namespace="default", propagation_policy="Foreground")
        assert marked["metadata"]["finalizers"] == ["foregroundDeletion"]
        swapped = await client.delete(CM, "o", namespace="default", propagation_policy="Orphan")
        assert swapped["metadata"]["finalizers"] == ["orphan"]
        assert (await client.get(CM, "o", namespace="default"))["metadata"]["deletionTimestamp"]
