"""kinds.to_dict / from_dict / kind_info on the kubernetes models and plain pydantic models."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from kubernetes.client.models import (
    V1ConfigMap,
    V1Container,
    V1Deployment,
    V1ObjectMeta,
)
from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from kubectrl import kinds
from kubectrl.errors import KubectrlError, ModelValidationError
from kubectrl.kinds import KindInfo, from_dict, kind_info, to_dict


def deployment(**extra_container: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "web",
            "namespace": "a",
            "creationTimestamp": "2024-01-02T03:04:05Z",
            "labels": {"app": "web"},
        },
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [
                        {"name": "c", "image": "nginx", **extra_container},
                        {"name": "d", "image": "busybox"},
                    ]
                },
            },
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%"}},
        },
    }


def test_builtin_kind_info_comes_from_the_table() -> None:
    info = kind_info(V1Deployment)
    assert (info.group, info.version, info.kind, info.plural, info.namespaced) == (
        "apps",
        "v1",
        "Deployment",
        "deployments",
        True,
    )
    assert kind_info(V1ConfigMap).api_version == "v1"


def test_a_user_class_named_like_a_builtin_is_not_taken_for_it() -> None:
    class V1Deployment(BaseModel):
        pass

    with pytest.raises(TypeError, match="V1Deployment"):
        kind_info(V1Deployment)


def test_kinds_without_a_server_resource_name_no_kind() -> None:
    with pytest.raises(TypeError, match="V1Container"):
        kind_info(V1Container)


def test_round_trip_of_a_known_object_is_exact() -> None:
    data = deployment()
    dep = from_dict(V1Deployment, data)
    assert dep.spec.replicas == 2
    assert dep.metadata.creation_timestamp == dt.datetime(
        2024, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc
    )
    assert to_dict(dep) == data


def test_unknown_fields_survive_at_every_level_and_known_fields_come_from_the_model() -> None:
    data = deployment(futureContainerField={"x": [1]})
    data["futureTop"] = "t"
    data["spec"]["futureSpec"] = True
    data["metadata"]["futureMeta"] = 1
    dep = from_dict(V1Deployment, data)
    dep.spec.replicas = 5
    dep.metadata.labels = None  # setting a known field to None removes it
    out = to_dict(dep)
    assert out["futureTop"] == "t"
    assert out["spec"]["futureSpec"] is True
    assert out["metadata"]["futureMeta"] == 1
    assert out["spec"]["replicas"] == 5
    assert "labels" not in out["metadata"]
    containers = out["spec"]["template"]["spec"]["containers"]
    assert containers[0]["futureContainerField"] == {"x": [1]}
    assert "futureContainerField" not in containers[1]
    # The input was not modified.
    assert data["spec"]["replicas"] == 2
    assert data["metadata"]["labels"] == {"app": "web"}


def test_a_replaced_or_moved_sub_object_does_not_inherit_unknown_fields() -> None:
    dep = from_dict(V1Deployment, deployment(futureContainerField=1))
    containers = dep.spec.template.spec.containers
    containers.reverse()  # the annotated container now sits at index 1
    out = to_dict(dep)["spec"]["template"]["spec"]["containers"]
    assert all("futureContainerField" not in c for c in out)
    dep2 = from_dict(V1Deployment, deployment(futureContainerField=1))
    dep2.spec.template.spec.containers[0] = V1Container(name="c", image="new")
    assert "futureContainerField" not in to_dict(dep2)["spec"]["template"]["spec"]["containers"][0]


def test_to_dict_fills_type_and_writes_rfc3339_timestamps() -> None:
    cm = V1ConfigMap(
        metadata=V1ObjectMeta(
            name="x",
            creation_timestamp=dt.datetime(2024, 5, 6, 7, 8, 9),  # naive: taken as UTC
        ),
        data={"k": "v"},
    )
    out = to_dict(cm)
    assert out["apiVersion"] == "v1"
    assert out["kind"] == "ConfigMap"
    assert out["metadata"]["creationTimestamp"] == "2024-05-06T07:08:09Z"
    plus_two = dt.timezone(dt.timedelta(hours=2))
    cm.metadata.creation_timestamp = dt.datetime(2024, 5, 6, 9, 8, 9, 500, tzinfo=plus_two)
    assert to_dict(cm)["metadata"]["creationTimestamp"] == "2024-05-06T07:08:09.000500Z"


def test_an_invalid_dict_names_kind_object_model_and_fields() -> None:
    data = deployment()
    data["spec"]["replicas"] = "many"
    data["spec"]["template"]["spec"]["containers"][1]["name"] = 7
    with pytest.raises(ModelValidationError) as info:
        from_dict(V1Deployment, data)
    err = info.value
    assert isinstance(err, KubectrlError)
    assert not err.retryable
    assert (err.kind, err.namespace, err.name) == ("Deployment", "a", "web")
    assert err.fields == ("spec.replicas", "spec.template.spec.containers[1].name")
    message = str(err)
    assert message.startswith("Deployment a/web does not validate as V1Deployment: ")
    assert "spec.replicas: Input should be a valid integer" in message
    assert "https://errors.pydantic.dev" not in message  # not pydantic's raw dump


class WidgetSpec(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    replica_count: int = Field(ge=0)
    display_name: str | None = None


class Widget(BaseModel):
    __kubectrl_kind__ = KindInfo("example.com", "v1", "Widget", "widgets", True)
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    metadata: V1ObjectMeta | None = None
    spec: WidgetSpec
    items: list[WidgetSpec] = []


def test_plain_pydantic_models_use_the_same_functions() -> None:
    data = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": "n"},
        "spec": {"replicaCount": 1, "newerField": "kept"},
        "status": {"ready": True},
    }
    widget = from_dict(Widget, data)
    assert widget.spec.replica_count == 1
    widget.spec.display_name = "shown"
    out = to_dict(widget)
    assert out["apiVersion"] == "example.com/v1"
    assert out["kind"] == "Widget"
    assert out["spec"] == {"replicaCount": 1, "displayName": "shown", "newerField": "kept"}
    assert out["status"] == {"ready": True}
    with pytest.raises(ModelValidationError, match=r"Widget n/w .*spec\.replicaCount"):
        from_dict(Widget, {**data, "spec": {"replicaCount": -1}})


def test_the_side_table_entry_dies_with_the_instance() -> None:
    import gc

    widget = from_dict(Widget, {"spec": {"replicaCount": 1, "x": 1}})
    key = id(widget)
    assert key in kinds._UNKNOWN
    del widget
    gc.collect()
    assert key not in kinds._UNKNOWN


def test_from_dict_rejects_what_is_not_a_model_or_a_dict() -> None:
    with pytest.raises(TypeError, match="pydantic model class"):
        from_dict(dict, {})  # type: ignore[type-var]
    with pytest.raises(TypeError, match="needs a dict"):
        from_dict(V1ConfigMap, [])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="pydantic model instance"):
        to_dict(object())


class Open(BaseModel):
    """A model that keeps unknown keys itself (``extra="allow"``)."""

    __kubectrl_kind__ = KindInfo("example.com", "v1", "Open", "opens", False)
    model_config = ConfigDict(extra="allow")

    spec: dict[str, Any] | None = None


def test_a_model_that_allows_extra_keys_keeps_them_through_pydantic() -> None:
    opened = from_dict(Open, {"spec": {"a": 1}, "other": {"b": 2}})
    assert to_dict(opened) == {
        "apiVersion": "example.com/v1",
        "kind": "Open",
        "spec": {"a": 1},
        "other": {"b": 2},
    }


def test_unknown_and_invalid_together_report_only_the_invalid_field() -> None:
    data = deployment(futureContainerField=1)
    data["spec"]["replicas"] = "many"
    with pytest.raises(ModelValidationError) as info:
        from_dict(V1Deployment, data)
    assert info.value.fields == ("spec.replicas",)


def test_the_committed_table_is_the_generators_output() -> None:
    from pathlib import Path

    from kubectrl import _builtin_kinds
    from kubectrl.client._kind_table import render_table

    text = Path(_builtin_kinds.__file__).read_text()
    version = text.split("pinned API server ", 1)[1].split(" ", 1)[0]
    assert render_table(_builtin_kinds.BUILTIN_KINDS, server_version=version) == text
