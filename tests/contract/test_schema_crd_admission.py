"""CustomResourceDefinitions the apiserver refuses (422), as it admits them.

Upstream: apiextensions-apiserver pkg/apis/apiextensions/validation/validation.go
(ValidateCustomResourceDefinition: the name, one storage version, patterns, defaults, list map
keys, uniqueItems, $ref) and pkg/apiserver/schema/validation.go (structural schemas: a type on
every field, not both properties and additionalProperties, metadata only name/generateName).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from contract_helpers import Target, unique
from schema_helpers import fields, schema_crd

from kubectrl.errors import InvalidError

ROOT = "spec.validation.openAPIV3Schema"
X = f"{ROOT}.properties[spec].properties[x]"


def _with_x(x: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    def change(crd: dict[str, Any]) -> None:
        schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
        schema["properties"]["spec"]["properties"] = {"x": x}

    return change


def _rename(crd: dict[str, Any]) -> None:
    crd["metadata"]["name"] = "wrong." + crd["spec"]["group"]


def _two_storage(crd: dict[str, Any]) -> None:
    crd["spec"]["versions"].append(dict(copy.deepcopy(crd["spec"]["versions"][0]), name="v2"))


def _metadata_fields(crd: dict[str, Any]) -> None:
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    schema["properties"]["metadata"] = {
        "type": "object",
        "properties": {"labels": {"type": "object"}},
    }


CASES: dict[str, tuple[Callable[[dict[str, Any]], None], tuple[str, str]]] = {
    "name-not-plural-group": (_rename, ("FieldValueInvalid", "metadata.name")),
    "two-storage-versions": (_two_storage, ("FieldValueInvalid", "spec.versions")),
    "property-without-type": (
        _with_x({"properties": {"a": {"type": "string"}}}),
        ("FieldValueRequired", f"{X}.type"),
    ),
    "unknown-type": (_with_x({"type": "strin"}), ("FieldValueNotSupported", f"{X}.type")),
    "default-fails-its-schema": (
        _with_x({"type": "string", "maxLength": 2, "default": "abc"}),
        ("FieldValueTooLong", f"{X}.default"),
    ),
    "default-of-another-type": (
        _with_x({"type": "integer", "default": "a"}),
        ("FieldValueTypeInvalid", f"{X}.default"),
    ),
    "unsupported-pattern": (
        _with_x({"type": "string", "pattern": "(?=a)"}),
        ("FieldValueInvalid", f"{X}.pattern"),
    ),
    "properties-with-additional-properties": (
        _with_x(
            {
                "type": "object",
                "properties": {"a": {"type": "string"}},
                "additionalProperties": {"type": "string"},
            }
        ),
        ("FieldValueForbidden", f"{X}.additionalProperties"),
    ),
    "unique-items": (
        _with_x({"type": "array", "uniqueItems": True, "items": {"type": "string"}}),
        ("FieldValueForbidden", f"{X}.uniqueItems"),
    ),
    "map-list-without-keys": (
        _with_x(
            {
                "type": "array",
                "x-kubernetes-list-type": "map",
                "items": {"type": "object", "properties": {"a": {"type": "string"}}},
            }
        ),
        ("FieldValueRequired", f"{X}.x-kubernetes-list-map-keys"),
    ),
    "metadata-beyond-name": (
        _metadata_fields,
        ("FieldValueForbidden", f"{ROOT}.properties[metadata]"),
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
async def test_refused_crds(target: Target, case: str) -> None:
    """Each CRD is refused with the cause the apiserver gives (and nothing is installed)."""
    change, expected = CASES[case]
    group = f"{unique('adm')}.schema.kubectrl.test"
    crd = schema_crd(group, {"type": "object", "properties": {"x": {"type": "string"}}})
    change(crd)
    with pytest.raises(InvalidError) as info:
        await target.client.create(crd)
    assert expected in fields(info.value)


def _list(kind: str | None, keys: list[str] | None, items: Any = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "array"}
    if kind is not None:
        schema["x-kubernetes-list-type"] = kind
    if keys is not None:
        schema["x-kubernetes-list-map-keys"] = keys
    if items is not None:
        schema["items"] = items
    return schema


def _item(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": ["k"] if "k" in props else []}


STRING = {"type": "string"}
LIST_TYPE_CASES: dict[str, tuple[dict[str, Any], list[tuple[str, str]]]] = {
    "unknown-list-type": (
        _list("bag", None, STRING),
        [("FieldValueNotSupported", f"{X}.x-kubernetes-list-type")],
    ),
    "keys-without-list-type": (
        _list(None, ["k"], _item(k=STRING)),
        [("FieldValueRequired", f"{X}.x-kubernetes-list-type")],
    ),
    "keys-on-a-set": (
        _list("set", ["k"], _item(k=STRING)),
        [
            ("FieldValueInvalid", f"{X}.items.x-kubernetes-map-type"),
            ("FieldValueInvalid", f"{X}.x-kubernetes-list-type"),
        ],
    ),
    "set-of-granular-objects": (
        _list("set", None, {"type": "object", "x-kubernetes-map-type": "granular"}),
        [("FieldValueInvalid", f"{X}.items.x-kubernetes-map-type")],
    ),
    "set-of-sets": (
        _list("set", None, _list("set", None, STRING)),
        [("FieldValueInvalid", f"{X}.items.x-kubernetes-list-type")],
    ),
    "set-of-atomic-objects": (
        _list("set", None, {"type": "object", "x-kubernetes-map-type": "atomic"}),
        [],
    ),
    "map-type-on-a-string": (
        {"type": "string", "x-kubernetes-map-type": "atomic"},
        [("FieldValueInvalid", f"{X}.type")],
    ),
    "unknown-map-type": (
        {"type": "object", "x-kubernetes-map-type": "bag"},
        [("FieldValueNotSupported", f"{X}.x-kubernetes-map-type")],
    ),
    "list-type-on-an-object": (
        {"type": "object", "x-kubernetes-list-type": "atomic"},
        [("FieldValueInvalid", f"{X}.type")],
    ),
    "map-of-scalars": (
        _list("map", ["k"], STRING),
        [("FieldValueInvalid", f"{X}.items.type")],
    ),
    "key-not-a-property": (
        _list("map", ["k", "z"], _item(k=STRING)),
        [("FieldValueInvalid", f"{X}.x-kubernetes-list-map-keys")],
    ),
    "key-twice": (
        _list("map", ["k", "k"], _item(k=STRING)),
        [("FieldValueInvalid", f"{X}.x-kubernetes-list-map-keys")],
    ),
    "key-of-object-type": (
        _list("map", ["k"], _item(k={"type": "object"})),
        [("FieldValueInvalid", f"{X}.items.properties[k].type")],
    ),
    "key-neither-required-nor-defaulted": (
        _list("map", ["a"], _item(a=STRING)),
        [("FieldValueRequired", f"{X}.items.properties[a].default")],
    ),
    "key-nullable": (
        _list("map", ["k"], _item(k={"type": "string", "nullable": True})),
        [("FieldValueForbidden", f"{X}.items.properties[k].nullable")],
    ),
    "nullable-items-of-a-set": (
        _list("set", None, {"type": "string", "nullable": True}),
        [("FieldValueForbidden", f"{X}.items.nullable")],
    ),
}


@pytest.mark.parametrize("case", sorted(LIST_TYPE_CASES))
async def test_refused_list_types(target: Target, case: str) -> None:
    """List and map types as ValidateCustomResourceDefinitionOpenAPISchema and
    validateMapListKeysMapSet check them: every cause the apiserver gives (the set of objects
    that are not atomic: its message shows the item's list type, null)."""
    schema, expected = LIST_TYPE_CASES[case]
    group = f"{unique('adm')}.schema.kubectrl.test"
    crd = schema_crd(group, {"type": "object", "properties": {"x": schema}})
    if not expected:
        await target.client.create(crd, dry_run=True)
        return
    with pytest.raises(InvalidError) as info:
        await target.client.create(crd)
    assert fields(info.value) == expected
    if case == "set-of-granular-objects":
        assert [cause.message for cause in info.value.causes] == [
            "Invalid value: null: must be atomic as item of a list with x-kubernetes-list-type=set"
        ]
