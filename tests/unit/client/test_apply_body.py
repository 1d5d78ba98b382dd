"""What a server-side apply sends, and what ``extract`` reads back out of ``managedFields``.

An apply makes its field manager the owner of every field in the body, so ``apply_body`` of a
model sends the fields the caller set (pydantic's ``model_fields_set``, at every level), never a
class default: client-go's apply configurations (``k8s.io/client-go/applyconfigurations``) are
all-pointer structs and get this by construction.

``extract`` is client-go's ``Extract<Kind>`` (``applyconfigurations/apps/v1/deployment.go``'s
``ExtractDeployment``) over ``k8s.io/apimachinery/pkg/util/managedfields/extract.go``'s
``ExtractInto``: the fields of the manager's ``operation: Apply`` entry for the subresource, as
structured-merge-diff serialises them (``fieldpath/serialize.go``: ``readIterV1``, ``"."`` for
the node itself; ``fieldpath/serialize-pe.go``: ``f:``, ``k:``, ``v:``, ``i:``) and extracts them
(``typed/remove.go``, ``ExtractItems`` of ``Set.Leaves()``). The managedFields below are a corpus
written for these tests in the server's format.
"""

from __future__ import annotations

import copy
import datetime
import json
from typing import Any

import pytest
from kubernetes.client.models import (
    V1ConfigMap,
    V1Container,
    V1ContainerPort,
    V1Deployment,
    V1DeploymentSpec,
    V1DeploymentStrategy,
    V1LabelSelector,
    V1ObjectMeta,
    V1PodSpec,
    V1PodTemplateSpec,
)
from pydantic import BaseModel, ConfigDict, Field

from kubectrl import kinds
from kubectrl.client import extract
from kubectrl.client._apply import (
    MAX_FIELDS_DEPTH,
    MAX_FIELDS_ELEMENTS,
    ManagedFieldsError,
    apply_body,
)
from kubectrl.kinds import KindInfo
from kubectrl.resources import CustomResource, ObjectMeta, ResourceModel

# ------------------------------------------------------------------------------ models


class Port(ResourceModel):
    container_port: int
    protocol: str = "TCP"


class Volume(ResourceModel):
    size_gb: int = 10
    storage_class: str = "standard"


class WidgetSpec(ResourceModel):
    image: str
    replicas: int = 1
    mode: str = "safe"
    paused: bool = False
    ports: list[Port] = Field(default_factory=list)
    volumes: dict[str, Volume] = Field(default_factory=dict)
    tags: list[str] = Field(default_factory=list)
    started: datetime.datetime | None = None


class Widget(CustomResource, group="apply.kubectrl.test", version="v1", kind="Widget"):
    spec: WidgetSpec = Field(default_factory=lambda: WidgetSpec(image="default"))


def widget(**spec: Any) -> Widget:
    return Widget(metadata=ObjectMeta(name="w", namespace="ns"), spec=WidgetSpec(**spec))


# ------------------------------------------------------------------------------ apply_body


def test_a_model_built_with_defaults_sends_none_of_them() -> None:
    obj = widget(image="nginx")
    body = apply_body(obj)
    assert body == {
        "apiVersion": "apply.kubectrl.test/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": "ns"},
        "spec": {"image": "nginx"},
    }
    # kinds.to_dict (the whole object, as update sends it) claims every default.
    full = kinds.to_dict(obj)
    assert full["spec"] == {
        "image": "nginx",
        "replicas": 1,
        "mode": "safe",
        "paused": False,
        "ports": [],
        "volumes": {},
        "tags": [],
    }
    assert len(json.dumps(body)) < len(json.dumps(full))


def test_a_default_given_explicitly_is_sent() -> None:
    body = apply_body(widget(image="nginx", replicas=1, paused=False))
    assert body["spec"] == {"image": "nginx", "replicas": 1, "paused": False}


