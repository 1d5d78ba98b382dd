"""Server-assigned metadata: resourceVersion, uid, creationTimestamp, generation.

Upstream: apiserver's generic registry (staging/src/k8s.io/apiserver/pkg/registry/rest/create.go
FillObjectMetaSystemFields sets uid and creationTimestamp) and the CRD strategy
(staging/src/k8s.io/apiextensions-apiserver/pkg/registry/customresource/strategy.go
PrepareForUpdate: generation is bumped when anything but metadata and status changes).
"""

from __future__ import annotations

import re
from datetime import datetime, timezone

from contract_helpers import CM, Target, configmap, deployment, unique

DEPLOY = ("apps/v1", "Deployment")


async def test_resource_version_grows_on_every_write(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("rv")
    created = await c.create(configmap(name, ns, {"a": "1"}))
    rvs = [int(created["metadata"]["resourceVersion"])]
    for value in ("2", "3"):
        patched = await c.patch(CM, name, {"data": {"a": value}}, namespace=ns)
        rvs.append(int(patched["metadata"]["resourceVersion"]))
    assert rvs == sorted(rvs)
    assert len(set(rvs)) == 3


async def test_get_returns_the_last_written_resource_version(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("rvget")
    await c.create(configmap(name, ns))
    patched = await c.patch(CM, name, {"data": {"x": "y"}}, namespace=ns)
    got = await c.get(CM, name, namespace=ns)
    assert got["metadata"]["resourceVersion"] == patched["metadata"]["resourceVersion"]


async def test_noop_update_keeps_resource_version(target: Target) -> None:
    """An update that changes nothing is not written (storage GuaranteedUpdate short-circuits)."""
    c, ns, name = target.client, target.namespace, unique("noop")
    created = await c.create(configmap(name, ns, {"a": "1"}))
    again = await c.update(created)
    assert again["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]


async def test_list_resource_version_is_at_least_every_item(target: Target) -> None:
    c, ns = target.client, target.namespace
    a = await c.create(configmap(unique("la"), ns))
    b = await c.create(configmap(unique("lb"), ns))
    listed = await c.list(CM, namespace=ns)
    list_rv = int(listed["metadata"]["resourceVersion"])
    assert list_rv >= int(b["metadata"]["resourceVersion"]) > int(a["metadata"]["resourceVersion"])
    assert all(int(i["metadata"]["resourceVersion"]) <= list_rv for i in listed["items"])


async def test_uid_assigned_unique_and_stable(target: Target) -> None:
    c, ns = target.client, target.namespace
    a = await c.create(configmap(unique("ua"), ns))
    b = await c.create(configmap(unique("ub"), ns))
    uid = a["metadata"]["uid"]
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", uid)
    assert uid != b["metadata"]["uid"]
    patched = await c.patch(CM, a["metadata"]["name"], {"data": {"k": "v"}}, namespace=ns)
    assert patched["metadata"]["uid"] == uid


async def test_recreated_object_gets_a_new_uid(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("reuid")
    first = await c.create(configmap(name, ns))
    await c.delete(CM, name, namespace=ns)
    second = await c.create(configmap(name, ns))
    assert second["metadata"]["uid"] != first["metadata"]["uid"]


async def test_creation_timestamp_rfc3339_seconds_and_immutable(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("ts")
    created = await c.create(configmap(name, ns))
    stamp = created["metadata"]["creationTimestamp"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", stamp)
    when = datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
    assert when.year >= 2020
    created["metadata"]["creationTimestamp"] = "2001-01-01T00:00:00Z"
    created["data"] = {"changed": "yes"}
    updated = await c.update(created)
    assert updated["metadata"]["creationTimestamp"] == stamp


async def test_client_supplied_uid_is_ignored_on_create(target: Target) -> None:
    c, ns = target.client, target.namespace
    obj = configmap(unique("myuid"), ns)
    obj["metadata"]["uid"] = "00000000-0000-0000-0000-000000000001"
    created = await c.create(obj)
    assert created["metadata"]["uid"] != "00000000-0000-0000-0000-000000000001"


async def test_generation_starts_at_one_and_follows_spec_of_custom_resource(
    target: Target,
) -> None:
    c, ns, name = target.client, target.namespace, unique("gen")
    kind = await target.widget()
    obj = {
        "apiVersion": kind[0],
        "kind": "Widget",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"color": "red"},
    }
    created = await c.create(obj)
    assert created["metadata"]["generation"] == 1
    spec = await c.patch(kind, name, {"spec": {"color": "blue"}}, namespace=ns)
    assert spec["metadata"]["generation"] == 2


async def test_generation_unchanged_by_metadata_writes(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("genmeta")
    kind = await target.widget()
    await c.create(
        {"apiVersion": kind[0], "kind": "Widget", "metadata": {"name": name, "namespace": ns}}
    )
    patched = await c.patch(
        kind,
        name,
        {"metadata": {"labels": {"a": "b"}, "annotations": {"note": "x"}}},
        namespace=ns,
    )
    assert patched["metadata"]["generation"] == 1


async def test_generation_unchanged_by_status_writes(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("genstatus")
    kind = await target.widget()
    await c.create(
        {"apiVersion": kind[0], "kind": "Widget", "metadata": {"name": name, "namespace": ns}}
    )
    status = await c.status().patch(kind, name, {"status": {"phase": "Ready"}}, namespace=ns)
    assert status["metadata"]["generation"] == 1
    assert status["status"]["phase"] == "Ready"


async def test_deployment_generation_bumped_by_spec_only(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("dgen")
    created = await c.create(deployment(name, ns))
    assert created["metadata"]["generation"] == 1
    labelled = await c.patch(DEPLOY, name, {"metadata": {"labels": {"x": "y"}}}, namespace=ns)
    assert labelled["metadata"]["generation"] == 1
    scaled = await c.patch(DEPLOY, name, {"spec": {"replicas": 3}}, namespace=ns)
    assert scaled["metadata"]["generation"] == 2
