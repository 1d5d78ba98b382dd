"""Schema output per construct, as golden dicts.

The mapping follows controller-tools (kubernetes-sigs/controller-tools): pkg/crd/schema.go (types
to schemas, required = not optional), pkg/crd/markers/validation.go (numeric, string, list and
enum markers, nullable, default, XPreserveUnknownFields, XEmbeddedResource, XIntOrString,
XValidation), pkg/crd/markers/topology.go (listType, listMapKey, mapType) and
pkg/crd/known_types.go (IntOrString as anyOf integer/string with x-kubernetes-int-or-string, Time as
string/date-time, metadata left to the server).
"""

from __future__ import annotations

import datetime
import enum
from typing import Annotated, Any, Literal

import pytest
import yaml
from pydantic import Field

from kubectrl import crd
from kubectrl.resources import (
    CustomResource,
    EmbeddedResource,
    Format,
    Int32,
    Int64,
    IntOrString,
    ListType,
    MapType,
    Nullable,
    PreserveUnknownFields,
    PrinterColumn,
    ResourceModel,
    Rule,
    Scale,
    rules,
)


def spec_of(spec_model: type[ResourceModel]) -> dict[str, Any]:
    """The generated schema of ``spec`` for a CR whose spec is ``spec_model``."""

    class Holder(CustomResource, group="example.com", version="v1", kind="Holder"):
        spec: spec_model  # type: ignore[valid-type]

    return crd.schema(Holder)["properties"]["spec"]


def field_of(annotation: Any, **field: Any) -> dict[str, Any]:
    """The schema of one field ``value`` of the given annotation (required unless defaulted)."""
    namespace: dict[str, Any] = {"__annotations__": {"value": annotation}}
    if field:
        namespace["value"] = Field(**field)
    model = type("Spec", (ResourceModel,), namespace)
    return spec_of(model)["properties"]["value"]


class Color(str, enum.Enum):
    RED = "red"
    BLUE = "blue"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


