"""What real-world CRDs say that a model must be able to say too, and what must never be lost.

Each test here failed before the generator learnt the construct: a field name guessed wrong
(``is_ca`` -> ``isCa``, pruned by the server), schema extras silently dropped, and Quantity,
tagged unions, ``float | str``, ``selectableFields`` and ``optionalOldSelf`` refused.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

import pytest
from pydantic import ConfigDict, Field, ValidationError

from kubectrl import crd
from kubectrl.resources import (
    QUANTITY_PATTERN,
    CustomResource,
    IntOrStringMarker,
    PreserveUnknownFields,
    Quantity,
    ResourceModel,
    Rule,
)


def _spec(model: type[CustomResource]) -> dict[str, Any]:
    properties: dict[str, Any] = crd.schema(model)["properties"]["spec"]
    return properties


def test_an_initialism_in_an_automatic_camel_case_name_is_refused_naming_the_field() -> None:
    class CertSpec(ResourceModel):
        is_ca: bool = False

    class Cert(CustomResource, group="example.com", version="v1", kind="Cert"):
        spec: CertSpec

    with pytest.raises(crd.UnsupportedModelError) as info:
        crd.generate(Cert)
    message = str(info.value)
    assert "CertSpec.is_ca" in message
    assert "'isCa'" in message
    assert "'isCA'" in message


def test_an_explicit_alias_says_which_spelling_the_crd_uses() -> None:
    class CertSpec(ResourceModel):
        is_ca: bool = Field(default=False, alias="isCA")
        host_ip: str = Field(default="", alias="hostIp")
        partial_response_strategy: str = Field(default="", alias="partial_response_strategy")

    class Cert(CustomResource, group="example.com", version="v1", kind="Cert"):
        spec: CertSpec

    assert set(_spec(Cert)["properties"]) == {"isCA", "hostIp", "partial_response_strategy"}
    cert = Cert.model_validate({"spec": {"isCA": True, "partial_response_strategy": "warn"}})
    assert cert.spec.is_ca is True
    dumped = cert.model_dump(by_alias=True, mode="json")["spec"]
    assert dumped["isCA"] is True
    assert dumped["partial_response_strategy"] == "warn"


def test_json_schema_extra_keys_are_emitted() -> None:
    class Spec(ResourceModel):
        name: str = Field(
            default="", json_schema_extra={"not": {"pattern": "^kube-"}, "title": "Name"}
        )
        ports: list[Annotated[int, Field(json_schema_extra={"allOf": [{"minimum": 1}]})]] = Field(
            default_factory=list
        )

    class Thing(CustomResource, group="example.com", version="v1", kind="Thing"):
        spec: Spec

    properties = _spec(Thing)["properties"]
    assert properties["name"]["not"] == {"pattern": "^kube-"}
    assert properties["name"]["title"] == "Name"
    assert properties["ports"]["items"]["allOf"] == [{"minimum": 1}]


def test_model_level_json_schema_extra_is_emitted() -> None:
    class Choice(ResourceModel):
        model_config = ConfigDict(
            json_schema_extra={"oneOf": [{"required": ["a"]}, {"required": ["b"]}]}
        )
        a: str | None = None
        b: str | None = None

    class Picker(CustomResource, group="example.com", version="v1", kind="Picker"):
        spec: Choice

    assert _spec(Picker)["oneOf"] == [{"required": ["a"]}, {"required": ["b"]}]


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        ({"$ref": "#/definitions/x"}, "'$ref'"),
        ({"uniqueItems": True}, "'uniqueItems'"),
        ({"type": "integer"}, "'type'"),
        ({"maxLength": 3}, "'maxLength'"),  # conflicts with the field's own max_length
    ],
)
def test_json_schema_extra_keys_a_crd_cannot_take_are_refused(
    extra: dict[str, Any], named: str
) -> None:
    class Spec(ResourceModel):
        name: str = Field(default="", max_length=5, json_schema_extra=extra)

    class Thing(CustomResource, group="example.com", version="v1", kind="Thing"):
        spec: Spec

    with pytest.raises(crd.UnsupportedModelError, match=r"Spec\.name") as info:
        crd.generate(Thing)
    assert named in str(info.value)


def test_a_callable_json_schema_extra_is_refused() -> None:
    def extra(schema: dict[str, Any]) -> None:
        schema["x"] = 1

    class Spec(ResourceModel):
        name: str = Field(default="", json_schema_extra=extra)

    class Thing(CustomResource, group="example.com", version="v1", kind="Thing"):
        spec: Spec

    with pytest.raises(crd.UnsupportedModelError, match=r"Spec\.name.*callable"):
        crd.generate(Thing)


def test_a_quantity_is_int_or_string_with_the_quantity_pattern() -> None:
    class Spec(ResourceModel):
        memory: Quantity = "1Gi"

    class Box(CustomResource, group="example.com", version="v1", kind="Box"):
        spec: Spec

    assert _spec(Box)["properties"]["memory"] == {
        "anyOf": [{"type": "integer"}, {"type": "string"}],
        "pattern": QUANTITY_PATTERN,
        "x-kubernetes-int-or-string": True,
        "default": "1Gi",
    }
    assert Spec(memory=3).memory == 3
    with pytest.raises(ValidationError):
        Spec(memory="lots")


def test_an_int_or_string_with_its_own_pattern() -> None:
    percent = Annotated[
        Union[int, Annotated[str, Field(pattern=r"^[0-9]+%$")]],  # noqa: UP007
        IntOrStringMarker(),
    ]

    class Spec(ResourceModel):
        surge: percent = 1  # type: ignore[valid-type]

    class Roll(CustomResource, group="example.com", version="v1", kind="Roll"):
        spec: Spec

    assert _spec(Roll)["properties"]["surge"]["pattern"] == r"^[0-9]+%$"


class _Http(ResourceModel):
    type: Literal["HTTP"]
    path: str
    port: int = 80


class _Tcp(ResourceModel):
    type: Literal["TCP"]
    port: int = 80


def test_a_discriminated_union_of_models_is_one_object_with_a_one_of() -> None:
    class Spec(ResourceModel):
        probe: Annotated[Union[_Http, _Tcp], Field(discriminator="type")]  # noqa: UP007

    class Check(CustomResource, group="example.com", version="v1", kind="Check"):
        spec: Spec

    probe = _spec(Check)["properties"]["probe"]
    assert probe["type"] == "object"
    assert probe["properties"]["type"] == {"type": "string", "enum": ["HTTP", "TCP"]}
    assert set(probe["properties"]) == {"type", "path", "port"}
    assert probe["required"] == ["type"]
    assert probe["oneOf"] == [
        {"properties": {"type": {"enum": ["HTTP"]}}, "required": ["type", "path"]},
        {"properties": {"type": {"enum": ["TCP"]}}, "required": ["type"]},
    ]
    spec = Spec.model_validate({"probe": {"type": "TCP", "port": 9}})
    assert isinstance(spec.probe, _Tcp)


def test_variants_disagreeing_on_a_field_are_refused() -> None:
    class A(ResourceModel):
        type: Literal["a"]
        value: int

    class B(ResourceModel):
        type: Literal["b"]
        value: str

    class Spec(ResourceModel):
        choice: A | B = Field(discriminator="type")

    class Pick(CustomResource, group="example.com", version="v1", kind="Pick"):
        spec: Spec

    with pytest.raises(crd.UnsupportedModelError, match=r"B\.value"):
        crd.generate(Pick)


def test_an_untagged_union_of_models_is_still_refused() -> None:
    class Spec(ResourceModel):
        probe: _Http | _Tcp

    class Check(CustomResource, group="example.com", version="v1", kind="Check"):
        spec: Spec

    with pytest.raises(crd.UnsupportedModelError, match="discriminat"):
        crd.generate(Check)


def test_float_or_str_is_a_node_that_keeps_any_value() -> None:
    class Spec(ResourceModel):
        threshold: float | str = 0.5

    class Alert(CustomResource, group="example.com", version="v1", kind="Alert"):
        spec: Spec

    threshold = _spec(Alert)["properties"]["threshold"]
    assert threshold == {"x-kubernetes-preserve-unknown-fields": True, "default": 0.5}
    assert Spec(threshold="80%").threshold == "80%"
    with pytest.raises(ValidationError):
        Spec.model_validate({"threshold": [1]})


def test_selectable_fields_are_the_versions_selectable_fields() -> None:
    class Spec(ResourceModel):
        color: str = ""

    class Paint(
        CustomResource,
        group="example.com",
        version="v1",
        kind="Paint",
        selectable_fields=(".spec.color",),
    ):
        spec: Spec

    (version,) = crd.generate(Paint)["spec"]["versions"]
    assert version["selectableFields"] == [{"jsonPath": ".spec.color"}]


def test_selectable_fields_as_a_string_is_refused() -> None:
    with pytest.raises(TypeError, match="selectable_fields"):

        class Paint(  # pyright: ignore[reportUnusedClass]
            CustomResource,
            group="example.com",
            version="v1",
            kind="Paint",
            selectable_fields=".spec.color",
        ):
            pass


def test_a_rule_with_optional_old_self() -> None:
    rule = Rule("!oldSelf.hasValue() || self == oldSelf.value()", optional_old_self=True)

    class Spec(ResourceModel):
        name: Annotated[str, rule] = ""

    class Once(CustomResource, group="example.com", version="v1", kind="Once"):
        spec: Spec

    assert _spec(Once)["properties"]["name"]["x-kubernetes-validations"] == [
        {"rule": rule.rule, "optionalOldSelf": True}
    ]


def test_a_map_of_any_json_values_is_not_any_json_object() -> None:
    class Spec(ResourceModel):
        anything: dict[str, Any] = Field(default_factory=dict)
        values: dict[str, Annotated[Any, PreserveUnknownFields()]] = Field(default_factory=dict)

    class Bag(CustomResource, group="example.com", version="v1", kind="Bag"):
        spec: Spec

    properties = _spec(Bag)["properties"]
    assert properties["anything"] == {
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": True,
        "default": {},
    }
    assert properties["values"] == {
        "type": "object",
        "additionalProperties": {"x-kubernetes-preserve-unknown-fields": True},
        "default": {},
    }
