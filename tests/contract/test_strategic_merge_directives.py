"""The strategic-merge-patch directives ``$retainKeys``, ``$deleteFromPrimitiveList/<list>`` and
``$setElementOrder/<list>``, on built-in kinds.

Upstream: k8s.io/apimachinery/pkg/util/strategicpatch/patch.go (``mergeMap``:
``applyRetainKeysDirective``, ``mergePatchIntoOriginal``, ``preprocessDeletionListForMerging``,
``deleteFromSlice``; the server also deletes from a list of scalars that is not merged) and
k8s.io/apiserver/pkg/endpoints/handlers/patch.go (``interpretStrategicMergePatchError``: the
directives' format errors are 400s).
"""

from __future__ import annotations

from typing import Any

import pytest
from contract_helpers import CM, DEPLOY, Target, configmap, deployment, unique

from kubectrl.errors import BadRequestError


async def _patch(target: Target, kind: tuple[str, str], name: str, patch: Any) -> Any:
    return await target.client.patch(
        kind, name, patch, namespace=target.namespace, patch_type="strategic"
    )


async def _rolling(target: Target) -> str:
    name = unique("retain")
    await target.client.create(deployment(name, target.namespace))
    return name


async def test_retain_keys_clears_the_fields_it_does_not_list(target: Target) -> None:
    name = await _rolling(target)
    patch = {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}
    patched = await _patch(target, DEPLOY, name, patch)
    assert patched["spec"]["strategy"] == {"type": "Recreate"}


async def test_retain_keys_keeps_a_listed_field_the_patch_does_not_set(target: Target) -> None:
    name = await _rolling(target)
    before = (await target.client.get(DEPLOY, name, namespace=target.namespace))["spec"]
    patch = {
        "spec": {"strategy": {"$retainKeys": ["type", "rollingUpdate"], "type": "RollingUpdate"}}
    }
    patched = await _patch(target, DEPLOY, name, patch)
    assert patched["spec"]["strategy"] == before["strategy"]


@pytest.mark.parametrize(
    "strategy",
    [
        {"$retainKeys": ["type"], "type": "Recreate", "rollingUpdate": {"maxSurge": 1}},
        {"$retainKeys": "type", "type": "Recreate"},
    ],
    ids=["a-field-not-listed", "not-a-list"],
)
async def test_a_malformed_retain_keys_is_a_bad_request(
    target: Target, strategy: dict[str, Any]
) -> None:
    name = await _rolling(target)
    with pytest.raises(BadRequestError) as caught:
        await _patch(target, DEPLOY, name, {"spec": {"strategy": strategy}})
    assert caught.value.server_message == "invalid patch format of retainKeys"


async def _with_finalizers(target: Target) -> str:
    name = unique("prim")
    obj = configmap(name, target.namespace)
    obj["metadata"]["finalizers"] = ["example.com/a", "example.com/b", "example.com/c"]
    await target.client.create(obj)
    return name


async def _release(target: Target, name: str) -> None:
    await target.client.patch(
        CM, name, {"metadata": {"finalizers": None}}, namespace=target.namespace
    )


async def test_delete_from_primitive_list_removes_values_of_a_merged_list(
    target: Target,
) -> None:
    name = await _with_finalizers(target)
    patch = {"metadata": {"$deleteFromPrimitiveList/finalizers": ["example.com/a", "x/y"]}}
    patched = await _patch(target, CM, name, patch)
    assert patched["metadata"]["finalizers"] == ["example.com/b", "example.com/c"]
    await _release(target, name)


async def test_delete_from_primitive_list_with_null_deletes_the_list(target: Target) -> None:
    name = await _with_finalizers(target)
    patch = {"metadata": {"$deleteFromPrimitiveList/finalizers": None}}
    patched = await _patch(target, CM, name, patch)
    assert "finalizers" not in patched["metadata"]


async def test_delete_from_primitive_list_also_removes_from_a_list_that_is_not_merged(
    target: Target,
) -> None:
    name = unique("args")
    containers = [{"name": "a", "image": "nginx:1", "args": ["x", "y", "z"]}]
    await target.client.create(deployment(name, target.namespace, containers))
    patch = {
        "spec": {
            "template": {
                "spec": {
                    "containers": [{"name": "a", "$deleteFromPrimitiveList/args": ["y"]}],
                }
            }
        }
    }
    patched = await _patch(target, DEPLOY, name, patch)
    assert patched["spec"]["template"]["spec"]["containers"][0]["args"] == ["x", "z"]


@pytest.mark.parametrize("key", ["$deleteFromPrimitiveList", "$setElementOrder"])
async def test_a_directive_without_its_list_is_a_bad_request(target: Target, key: str) -> None:
    name = await _with_finalizers(target)
    with pytest.raises(BadRequestError) as caught:
        await _patch(target, CM, name, {"metadata": {key: ["example.com/a"]}})
    which = "primitive list" if key == "$deleteFromPrimitiveList" else "setElementOrder list"
    assert caught.value.server_message == f"invalid patch format of {which}"
    await _release(target, name)


def _spec(**fields: Any) -> dict[str, Any]:
    return {"spec": {"template": {"spec": fields}}}


async def _two_containers(target: Target) -> str:
    name = unique("order")
    containers = [{"name": "a", "image": "nginx:1"}, {"name": "b", "image": "busybox:1"}]
    await target.client.create(deployment(name, target.namespace, containers))
    return name


def _containers(obj: Any) -> list[tuple[str, str]]:
    return [(c["name"], c["image"]) for c in obj["spec"]["template"]["spec"]["containers"]]


async def test_set_element_order_orders_the_merged_list(target: Target) -> None:
    name = await _two_containers(target)
    patch = _spec(
        **{
            "$setElementOrder/containers": [{"name": "b"}, {"name": "a"}],
            "containers": [{"name": "a", "image": "nginx:2"}],
        }
    )
    patched = await _patch(target, DEPLOY, name, patch)
    assert _containers(patched) == [("b", "busybox:1"), ("a", "nginx:2")]


async def test_set_element_order_places_a_new_item(target: Target) -> None:
    name = await _two_containers(target)
    patch = _spec(
        **{
            "$setElementOrder/containers": [{"name": "c"}, {"name": "a"}, {"name": "b"}],
            "containers": [{"name": "c", "image": "redis:1"}],
        }
    )
    patched = await _patch(target, DEPLOY, name, patch)
    assert _containers(patched) == [("c", "redis:1"), ("a", "nginx:1"), ("b", "busybox:1")]


async def test_set_element_order_alone_reorders(target: Target) -> None:
    name = await _two_containers(target)
    patch = _spec(**{"$setElementOrder/containers": [{"name": "b"}, {"name": "a"}]})
    patched = await _patch(target, DEPLOY, name, patch)
    assert _containers(patched) == [("b", "busybox:1"), ("a", "nginx:1")]


async def test_set_element_order_of_a_primitive_list(target: Target) -> None:
    name = await _with_finalizers(target)
    patch = {
        "metadata": {
            "$setElementOrder/finalizers": ["example.com/c", "example.com/d", "example.com/a"],
            "finalizers": ["example.com/d"],
        }
    }
    patched = await _patch(target, CM, name, patch)
    # the listed ones in the directive's order; b, which only the server had, before c,
    # which followed it on the server (mergeSortedSlice)
    assert patched["metadata"]["finalizers"] == [
        "example.com/b",
        "example.com/c",
        "example.com/d",
        "example.com/a",
    ]
    await _release(target, name)