def test_a_field_assigned_after_construction_is_sent() -> None:
    obj = widget(image="nginx")
    obj.spec.replicas = 3
    assert apply_body(obj)["spec"] == {"image": "nginx", "replicas": 3}


def test_nested_models_send_their_set_fields_only() -> None:
    obj = widget(
        image="nginx",
        ports=[Port(container_port=80), Port(container_port=53, protocol="UDP")],
        volumes={"data": Volume(size_gb=5), "logs": Volume()},
    )
    spec = apply_body(obj)["spec"]
    assert spec["ports"] == [{"containerPort": 80}, {"containerPort": 53, "protocol": "UDP"}]
    assert spec["volumes"] == {"data": {"sizeGb": 5}, "logs": {}}


def test_lists_and_dicts_of_plain_values_are_sent_whole() -> None:
    obj = widget(image="nginx", tags=["a", "b"])
    assert apply_body(obj)["spec"]["tags"] == ["a", "b"]


def test_builtin_models_send_what_was_set_and_fill_api_version_and_kind() -> None:
    dep = V1Deployment(
        metadata=V1ObjectMeta(name="web", namespace="ns", labels={"app": "web"}),
        spec=V1DeploymentSpec(
            selector=V1LabelSelector(match_labels={"app": "web"}),
            strategy=V1DeploymentStrategy(),  # set, and empty: sent as {}
            template=V1PodTemplateSpec(
                metadata=V1ObjectMeta(labels={"app": "web"}),
                spec=V1PodSpec(
                    containers=[
                        V1Container(
                            name="web",
                            image="nginx",
                            ports=[V1ContainerPort(container_port=80)],
                        )
                    ]
                ),
            ),
        ),
    )
    assert apply_body(dep) == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"labels": {"app": "web"}, "name": "web", "namespace": "ns"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "strategy": {},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [
                        {"image": "nginx", "name": "web", "ports": [{"containerPort": 80}]}
                    ]
                },
            },
        },
    }
    assert apply_body(V1ConfigMap(metadata=V1ObjectMeta(name="c"))) == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c"},
    }


def test_none_set_explicitly_is_left_out() -> None:
    cm = V1ConfigMap(metadata=V1ObjectMeta(name="c", labels=None), data=None)
    assert apply_body(cm) == {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}


def test_a_default_sub_object_changed_in_place_counts_as_set() -> None:
    # metadata defaults to ObjectMeta(), spec to a factory's WidgetSpec(image="default"): not
    # set by the caller, so not sent; changed in place, they differ from the default: sent.
    untouched = Widget()
    assert apply_body(untouched) == {"apiVersion": "apply.kubectrl.test/v1", "kind": "Widget"}
    obj = Widget()
    obj.metadata.name = "w"
    obj.spec.tags.append("t")
    assert apply_body(obj) == {
        "apiVersion": "apply.kubectrl.test/v1",
        "kind": "Widget",
        "metadata": {"name": "w"},
        "spec": {"image": "default", "tags": ["t"]},
    }


def test_dicts_are_sent_as_they_are() -> None:
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {}}
    assert apply_body(body) is body
    assert body == {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {}}
    with pytest.raises(TypeError):
        apply_body(42)


def test_a_plain_pydantic_model_gets_its_kind_from_kind_info() -> None:
    class Gizmo(BaseModel):
        __kubectrl_kind__ = KindInfo("example.com", "v1", "Gizmo", "gizmos", True)
        model_config = ConfigDict(populate_by_name=True)

        api_version: str | None = Field(default=None, alias="apiVersion")
        kind: str | None = None
        metadata: dict[str, Any] = Field(default_factory=dict)
        size: int = 3

    assert apply_body(Gizmo(metadata={"name": "g"})) == {
        "apiVersion": "example.com/v1",
        "kind": "Gizmo",
        "metadata": {"name": "g"},
    }

    class Nameless(BaseModel):
        size: int = 3

    with pytest.raises(ValueError, match="needs api_version and kind"):
        apply_body(Nameless(size=4))


