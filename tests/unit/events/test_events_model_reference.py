"""The recorder reads a model's reference from its attributes: the same involvedObject as
converting the whole model to a dict (kubectrl.kinds.to_dict) would give."""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes.client.models import V1ConfigMap, V1ObjectMeta

from kubectrl import CustomResource, ResourceModel, kinds
from kubectrl.events._recorder import _model_reference, object_reference


class WidgetSpec(ResourceModel):
    size: int | None = None


class Widget(CustomResource, group="example.com", version="v1", kind="Widget", plural="widgets"):
    spec: WidgetSpec | None = None


def full_meta() -> dict[str, Any]:
    return {"name": "w", "namespace": "ns", "uid": "u-1", "resourceVersion": "42"}


MODELS = [
    V1ConfigMap(
        api_version="v1",
        kind="ConfigMap",
        metadata=V1ObjectMeta(name="cm", namespace="ns", uid="u-1", resource_version="7"),
        data={"k": "v" * 1000},
    ),
    V1ConfigMap(api_version="v1", kind="ConfigMap", metadata=V1ObjectMeta(name="bare")),
    V1ConfigMap(metadata=V1ObjectMeta(name="no-kind", namespace="ns")),  # kind from the class
    Widget.model_validate({"metadata": full_meta(), "spec": {"size": 3}}),
    Widget.model_validate({"metadata": {"name": "w"}}),
]


@pytest.mark.parametrize("model", MODELS, ids=lambda m: type(m).__name__)
def test_the_reference_of_a_model_is_the_one_of_its_dict(model: Any) -> None:
    assert _model_reference(model) == object_reference(kinds.to_dict(model))


def test_the_reference_of_a_custom_resource_names_it() -> None:
    widget = Widget.model_validate({"metadata": full_meta()})
    assert _model_reference(widget) == {
        "kind": "Widget",
        "apiVersion": "example.com/v1",
        "name": "w",
        "namespace": "ns",
        "uid": "u-1",
        "resourceVersion": "42",
    }
