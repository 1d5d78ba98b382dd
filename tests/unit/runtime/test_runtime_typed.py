"""Model classes as kinds in the cache and runtime, without a server: the pieces decided locally.

What only the API server can decide (stored objects, owner enqueueing through real events, the
status subresource) is tested in tests/integration/runtime/test_typed_runtime.py.
"""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes.client.models import (
    V1ConfigMap,
    V1Deployment,
    V1ObjectMeta,
    V1OwnerReference,
    V1Secret,
)
from pydantic import BaseModel, Field

from kubectrl.cache import InformerFactory, ListWatch, resource_ref
from kubectrl.cache._listwatch import describe_resource
from kubectrl.client import AsyncClient, ClientConfig
from kubectrl.errors import ModelValidationError
from kubectrl.objects import GroupVersionKind
from kubectrl.resources import CustomResource, ObjectMeta, ResourceModel
from kubectrl.runtime._event import CreateEvent
from kubectrl.runtime._kind_source import group_kind, normalize_resource
from kubectrl.runtime._typed import model_view, validation_shares_input
from kubectrl.runtime.controllerutil import (
    AlreadyOwnedError,
    add_finalizer,
    contains_finalizer,
    has_controller_reference,
    remove_finalizer,
    set_controller_reference,
    set_owner_reference,
)
from kubectrl.runtime.handler import enqueue_request_for_owner


class BlobSpec(ResourceModel):
    size: int = 1
    blob: dict[str, Any] = Field(default_factory=dict)


class Blob(CustomResource, group="unit.kubectrl.dev", version="v1", kind="Blob", scope="Cluster"):
    spec: BlobSpec = BlobSpec()


def cached_blob(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "unit.kubectrl.dev/v1",
        "kind": "Blob",
        "metadata": {"name": "b", "uid": "u-b"},
        "spec": {"size": 1, "blob": {"nested": {"list": [1, 2]}}, **spec},
    }


# ----------------------------------------------------------------------------- naming kinds


def test_a_class_names_the_same_kind_as_its_tuple_and_gvk() -> None:
    assert resource_ref(V1ConfigMap) == GroupVersionKind("", "v1", "ConfigMap")
    assert normalize_resource(V1ConfigMap) == ("v1", "ConfigMap")
    assert normalize_resource(Blob) == ("unit.kubectrl.dev/v1", "Blob")
    assert group_kind(Blob) == ("unit.kubectrl.dev", "Blob")
    assert describe_resource(V1ConfigMap) == "ConfigMap (v1)"


def test_a_class_that_names_no_kind_is_refused_naming_it() -> None:
    class Plain(BaseModel):
        x: int = 0

    with pytest.raises(TypeError, match="Plain"):
        resource_ref(Plain)


def _client() -> AsyncClient:
    # Never sends a request here: informer() and ListWatch() do no I/O.
    return AsyncClient(ClientConfig(server="https://127.0.0.1:1"))


async def test_the_factory_hands_out_one_informer_for_a_class_a_tuple_and_a_gvk() -> None:
    client = _client()
    try:
        factory = InformerFactory(client)
        by_class = factory.informer(V1ConfigMap, namespace="a")
        assert factory.informer(("v1", "ConfigMap"), namespace="a") is by_class
        assert factory.informer(GroupVersionKind("", "v1", "ConfigMap"), namespace="a") is by_class
        assert factory.informer(V1Secret, namespace="a") is not by_class
        list_watch = by_class.list_watch
        assert isinstance(list_watch, ListWatch)
        # The list-watch lists by GVK: its pages are the server's dicts, never models.
        assert list_watch.resource == GroupVersionKind("", "v1", "ConfigMap")
    finally:
        await client.aclose()


# ----------------------------------------------------------------------------- typed views


def test_models_with_only_typed_fields_validate_without_a_copy() -> None:
    class Tight(BaseModel):
        labels: dict[str, str] | None = None
        items: list[int] = []

    class Loose(BaseModel):
        anything: Any = None

    class Bare(BaseModel):
        values: list = []  # type: ignore[type-arg]

    assert not validation_shares_input(Tight)
    assert validation_shares_input(Loose)
    assert validation_shares_input(Bare)
    # extra="allow" keeps unknown values as given: custom resources are copied.
    assert validation_shares_input(Blob)


