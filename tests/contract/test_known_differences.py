"""Behaviour the fake does not implement: each case passes on the real server and, on the fake,
must fail with a clear ``UnsupportedFeatureError`` (a ``NotImplementedError``) naming it.

Upstream: staging/src/k8s.io/apimachinery/pkg/util/strategicpatch/patch.go (the $retainKeys,
$deleteFromPrimitiveList and $setElementOrder directives) and
staging/src/k8s.io/apiserver/pkg/endpoints/handlers/patch.go (apply to a subresource).
"""

from __future__ import annotations

import pytest
from contract_helpers import CM, DEPLOY, Target, configmap, deployment, unique


@pytest.mark.known_difference("strategic merge patch directive $retainKeys")
async def test_strategic_merge_retain_keys(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("retain")
    await c.create(deployment(name, ns))
    patch = {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}
    patched = await c.patch(DEPLOY, name, patch, namespace=ns, patch_type="strategic")
    assert patched["spec"]["strategy"] == {"type": "Recreate"}


@pytest.mark.known_difference("strategic merge patch directive $deleteFromPrimitiveList")
async def test_strategic_merge_delete_from_primitive_list(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("prim")
    obj = configmap(name, ns)
    obj["metadata"]["finalizers"] = ["example.com/a", "example.com/b"]
    await c.create(obj)
    patch = {"metadata": {"$deleteFromPrimitiveList/finalizers": ["example.com/a"]}}
    patched = await c.patch(CM, name, patch, namespace=ns, patch_type="strategic")
    assert patched["metadata"]["finalizers"] == ["example.com/b"]
    await c.patch(CM, name, {"metadata": {"finalizers": None}}, namespace=ns)


@pytest.mark.known_difference("strategic merge patch directive $setElementOrder")
async def test_strategic_merge_set_element_order(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("order")
    containers = [{"name": "a", "image": "nginx:1"}, {"name": "b", "image": "busybox:1"}]
    await c.create(deployment(name, ns, containers))
    patch = {
        "spec": {
            "template": {
                "spec": {
                    "$setElementOrder/containers": [{"name": "b"}, {"name": "a"}],
                    "containers": [{"name": "a", "image": "nginx:2"}],
                }
            }
        }
    }
    patched = await c.patch(DEPLOY, name, patch, namespace=ns, patch_type="strategic")
    got = patched["spec"]["template"]["spec"]["containers"]
    assert [(x["name"], x["image"]) for x in got] == [("b", "busybox:1"), ("a", "nginx:2")]


@pytest.mark.known_difference("server-side apply to the scale subresource")
async def test_apply_to_the_scale_subresource(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("applyscale")
    await c.create(deployment(name, ns, replicas=1))
    scale = {
        "apiVersion": "autoscaling/v1",
        "kind": "Scale",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"replicas": 3},
    }
    applied = await c.patch(
        DEPLOY,
        name,
        scale,
        namespace=ns,
        subresource="scale",
        patch_type="apply",
        field_manager="scaler",
        force=True,  # the creator's field manager owns spec.replicas
    )
    assert applied["spec"]["replicas"] == 3
    assert (await c.get(DEPLOY, name, namespace=ns))["spec"]["replicas"] == 3
