"""CustomResource and ResourceModel behaviour: names, aliases, type meta, unknown fields."""

from __future__ import annotations

import datetime

import pytest
from pydantic import ValidationError

from kubectrl import kinds
from kubectrl.resources import CustomResource, ObjectMeta, ResourceModel


class WidgetSpec(ResourceModel):
    deployment_name: str
    max_surge: int = 1


class WidgetStatus(ResourceModel):
    ready_replicas: int = 0


class Widget(CustomResource, group="example.com", version="v1", kind="Widget"):
    spec: WidgetSpec
    status: WidgetStatus | None = None


class Policy(
    CustomResource,
    group="example.com",
    version="v1beta1",
    kind="Policy",
    plural="policies",
    scope="Cluster",
):
    pass


class WidgetSubclass(Widget):
    """No class arguments: still a Widget."""


WIRE = {
    "apiVersion": "example.com/v1",
    "kind": "Widget",
    "metadata": {
        "name": "w",
        "namespace": "ns",
        "resourceVersion": "12",
        "creationTimestamp": "2026-01-02T03:04:05Z",
        "labels": {"app": "w"},
        "managedFields": [{"manager": "kubectl"}],
        "selfLink": "kept-too",
    },
    "spec": {"deploymentName": "web", "maxSurge": 2, "addedLater": {"x": 1}},
    "status": {"readyReplicas": 1},
}


def test_kind_info_follows_the_contract() -> None:
    info = kinds.kind_info(Widget)
    assert info == kinds.KindInfo("example.com", "v1", "Widget", "widgets", True)
    assert kinds.is_model_class(Widget)
    assert kinds.kind_info(Policy) == kinds.KindInfo(
        "example.com", "v1beta1", "Policy", "policies", False
    )
    assert kinds.kind_info(WidgetSubclass) is info


def test_the_wire_form_reads_and_writes_back_unchanged() -> None:
    """camelCase on the wire, snake_case in Python; unknown fields (metadata and spec) survive."""
    widget = Widget.model_validate(WIRE)
    assert widget.spec.deployment_name == "web"
    assert widget.metadata.resource_version == "12"
    assert widget.metadata.creation_timestamp == datetime.datetime(
        2026, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc
    )
    assert widget.status is not None
    assert widget.status.ready_replicas == 1
    assert widget.model_dump(by_alias=True, exclude_none=True, mode="json") == WIRE


def test_fields_are_populated_by_name_or_alias() -> None:
    by_name = WidgetSpec(deployment_name="a", max_surge=3)
    by_alias = WidgetSpec.model_validate({"deploymentName": "a", "maxSurge": 3})
    assert by_name == by_alias


def test_api_version_and_kind_come_from_the_class() -> None:
    widget = Widget(metadata=ObjectMeta(name="w"), spec=WidgetSpec(deployment_name="d"))
    assert (widget.api_version, widget.kind) == ("example.com/v1", "Widget")
    dumped = widget.model_dump(by_alias=True, exclude_none=True)
    assert dumped["apiVersion"] == "example.com/v1"
    assert dumped["kind"] == "Widget"
    assert dumped["metadata"] == {"name": "w"}


def test_an_object_of_another_kind_is_refused_naming_both() -> None:
    with pytest.raises(
        ValidationError, match=r"Widget is example.com/v1 Widget, not kind 'Gadget'"
    ):
        Widget.model_validate({**WIRE, "kind": "Gadget"})
    with pytest.raises(ValidationError, match=r"not apiVersion 'example.com/v2'"):
        Widget.model_validate({**WIRE, "apiVersion": "example.com/v2"})


def test_declaration_is_kept_for_the_generator() -> None:
    declared = Policy.__kubectrl_resource__
    assert (declared.plural, declared.singular, declared.scope) == ("policies", "policy", "Cluster")