def test_a_typed_view_shares_nothing_mutable_with_the_cache() -> None:
    cached = cached_blob()
    first = model_view(Blob, cached, "unit.kubectrl.dev/v1", "Blob")
    second = model_view(Blob, cached, "unit.kubectrl.dev/v1", "Blob")
    assert first is not second
    first.spec.blob["nested"]["list"].append(3)
    first.metadata.name = "renamed"
    assert cached == cached_blob()
    assert second.spec.blob == {"nested": {"list": [1, 2]}}


def test_only_the_paths_to_kept_objects_are_copied_and_the_view_shares_none_of_them() -> None:
    cached = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "web",
            "namespace": "a",
            "labels": {"app": "web"},
            "managedFields": [{"manager": "m", "fieldsV1": {"f:spec": {"f:replicas": {}}}}],
        },
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": {}},
    }
    view = model_view(V1Deployment, cached, "apps/v1", "Deployment")
    assert view.metadata is not None
    assert view.metadata.managed_fields is not None
    fields = view.metadata.managed_fields[0].fields_v1
    assert isinstance(fields, dict)
    fields["f:spec"]["f:replicas"]["changed"] = True  # typed Any: kept as given by pydantic
    assert view.metadata.labels is not None
    view.metadata.labels["app"] = "changed"
    assert cached["metadata"]["managedFields"][0]["fieldsV1"] == {"f:spec": {"f:replicas": {}}}
    assert cached["metadata"]["labels"] == {"app": "web"}


def test_unknown_keys_of_a_custom_resource_are_copied_at_every_level() -> None:
    cached = cached_blob(later={"added": ["by", "a newer CRD"]})
    cached["metadata"]["futureMeta"] = {"x": [1]}
    view = model_view(Blob, cached, "unit.kubectrl.dev/v1", "Blob")
    assert view.spec.model_extra is not None
    view.spec.model_extra["later"]["added"].append("!")
    assert view.metadata.model_extra is not None
    view.metadata.model_extra["futureMeta"]["x"].append(2)
    assert cached == {
        **cached_blob(later={"added": ["by", "a newer CRD"]}),
        "metadata": {"name": "b", "uid": "u-b", "futureMeta": {"x": [1]}},
    }


def test_a_recursive_model_is_copied_whole_where_it_recurses() -> None:
    class Node(BaseModel):
        name: str = ""
        children: list[Node] = Field(default_factory=list)
        note: Any = None

    cached = {"name": "root", "children": [{"name": "leaf", "note": {"k": [1]}}]}
    view = model_view(Node, cached, "", "")
    view.children[0].note["k"].append(2)
    assert cached["children"][0]["note"] == {"k": [1]}


def test_a_typed_view_fills_apiversion_and_kind_missing_from_list_items() -> None:
    cm = model_view(V1ConfigMap, {"metadata": {"name": "x", "namespace": "a"}}, "v1", "ConfigMap")
    assert (cm.api_version, cm.kind) == ("v1", "ConfigMap")


def test_a_cached_dict_that_does_not_fit_names_object_kind_and_field() -> None:
    bad = cached_blob(size="big")
    with pytest.raises(ModelValidationError) as caught:
        model_view(Blob, bad, "unit.kubectrl.dev/v1", "Blob")
    err = caught.value
    assert (err.kind, err.namespace, err.name, err.model, err.fields) == (
        "Blob",
        None,
        "b",
        "Blob",
        ("spec.size",),
    )
    assert "Blob b does not validate as Blob: spec.size" in str(err)


# ----------------------------------------------------------------------------- handlers