def test_a_model_read_from_the_server_sends_what_it_was_read_with() -> None:
    # Every field it was read with is set, unknown fields and timestamps' text included; a class
    # default the server did not send (spec.mode) is not.
    data = {
        "apiVersion": "apply.kubectrl.test/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": "ns", "creationTimestamp": "2024-05-01T10:00:00Z"},
        "spec": {"image": "nginx", "replicas": 1, "started": "2024-05-01T10:00:00.5+00:00"},
        "futureField": {"x": 1},
    }
    read = kinds.from_dict(Widget, data)
    assert apply_body(read) == data
    assert kinds.to_dict(read)["spec"]["mode"] == "safe"
    cm = kinds.from_dict(
        V1ConfigMap,
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "newer": True},
    )
    assert apply_body(cm)["newer"] is True


def test_datetimes_are_written_as_to_dict_writes_them() -> None:
    moment = datetime.datetime(2024, 5, 1, 12, 0, tzinfo=datetime.timezone.utc)
    obj = widget(image="nginx", started=moment)
    assert apply_body(obj)["spec"]["started"] == kinds.to_dict(obj)["spec"]["started"]
    assert apply_body(obj)["spec"]["started"] == "2024-05-01T12:00:00Z"


# ------------------------------------------------------------------------------ extract

NGINX_KEY = 'k:{"name":"nginx"}'


def managed(
    manager: str,
    fields: Any,
    *,
    operation: str = "Apply",
    subresource: str | None = None,
) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "manager": manager,
        "operation": operation,
        "apiVersion": "apps/v1",
        "time": "2024-05-01T10:00:00Z",
        "fieldsType": "FieldsV1",
        "fieldsV1": fields,
    }
    if subresource is not None:
        entry["subresource"] = subresource
    return entry


def live_deployment(*entries: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "web",
            "namespace": "ns",
            "uid": "u-1",
            "resourceVersion": "42",
            "generation": 3,
            "labels": {"app": "web", "team": "blue"},
            "annotations": {"note": "kept by someone else"},
            "finalizers": ["example.com/a", "example.com/b"],
            "managedFields": list(entries),
        },
        "spec": {
            "replicas": 4,
            "selector": {"matchLabels": {"app": "web"}},
            "strategy": {"type": "RollingUpdate"},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [
                        {
                            "name": "sidecar",
                            "image": "envoy",
                            "ports": [{"containerPort": 9901, "protocol": "TCP"}],
                        },
                        {
                            "name": "nginx",
                            "image": "nginx:1.27",
                            "imagePullPolicy": "IfNotPresent",
                            "args": ["-g", "daemon off;"],
                            "ports": [
                                {"containerPort": 80, "protocol": "TCP", "name": "http"},
                                {"containerPort": 80, "protocol": "UDP", "name": "quic"},
                                {"containerPort": 443, "protocol": "TCP", "name": "https"},
                            ],
                        },
                    ],
                },
            },
        },
        "status": {"replicas": 4, "readyReplicas": 4},
    }


#: What "deployer" applied: labels.app, the selector (atomic), the template's nginx container
#: (associative by name) with two of its ports (associative by containerPort + protocol) and
#: its args (atomic), and one finalizer (a set).
DEPLOYER = {
    "f:metadata": {
        "f:labels": {".": {}, "f:app": {}},
        "f:finalizers": {".": {}, 'v:"example.com/a"': {}},
    },
    "f:spec": {
        "f:selector": {},
        "f:template": {
            "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
            "f:spec": {
                "f:containers": {
                    NGINX_KEY: {
                        ".": {},
                        "f:name": {},
                        "f:image": {},
                        "f:args": {},
                        "f:ports": {
                            'k:{"containerPort":80,"protocol":"TCP"}': {
                                ".": {},
                                "f:containerPort": {},
                                "f:protocol": {},
                            },
                            # Key fields in another order, and 443 written as a float: the same
                            # key under JSON equality.
                            'k:{"protocol":"TCP","containerPort":443.0}': {
                                ".": {},
                                "f:containerPort": {},
                                "f:protocol": {},
                                "f:name": {},
                            },
                        },
                    }
                }
            },
        },
    },
}

