"""Finalizers with deletionTimestamp, and owner references with garbage collection.

Upstream: staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go (Delete with
finalizers only sets deletionTimestamp and deletionGracePeriodSeconds; an update removing the
last finalizer of an object being deleted deletes it) and
staging/src/k8s.io/apiserver/pkg/registry/rest/update.go / ObjectMeta validation
(ValidateObjectMetaUpdate: "no new finalizers can be added if the object is being deleted").
Garbage collection runs in kube-controller-manager (pkg/controller/garbagecollector), which the
envtest control plane does not start: those cases run on the fake only.
"""

from __future__ import annotations

import pytest
from contract_helpers import CM, GC_TIMEOUT, Target, configmap, unique

from kubectrl.errors import InvalidError, NotFoundError
from kubectrl.testing import eventually

FIN = "contract.kubectrl.test/hold"


def _held(name: str, ns: str, *finalizers: str) -> dict:
    obj = configmap(name, ns, {"k": "v"})
    obj["metadata"]["finalizers"] = list(finalizers or (FIN,))
    return obj


async def test_delete_with_finalizer_marks_and_keeps_the_object(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("fin")
    created = await c.create(_held(name, ns))
    result = await c.delete(CM, name, namespace=ns)
    assert result["kind"] == "ConfigMap"  # the object, not a Status: it is still there
    got = await c.get(CM, name, namespace=ns)
    assert got["metadata"]["deletionTimestamp"]
    assert got["metadata"]["deletionGracePeriodSeconds"] == 0
    assert got["metadata"]["finalizers"] == [FIN]
    assert int(got["metadata"]["resourceVersion"]) > int(created["metadata"]["resourceVersion"])


async def test_removing_the_last_finalizer_deletes(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("finrm")
    await c.create(_held(name, ns))
    await c.delete(CM, name, namespace=ns)
    await c.patch(CM, name, {"metadata": {"finalizers": None}}, namespace=ns)
    with pytest.raises(NotFoundError):
        await c.get(CM, name, namespace=ns)


async def test_removing_one_of_two_finalizers_keeps_the_object(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("fin2")
    await c.create(_held(name, ns, FIN, "contract.kubectrl.test/other"))
    await c.delete(CM, name, namespace=ns)
    got = await c.get(CM, name, namespace=ns)
    got["metadata"]["finalizers"] = ["contract.kubectrl.test/other"]
    kept = await c.update(got)
    assert kept["metadata"]["finalizers"] == ["contract.kubectrl.test/other"]
    assert kept["metadata"]["deletionTimestamp"]


async def test_no_new_finalizer_once_deleting(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("finadd")
    await c.create(_held(name, ns))
    await c.delete(CM, name, namespace=ns)
    got = await c.get(CM, name, namespace=ns)
    got["metadata"]["finalizers"].append("contract.kubectrl.test/late")
    with pytest.raises(InvalidError) as info:
        await c.update(got)
    assert "no new finalizers can be added if the object is being deleted" in str(info.value)


async def test_second_delete_keeps_the_first_deletion_timestamp(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("fintwice")
    await c.create(_held(name, ns))
    await c.delete(CM, name, namespace=ns)
    first = (await c.get(CM, name, namespace=ns))["metadata"]["deletionTimestamp"]
    again = await c.delete(CM, name, namespace=ns)
    assert again["metadata"]["deletionTimestamp"] == first


async def test_spec_writes_still_allowed_while_deleting(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("finwrite")
    await c.create(_held(name, ns))
    await c.delete(CM, name, namespace=ns)
    patched = await c.patch(CM, name, {"data": {"k": "w"}}, namespace=ns)
    assert patched["data"] == {"k": "w"}


def _owned(name: str, ns: str, owner: dict) -> dict:
    obj = configmap(name, ns)
    obj["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "name": owner["metadata"]["name"],
            "uid": owner["metadata"]["uid"],
        }
    ]
    return obj


async def test_owner_reference_is_stored_as_given(target: Target) -> None:
    c, ns = target.client, target.namespace
    owner = await c.create(configmap(unique("owner"), ns))
    dep = await c.create(_owned(unique("dep"), ns, owner))
    assert dep["metadata"]["ownerReferences"][0]["uid"] == owner["metadata"]["uid"]


@pytest.mark.needs_cluster("the garbage collector runs in kube-controller-manager")
async def test_background_gc_deletes_dependents(target: Target) -> None:
    c, ns = target.client, target.namespace
    owner = await c.create(configmap(unique("owner"), ns))
    dep_name = unique("dep")
    await c.create(_owned(dep_name, ns, owner))
    await c.delete(CM, owner["metadata"]["name"], namespace=ns, propagation_policy="Background")
    await target.gone(CM, dep_name, ns)


@pytest.mark.needs_cluster("the garbage collector runs in kube-controller-manager")
async def test_gc_keeps_dependents_with_another_live_owner(target: Target) -> None:
    c, ns = target.client, target.namespace
    first = await c.create(configmap(unique("own1"), ns))
    second = await c.create(configmap(unique("own2"), ns))
    dep = _owned(unique("dep"), ns, first)
    dep["metadata"]["ownerReferences"] += _owned("x", ns, second)["metadata"]["ownerReferences"]
    await c.create(dep)
    await c.delete(CM, first["metadata"]["name"], namespace=ns)

    async def only_the_live_owner_left() -> bool:
        kept = await c.get(CM, dep["metadata"]["name"], namespace=ns)
        uids = [r["uid"] for r in kept["metadata"]["ownerReferences"]]
        return uids == [second["metadata"]["uid"]]

    await eventually(only_the_live_owner_left, GC_TIMEOUT)


@pytest.mark.needs_cluster("the garbage collector runs in kube-controller-manager")
async def test_orphan_propagation_keeps_dependents_and_drops_the_reference(
    target: Target,
) -> None:
    c, ns = target.client, target.namespace
    owner = await c.create(configmap(unique("owner"), ns))
    dep_name = unique("dep")
    await c.create(_owned(dep_name, ns, owner))
    await c.delete(CM, owner["metadata"]["name"], namespace=ns, propagation_policy="Orphan")

    async def orphaned() -> bool:
        kept = await c.get(CM, dep_name, namespace=ns)
        return not kept["metadata"].get("ownerReferences")

    await eventually(orphaned, GC_TIMEOUT)
    await target.gone(CM, owner["metadata"]["name"], ns)


@pytest.mark.needs_cluster("the garbage collector runs in kube-controller-manager")
async def test_gc_across_kinds_custom_resource_owner(target: Target) -> None:
    c, ns = target.client, target.namespace
    kind = await target.widget()
    owner = await c.create(
        {
            "apiVersion": kind[0],
            "kind": "Widget",
            "metadata": {"name": unique("wowner"), "namespace": ns},
        }
    )
    dep = configmap(unique("wdep"), ns)
    dep["metadata"]["ownerReferences"] = [
        {
            "apiVersion": kind[0],
            "kind": "Widget",
            "name": owner["metadata"]["name"],
            "uid": owner["metadata"]["uid"],
            "controller": True,
        }
    ]
    await c.create(dep)
    await c.delete(kind, owner["metadata"]["name"], namespace=ns)
    await target.gone(CM, dep["metadata"]["name"], ns)
