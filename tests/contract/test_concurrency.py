"""Optimistic concurrency: stale resourceVersions and delete preconditions are 409 Conflict.

Upstream: staging/src/k8s.io/apiserver/pkg/storage/etcd3/store.go GuaranteedUpdate (a stale
resourceVersion in the object is a Conflict "the object has been modified") and
staging/src/k8s.io/apiserver/pkg/storage/util.go / preconditions (uid, resourceVersion).
"""

from __future__ import annotations

import pytest
from contract_helpers import CM, Target, configmap, unique

from kubectrl.client import Preconditions
from kubectrl.errors import ConflictError


async def test_update_with_stale_resource_version_conflicts(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("stale")
    created = await c.create(configmap(name, ns, {"v": "1"}))
    await c.patch(CM, name, {"data": {"v": "2"}}, namespace=ns)
    created["data"]["v"] = "3"
    with pytest.raises(ConflictError) as info:
        await c.update(created)
    err = info.value
    assert (err.code, err.reason) == (409, "Conflict")
    assert err.status["details"] == {"name": name, "kind": "configmaps"}
    assert "the object has been modified" in err.server_message
    assert (await c.get(CM, name, namespace=ns))["data"] == {"v": "2"}


async def test_update_without_resource_version_is_unconditional_for_configmaps(
    target: Target,
) -> None:
    c, ns, name = target.client, target.namespace, unique("uncond")
    await c.create(configmap(name, ns, {"v": "1"}))
    updated = await c.update(configmap(name, ns, {"v": "2"}))
    assert updated["data"] == {"v": "2"}


async def test_merge_patch_with_stale_resource_version_conflicts(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("patchrv")
    created = await c.create(configmap(name, ns, {"v": "1"}))
    old_rv = created["metadata"]["resourceVersion"]
    await c.patch(CM, name, {"data": {"v": "2"}}, namespace=ns)
    with pytest.raises(ConflictError):
        await c.patch(
            CM, name, {"metadata": {"resourceVersion": old_rv}, "data": {"v": "3"}}, namespace=ns
        )


async def test_merge_patch_with_current_resource_version_succeeds(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("patchok")
    created = await c.create(configmap(name, ns, {"v": "1"}))
    rv = created["metadata"]["resourceVersion"]
    patched = await c.patch(
        CM, name, {"metadata": {"resourceVersion": rv}, "data": {"v": "2"}}, namespace=ns
    )
    assert patched["data"] == {"v": "2"}
    assert patched["metadata"]["resourceVersion"] != rv


async def test_json_patch_test_op_on_stale_resource_version_conflicts(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("jsonrv")
    created = await c.create(configmap(name, ns, {"v": "1"}))
    old_rv = created["metadata"]["resourceVersion"]
    await c.patch(CM, name, {"data": {"v": "2"}}, namespace=ns)
    ops = [
        {"op": "replace", "path": "/metadata/resourceVersion", "value": old_rv},
        {"op": "replace", "path": "/data/v", "value": "3"},
    ]
    with pytest.raises(ConflictError):
        await c.patch(CM, name, ops, namespace=ns, patch_type="json")


async def test_delete_with_stale_resource_version_precondition_conflicts(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("delrv")
    created = await c.create(configmap(name, ns))
    await c.patch(CM, name, {"data": {"v": "2"}}, namespace=ns)
    with pytest.raises(ConflictError) as info:
        await c.delete(
            CM,
            name,
            namespace=ns,
            preconditions=Preconditions(resource_version=created["metadata"]["resourceVersion"]),
        )
    assert "the ResourceVersion in the precondition" in info.value.server_message
    assert await c.get(CM, name, namespace=ns)


async def test_delete_with_wrong_uid_precondition_conflicts(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("deluid")
    await c.create(configmap(name, ns))
    with pytest.raises(ConflictError) as info:
        await c.delete(
            CM,
            name,
            namespace=ns,
            preconditions=Preconditions(uid="00000000-0000-0000-0000-000000000000"),
        )
    assert "the UID in the precondition" in info.value.server_message


async def test_delete_with_matching_preconditions_deletes(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("delok")
    created = await c.create(configmap(name, ns))
    meta = created["metadata"]
    result = await c.delete(
        CM,
        name,
        namespace=ns,
        preconditions=Preconditions(uid=meta["uid"], resource_version=meta["resourceVersion"]),
    )
    assert result["kind"] in ("Status", "ConfigMap")
    assert not [
        i for i in (await c.list(CM, namespace=ns))["items"] if i["metadata"]["name"] == name
    ]