DEPLOYER_EXTRACTED = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {
        "name": "web",
        "namespace": "ns",
        "labels": {"app": "web"},
        "finalizers": ["example.com/a"],
    },
    "spec": {
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {
                "containers": [
                    {
                        "name": "nginx",
                        "image": "nginx:1.27",
                        "args": ["-g", "daemon off;"],
                        "ports": [
                            {"containerPort": 80, "protocol": "TCP"},
                            {"containerPort": 443, "protocol": "TCP", "name": "https"},
                        ],
                    }
                ]
            },
        },
    },
}


def test_extract_keeps_the_fields_the_manager_applied() -> None:
    obj = live_deployment(
        managed("deployer", DEPLOYER),
        managed("kubectl-scale", {"f:spec": {"f:replicas": {}}}, operation="Update"),
        managed("hpa", {"f:spec": {"f:replicas": {}}}),
    )
    before = copy.deepcopy(obj)
    got = extract(obj, "deployer")
    assert got == DEPLOYER_EXTRACTED
    assert obj == before  # the input is not changed...
    got["spec"]["template"]["spec"]["containers"][0]["args"].append("x")
    assert obj == before  # ...and shares nothing with the result
    assert extract(obj, "hpa") == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "ns"},
        "spec": {"replicas": 4},
    }


def test_an_update_entry_is_not_an_apply_configuration() -> None:
    obj = live_deployment(
        managed("kubectl-scale", {"f:spec": {"f:replicas": {}}}, operation="Update")
    )
    names_only = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "ns"},
    }
    assert extract(obj, "kubectl-scale") == names_only
    assert extract(obj, "nobody") == names_only


def test_extract_filters_on_the_subresource() -> None:
    obj = live_deployment(
        managed("ctrl", {"f:spec": {"f:replicas": {}}}),
        managed("ctrl", {"f:status": {"f:readyReplicas": {}}}, subresource="status"),
    )
    assert extract(obj, "ctrl")["spec"] == {"replicas": 4}
    assert "status" not in extract(obj, "ctrl")
    status = extract(obj, "ctrl", subresource="status")
    assert status["status"] == {"readyReplicas": 4}
    assert "spec" not in status
    assert "spec" not in extract(obj, "ctrl", subresource="scale")


def test_a_node_with_children_is_not_owned_whole() -> None:
    # "." marks labels itself as owned, but with children only the children are leaves
    # (Set.Leaves()): team is not extracted. A bare {} is a leaf, taken whole.
    obj = live_deployment(
        managed("m", {"f:metadata": {"f:labels": {".": {}, "f:app": {}}, "f:annotations": {}}})
    )
    meta = extract(obj, "m")["metadata"]
    assert meta["labels"] == {"app": "web"}
    assert meta["annotations"] == {"note": "kept by someone else"}


def test_list_items_by_index_and_fields_gone_from_the_object() -> None:
    obj = live_deployment(
        managed(
            "m",
            {
                "f:metadata": {"f:finalizers": {"i:1": {}, "i:7": {}}},
                "f:spec": {"f:paused": {}, "f:template": {"f:spec": {"f:volumes": {}}}},
            },
        )
    )
    got = extract(obj, "m")
    assert got["metadata"]["finalizers"] == ["example.com/b"]
    assert "spec" not in got  # owned fields that are no longer there are left out


def test_unknown_element_types_are_skipped_as_structured_merge_diff_does() -> None:
    obj = live_deployment(managed("m", {"f:spec": {"x:future": {}, "f:replicas": {}}}))
    assert extract(obj, "m")["spec"] == {"replicas": 4}


