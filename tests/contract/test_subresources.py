"""The status and scale subresources.

Upstream: CRD status strategy (staging/src/k8s.io/apiextensions-apiserver/pkg/registry/
customresource/status_strategy.go: a status write keeps the stored spec and metadata but labels,
annotations...) and strategy.go PrepareForUpdate (a main-resource write keeps the stored status
when the status subresource is enabled); Deployment's scale subresource in
pkg/registry/apps/deployment/storage/storage.go.
"""

from __future__ import annotations

import pytest
from contract_helpers import DEPLOY, Target, deployment, unique

from kubectrl.errors import NotFoundError


def _widget(kind: tuple[str, str], name: str, ns: str, **spec: object) -> dict:
    return {
        "apiVersion": kind[0],
        "kind": "Widget",
        "metadata": {"name": name, "namespace": ns},
        "spec": dict(spec),
    }


async def test_create_ignores_status_when_subresource_enabled(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("cstatus")
    kind = await target.widget()
    obj = _widget(kind, name, ns, color="red")
    obj["status"] = {"phase": "Bogus"}
    created = await c.create(obj)
    assert "phase" not in created.get("status", {})


async def test_status_write_ignores_spec(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("status")
    kind = await target.widget()
    created = await c.create(_widget(kind, name, ns, color="red"))
    created["spec"]["color"] = "blue"
    created["status"] = {"phase": "Ready", "replicas": 2}
    written = await c.status().update(created)
    assert written["status"] == {"phase": "Ready", "replicas": 2}
    assert written["spec"]["color"] == "red"
    assert (await c.get(kind, name, namespace=ns))["spec"]["color"] == "red"


async def test_main_resource_update_ignores_status(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("mainstatus")
    kind = await target.widget()
    await c.create(_widget(kind, name, ns, color="red"))
    await c.status().patch(kind, name, {"status": {"phase": "Ready"}}, namespace=ns)
    current = await c.get(kind, name, namespace=ns)
    current["spec"]["color"] = "green"
    current["status"]["phase"] = "Hacked"
    updated = await c.update(current)
    assert updated["spec"]["color"] == "green"
    assert updated["status"]["phase"] == "Ready"


async def test_main_resource_patch_ignores_status(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("patchstatus")
    kind = await target.widget()
    await c.create(_widget(kind, name, ns))
    patched = await c.patch(kind, name, {"status": {"phase": "Nope"}}, namespace=ns)
    assert "phase" not in patched.get("status", {})


async def test_status_get_returns_the_whole_object(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("getstatus")
    kind = await target.widget()
    await c.create(_widget(kind, name, ns, color="red"))
    got = await c.get(kind, name, namespace=ns, subresource="status")
    assert got["kind"] == "Widget"
    assert got["spec"]["color"] == "red"


async def test_status_write_of_missing_object_is_not_found(target: Target) -> None:
    c, ns = target.client, target.namespace
    kind = await target.widget()
    with pytest.raises(NotFoundError):
        await c.status().patch(kind, unique("ghost"), {"status": {"phase": "x"}}, namespace=ns)


async def test_deployment_scale_subresource(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("scale")
    await c.create(deployment(name, ns, replicas=2))
    scale = await c.get(DEPLOY, name, namespace=ns, subresource="scale")
    assert scale["kind"] == "Scale"
    assert scale["apiVersion"] == "autoscaling/v1"
    assert scale["spec"]["replicas"] == 2
    assert scale["metadata"]["name"] == name
    result = await c.scale(DEPLOY, name, 4, namespace=ns)
    assert result["spec"]["replicas"] == 4
    after = await c.get(DEPLOY, name, namespace=ns)
    assert after["spec"]["replicas"] == 4
    assert after["metadata"]["generation"] == 2


async def test_custom_resource_scale_subresource(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("crscale")
    kind = await target.widget()
    await c.create(_widget(kind, name, ns, replicas=1))
    assert (await c.scale(kind, name, 3, namespace=ns))["spec"]["replicas"] == 3
    assert (await c.get(kind, name, namespace=ns))["spec"]["replicas"] == 3


async def test_status_write_ignores_metadata_labels(target: Target) -> None:
    """Status writes reset labels, annotations, finalizers and owner references to the stored
    ones (apimachinery ResetObjectMetaForStatus, used by the status strategies)."""
    c, ns, name = target.client, target.namespace, unique("statusmeta")
    kind = await target.widget()
    await c.create(_widget(kind, name, ns))
    written = await c.status().patch(
        kind,
        name,
        {"metadata": {"labels": {"sneaky": "yes"}}, "status": {"phase": "Ready"}},
        namespace=ns,
    )
    assert written["status"]["phase"] == "Ready"
    assert "sneaky" not in (written["metadata"].get("labels") or {})


async def test_update_status_with_stale_resource_version_conflicts(target: Target) -> None:
    from kubectrl.errors import ConflictError

    c, ns, name = target.client, target.namespace, unique("statusrv")
    kind = await target.widget()
    created = await c.create(_widget(kind, name, ns))
    await c.patch(kind, name, {"spec": {"color": "x"}}, namespace=ns)
    created["status"] = {"phase": "Late"}
    with pytest.raises(ConflictError):
        await c.status().update(created)


async def test_custom_resource_scale_reads_the_status_path(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("crscale2")
    kind = await target.widget()
    await c.create(_widget(kind, name, ns, replicas=2))
    await c.status().patch(kind, name, {"status": {"replicas": 1}}, namespace=ns)
    scale = await c.get(kind, name, namespace=ns, subresource="scale")
    assert (scale["apiVersion"], scale["kind"]) == ("autoscaling/v1", "Scale")
    assert scale["spec"] == {"replicas": 2}
    assert scale["status"]["replicas"] == 1


async def test_scale_above_the_schema_maximum_is_invalid(target: Target) -> None:
    from kubectrl.errors import InvalidError

    c, ns, name = target.client, target.namespace, unique("crscalemax")
    kind = await target.widget()
    await c.create(_widget(kind, name, ns, replicas=2))
    with pytest.raises(InvalidError):
        await c.scale(kind, name, 11, namespace=ns)
