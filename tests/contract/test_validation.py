"""Request validation: body/URL mismatches, uid preconditions in updates, immutable fields,
bad labels, and namespaces being terminated.

Upstream: staging/src/k8s.io/apiserver/pkg/endpoints/handlers/rest.go and update.go (name and
namespace of the body must match the URL: 400), staging/src/k8s.io/apiserver/pkg/registry/
generic/registry/store.go Update (a uid in the body is a precondition: 409),
pkg/apis/core/validation (ValidateConfigMapUpdate: immutable data), pkg/apis/apps/validation
(spec.selector is immutable), staging/src/k8s.io/apimachinery/pkg/api/validation/objectmeta.go
(label values) and plugin/pkg/admission/namespace/lifecycle (no new objects in a namespace
being terminated: 403 Forbidden).
"""

from __future__ import annotations

import pytest
from contract_helpers import CM, DEPLOY, NS, Target, configmap, deployment, unique

from kubectrl.errors import BadRequestError, ConflictError, ForbiddenError, InvalidError


async def test_update_with_another_uid_conflicts(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("uidupd")
    created = await c.create(configmap(name, ns, {"a": "1"}))
    created["metadata"]["uid"] = "00000000-0000-0000-0000-000000000000"
    created["data"] = {"a": "2"}
    with pytest.raises(ConflictError) as info:
        await c.update(created)
    assert "UID in precondition" in info.value.server_message


async def test_update_body_namespace_must_match_the_url(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("nsmismatch")
    created = await c.create(configmap(name, ns))
    created["metadata"]["namespace"] = "default"
    with pytest.raises(BadRequestError) as info:
        await c.update(created, namespace=ns)
    assert "does not match the namespace" in info.value.server_message


async def test_immutable_configmap_refuses_data_changes(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("immut")
    obj = configmap(name, ns, {"a": "1"})
    obj["immutable"] = True
    await c.create(obj)
    with pytest.raises(InvalidError) as info:
        await c.patch(CM, name, {"data": {"a": "2"}}, namespace=ns)
    assert "data" in {cause.field for cause in info.value.causes}
    relabelled = await c.patch(CM, name, {"metadata": {"labels": {"x": "y"}}}, namespace=ns)
    assert relabelled["metadata"]["labels"] == {"x": "y"}


async def test_deployment_selector_is_immutable(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("sel")
    await c.create(deployment(name, ns))
    patch = {
        "spec": {
            "selector": {"matchLabels": {"app": "other"}},
            "template": {"metadata": {"labels": {"app": "other"}}},
        }
    }
    with pytest.raises(InvalidError) as info:
        await c.patch(DEPLOY, name, patch, namespace=ns)
    assert "spec.selector" in {cause.field for cause in info.value.causes}


async def test_invalid_label_value_names_the_field(target: Target) -> None:
    c, ns = target.client, target.namespace
    with pytest.raises(InvalidError) as info:
        await c.create(configmap(unique("badlabel"), ns, labels={"app": "not valid!"}))
    assert [(cause.type, cause.field) for cause in info.value.causes] == [
        ("FieldValueInvalid", "metadata.labels")
    ]


async def test_deleted_namespace_with_content_is_terminating(target: Target) -> None:
    """Namespace deletion goes through the ``kubernetes`` finalizer in ``spec.finalizers``;
    while an object in it is held by a finalizer the namespace stays Terminating (with or
    without a namespace controller)."""
    c, ns = target.client, await target.new_namespace()
    held = configmap("held", ns)
    held["metadata"]["finalizers"] = ["contract.kubectrl.test/hold"]
    await c.create(held)
    result = await c.delete(NS, ns)
    assert result["kind"] == "Namespace"
    assert result["metadata"]["deletionTimestamp"]
    assert result["status"]["phase"] == "Terminating"
    got = await c.get(NS, ns)
    assert got["status"]["phase"] == "Terminating"
    await c.patch(CM, "held", {"metadata": {"finalizers": None}}, namespace=ns)


async def test_no_new_objects_in_a_terminating_namespace(target: Target) -> None:
    c, ns = target.client, await target.new_namespace()
    held = configmap("held", ns)
    held["metadata"]["finalizers"] = ["contract.kubectrl.test/hold"]
    await c.create(held)  # keeps the namespace Terminating on the fake too
    await c.delete(NS, ns)
    with pytest.raises(ForbiddenError) as info:
        await c.create(configmap("late", ns))
    assert "because it is being terminated" in info.value.server_message
    await c.patch(CM, "held", {"metadata": {"finalizers": None}}, namespace=ns)