def test_extract_of_a_model_is_a_model_whose_set_fields_are_the_extracted_ones() -> None:
    obj = live_deployment(
        managed("deployer", DEPLOYER), managed("hpa", {"f:spec": {"f:replicas": {}}})
    )
    dep = kinds.from_dict(V1Deployment, obj)
    got = extract(dep, "deployer")
    assert type(got) is V1Deployment
    assert apply_body(got) == kinds.to_dict(kinds.from_dict(V1Deployment, DEPLOYER_EXTRACTED))
    assert got.spec is not None
    assert got.spec.model_fields_set == {"selector", "template"}
    assert got.spec.template.spec is not None
    assert got.spec.template.spec.containers[0].image == "nginx:1.27"

    # The HPA's configuration leaves spec.selector and spec.template out: required by the
    # model, they stay unset rather than failing validation, and are not sent.
    scale = extract(dep, "hpa")
    assert type(scale) is V1Deployment
    assert scale.spec is not None
    assert scale.spec.replicas == 4
    assert scale.spec.model_fields_set == {"replicas"}
    assert apply_body(scale) == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "ns"},
        "spec": {"replicas": 4},
    }


def test_extract_of_a_custom_resource_sends_no_default() -> None:
    data = {
        "apiVersion": "apply.kubectrl.test/v1",
        "kind": "Widget",
        "metadata": {
            "name": "w",
            "namespace": "ns",
            "managedFields": [
                {
                    "manager": "a",
                    "operation": "Apply",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {
                        "f:spec": {
                            "f:image": {},
                            "f:started": {},
                            "f:ports": {'k:{"containerPort":80}': {".": {}, "f:containerPort": {}}},
                        }
                    },
                }
            ],
        },
        "spec": {
            "image": "nginx",
            "replicas": 5,
            "started": "2024-05-01T10:00:00.5+00:00",
            "ports": [{"containerPort": 80, "protocol": "TCP"}],
        },
    }
    got = extract(kinds.from_dict(Widget, data), "a")
    assert type(got) is Widget
    assert got.spec.replicas == 1  # the class default, not set: not sent
    assert isinstance(got.spec.started, datetime.datetime)
    assert apply_body(got) == {
        "apiVersion": "apply.kubectrl.test/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": "ns"},
        # the timestamp's text is sent back as it was read
        "spec": {
            "image": "nginx",
            "started": "2024-05-01T10:00:00.5+00:00",
            "ports": [{"containerPort": 80}],
        },
    }


def test_extract_without_managed_fields_or_metadata() -> None:
    assert extract({"apiVersion": "v1", "kind": "ConfigMap"}, "m") == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
    }
    assert extract({"metadata": "nonsense"}, "m") == {}
    with pytest.raises(ValueError, match="field manager"):
        extract({}, "")
    with pytest.raises(TypeError):
        extract(42, "m")


# ------------------------------------------------------------------------------ hostile input