@pytest.mark.parametrize(
    ("annotation", "field", "expected"),
    [
        (str, {}, {"type": "string"}),
        (int, {}, {"type": "integer"}),
        (float, {}, {"type": "number"}),
        (bool, {}, {"type": "boolean"}),
        (datetime.datetime, {}, {"type": "string", "format": "date-time"}),
        (datetime.date, {}, {"type": "string", "format": "date"}),
        (Int32, {}, {"type": "integer", "format": "int32"}),
        (Int64, {}, {"type": "integer", "format": "int64"}),
        (Annotated[str, Format("byte")], {}, {"type": "string", "format": "byte"}),
        (int, {"ge": 1, "le": 10}, {"type": "integer", "minimum": 1, "maximum": 10}),
        (
            float,
            {"gt": 0, "lt": 1},
            {
                "type": "number",
                "minimum": 0,
                "exclusiveMinimum": True,
                "maximum": 1,
                "exclusiveMaximum": True,
            },
        ),
        (int, {"multiple_of": 5}, {"type": "integer", "multipleOf": 5}),
        (
            str,
            {"pattern": "^a+$", "min_length": 1, "max_length": 3},
            {"type": "string", "minLength": 1, "maxLength": 3, "pattern": "^a+$"},
        ),
        (
            list[str],
            {"min_length": 1, "max_length": 2},
            {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 2},
        ),
        (
            dict[str, int],
            {"max_length": 4},
            {"type": "object", "additionalProperties": {"type": "integer"}, "maxProperties": 4},
        ),
        (Literal["a", "b"], {}, {"type": "string", "enum": ["a", "b"]}),
        (Literal[1, 2], {}, {"type": "integer", "enum": [1, 2]}),
        (Color, {}, {"type": "string", "enum": ["red", "blue"]}),
        (Level, {}, {"type": "integer", "enum": [1, 2]}),
        (str, {"description": "The name."}, {"description": "The name.", "type": "string"}),
        (str | None, {"default": None}, {"type": "string"}),
        (
            Annotated[str | None, Nullable()],
            {"default": None},
            {"type": "string", "nullable": True},
        ),
        (int, {"default": 3}, {"type": "integer", "default": 3}),
        (
            Color,
            {"default": Color.BLUE},
            {"type": "string", "enum": ["red", "blue"], "default": "blue"},
        ),
        (
            list[int],
            {"default_factory": list},
            {"type": "array", "items": {"type": "integer"}, "default": []},
        ),
        (
            set[str],
            {},
            {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
        ),
        (
            tuple[int, ...],
            {},
            {"type": "array", "items": {"type": "integer"}},
        ),
        (
            list[Annotated[str, Field(max_length=5)]],
            {},
            {"type": "array", "items": {"type": "string", "maxLength": 5}},
        ),
        (
            dict[str, Annotated[int, Field(ge=0)]],
            {},
            {"type": "object", "additionalProperties": {"type": "integer", "minimum": 0}},
        ),
        (
            Annotated[list[str], ListType("atomic")],
            {},
            {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "atomic"},
        ),
        (
            Annotated[dict[str, str], MapType("atomic")],
            {},
            {
                "type": "object",
                "additionalProperties": {"type": "string"},
                "x-kubernetes-map-type": "atomic",
            },
        ),
        (
            IntOrString,
            {},
            {
                "anyOf": [{"type": "integer"}, {"type": "string"}],
                "x-kubernetes-int-or-string": True,
            },
        ),
        (
            IntOrString | None,
            {"default": None},
            {
                "anyOf": [{"type": "integer"}, {"type": "string"}],
                "x-kubernetes-int-or-string": True,
            },
        ),
        (dict[str, Any], {}, {"type": "object", "x-kubernetes-preserve-unknown-fields": True}),
        (Any, {}, {"x-kubernetes-preserve-unknown-fields": True}),
        (
            Annotated[dict[str, Any], EmbeddedResource()],
            {},
            {
                "type": "object",
                "x-kubernetes-preserve-unknown-fields": True,
                "x-kubernetes-embedded-resource": True,
            },
        ),
        (
            Annotated[dict[str, str], PreserveUnknownFields()],
            {},
            {
                "type": "object",
                "additionalProperties": {"type": "string"},
                "x-kubernetes-preserve-unknown-fields": True,
            },
        ),
        (
            Annotated[int, Rule("self > 0", message="positive", reason="FieldValueInvalid")],
            {},
            {
                "type": "integer",
                "x-kubernetes-validations": [
                    {"rule": "self > 0", "message": "positive", "reason": "FieldValueInvalid"}
                ],
            },
        ),
    ],
    ids=repr,
)
def test_field_schema(annotation: Any, field: dict[str, Any], expected: dict[str, Any]) -> None:
    assert field_of(annotation, **field) == expected


class Item(ResourceModel):
    """An item."""

    name: str
    weight: int = 1
    """How heavy."""


@rules(Rule("self.a <= self.b", message="a must not exceed b", field_path=".a"))
class Pair(ResourceModel):
    a: int = 0
    b: int = 0


class Nested(ResourceModel):
    """The spec."""

    first_item: Item
    items: Annotated[list[Item], ListType("map", keys=("name",))] = Field(default_factory=list)
    pair: Pair = Field(default_factory=Pair)
    maybe: Item | None = None


def test_nested_models_camel_case_required_docstrings_defaults_and_model_rules() -> None:
    item = {
        "description": "An item.",
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "weight": {"description": "How heavy.", "type": "integer", "default": 1},
        },
        "required": ["name"],
    }
    assert spec_of(Nested) == {
        "description": "The spec.",
        "type": "object",
        "properties": {
            "firstItem": item,
            "items": {
                "type": "array",
                "items": item,
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
                "default": [],
            },
            "pair": {
                "type": "object",
                "properties": {
                    "a": {"type": "integer", "default": 0},
                    "b": {"type": "integer", "default": 0},
                },
                "x-kubernetes-validations": [
                    {
                        "rule": "self.a <= self.b",
                        "message": "a must not exceed b",
                        "fieldPath": ".a",
                    }
                ],
                "default": {"a": 0, "b": 0},
            },
            "maybe": item,
        },
        "required": ["firstItem"],
    }


class Spec(ResourceModel):
    replicas: int = 1


class Status(ResourceModel):
    replicas: int = 0
    selector: str = ""


