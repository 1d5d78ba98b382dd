"""AlreadyExists / NotFound / Invalid / Conflict with the real Status shapes.

Upstream: staging/src/k8s.io/apimachinery/pkg/api/errors/errors.go (NewAlreadyExists,
NewNotFound, NewInvalid, NewConflict: reason, code, details.name/group/kind and causes).
"""

from __future__ import annotations

import copy

import pytest
from contract_helpers import CM, Target, configmap, unique

from kubectrl.errors import AlreadyExistsError, BadRequestError, InvalidError, NotFoundError


def _details(err: Exception) -> dict:
    status = err.status  # type: ignore[attr-defined]
    assert status["kind"] == "Status"
    assert status["status"] == "Failure"
    return status.get("details", {})


async def test_already_exists_status_shape(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("dup")
    await c.create(configmap(name, ns))
    with pytest.raises(AlreadyExistsError) as info:
        await c.create(configmap(name, ns))
    err = info.value
    assert (err.code, err.reason) == (409, "AlreadyExists")
    assert _details(err) == {"name": name, "kind": "configmaps"}
    assert err.server_message == f'configmaps "{name}" already exists'


async def test_already_exists_names_the_group_of_a_custom_resource(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("dupw")
    kind = await target.widget()
    obj = {"apiVersion": kind[0], "kind": "Widget", "metadata": {"name": name, "namespace": ns}}
    await c.create(copy.deepcopy(obj))  # ``obj`` is created again, as written
    with pytest.raises(AlreadyExistsError) as info:
        await c.create(obj)
    group = kind[0].split("/")[0]
    assert _details(info.value) == {"name": name, "group": group, "kind": "widgets"}
    assert info.value.server_message == f'widgets.{group} "{name}" already exists'


async def test_not_found_status_shape(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("missing")
    with pytest.raises(NotFoundError) as info:
        await c.get(CM, name, namespace=ns)
    err = info.value
    assert (err.code, err.reason) == (404, "NotFound")
    assert _details(err) == {"name": name, "kind": "configmaps"}
    assert err.server_message == f'configmaps "{name}" not found'


@pytest.mark.parametrize("verb", ["update", "patch", "delete"])
async def test_writes_to_a_missing_object_are_not_found(target: Target, verb: str) -> None:
    c, ns, name = target.client, target.namespace, unique("nowrite")
    if verb == "update":
        call = c.update(configmap(name, ns))
    elif verb == "patch":
        call = c.patch(CM, name, {"data": {"a": "b"}}, namespace=ns)
    else:
        call = c.delete(CM, name, namespace=ns)
    with pytest.raises(NotFoundError) as info:
        await call
    assert _details(info.value)["name"] == name


async def test_create_in_missing_namespace_is_not_found_naming_the_namespace(
    target: Target,
) -> None:
    c, missing = target.client, unique("nons")
    with pytest.raises(NotFoundError) as info:
        await c.create(configmap("x", missing))
    assert _details(info.value) == {"name": missing, "kind": "namespaces"}
    assert info.value.server_message == f'namespaces "{missing}" not found'


async def test_invalid_name_status_shape(target: Target) -> None:
    c, ns = target.client, target.namespace
    with pytest.raises(InvalidError) as info:
        await c.create(configmap("Not_A_Valid_Name", ns))
    err = info.value
    assert (err.code, err.reason) == (422, "Invalid")
    details = _details(err)
    assert details["name"] == "Not_A_Valid_Name"
    assert details["kind"] == "ConfigMap"
    assert [(cause.type, cause.field) for cause in err.causes] == [
        ("FieldValueInvalid", "metadata.name")
    ]


async def test_custom_resource_schema_violation_causes(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("bad")
    kind = await target.widget()
    obj = {
        "apiVersion": kind[0],
        "kind": "Widget",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"replicas": 11, "color": 5},
    }
    with pytest.raises(InvalidError) as info:
        await c.create(obj)
    err = info.value
    details = _details(err)
    assert details["name"] == name
    assert details["group"] == kind[0].split("/")[0]
    assert details["kind"] == "Widget"
    causes = {(cause.type, cause.field) for cause in err.causes}
    assert causes == {
        ("FieldValueInvalid", "spec.replicas"),
        ("FieldValueTypeInvalid", "spec.color"),
    }
    assert name in err.server_message


async def test_missing_name_is_invalid(target: Target) -> None:
    c, ns = target.client, target.namespace
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"namespace": ns}}
    with pytest.raises(InvalidError) as info:
        await c.create(obj)
    assert ("FieldValueRequired", "metadata.name") in {
        (cause.type, cause.field) for cause in info.value.causes
    }


async def test_unsupported_field_selector_is_bad_request(target: Target) -> None:
    c, ns = target.client, target.namespace
    with pytest.raises(BadRequestError) as info:
        await c.list(CM, namespace=ns, field_selector="spec.nothing=x")
    assert info.value.code == 400
    assert "spec.nothing" in info.value.server_message