def nested(depth: int) -> dict[str, Any]:
    node: dict[str, Any] = {}
    for _ in range(depth):
        node = {"f:a": node}
    return node


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        pytest.param(nested(MAX_FIELDS_DEPTH + 5), "nested deeper than", id="too-deep"),
        pytest.param(
            {"f:spec": {f"f:k{i}": {} for i in range(MAX_FIELDS_ELEMENTS + 1)}},
            "more than 250000 path elements",
            id="too-many",
        ),
        pytest.param({"f:spec": {'k:{"name":': {}}}, "malformed key", id="k-bad-json"),
        pytest.param({"f:spec": {'k:["name"]': {}}}, "k: needs a JSON object", id="k-not-object"),
        pytest.param({"f:spec": {"k:{}": {}}}, "k: needs a JSON object", id="k-empty"),
        pytest.param({"f:spec": {"v:NaN": {}}}, "malformed key", id="v-nan"),
        pytest.param(
            # refused either way: a RecursionError while decoding (3.10-3.12), or the depth
            # bound after it (3.13's JSON decoder goes deeper)
            {"f:spec": {"v:" + "[" * 3000 + "]" * 3000: {}}},
            "key 'v:[[[",
            id="v-deep",
        ),
        pytest.param({"f:spec": {"i:one": {}}}, "i: needs an integer", id="i-not-int"),
        pytest.param({"f:spec": {"f": {}}}, "at least 2 characters", id="short-key"),
        pytest.param({"f:spec": {"fspec": {}}}, "no ':'", id="no-colon"),
        pytest.param({"f:spec": {"k:" + "x" * 20000: {}}}, "longer than", id="key-too-long"),
        pytest.param({"f:spec": []}, "expected a JSON object, got list", id="child-list"),
        pytest.param({"f:spec": None}, "expected a JSON object, got NoneType", id="child-null"),
        pytest.param("f:spec", "expected a JSON object, got str", id="fields-string"),
        pytest.param(["f:spec"], "expected a JSON object, got list", id="fields-list"),
    ],
)
def test_hostile_fields_v1_is_refused_naming_object_and_manager(fields: Any, problem: str) -> None:
    obj = live_deployment(managed("ctrl", fields))
    with pytest.raises(ManagedFieldsError) as caught:
        extract(obj, "ctrl")
    message = str(caught.value)
    assert message.startswith("Deployment ns/web: managedFields of manager 'ctrl'")
    assert problem in message
    assert isinstance(caught.value, ValueError)


def test_the_place_in_fields_v1_is_named() -> None:
    obj = live_deployment(managed("ctrl", {"f:spec": {"f:template": {'k:{"a"': {}}}}))
    with pytest.raises(ManagedFieldsError, match=r"at fieldsV1\['f:spec'\]\['f:template'\]"):
        extract(obj, "ctrl")


@pytest.mark.parametrize(
    ("managed_fields", "problem"),
    [
        pytest.param({"manager": "ctrl"}, "not a list", id="not-a-list"),
        pytest.param(["ctrl"], "managedFields[0] is a str", id="entry-not-object"),
        pytest.param(
            [{"manager": "ctrl", "operation": "Apply", "fieldsType": "FieldsV2", "fieldsV1": {}}],
            "fieldsType 'FieldsV2' is not FieldsV1",
            id="fields-type",
        ),
    ],
)
def test_malformed_managed_fields_are_refused(managed_fields: Any, problem: str) -> None:
    obj = live_deployment()
    obj["metadata"]["managedFields"] = managed_fields
    with pytest.raises(ManagedFieldsError, match="manager 'ctrl'") as caught:
        extract(obj, "ctrl")
    assert problem in str(caught.value)


def test_entries_missing_keys_do_not_crash() -> None:
    obj = live_deployment({}, {"manager": "ctrl"}, {"manager": "ctrl", "operation": "Apply"})
    assert extract(obj, "ctrl") == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "ns"},
    }


def test_another_managers_malformed_entry_is_not_read() -> None:
    obj = live_deployment(
        managed("other", {"f:spec": {"k:{": {}}}), managed("ctrl", {"f:spec": {"f:replicas": {}}})
    )
    assert extract(obj, "ctrl")["spec"] == {"replicas": 4}


def test_unknown_fields_the_manager_owns_survive_extract_of_a_model() -> None:
    # Fields a newer server has and the kubernetes model does not know (it forbids them): kept
    # aside by from_dict, extracted, and sent back by apply_body.
    data = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "c",
            "namespace": "ns",
            "futureMeta": 1,
            "managedFields": [
                managed("m", {"f:newer": {}, "f:metadata": {"f:futureMeta": {}}, "f:data": {}})
            ],
        },
        "newer": {"x": 1},
        "data": {"a": "1"},
    }
    got = extract(kinds.from_dict(V1ConfigMap, data), "m")
    assert type(got) is V1ConfigMap
    assert apply_body(got) == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c", "namespace": "ns", "futureMeta": 1},
        "data": {"a": "1"},
        "newer": {"x": 1},
    }
