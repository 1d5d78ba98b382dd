"""CRD schema defaults and pruning, discovery of built-ins and of CRDs installed later, typed
models.

Upstream: staging/src/k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting
(defaults applied on create, update and read, only where the parent object exists),
.../schema/pruning (unknown fields dropped) and staging/src/k8s.io/apiserver/pkg/endpoints/
discovery (APIResourceList: name, namespaced, kind, verbs; subresources as "<plural>/<sub>").
"""

from __future__ import annotations

import copy
import secrets

import pytest
from contract_helpers import CM, Target, configmap, unique, widget_crd
from kubernetes.client.models import V1ConfigMap, V1ObjectMeta

from kubectrl.errors import KubectrlError
from kubectrl.testing import eventually


def _widget(kind: tuple[str, str], name: str, ns: str, spec: dict | None = None) -> dict:
    obj = {"apiVersion": kind[0], "kind": "Widget", "metadata": {"name": name, "namespace": ns}}
    if spec is not None:
        obj["spec"] = spec
    return obj


async def test_schema_defaults_applied_on_create(target: Target) -> None:
    c, ns = target.client, target.namespace
    kind = await target.widget()
    created = await c.create(_widget(kind, unique("def"), ns, {"color": "red"}))
    assert created["spec"] == {
        "color": "red",
        "replicas": 1,
        "size": "M",
        "options": {"mode": "auto"},
    }


async def test_schema_defaults_need_the_parent_object(target: Target) -> None:
    c, ns = target.client, target.namespace
    kind = await target.widget()
    created = await c.create(_widget(kind, unique("nospec"), ns))
    assert "spec" not in created


async def test_given_values_win_over_defaults(target: Target) -> None:
    c, ns = target.client, target.namespace
    kind = await target.widget()
    created = await c.create(_widget(kind, unique("given"), ns, {"replicas": 3, "size": "L"}))
    assert (created["spec"]["replicas"], created["spec"]["size"]) == (3, "L")


