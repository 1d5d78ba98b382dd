"""Merge, JSON and strategic merge patches; server-side apply with field managers.

Upstream: staging/src/k8s.io/apiserver/pkg/endpoints/handlers/patch.go (patch types; strategic
merge patch on custom resources is 415 UnsupportedMediaType), RFC 7386 / RFC 6902 semantics,
staging/src/k8s.io/apimachinery/pkg/util/strategicpatch/patch.go (lists with a patchMergeKey,
e.g. containers by name) and staging/src/k8s.io/apiserver/pkg/endpoints/handlers/fieldmanager
(managedFields, apply conflicts, force).
"""

from __future__ import annotations

import json

import pytest
from contract_helpers import CM, DEPLOY, Target, configmap, deployment, unique

from kubectrl.errors import APIError, ConflictError, InvalidError


async def test_merge_patch_sets_and_null_removes(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("merge")
    await c.create(configmap(name, ns, {"a": "1", "b": "2"}))
    patched = await c.patch(CM, name, {"data": {"a": "9", "b": None, "c": "3"}}, namespace=ns)
    assert patched["data"] == {"a": "9", "c": "3"}


async def test_merge_patch_replaces_lists_whole(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("mergelist")
    containers = [{"name": "app", "image": "nginx:1"}, {"name": "side", "image": "busybox:1"}]
    await c.create(deployment(name, ns, containers))
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:2"}]}}}}
    patched = await c.patch(DEPLOY, name, patch, namespace=ns, patch_type="merge")
    got = patched["spec"]["template"]["spec"]["containers"]
    assert [(x["name"], x["image"]) for x in got] == [("app", "nginx:2")]


async def test_strategic_merge_patch_merges_containers_by_name(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("smp")
    containers = [{"name": "app", "image": "nginx:1"}, {"name": "side", "image": "busybox:1"}]
    await c.create(deployment(name, ns, containers))
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:2"}]}}}}
    patched = await c.patch(DEPLOY, name, patch, namespace=ns, patch_type="strategic")
    got = patched["spec"]["template"]["spec"]["containers"]
    assert [(x["name"], x["image"]) for x in got] == [("app", "nginx:2"), ("side", "busybox:1")]


async def test_strategic_merge_patch_delete_directive(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("smpdel")
    containers = [{"name": "app", "image": "nginx:1"}, {"name": "side", "image": "busybox:1"}]
    await c.create(deployment(name, ns, containers))
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "side", "$patch": "delete"}]}}}}
    patched = await c.patch(DEPLOY, name, patch, namespace=ns, patch_type="strategic")
    assert [x["name"] for x in patched["spec"]["template"]["spec"]["containers"]] == ["app"]