def test_an_owner_handler_from_a_class_takes_group_kind_and_scope_from_it() -> None:
    handler = enqueue_request_for_owner(Blob)
    assert (handler.group, handler.kind, handler.version) == ("unit.kubectrl.dev", "Blob", "v1")
    assert handler.namespaced is False  # the class knows its scope: no discovery needed
    owned = {
        "metadata": {
            "name": "cm",
            "namespace": "a",
            "ownerReferences": [
                {"apiVersion": "unit.kubectrl.dev/v2", "kind": "Blob", "name": "b", "uid": "1"},
                {"apiVersion": "unit.kubectrl.dev/v1", "kind": "Blob", "name": "c", "uid": "2"},
            ],
        }
    }
    owned["metadata"]["ownerReferences"][0]["controller"] = True
    # Any version of the owner's group/kind; controller only; cluster-scoped key.
    requests = handler.requests(CreateEvent(owned))
    assert [(r.namespace, r.name) for r in requests] == [("", "b")]


def test_an_owner_class_and_a_different_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="names kind 'Blob'"):
        enqueue_request_for_owner(Blob, "Other")
    with pytest.raises(ValueError, match="owner kind"):
        enqueue_request_for_owner("apps/v1")


# ----------------------------------------------------------------------------- controllerutil


def owner_cm() -> V1ConfigMap:
    return V1ConfigMap(metadata=V1ObjectMeta(name="owner", namespace="a", uid="u-owner"))


def test_set_controller_reference_between_models() -> None:
    secret = V1Secret(metadata=V1ObjectMeta(name="s", namespace="a"))
    set_controller_reference(owner_cm(), secret)
    set_controller_reference(owner_cm(), secret)  # idempotent
    assert secret.metadata is not None
    refs = secret.metadata.owner_references
    assert refs == [
        V1OwnerReference(
            api_version="v1",
            kind="ConfigMap",
            name="owner",
            uid="u-owner",
            controller=True,
            block_owner_deletion=True,
        )
    ]
    assert has_controller_reference(secret)
    other = V1ConfigMap(metadata=V1ObjectMeta(name="other", namespace="a", uid="u-other"))
    with pytest.raises(AlreadyOwnedError, match="a/s"):
        set_controller_reference(other, secret)
    set_owner_reference(other, secret)
    assert [r.name for r in secret.metadata.owner_references or ()] == ["owner", "other"]


def test_owner_references_on_a_custom_resource_and_a_model_without_metadata() -> None:
    blob = Blob(metadata=ObjectMeta(name="b", uid="u-b"))
    cm = V1ConfigMap()
    cm.metadata = None
    with pytest.raises(ValueError, match="namespace"):
        # A namespaced owner cannot own an object without a namespace (as for dicts).
        set_controller_reference(owner_cm(), V1Secret(metadata=V1ObjectMeta(name="x")))
    set_controller_reference(blob, cm)
    assert cm.metadata is not None
    assert cm.metadata.owner_references is not None
    (ref,) = cm.metadata.owner_references
    assert (ref.api_version, ref.kind, ref.uid) == ("unit.kubectrl.dev/v1", "Blob", "u-b")
    # A custom resource's metadata keeps owner references as dicts.
    child = Blob(metadata=ObjectMeta(name="child"))
    set_owner_reference(blob, child)
    assert child.metadata.owner_references == [
        {"apiVersion": "unit.kubectrl.dev/v1", "kind": "Blob", "name": "b", "uid": "u-b"}
    ]


def test_finalizers_on_models() -> None:
    blob = Blob(metadata=ObjectMeta(name="b"))
    assert add_finalizer(blob, "unit.kubectrl.dev/cleanup")
    assert not add_finalizer(blob, "unit.kubectrl.dev/cleanup")
    assert contains_finalizer(blob, "unit.kubectrl.dev/cleanup")
    assert blob.metadata.finalizers == ["unit.kubectrl.dev/cleanup"]
    assert remove_finalizer(blob, "unit.kubectrl.dev/cleanup")
    assert not remove_finalizer(blob, "unit.kubectrl.dev/cleanup")
    assert blob.metadata.finalizers == []
    cm = V1ConfigMap(metadata=V1ObjectMeta(name="x", finalizers=["a/b"]))
    assert remove_finalizer(cm, "a/b")
    assert cm.metadata is not None
    assert cm.metadata.finalizers == []