async def test_defaults_reapplied_after_a_patch_removes_the_field(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("redef")
    kind = await target.widget()
    await c.create(_widget(kind, name, ns, {"size": "L"}))
    patched = await c.patch(kind, name, {"spec": {"size": None}}, namespace=ns)
    assert patched["spec"]["size"] == "M"


async def test_a_default_added_later_is_applied_on_read_and_not_stored(target: Target) -> None:
    """Defaulting on read (apiextensions-apiserver pkg/apiserver/customresource_handler.go,
    crdConversionRESTOptionsGetter: the storage codec's decoder has an unstructuredDefaulter):
    an object stored before its CRD had a default is served with the default the CRD has
    now, so a read never stores the default it served."""
    c, ns, name = target.client, target.namespace, unique("rdef")
    group = f"rdef{secrets.token_hex(4)}.contract.kubectrl.test"
    crd = widget_crd(group, plural="ferns", kind="Fern")
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    crd_kind = ("apiextensions.k8s.io/v1", "CustomResourceDefinition")
    spec["properties"] = {"replicas": {"type": "integer"}, "color": {"type": "string"},
                          "shade": {"type": "string"}}  # fmt: skip
    await target.install_crd(crd)
    kind = (f"{group}/v1", "Fern")
    fern = {"apiVersion": kind[0], "kind": "Fern", "metadata": {"name": name, "namespace": ns}}
    await c.create({**fern, "spec": {"color": "red"}})

    async def default_shade(value: str) -> None:
        stored = await c.get(crd_kind, crd["metadata"]["name"])
        schema = stored["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
        schema["properties"]["spec"]["properties"]["shade"]["default"] = value
        await c.update(stored)

        async def served() -> bool:
            got = await c.get(kind, name, namespace=ns)
            return bool(got["spec"].get("shade") == value)

        await eventually(served, timeout=30)

    await default_shade("light")
    await default_shade("dark")
    listed = await c.list(kind, namespace=ns)
    assert [item["spec"] for item in listed["items"]] == [{"color": "red", "shade": "dark"}]


async def test_nulls_a_schema_no_longer_allows_are_settled_on_read(target: Target) -> None:
    """On read the storage decoder drops the nulls the schema does not allow and has no default
    for, and the defaulter replaces those it has a default for (apiextensions-apiserver
    pkg/apiserver/customresource_handler.go, unstructuredSchemaCoercer.apply then
    unstructuredDefaulter; schema/defaulting/prunenulls.go and algorithm.go), and prunes the
    fields it no longer knows: an object stored under an older schema is served as the schema
    it now has says."""
    c, ns, name = target.client, target.namespace, unique("rnull")
    group = f"rnull{secrets.token_hex(4)}.contract.kubectrl.test"
    crd = widget_crd(group, plural="mosses", kind="Moss")
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec["properties"] = {field: {"type": "string", "nullable": True}
                          for field in ("color", "shade", "tint", "hue")}  # fmt: skip
    await target.install_crd(crd)
    kind = (f"{group}/v1", "Moss")
    moss = {"apiVersion": kind[0], "kind": "Moss", "metadata": {"name": name, "namespace": ns}}
    written = {"color": "red", "shade": None, "tint": None, "hue": "green"}
    created = await c.create({**moss, "spec": written})
    assert created["spec"] == written

    crd_kind = ("apiextensions.k8s.io/v1", "CustomResourceDefinition")
    stored = await c.get(crd_kind, crd["metadata"]["name"])
    fields = stored["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    fields["properties"] = {"color": {"type": "string"},
                            "shade": {"type": "string", "default": "light"},
                            "tint": {"type": "string"}}  # fmt: skip
    await c.update(stored)

    async def settled() -> bool:
        got = await c.get(kind, name, namespace=ns)
        return bool(got["spec"] == {"color": "red", "shade": "light"})

    await eventually(settled, timeout=30)
    listed = await c.list(kind, namespace=ns)
    assert [item["spec"] for item in listed["items"]] == [{"color": "red", "shade": "light"}]


def _two_version_crd(group: str) -> dict:
    """Reed at v1 (stored, knows spec.legacy) and v2 (knows spec.fresh), no conversion."""
    crd = widget_crd(group, plural="reeds", kind="Reed")
    v1 = crd["spec"]["versions"][0]
    v1["subresources"] = {}
    v2 = copy.deepcopy(v1)
    v2["name"], v2["storage"] = "v2", False
    crd["spec"]["versions"].append(v2)
    for version, own in ((v1, "legacy"), (v2, "fresh")):
        spec = version["schema"]["openAPIV3Schema"]["properties"]["spec"]
        spec["properties"] = {"color": {"type": "string"}, "shade": {"type": "string"},
                              own: {"type": "string"}}  # fmt: skip
    return crd


async def test_a_read_at_another_version_is_settled_by_both_schemas(target: Target) -> None:
    """The storage codec of a CRD version decodes what etcd holds with the schema of the
    version it was stored at (pruned, nulls, defaults), then converts it and prunes it with
    the schema of the version read (apiextensions-apiserver pkg/apiserver/
    customresource_handler.go, crdConversionRESTOptionsGetter: schemaCoercingDecoder, then
    unstructuredDefaulter, then schemaCoercingConverter; apimachinery's versioning codec
    defaults before it converts). So a field only the other version knows is never served,
    and a default comes from the stored version's schema, whichever version is read."""
    c, ns, name = target.client, target.namespace, unique("reed")
    group = f"reed{secrets.token_hex(4)}.contract.kubectrl.test"
    crd = _two_version_crd(group)
    await target.install_crd(crd)
    v1, v2 = (f"{group}/v1", "Reed"), (f"{group}/v2", "Reed")
    meta = {"name": name, "namespace": ns}
    both = {"color": "red", "legacy": "old", "fresh": "new"}
    made = await c.create({"apiVersion": v2[0], "kind": "Reed", "metadata": meta, "spec": both})
    assert made["spec"] == {"color": "red"}  # stored at v1: its schema pruned "fresh"
    at_v1 = await c.get(v1, name, namespace=ns)
    assert at_v1["spec"] == {"color": "red"}
    await c.update({**at_v1, "spec": {"color": "blue", "legacy": "old"}})
    at_v2 = await c.get(v2, name, namespace=ns)
    assert at_v2["spec"] == {"color": "blue"}

    crd_kind = ("apiextensions.k8s.io/v1", "CustomResourceDefinition")
    stored = await c.get(crd_kind, crd["metadata"]["name"])
    for version, shade in zip(stored["spec"]["versions"], ("one", "two"), strict=True):
        fields = version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
        fields["shade"]["default"] = shade
    await c.update(stored)

    async def defaulted() -> bool:
        got = await c.get(v2, name, namespace=ns)
        return bool(got["spec"].get("shade"))

    await eventually(defaulted, timeout=30)
    listed = await c.list(v2, namespace=ns)
    assert [item["spec"] for item in listed["items"]] == [{"color": "blue", "shade": "one"}]


async def test_a_dry_run_at_another_version_answers_what_would_be_stored(target: Target) -> None:
    """A dry-run write goes through the storage codec and back without reaching etcd
    (apiserver pkg/registry/generic/registry/dryrun.go, DryRunnableStorage.copyInto: encode
    with the storage codec, decode into the answer), so its answer is converted to the storage
    version and pruned by that schema, then back and pruned by the schema of the version
    written, as a real write's answer is (customresource_handler.go,
    schemaCoercingConverter)."""
    c, ns, name = target.client, target.namespace, unique("dreed")
    group = f"dreed{secrets.token_hex(4)}.contract.kubectrl.test"
    await target.install_crd(_two_version_crd(group))
    v2 = f"{group}/v2"
    meta = {"name": name, "namespace": ns}
    both = {"color": "red", "legacy": "old", "fresh": "new"}
    reed = {"apiVersion": v2, "kind": "Reed", "metadata": meta, "spec": both}
    probe = await c.create(reed, dry_run=True)
    assert probe["spec"] == {"color": "red"}  # v1, where it would be stored, has no "fresh"
    made = await c.create({**reed, "spec": {"color": "red"}})
    probe = await c.update({**made, "spec": both}, dry_run=True)
    assert probe["spec"] == {"color": "red"}
    assert (await c.get((v2, "Reed"), name, namespace=ns))["spec"] == {"color": "red"}


async def test_unknown_fields_are_pruned(target: Target) -> None:
    c, ns = target.client, target.namespace
    kind = await target.widget()
    created = await c.create(_widget(kind, unique("prune"), ns, {"color": "red", "bogus": 1}))
    assert "bogus" not in created["spec"]


async def test_discovery_serves_built_ins(target: Target) -> None:
    c = target.client
    core = await c._discovery_get("/api")
    assert "v1" in core["versions"]
    groups = {g["name"] for g in (await c._discovery_get("/apis"))["groups"]}
    assert {"apps", "coordination.k8s.io", "apiextensions.k8s.io"} <= groups
    apps = await c._discovery_get("/apis/apps/v1")
    by_name = {r["name"]: r for r in apps["resources"]}
    deployments = by_name["deployments"]
    assert deployments["kind"] == "Deployment"
    assert deployments["namespaced"] is True
    assert {"get", "list", "watch", "create", "update", "patch", "delete"} <= set(
        deployments["verbs"]
    )
    assert {"deployments/status", "deployments/scale"} <= set(by_name)
    v1 = {r["name"]: r for r in (await c._discovery_get("/api/v1"))["resources"]}
    assert v1["namespaces"]["namespaced"] is False
    assert v1["configmaps"]["namespaced"] is True


async def test_discovery_finds_a_crd_installed_later(target: Target) -> None:
    c = target.client
    group = f"late{secrets.token_hex(4)}.contract.kubectrl.test"
    kind = (f"{group}/v1", "Gizmo")
    with pytest.raises(KubectrlError, match="Gizmo"):
        await c.resource(kind)
    await target.install_crd(widget_crd(group, plural="gizmos", kind="Gizmo"))
    res = await c.resource(kind)
    assert (res.name, res.namespaced) == ("gizmos", True)
    assert {"status", "scale"} <= res.subresources
    groups = {g["name"]: g for g in (await c._discovery_get("/apis"))["groups"]}
    assert groups[group]["preferredVersion"] == {"groupVersion": f"{group}/v1", "version": "v1"}
    listed = await c._discovery_get(f"/apis/{group}/v1")
    assert listed["groupVersion"] == f"{group}/v1"
    by_name = {r["name"]: r for r in listed["resources"]}
    assert set(by_name) == {"gizmos", "gizmos/status", "gizmos/scale"}
    assert (by_name["gizmos"]["kind"], by_name["gizmos"]["singularName"]) == ("Gizmo", "gizmo")
    assert by_name["gizmos/scale"]["kind"] == "Scale"
    created = await c.create(
        {
            "apiVersion": kind[0],
            "kind": "Gizmo",
            "metadata": {"name": "g", "namespace": target.namespace},
        }
    )
    assert created["metadata"]["uid"]


async def test_typed_model_create_get_list(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("typed")
    created = await c.create(
        V1ConfigMap(
            metadata=V1ObjectMeta(name=name, namespace=ns, labels={"t": name}), data={"a": "1"}
        )
    )
    assert isinstance(created, V1ConfigMap)
    assert created.metadata.uid
    got = await c.get(V1ConfigMap, name, namespace=ns)
    assert isinstance(got, V1ConfigMap)
    assert got.data == {"a": "1"}
    assert got.metadata.resource_version == created.metadata.resource_version
    listed = await c.list(V1ConfigMap, namespace=ns, label_selector=f"t={name}")
    assert [type(i) for i in listed.items] == [V1ConfigMap]


async def test_typed_model_update_conflicts_when_stale(target: Target) -> None:
    from kubectrl.errors import ConflictError

    c, ns, name = target.client, target.namespace, unique("typedc")
    created = await c.create(configmap(name, ns, {"a": "1"}))
    stale = await c.get(V1ConfigMap, name, namespace=ns)
    await c.patch(CM, name, {"data": {"a": "2"}}, namespace=ns)
    stale.data = {"a": "3"}
    with pytest.raises(ConflictError):
        await c.update(stale)
    assert created