async def test_strategic_merge_patch_on_custom_resource_is_415(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("smpcr")
    kind = await target.widget()
    await c.create(
        {"apiVersion": kind[0], "kind": "Widget", "metadata": {"name": name, "namespace": ns}}
    )
    with pytest.raises(APIError) as info:
        await c.patch(kind, name, {"spec": {"color": "x"}}, namespace=ns, patch_type="strategic")
    assert info.value.code == 415
    assert info.value.reason == "UnsupportedMediaType"


async def test_json_patch_add_replace_remove(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("json")
    await c.create(configmap(name, ns, {"a": "1", "b": "2"}))
    ops = [
        {"op": "add", "path": "/data/c", "value": "3"},
        {"op": "replace", "path": "/data/a", "value": "9"},
        {"op": "remove", "path": "/data/b"},
    ]
    patched = await c.patch(CM, name, ops, namespace=ns, patch_type="json")
    assert patched["data"] == {"a": "9", "c": "3"}


async def test_json_patch_failed_test_op_is_rejected_and_changes_nothing(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("jsontest")
    created = await c.create(configmap(name, ns, {"a": "1"}))
    ops = [
        {"op": "test", "path": "/data/a", "value": "2"},
        {"op": "replace", "path": "/data/a", "value": "3"},
    ]
    with pytest.raises(InvalidError) as info:
        await c.patch(CM, name, ops, namespace=ns, patch_type="json")
    assert info.value.code == 422
    got = await c.get(CM, name, namespace=ns)
    assert got["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]


async def test_json_patch_remove_missing_path_is_rejected(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("jsonmiss")
    await c.create(configmap(name, ns, {"a": "1"}))
    with pytest.raises(InvalidError):
        await c.patch(
            CM, name, [{"op": "remove", "path": "/data/zzz"}], namespace=ns, patch_type="json"
        )


def _desired(name: str, ns: str, **data: str) -> dict:
    return configmap(name, ns, data)


async def test_apply_creates_and_records_the_field_manager(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("apply")
    applied = await c.apply(_desired(name, ns, owner="alpha"), field_manager="alpha")
    assert applied["data"] == {"owner": "alpha"}
    entries = applied["metadata"]["managedFields"]
    assert [(e["manager"], e["operation"]) for e in entries] == [("alpha", "Apply")]
    assert entries[0]["fieldsType"] == "FieldsV1"
    assert "f:data" in entries[0]["fieldsV1"]
    assert "f:owner" in entries[0]["fieldsV1"]["f:data"]


async def test_apply_again_by_the_same_manager_is_idempotent(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("apply2")
    first = await c.apply(_desired(name, ns, owner="alpha"), field_manager="alpha")
    second = await c.apply(_desired(name, ns, owner="alpha"), field_manager="alpha")
    assert second["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]


async def test_apply_conflict_names_the_owner_and_field(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("applyc")
    await c.apply(_desired(name, ns, owner="alpha"), field_manager="alpha")
    with pytest.raises(ConflictError) as info:
        await c.apply(_desired(name, ns, owner="beta"), field_manager="beta")
    err = info.value
    assert err.code == 409
    assert 'conflict with "alpha"' in err.server_message
    assert [(cause.type, cause.field) for cause in err.causes] == [
        ("FieldManagerConflict", ".data.owner")
    ]
    assert (await c.get(CM, name, namespace=ns))["data"] == {"owner": "alpha"}


async def test_apply_same_value_by_another_manager_shares_ownership(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("applys")
    await c.apply(_desired(name, ns, owner="same"), field_manager="alpha")
    shared = await c.apply(_desired(name, ns, owner="same"), field_manager="beta")
    assert {e["manager"] for e in shared["metadata"]["managedFields"]} == {"alpha", "beta"}


async def test_apply_force_takes_ownership(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("applyf")
    await c.apply(_desired(name, ns, owner="alpha"), field_manager="alpha")
    forced = await c.apply(_desired(name, ns, owner="beta"), field_manager="beta", force=True)
    assert forced["data"] == {"owner": "beta"}
    managers = {e["manager"] for e in forced["metadata"]["managedFields"]}
    assert managers == {"beta"}  # alpha owned only that field and lost it


async def test_apply_drops_fields_the_manager_no_longer_applies(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("applyd")
    await c.apply(_desired(name, ns, a="1", b="2"), field_manager="alpha")
    applied = await c.apply(_desired(name, ns, a="1"), field_manager="alpha")
    assert applied["data"] == {"a": "1"}


async def test_update_after_apply_conflicts_on_next_apply(target: Target) -> None:
    """A plain update takes ownership of the fields it changes (operation Update)."""
    c, ns, name = target.client, target.namespace, unique("applyu")
    await c.apply(_desired(name, ns, owner="alpha"), field_manager="alpha")
    await c.patch(CM, name, {"data": {"owner": "editor"}}, namespace=ns, field_manager="editor")
    got = await c.get(CM, name, namespace=ns)
    ops = {(e["manager"], e["operation"]) for e in got["metadata"]["managedFields"]}
    assert ("editor", "Update") in ops
    with pytest.raises(ConflictError):
        await c.apply(_desired(name, ns, owner="alpha"), field_manager="alpha")


async def test_apply_spec_field_conflict_on_a_deployment(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("applydep")
    await c.apply(deployment(name, ns, replicas=2), field_manager="alpha")
    with pytest.raises(ConflictError) as info:
        await c.apply(deployment(name, ns, replicas=5), field_manager="beta")
    assert ".spec.replicas" in [cause.field for cause in info.value.causes]


async def test_strategic_merge_patch_merges_primitive_finalizers(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("smpfin")
    obj = configmap(name, ns)
    obj["metadata"]["finalizers"] = ["example.com/a"]
    await c.create(obj)
    patch = {"metadata": {"finalizers": ["example.com/b"]}}
    patched = await c.patch(CM, name, patch, namespace=ns, patch_type="strategic")
    # strategicpatch/patch.go mergeSlice: scalars are appended and deduplicated, then
    # normalizeElementOrder puts the new patch items ahead of the server-only ones.
    assert patched["metadata"]["finalizers"] == ["example.com/b", "example.com/a"]
    await c.patch(CM, name, {"metadata": {"finalizers": None}}, namespace=ns)


async def test_strategic_merge_patch_replace_directive(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("smprep")
    containers = [{"name": "app", "image": "nginx:1"}, {"name": "side", "image": "busybox:1"}]
    await c.create(deployment(name, ns, containers))
    new = [{"name": "solo", "image": "nginx:3"}]
    patch = {"spec": {"template": {"spec": {"containers": [{"$patch": "replace"}, *new]}}}}
    patched = await c.patch(DEPLOY, name, patch, namespace=ns, patch_type="strategic")
    assert [x["name"] for x in patched["spec"]["template"]["spec"]["containers"]] == ["solo"]


async def test_strategic_merge_patch_merges_env_by_name(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("smpenv")
    containers = [
        {"name": "app", "image": "nginx:1", "env": [{"name": "A", "value": "1"}]},
    ]
    await c.create(deployment(name, ns, containers))
    env = [{"name": "B", "value": "2"}, {"name": "A", "value": "9"}]
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "app", "env": env}]}}}}
    patched = await c.patch(DEPLOY, name, patch, namespace=ns, patch_type="strategic")
    got = patched["spec"]["template"]["spec"]["containers"][0]["env"]
    assert sorted((e["name"], e["value"]) for e in got) == [("A", "9"), ("B", "2")]


async def test_create_records_an_update_entry_in_managed_fields(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("mfcreate")
    created = await c.create(configmap(name, ns, {"a": "1"}))
    entries = created["metadata"]["managedFields"]
    assert [e["operation"] for e in entries] == ["Update"]
    assert entries[0]["manager"]
    assert "f:a" in entries[0]["fieldsV1"]["f:data"]


async def test_apply_field_kept_while_another_manager_still_owns_it(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("applykeep")
    await c.apply(_desired(name, ns, shared="v", mine="1"), field_manager="alpha")
    await c.apply(_desired(name, ns, shared="v"), field_manager="beta")
    applied = await c.apply(_desired(name, ns, mine="1"), field_manager="alpha")
    assert applied["data"] == {"shared": "v", "mine": "1"}


async def test_json_and_merge_patches_on_custom_resources(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("crpatch")
    kind = await target.widget()
    await c.create(
        {
            "apiVersion": kind[0],
            "kind": "Widget",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"color": "red"},
        }
    )
    merged = await c.patch(kind, name, {"spec": {"color": "blue"}}, namespace=ns)
    assert merged["spec"]["color"] == "blue"
    ops = [{"op": "replace", "path": "/spec/replicas", "value": 4}]
    patched = await c.patch(kind, name, ops, namespace=ns, patch_type="json")
    assert patched["spec"]["replicas"] == 4


async def test_apply_to_the_status_subresource(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("applystatus")
    kind = await target.widget()
    await c.create(
        {"apiVersion": kind[0], "kind": "Widget", "metadata": {"name": name, "namespace": ns}}
    )
    body = {
        "apiVersion": kind[0],
        "kind": "Widget",
        "metadata": {"name": name, "namespace": ns},
        "status": {"phase": "Applied"},
    }
    applied = await c.status().apply(body, field_manager="status-writer")
    assert applied["status"]["phase"] == "Applied"
    entry = next(e for e in applied["metadata"]["managedFields"] if e["manager"] == "status-writer")
    assert (entry["operation"], entry.get("subresource")) == ("Apply", "status")


async def test_apply_with_a_stale_resource_version_conflicts(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("applyrv")
    first = await c.apply(_desired(name, ns, v="1"), field_manager="alpha")
    await c.apply(_desired(name, ns, v="2"), field_manager="alpha")
    stale = _desired(name, ns, v="3")
    stale["metadata"]["resourceVersion"] = first["metadata"]["resourceVersion"]
    with pytest.raises(ConflictError):
        await c.apply(stale, field_manager="alpha")
    assert (await c.get(CM, name, namespace=ns))["data"] == {"v": "2"}


async def test_an_apply_that_creates_answers_201_and_one_that_updates_200(target: Target) -> None:
    """Upstream: handlers/patch.go answers 201 Created when the patch (an apply) created the
    object (``wasCreated``), 200 otherwise."""
    ns, name = target.namespace, unique("apply201")
    body = _desired(name, ns, owner="alpha")
    async with target.config.async_httpx_client() as http:
        codes = []
        for _ in range(2):
            response = await http.patch(
                f"/api/v1/namespaces/{ns}/configmaps/{name}",
                params={"fieldManager": "alpha"},
                content=json.dumps(body).encode(),
                headers={"Content-Type": "application/apply-patch+yaml"},
            )
            codes.append(response.status_code)
    assert codes == [201, 200]
