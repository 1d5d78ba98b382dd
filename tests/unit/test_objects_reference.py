"""kubectrl.objects.get_reference: client-go's tools/reference.GetReference (ref.go).

An object dict gives a dict, a model a ``V1ObjectReference``; fields empty on the object are left
out, as Go's ``omitempty`` does; an unknown apiVersion or kind is an error naming what is missing.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
from kubernetes.client.models import V1ConfigMap, V1ObjectMeta, V1ObjectReference

from kubectrl.objects import get_reference
from kubectrl.resources import CustomResource, ObjectMeta

DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {
        "name": "web",
        "namespace": "default",
        "uid": "0f4d",
        "resourceVersion": "42",
        "labels": {"app": "web"},
        "generation": 3,
    },
    "spec": {"replicas": 2},
}


class Gizmo(CustomResource, group="example.com", version="v1", kind="Gizmo"):
    pass


def test_a_dict_gives_a_dict_with_the_identity_fields_only() -> None:
    assert get_reference(DEPLOYMENT) == {
        "kind": "Deployment",
        "apiVersion": "apps/v1",
        "name": "web",
        "namespace": "default",
        "uid": "0f4d",
        "resourceVersion": "42",
    }


def test_field_path_is_set_when_given() -> None:
    ref = get_reference(DEPLOYMENT, field_path="spec.containers{web}")
    assert ref["fieldPath"] == "spec.containers{web}"
    assert "fieldPath" not in get_reference(DEPLOYMENT)


def test_empty_fields_are_left_out() -> None:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "namespace": ""}}
    assert get_reference(node) == {"kind": "Node", "apiVersion": "v1", "name": "n1"}


def test_a_list_is_referenced_by_its_resource_version() -> None:
    listed = {"apiVersion": "v1", "kind": "ConfigMapList", "metadata": {"resourceVersion": "9"}}
    assert get_reference(listed) == {
        "kind": "ConfigMapList",
        "apiVersion": "v1",
        "resourceVersion": "9",
    }


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        (
            {"kind": "Pod", "metadata": {"name": "p", "namespace": "ns"}},
            "'ns/p' has no apiVersion;",
        ),
        ({"apiVersion": "v1", "metadata": {"name": "p"}}, "'p' has no kind;"),
        ({"apiVersion": "v1", "kind": 3, "metadata": {"name": "p"}}, "'p' has no kind;"),
        ({"metadata": {"name": "p"}}, "'p' has no apiVersion and no kind;"),
    ],
)
def test_a_dict_without_apiversion_or_kind_is_refused(obj: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        get_reference(obj)


def test_a_kubernetes_model_gives_a_v1_object_reference() -> None:
    config_map = V1ConfigMap(
        api_version="v1",
        kind="ConfigMap",
        metadata=V1ObjectMeta(name="settings", namespace="ns", uid="u", resource_version="7"),
    )
    ref = get_reference(config_map)
    assert ref == V1ObjectReference(
        api_version="v1",
        kind="ConfigMap",
        name="settings",
        namespace="ns",
        uid="u",
        resource_version="7",
    )
    assert ref.field_path is None


def test_a_model_without_apiversion_and_kind_takes_them_from_its_class() -> None:
    """The Go function falls back to the scheme; a model class is its own scheme entry."""
    config_map = V1ConfigMap(metadata=V1ObjectMeta(name="settings", namespace="ns"))
    ref = get_reference(config_map, field_path="data")
    assert (ref.api_version, ref.kind, ref.name, ref.namespace, ref.uid, ref.field_path) == (
        "v1",
        "ConfigMap",
        "settings",
        "ns",
        None,
        "data",
    )


def test_a_custom_resource_model() -> None:
    gizmo = Gizmo(metadata=ObjectMeta(name="g", namespace="ns", uid="u1", resource_version="3"))
    ref = get_reference(gizmo)
    assert isinstance(ref, V1ObjectReference)
    assert (ref.api_version, ref.kind, ref.name, ref.uid, ref.resource_version) == (
        "example.com/v1",
        "Gizmo",
        "g",
        "u1",
        "3",
    )


def test_a_reference_is_not_referenced_again() -> None:
    ref = V1ObjectReference(kind="Pod", name="p")
    assert get_reference(ref) is ref


def test_a_model_whose_class_names_no_kind_is_refused() -> None:
    from pydantic import BaseModel

    class Loose(BaseModel):
        metadata: dict[str, Any] = {}

    with pytest.raises(ValueError, match="Loose '' has no apiVersion and no kind and its class"):
        get_reference(Loose())


def test_a_user_class_named_like_a_builtin_model_is_not_taken_for_it() -> None:
    from pydantic import BaseModel

    class V1ConfigMap(BaseModel):  # not kubernetes.client.models.V1ConfigMap
        metadata: dict[str, Any] = {}

    with pytest.raises(ValueError, match="V1ConfigMap '' has no apiVersion and no kind"):
        get_reference(V1ConfigMap())


@pytest.mark.parametrize("bad", [None, "web", 3])
def test_something_that_is_no_object_is_refused(bad: Any) -> None:
    with pytest.raises(TypeError, match="get_reference"):
        get_reference(bad)


def test_a_field_path_that_is_not_a_string_is_refused() -> None:
    with pytest.raises(TypeError, match="field_path must be a string"):
        get_reference(DEPLOYMENT, field_path=None)  # type: ignore[call-overload]


def test_referencing_a_dict_does_not_import_the_kubernetes_package() -> None:
    code = (
        "import sys; from kubectrl.objects import get_reference; "
        "get_reference({'apiVersion': 'v1', 'kind': 'Pod', 'metadata': {'name': 'p'}}); "
        "print('kubernetes' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