class Sample(
    CustomResource,
    group="example.com",
    version="v1",
    kind="Sample",
    short_names=("smp",),
    categories=("all",),
    printer_columns=(
        PrinterColumn("Replicas", "integer", ".spec.replicas", description="Desired"),
        PrinterColumn("Age", "date", ".metadata.creationTimestamp", priority=1),
    ),
    scale=Scale(label_selector_path=".status.selector"),
):
    """A sample."""

    spec: Spec
    status: Status | None = None


def test_whole_crd() -> None:
    assert crd.generate(Sample) == {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "samples.example.com"},
        "spec": {
            "group": "example.com",
            "names": {
                "kind": "Sample",
                "listKind": "SampleList",
                "plural": "samples",
                "singular": "sample",
                "shortNames": ["smp"],
                "categories": ["all"],
            },
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "description": "A sample.",
                            "type": "object",
                            "properties": {
                                "apiVersion": {
                                    "description": crd._TYPE_META_DESCRIPTIONS["apiVersion"],
                                    "type": "string",
                                },
                                "kind": {
                                    "description": crd._TYPE_META_DESCRIPTIONS["kind"],
                                    "type": "string",
                                },
                                "metadata": {"type": "object"},
                                "spec": {
                                    "type": "object",
                                    "properties": {"replicas": {"type": "integer", "default": 1}},
                                },
                                "status": {
                                    "type": "object",
                                    "properties": {
                                        "replicas": {"type": "integer", "default": 0},
                                        "selector": {"type": "string", "default": ""},
                                    },
                                },
                            },
                            "required": ["spec"],
                        }
                    },
                    "subresources": {
                        "status": {},
                        "scale": {
                            "specReplicasPath": ".spec.replicas",
                            "statusReplicasPath": ".status.replicas",
                            "labelSelectorPath": ".status.selector",
                        },
                    },
                    "additionalPrinterColumns": [
                        {
                            "name": "Replicas",
                            "type": "integer",
                            "jsonPath": ".spec.replicas",
                            "description": "Desired",
                        },
                        {
                            "name": "Age",
                            "type": "date",
                            "jsonPath": ".metadata.creationTimestamp",
                            "priority": 1,
                        },
                    ],
                }
            ],
        },
    }


class ClusterThing(
    CustomResource,
    group="example.com",
    version="v1",
    kind="ClusterThing",
    plural="clusterthingies",
    scope="Cluster",
    status_subresource=False,
):
    status: Status | None = None


def test_cluster_scope_plural_override_and_no_status_subresource() -> None:
    spec = crd.generate(ClusterThing)["spec"]
    assert spec["scope"] == "Cluster"
    assert spec["names"]["plural"] == "clusterthingies"
    assert "subresources" not in spec["versions"][0]
    assert crd.generate(ClusterThing)["metadata"]["name"] == "clusterthingies.example.com"


class ThingV1(CustomResource, group="example.com", version="v1", kind="Thing", storage=True):
    spec: Spec


class ThingV2(CustomResource, group="example.com", version="v2", kind="Thing", short_names=("th",)):
    spec: Spec


class ThingV3(
    CustomResource,
    group="example.com",
    version="v3alpha1",
    kind="Thing",
    served=False,
    deprecated=True,
    deprecation_warning="v3alpha1 is gone",
):
    spec: Spec


def test_several_versions_one_storage() -> None:
    generated = crd.generate(ThingV1, ThingV2, ThingV3)
    versions = generated["spec"]["versions"]
    assert [(v["name"], v["served"], v["storage"]) for v in versions] == [
        ("v1", True, True),
        ("v2", True, False),
        ("v3alpha1", False, False),
    ]
    assert versions[2]["deprecated"] is True
    assert versions[2]["deprecationWarning"] == "v3alpha1 is gone"
    assert generated["spec"]["conversion"] == {"strategy": "None"}
    assert generated["spec"]["names"]["shortNames"] == ["th"]
    # storage= overrides the declarations.
    chosen = crd.generate(ThingV1, ThingV2, storage=ThingV2)["spec"]["versions"]
    assert [v["storage"] for v in chosen] == [False, True]
    assert [
        v["storage"] for v in crd.generate(ThingV1, ThingV2, storage="v2")["spec"]["versions"]
    ] == [
        False,
        True,
    ]


