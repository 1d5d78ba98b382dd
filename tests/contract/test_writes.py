"""Write options: generateName, dry run, the status subresource of a built-in kind, and
foreground deletion.

Upstream: staging/src/k8s.io/apiserver/pkg/storage/names/generate.go (generateName + 5 random
characters), staging/src/k8s.io/apiserver/pkg/registry/generic/registry/dryrun.go (dry-run
writes are validated, never stored), pkg/registry/apps/deployment/strategy.go
(deploymentStatusStrategy keeps the spec) and
staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go (Foreground: the owner gets
the foregroundDeletion finalizer and stays until the garbage collector removed its dependents).
"""

from __future__ import annotations

import copy
import re

import pytest
from contract_helpers import CM, Target, configmap, deployment, unique

from kubectrl.errors import AlreadyExistsError, NotFoundError


async def test_generate_name_appends_five_characters(target: Target) -> None:
    c, ns = target.client, target.namespace
    obj = configmap("", ns)
    del obj["metadata"]["name"]
    obj["metadata"]["generateName"] = "gen-"
    first = await c.create(copy.deepcopy(obj))  # ``obj`` keeps only its generateName
    second = await c.create(obj)
    assert re.fullmatch(r"gen-[a-z0-9]{5}", first["metadata"]["name"])
    assert first["metadata"]["name"] != second["metadata"]["name"]
    assert first["metadata"]["generateName"] == "gen-"


async def test_dry_run_create_is_validated_but_not_stored(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("dry")
    created = await c.create(configmap(name, ns, {"a": "1"}), dry_run=True)
    assert created["metadata"]["name"] == name
    assert created["metadata"]["uid"]
    with pytest.raises(NotFoundError):
        await c.get(CM, name, namespace=ns)


async def test_dry_run_create_of_an_existing_name_is_already_exists(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("drydup")
    await c.create(configmap(name, ns))
    with pytest.raises(AlreadyExistsError):
        await c.create(configmap(name, ns), dry_run=True)


async def test_dry_run_patch_and_delete_change_nothing(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("drypatch")
    created = await c.create(configmap(name, ns, {"a": "1"}))
    preview = await c.patch(CM, name, {"data": {"a": "2"}}, namespace=ns, dry_run=True)
    assert preview["data"] == {"a": "2"}
    await c.delete(CM, name, namespace=ns, dry_run=True)
    got = await c.get(CM, name, namespace=ns)
    assert got["data"] == {"a": "1"}
    assert got["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]


async def test_deployment_status_write_keeps_spec(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("dstatus")
    created = await c.create(deployment(name, ns, replicas=2))
    created["spec"]["replicas"] = 7
    created["status"] = {"observedGeneration": 1, "replicas": 2}
    written = await c.status().update(created)
    assert written["status"]["observedGeneration"] == 1
    assert written["spec"]["replicas"] == 2
    assert written["metadata"]["generation"] == 1


async def test_deployment_update_ignores_status(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("dmain")
    created = await c.create(deployment(name, ns))
    created["status"] = {"replicas": 9}
    created["spec"]["replicas"] = 2
    updated = await c.update(created)
    assert updated["spec"]["replicas"] == 2
    assert updated.get("status", {}).get("replicas") is None


@pytest.mark.needs_cluster("the garbage collector runs in kube-controller-manager")
async def test_foreground_deletion_removes_dependents_then_the_owner(target: Target) -> None:
    c, ns = target.client, target.namespace
    owner = await c.create(configmap(unique("fgowner"), ns))
    dep = configmap(unique("fgdep"), ns)
    dep["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "name": owner["metadata"]["name"],
            "uid": owner["metadata"]["uid"],
            "blockOwnerDeletion": True,
        }
    ]
    await c.create(dep)
    await c.delete(CM, owner["metadata"]["name"], namespace=ns, propagation_policy="Foreground")
    await target.gone(CM, dep["metadata"]["name"], ns)
    await target.gone(CM, owner["metadata"]["name"], ns)


async def test_foreground_delete_marks_the_owner_with_the_finalizer(target: Target) -> None:
    """The first step of foreground deletion, done by the apiserver itself: the object gets a
    deletionTimestamp and the foregroundDeletion finalizer; a held finalizer keeps it visible
    on both targets whatever the garbage collector does."""
    c, ns, name = target.client, target.namespace, unique("fgmark")
    obj = configmap(name, ns)
    obj["metadata"]["finalizers"] = ["contract.kubectrl.test/hold"]
    await c.create(obj)
    result = await c.delete(CM, name, namespace=ns, propagation_policy="Foreground")
    assert result["metadata"]["deletionTimestamp"]
    got = await c.get(CM, name, namespace=ns)
    assert "contract.kubectrl.test/hold" in got["metadata"]["finalizers"]
    assert got["metadata"]["deletionTimestamp"]


async def test_delete_of_a_configmap_returns_a_success_status(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("delstatus")
    created = await c.create(configmap(name, ns))
    result = await c.delete(CM, name, namespace=ns)
    assert (result["kind"], result["status"]) == ("Status", "Success")
    assert result["details"] == {
        "name": name,
        "kind": "configmaps",
        "uid": created["metadata"]["uid"],
    }


async def test_delete_of_a_custom_resource_returns_a_success_status(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("delcr")
    kind = await target.widget()
    created = await c.create(
        {"apiVersion": kind[0], "kind": "Widget", "metadata": {"name": name, "namespace": ns}}
    )
    result = await c.delete(kind, name, namespace=ns)
    assert (result["kind"], result["status"]) == ("Status", "Success")
    assert result["details"] == {
        "name": name,
        "group": kind[0].split("/")[0],
        "kind": "widgets",
        "uid": created["metadata"]["uid"],
    }


async def test_custom_resource_update_needs_a_resource_version(target: Target) -> None:
    """CRDs do not allow unconditional updates (customresource strategy
    AllowUnconditionalUpdate is false): an update without resourceVersion is 422."""
    from kubectrl.errors import InvalidError

    c, ns, name = target.client, target.namespace, unique("uncondcr")
    kind = await target.widget()
    obj = {"apiVersion": kind[0], "kind": "Widget", "metadata": {"name": name, "namespace": ns}}
    await c.create(copy.deepcopy(obj))  # ``obj`` stays without a resourceVersion
    with pytest.raises(InvalidError) as info:
        await c.update({**obj, "spec": {"color": "x"}})
    assert "metadata.resourceVersion" in {cause.field for cause in info.value.causes}


async def test_list_resource_version_of_an_empty_namespace_is_current(target: Target) -> None:
    c = target.client
    empty = await target.new_namespace()
    other = await c.create(configmap(unique("elsewhere"), target.namespace))
    listed = await c.list(CM, namespace=empty)
    assert listed["items"] == []
    assert int(listed["metadata"]["resourceVersion"]) >= int(other["metadata"]["resourceVersion"])
