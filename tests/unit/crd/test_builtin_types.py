"""Built-in Kubernetes types (``kubernetes`` package models) inside a custom resource.

Issue 21: a ``V1JobTemplateSpec`` field made the generator walk into the ``kubernetes`` model and
fail on an untagged union deep inside (finding 1); ``list[V1ObjectReference]`` produced
snake_case property names, so the server pruned the camelCase fields the client sent (finding 2).
The schema of a built-in type comes from the pinned API server's OpenAPI, rendered as
controller-gen renders the Go type (controller-tools pkg/crd/known_types.go, schema.go).
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import pytest
from kubernetes.client import (
    V1Condition,
    V1Container,
    V1ContainerPort,
    V1EnvVar,
    V1HTTPGetAction,
    V1JobTemplateSpec,
    V1JSONSchemaProps,
    V1ObjectMeta,
    V1ObjectReference,
    V1PodSpec,
    V1PodTemplateSpec,
    V1Probe,
    V1ResourceRequirements,
)
from pydantic import AliasChoices, AliasGenerator, BaseModel, ConfigDict, Field

from kubectrl import _builtin_schemas, crd
from kubectrl._builtin_schemas_gen import build_table, class_names, render_table
from kubectrl.resources import CustomResource, ResourceModel


class CronSpec(ResourceModel):
    schedule: str
    job_template: V1JobTemplateSpec


class CronStatus(ResourceModel):
    active: list[V1ObjectReference] = Field(default_factory=list)
    conditions: list[V1Condition] = Field(default_factory=list)
    last_ref: V1ObjectReference | None = None


class Cron(CustomResource, group="example.com", version="v1", kind="Cron"):
    spec: CronSpec
    status: CronStatus | None = None


class PoolSpec(ResourceModel):
    template: V1PodTemplateSpec
    env_by_name: dict[str, V1EnvVar] = Field(default_factory=dict)


class Pool(CustomResource, group="example.com", version="v1", kind="Pool"):
    spec: PoolSpec


def _walk(node: Any) -> list[tuple[str, Any]]:
    """Every (key, value) pair in a schema, at every depth."""
    found: list[tuple[str, Any]] = []
    if isinstance(node, dict):
        for key, value in node.items():
            found.append((key, value))
            found.extend(_walk(value))
    elif isinstance(node, list):
        for item in node:
            found.extend(_walk(item))
    return found


def _pod_spec(schema: dict[str, Any]) -> dict[str, Any]:
    template = schema["properties"]["spec"]["properties"]["jobTemplate"]
    result: dict[str, Any] = template["properties"]["spec"]["properties"]["template"]["properties"][
        "spec"
    ]
    return result


# --- finding 1: a built-in kind can be embedded ------------------------------------------------


def test_a_job_template_is_embedded_with_the_upstream_schema() -> None:
    schema = crd.schema(Cron)
    pod = _pod_spec(schema)
    assert pod["type"] == "object"
    assert "containers" in pod["required"]
    containers = pod["properties"]["containers"]
    assert containers["x-kubernetes-list-type"] == "map"
    assert containers["x-kubernetes-list-map-keys"] == ["name"]
    container = containers["items"]
    assert container["required"] == ["name"]
    port = container["properties"]["lifecycle"]["properties"]["postStart"]["properties"]["httpGet"][
        "properties"
    ]["port"]
    assert port == {
        "anyOf": [{"type": "integer"}, {"type": "string"}],
        "x-kubernetes-int-or-string": True,
    }
    ports = container["properties"]["ports"]
    assert ports["x-kubernetes-list-map-keys"] == ["containerPort", "protocol"]
    assert ports["items"]["properties"]["containerPort"] == {"type": "integer", "format": "int32"}
    # A +default marker upstream is kept (and makes the list map key defaulted, as required).
    assert ports["items"]["properties"]["protocol"] == {"type": "string", "default": "TCP"}


def test_quantities_and_times_are_rendered_as_controller_gen_renders_them() -> None:
    pod = _pod_spec(crd.schema(Cron))
    limits = pod["properties"]["containers"]["items"]["properties"]["resources"]["properties"][
        "limits"
    ]
    quantity = limits["additionalProperties"]
    assert quantity["x-kubernetes-int-or-string"] is True
    assert quantity["anyOf"] == [{"type": "integer"}, {"type": "string"}]
    assert quantity["pattern"].startswith("^(\\+|-)?")
    cron = crd.schema(Cron)
    condition = cron["properties"]["status"]["properties"]["conditions"]["items"]
    assert condition["properties"]["lastTransitionTime"] == {
        "type": "string",
        "format": "date-time",
    }


def test_the_embedded_schema_is_structural_and_has_no_openapi_only_constructs() -> None:
    schema = crd.schema(Cron)
    keys = {key for key, _ in _walk(schema)}
    # A CRD schema may not contain $ref; allOf/oneOf and the patch extensions are OpenAPI-only.
    for forbidden in (
        "$ref",
        "allOf",
        "oneOf",
        "x-kubernetes-patch-merge-key",
        "x-kubernetes-patch-strategy",
        "x-kubernetes-unions",
        "x-kubernetes-group-version-kind",
    ):
        assert forbidden not in keys, forbidden
    # The OpenAPI generator's implicit zero values are not defaults (containers[].name would
    # otherwise default to "" and never be reported missing).
    assert [v for k, v in _walk(schema) if k == "default" and v == {}] == []
    pod = _pod_spec(schema)
    assert "default" not in pod["properties"]["containers"]["items"]["properties"]["name"]
    assert "default" not in schema["properties"]["spec"]["properties"]["jobTemplate"]


def test_an_embedded_object_meta_is_an_object_unless_asked_for_controller_gens_option() -> None:
    spec = crd.schema(Pool)["properties"]["spec"]["properties"]["template"]
    assert spec["properties"]["metadata"] == {"type": "object"}
    spec = crd.schema(Pool, embedded_object_meta=True)["properties"]["spec"]["properties"][
        "template"
    ]
    meta = spec["properties"]["metadata"]
    assert sorted(meta["properties"]) == [
        "annotations",
        "finalizers",
        "labels",
        "name",
        "namespace",
    ]
    assert meta["properties"]["labels"] == {
        "type": "object",
        "additionalProperties": {"type": "string"},
    }


def test_builtin_descriptions_are_an_option_off_by_default() -> None:
    plain = crd.generate(Pool)
    described = crd.generate(Pool, builtin_descriptions=True)
    template = described["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"][
        "properties"
    ]["template"]
    assert "description" in template["properties"]["spec"]["properties"]["containers"]
    assert template["description"].startswith("PodTemplateSpec describes")
    plain_descriptions = [
        v for k, v in _walk(plain["spec"]["versions"][0]["schema"]) if k == "description"
    ]
    # Only the apiVersion/kind descriptions every custom resource has.
    assert sorted(plain_descriptions) == sorted(crd._TYPE_META_DESCRIPTIONS.values())
    assert len(json.dumps(described)) > 4 * len(json.dumps(plain))


def test_a_user_description_on_the_embedding_field_is_kept() -> None:
    class Spec(ResourceModel):
        template: V1PodTemplateSpec
        """The pods to run."""

    class Described(CustomResource, group="example.com", version="v1", kind="Described"):
        spec: Spec

    template = crd.schema(Described)["properties"]["spec"]["properties"]["template"]
    assert template["description"] == "The pods to run."
    assert "description" not in template["properties"]["spec"]


def test_built_in_types_in_lists_maps_and_optionals() -> None:
    spec = crd.schema(Pool)["properties"]["spec"]
    env = spec["properties"]["envByName"]
    assert env["type"] == "object"
    assert env["additionalProperties"]["required"] == ["name"]
    assert "valueFrom" in env["additionalProperties"]["properties"]
    status = crd.schema(Cron)["properties"]["status"]["properties"]
    assert status["lastRef"]["type"] == "object"
    assert "lastRef" not in crd.schema(Cron)["properties"]["status"].get("required", [])


def test_a_recursive_built_in_type_is_refused_naming_the_field() -> None:
    class Spec(ResourceModel):
        validation: V1JSONSchemaProps

    class Rec(CustomResource, group="example.com", version="v1", kind="Rec"):
        spec: Spec

    with pytest.raises(crd.UnsupportedModelError) as info:
        crd.schema(Rec)
    message = str(info.value)
    assert message.startswith("Rec.spec.validation.")
    assert "recursive type (JSONSchemaProps -> JSONSchemaProps)" in message
    assert "PreserveUnknownFields" in message


def test_a_kubernetes_model_the_pinned_server_does_not_publish_is_refused() -> None:
    class V1Nope(BaseModel):
        name: str = ""

    V1Nope.__module__ = "kubernetes.client.models.v1_nope"

    class Spec(ResourceModel):
        nope: V1Nope

    class Nope(CustomResource, group="example.com", version="v1", kind="Nope"):
        spec: Spec

    with pytest.raises(crd.UnsupportedModelError, match=r"Nope\.spec\.nope .*V1Nope is not a type"):
        crd.schema(Nope)


# --- finding 2: property names are the names the model serializes with ------------------------


def test_embedded_models_use_their_serialization_names() -> None:
    status = crd.schema(Cron)["properties"]["status"]["properties"]
    ref = status["active"]["items"]["properties"]
    assert {"apiVersion", "resourceVersion", "fieldPath"} <= set(ref)
    assert not {"api_version", "resource_version", "field_path"} & set(ref)
    condition = status["conditions"]["items"]
    assert "lastTransitionTime" in condition["required"]
    assert "last_transition_time" not in condition["required"]


def test_every_serialized_key_of_a_full_object_is_a_schema_property() -> None:
    """What the client sends (``by_alias``) is exactly what the schema keeps: nothing pruned."""
    cron = Cron.model_validate(
        {
            "metadata": {"name": "c"},
            "spec": {
                "schedule": "* * * * *",
                "jobTemplate": {
                    "metadata": {"labels": {"a": "b"}},
                    "spec": {
                        "backoffLimit": 2,
                        "template": {
                            "spec": {
                                "restartPolicy": "Never",
                                "containers": [
                                    {
                                        "name": "main",
                                        "image": "busybox",
                                        "env": [{"name": "A", "value": "1"}],
                                        "ports": [{"containerPort": 80, "name": "http"}],
                                        "readinessProbe": {
                                            "httpGet": {"port": "http", "path": "/"}
                                        },
                                        "resources": {"limits": {"cpu": "500m"}},
                                    }
                                ],
                            }
                        },
                    },
                },
            },
            "status": {
                "active": [{"apiVersion": "batch/v1", "kind": "Job", "resourceVersion": "7"}],
                "conditions": [
                    {
                        "type": "Ready",
                        "status": "True",
                        "lastTransitionTime": "2024-01-01T00:00:00Z",
                        "reason": "Ok",
                        "message": "",
                    }
                ],
            },
        }
    )
    body = cron.model_dump(by_alias=True, exclude_none=True, mode="json")
    schema = crd.schema(Cron)

    def check(value: Any, node: dict[str, Any], where: str) -> None:
        if isinstance(value, dict) and "properties" in node:
            for key, item in value.items():
                assert key in node["properties"], f"{where}.{key} would be pruned"
                check(item, node["properties"][key], f"{where}.{key}")
        elif isinstance(value, dict) and "additionalProperties" in node:
            for key, item in value.items():
                check(item, node["additionalProperties"], f"{where}.{key}")
        elif isinstance(value, list) and "items" in node:
            for item in value:
                check(item, node["items"], f"{where}[]")

    for part in ("spec", "status"):
        check(body[part], schema["properties"][part], part)
    # And it validates back, field for field.
    assert Cron.model_validate(body) == cron
    job = cron.spec.job_template.spec
    assert job is not None
    assert job.template.spec is not None
    probe = job.template.spec.containers[0].readiness_probe
    assert probe is not None
    assert probe.http_get is not None
    assert probe.http_get.port == "http"


def test_a_user_field_with_only_a_serialization_alias_is_refused() -> None:
    class Spec(BaseModel):
        model_config = ConfigDict(extra="allow")
        size: int = Field(default=1, serialization_alias="theSize")

    class Aliased(CustomResource, group="example.com", version="v1", kind="Aliased"):
        spec: Spec

    with pytest.raises(crd.UnsupportedModelError) as info:
        crd.schema(Aliased)
    message = str(info.value)
    assert message.startswith("Aliased.spec.size (field Spec.size): the field is written as")
    assert "Field(alias='theSize')" in message


def test_user_fields_are_named_as_they_serialize() -> None:
    class Spec(BaseModel):
        model_config = ConfigDict(
            alias_generator=AliasGenerator(serialization_alias=lambda n: n.upper()),
            validate_by_name=True,
            validate_by_alias=True,
        )
        size: int = Field(default=1, validation_alias=AliasChoices("SIZE", "size"))
        mode: str = Field(default="a", alias="theMode")

    class Named(CustomResource, group="example.com", version="v1", kind="Named"):
        spec: Spec

    props = crd.schema(Named)["properties"]["spec"]["properties"]
    assert sorted(props) == ["SIZE", "theMode"]
    dumped = Named(spec=Spec()).model_dump(by_alias=True)["spec"]
    assert sorted(dumped) == sorted(props)


# --- the table and its generator --------------------------------------------------------------


@pytest.mark.parametrize(
    ("cls", "name"),
    [
        (V1PodTemplateSpec, "io.k8s.api.core.v1.PodTemplateSpec"),
        (V1JobTemplateSpec, "io.k8s.api.batch.v1.JobTemplateSpec"),
        (V1Condition, "io.k8s.apimachinery.pkg.apis.meta.v1.Condition"),
        (V1ObjectMeta, "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"),
        (V1Container, "io.k8s.api.core.v1.Container"),
        (V1HTTPGetAction, "io.k8s.api.core.v1.HTTPGetAction"),
    ],
)
def test_model_classes_map_to_their_definitions(cls: type[Any], name: str) -> None:
    assert _builtin_schemas.definition_name(cls) == name


def test_every_mapped_class_matches_its_definitions_fields() -> None:
    """The mapping is by name; the installed models' fields confirm it (a newer client may have
    fields the pinned server lacks, never a different set altogether)."""
    import kubernetes.client.models as models

    table = _builtin_schemas._table()
    checked = 0
    for cls_name, name in table["classes"].items():
        cls = getattr(models, cls_name, None)
        if cls is None:
            continue
        wire = {f.serialization_alias or n for n, f in cls.model_fields.items()}
        published = set(table["definitions"][name].get("properties", {}))
        assert len(wire & published) >= len(published) // 2, (cls_name, name)
        checked += 1
    assert checked > 400


def test_the_generator_keeps_each_definition_once_with_references_by_name() -> None:
    ref = "#/components/schemas/"
    definitions = {
        "io.k8s.api.core.v1.Thing": {
            "type": "object",
            "properties": {
                "part": {"description": "d", "allOf": [{"$ref": ref + "io.k8s.api.core.v1.Part"}]},
                "items": {
                    "type": "array",
                    "items": {"$ref": ref + "io.k8s.api.core.v1.Part"},
                    "x-kubernetes-patch-merge-key": "name",
                    "x-kubernetes-patch-strategy": "merge",
                },
            },
            "x-kubernetes-group-version-kind": [{"group": "", "kind": "Thing", "version": "v1"}],
        },
        "io.k8s.api.core.v1.Part": {"type": "object", "properties": {"name": {"type": "string"}}},
        "io.k8s.api.core.v1.ThingList": {"type": "object"},
    }
    table = build_table(definitions, server_version="v9")
    assert table["classes"] == {
        "V1Part": "io.k8s.api.core.v1.Part",
        "V1Thing": "io.k8s.api.core.v1.Thing",
    }
    assert table["definitions"]["io.k8s.api.core.v1.Thing"] == {
        "type": "object",
        "properties": {
            "part": {"$ref": "io.k8s.api.core.v1.Part", "description": "d"},
            "items": {"type": "array", "items": {"$ref": "io.k8s.api.core.v1.Part"}},
        },
    }
    assert "io.k8s.api.core.v1.ThingList" not in table["definitions"]
    assert json.loads(render_table(table)) == table


def test_class_names_prefix_a_kind_two_groups_define() -> None:
    names = class_names(
        {
            "io.k8s.api.storage.v1.TokenRequest": {},
            "io.k8s.api.authentication.v1.TokenRequest": {},
            "io.k8s.apimachinery.pkg.apis.meta.v1.Condition": {},
            "io.k8s.apimachinery.pkg.api.resource.Quantity": {},
        }
    )
    assert names == {
        "AuthenticationV1TokenRequest": "io.k8s.api.authentication.v1.TokenRequest",
        "StorageV1TokenRequest": "io.k8s.api.storage.v1.TokenRequest",
        "V1Condition": "io.k8s.apimachinery.pkg.apis.meta.v1.Condition",
    }


def test_the_committed_table_names_its_server_and_maps_the_common_types() -> None:
    assert _builtin_schemas.server_version().startswith("v1.")
    for cls in (V1PodSpec, V1Probe, V1ContainerPort, V1ResourceRequirements):
        assert _builtin_schemas.definition_name(cls) is not None


def test_a_field_annotated_with_a_built_in_type_keeps_its_markers() -> None:
    from kubectrl.resources import Rule

    class Spec(ResourceModel):
        template: Annotated[V1PodTemplateSpec, Rule("has(self.spec)", message="spec needed")]

    class Marked(CustomResource, group="example.com", version="v1", kind="Marked"):
        spec: Spec

    template = crd.schema(Marked)["properties"]["spec"]["properties"]["template"]
    assert template["x-kubernetes-validations"] == [
        {"rule": "has(self.spec)", "message": "spec needed"}
    ]
    assert "spec" in template["properties"]