def test_output_is_deterministic_yaml() -> None:
    text = crd.to_yaml(crd.generate(Sample))
    assert text == crd.to_yaml(crd.generate(Sample))
    assert yaml.safe_load(text) == crd.generate(Sample)
    assert text.startswith("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n")


class Everything(CustomResource, group="example.com", version="v1", kind="Everything"):
    spec: Nested
    maybe: Annotated[dict[str, IntOrString | None], MapType("granular")] | None = None
    status: Status | None = None


def _walk(schema: dict[str, Any]) -> list[dict[str, Any]]:
    found = [schema]
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            found += _walk(schema[key])
    for child in schema.get("properties", {}).values():
        found += _walk(child)
    return found


def test_structural_no_ref_no_anyof_for_optionals_every_node_typed() -> None:
    """apiextensions-apiserver's structural rules: each node has a type unless it is
    int-or-string or preserve-unknown-fields; anyOf only as int-or-string's value validation."""
    for node in _walk(crd.schema(Everything)):
        assert "$ref" not in node
        assert "oneOf" not in node
        if "anyOf" in node:
            assert node.get("x-kubernetes-int-or-string") is True
        if "type" not in node:
            assert node.get("x-kubernetes-int-or-string") or node.get(
                "x-kubernetes-preserve-unknown-fields"
            ), node
        assert "nullable" not in node


def test_crd_annotations_and_labels_go_on_the_crd_metadata() -> None:
    """controller-tools' ``+kubebuilder:metadata`` marker (pkg/crd/markers/crd.go, ``Metadata``)
    puts annotations and labels on the CRD itself; the API server demands the
    ``api-approved.kubernetes.io`` annotation for groups under ``k8s.io``."""
    from kubectrl.crd import generate
    from kubectrl.resources import CustomResource

    class Approved(
        CustomResource,
        group="approved.k8s.io",
        version="v1",
        kind="Approved",
        crd_annotations={"api-approved.kubernetes.io": "unapproved, testing only"},
        crd_labels={"team": "a"},
    ):
        pass

    metadata = generate(Approved)["metadata"]
    assert metadata == {
        "name": "approveds.approved.k8s.io",
        "annotations": {"api-approved.kubernetes.io": "unapproved, testing only"},
        "labels": {"team": "a"},
    }


def test_a_required_metadata_field_stays_required_and_meta_properties_says_what_is_declared() -> (
    None
):
    """controller-gen writes ``required: [metadata, ...]`` for a Go ``ObjectMeta`` field without
    ``omitempty`` (kubernetes-sigs/controller-tools pkg/crd/schema.go, structToSchema: a field
    is required unless optional), as Argo Workflows' CRDs have it; Istio's generated CRDs
    (istio/api kubernetes/customresourcedefinitions.gen.yaml) declare no apiVersion, kind or
    metadata property at all. The model says both and the schema keeps exactly that."""
    from kubectrl.resources import ObjectMeta

    class Flow(CustomResource, group="example.com", version="v1", kind="Flow"):
        metadata: ObjectMeta
        spec: dict[str, Any]

    top = crd.schema(Flow)
    assert top["required"] == ["metadata", "spec"]
    assert set(top["properties"]) == {"apiVersion", "kind", "metadata", "spec"}

    class Route(
        CustomResource, group="example.com", version="v1", kind="Route", meta_properties=()
    ):
        spec: dict[str, Any]

    top = crd.schema(Route)
    assert top["properties"] == {
        "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    }
    assert top["required"] == ["spec"]

    class Partial(
        CustomResource,
        group="example.com",
        version="v1",
        kind="Part",
        meta_properties=("metadata",),
    ):
        pass

    assert crd.schema(Partial)["properties"] == {"metadata": {"type": "object"}}


@pytest.mark.parametrize("given", [("spec",), ("kind", "kind"), "metadata"])
def test_meta_properties_other_than_apiversion_kind_metadata_are_refused_naming_the_class(
    given: Any,
) -> None:
    with pytest.raises(TypeError, match=r"custom resource .*Odd: .*meta_properties"):

        class Odd(
            CustomResource, group="example.com", version="v1", kind="Odd", meta_properties=given
        ):
            pass
