"""Custom resources against their structural schema: pruning, defaulting, validation.

Each case names the upstream file whose behaviour it pins (apiextensions-apiserver
``pkg/apiserver/schema/...`` and ``pkg/apiserver/validation/...``, kube-openapi
``pkg/validation/validate/...``). Every class here failed on the fake before it implemented
them; the real apiserver answers as asserted.
"""

from __future__ import annotations

from typing import Any

import pytest
from contract_helpers import Target, kubernetes_at_least, unique
from schema_helpers import fields, thing, thing_kind

from kubectrl.errors import BadRequestError, InvalidError
from kubectrl.testing import eventually

SPEC: dict[str, Any] = {
    "type": "object",
    "properties": {
        "level": {"type": "string", "pattern": "^(?i)(abort|warn)?$"},
        "endz": {"type": "string", "pattern": "^a\\z"},
        "word": {"type": "string", "pattern": "^\\w+$"},
        "dollar": {"type": "string", "pattern": "^a$"},
        "letters": {"type": "string", "pattern": "^\\pL+$"},
        "opt": {"type": "string"},
        "dflt": {"type": "string", "default": "d"},
        "count": {"type": "integer"},
        "port": {"x-kubernetes-int-or-string": True},
        "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
        "ports": {
            "type": "array",
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name"],
            "items": {
                "type": "object",
                "required": ["name"],
                "properties": {"name": {"type": "string"}, "n": {"type": "integer"}},
            },
        },
        "pair": {"type": "array", "minItems": 2, "items": {"type": "integer"}},
        "labels": {
            "type": "object",
            "minProperties": 1,
            "maxProperties": 2,
            "additionalProperties": {"type": "string"},
        },
        "step": {
            "type": "integer",
            "minimum": 1,
            "exclusiveMinimum": True,
            "maximum": 10,
            "exclusiveMaximum": True,
            "multipleOf": 3,
        },
        "small": {"type": "integer", "format": "int32"},
        "not": {"type": "string", "not": {"enum": ["bad"]}},
        "one": {
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
            "oneOf": [{"required": ["a"]}, {"required": ["b"]}],
        },
        "any": {
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
            "anyOf": [{"required": ["a"]}, {"required": ["b"]}],
        },
        "all": {"type": "string", "allOf": [{"minLength": 2}, {"maxLength": 3}]},
        "when": {"type": "string", "format": "date-time"},
        "id": {"type": "string", "format": "uuid"},
        "embedded": {
            "type": "object",
            "x-kubernetes-embedded-resource": True,
            "x-kubernetes-preserve-unknown-fields": True,
        },
        "open": {
            "type": "object",
            "x-kubernetes-preserve-unknown-fields": True,
            "properties": {"known": {"type": "object", "properties": {"a": {"type": "string"}}}},
        },
    },
}


async def _create(target: Target, spec: dict[str, Any]) -> dict[str, Any]:
    kind = await thing_kind(target, SPEC)
    return await target.client.create(thing(kind, target.namespace, spec))


async def _refused(target: Target, spec: dict[str, Any]) -> list[tuple[str, str]]:
    with pytest.raises(InvalidError) as info:
        await _create(target, spec)
    return fields(info.value)


async def test_patterns_are_go_re2(target: Target) -> None:
    """kube-openapi pkg/validation/validate/validator.go (pattern: Go regexp, RE2 syntax)."""
    created = await _create(target, {"level": "WARN", "letters": "éa"})
    assert created["spec"]["level"] == "WARN"
    assert await _refused(target, {"endz": "a\n"}) == [("FieldValueInvalid", "spec.endz")]
    assert await _refused(target, {"word": "é"}) == [("FieldValueInvalid", "spec.word")]
    assert await _refused(target, {"dollar": "a\n"}) == [("FieldValueInvalid", "spec.dollar")]


async def test_nulls_and_integral_numbers(target: Target) -> None:
    """apiextensions-apiserver pkg/apiserver/schema/defaulting/prunenulls.go and algorithm.go:
    a null optional field is dropped, a null defaulted field defaulted; 3.0 is stored as 3."""
    created = await _create(target, {"opt": None, "dflt": None, "count": 3.0})
    assert created["spec"] == {"dflt": "d", "count": 3}
    assert isinstance(created["spec"]["count"], int)


async def test_int_or_string(target: Target) -> None:
    """apiextensions-apiserver pkg/apiserver/validation/validation.go (int-or-string as
    anyOf integer/string)."""
    assert (await _create(target, {"port": "50%"}))["spec"]["port"] == "50%"
    for bad in (True, 0.5, {}, []):
        assert await _refused(target, {"port": bad}) == [("FieldValueTypeInvalid", "spec.port")]


async def test_list_types_refuse_duplicates(target: Target) -> None:
    """apiextensions-apiserver pkg/apiserver/schema/listtype/validation.go."""
    assert await _refused(target, {"tags": ["a", "a"]}) == [("FieldValueDuplicate", "spec.tags[1]")]
    ports = [{"name": "x"}, {"name": "x", "n": 1}]
    assert await _refused(target, {"ports": ports}) == [("FieldValueDuplicate", "spec.ports[1]")]


async def test_item_and_property_counts(target: Target) -> None:
    """kube-openapi pkg/validation/validate/slice_validator.go and object_validator.go."""
    assert await _refused(target, {"pair": [1]}) == [("FieldValueInvalid", "spec.pair")]
    assert await _refused(target, {"labels": {}}) == [("FieldValueInvalid", "spec.labels")]
    many = {"a": "1", "b": "2", "c": "3"}
    assert await _refused(target, {"labels": many}) == [("FieldValueTooMany", "spec.labels")]


async def test_exclusive_bounds_and_multiple_of(target: Target) -> None:
    """kube-openapi pkg/validation/validate/validator.go (numberValidator)."""
    assert (await _create(target, {"step": 9}))["spec"]["step"] == 9
    assert await _refused(target, {"step": 1}) == [("FieldValueInvalid", "spec.step")] * 2
    assert await _refused(target, {"step": 4}) == [("FieldValueInvalid", "spec.step")]


async def test_int32_range(target: Target) -> None:
    """kube-openapi pkg/validation/validate/validator.go (integer formats' ranges), from 1.36:
    up to 1.35 apiextensions-apiserver strips an integer's format (pkg/apiserver/validation/
    formats.go StripUnsupportedFormatsPostProcessor, v0.35.4) and kube-openapi's number
    validator is given none (pkg/validation/validate/schema.go, 589584f1c912)."""
    if not kubernetes_at_least("1.36"):
        assert (await _create(target, {"small": 2**40}))["spec"]["small"] == 2**40
        return
    assert await _refused(target, {"small": 2**40}) == [("FieldValueInvalid", "<nil>")]


async def test_composition(target: Target) -> None:
    """kube-openapi pkg/validation/validate/schema_props.go (allOf, anyOf, oneOf, not)."""
    assert await _refused(target, {"not": "bad"}) == [("FieldValueInvalid", "<nil>")]
    assert await _refused(target, {"one": {"a": "1", "b": "2"}}) == [("FieldValueInvalid", "<nil>")]
    assert await _refused(target, {"any": {}}) == [
        ("FieldValueInvalid", "<nil>"),
        ("FieldValueRequired", "spec.any.a"),
    ]
    assert await _refused(target, {"all": "abcd"}) == [
        ("FieldValueInvalid", "<nil>"),
        ("FieldValueTooLong", "spec.all"),
    ]


async def test_formats(target: Target) -> None:
    """apiextensions-apiserver pkg/apiserver/validation/formats.go, kube-openapi
    pkg/validation/strfmt/default.go."""
    ok = {"when": "2024-01-02T03:04:05Z", "id": "0e8a0f0e-8a0f-4e8a-8f0e-8a0f0e8a0f0e"}
    assert (await _create(target, ok))["spec"]["when"] == ok["when"]
    assert await _refused(target, {"when": "2024-01-02"}) == [
        ("FieldValueTypeInvalid", "spec.when")
    ]
    assert await _refused(target, {"id": "x"}) == [("FieldValueTypeInvalid", "spec.id")]


async def test_pruning(target: Target) -> None:
    """apiextensions-apiserver pkg/apiserver/schema/pruning/algorithm.go (known properties of a
    preserve-unknown-fields node are pruned, embedded resources keep apiVersion/kind and ObjectMeta
    fields) and schema/objectmeta/coerce.go (unknown metadata fields dropped)."""
    kind = await thing_kind(target, SPEC)
    obj = thing(
        kind,
        target.namespace,
        {
            "open": {"extra": 1, "known": {"a": "x", "b": "y"}},
            "embedded": {"apiVersion": "v1", "kind": "X", "metadata": {"name": "a", "junk": 1}},
        },
    )
    obj["metadata"]["junk"] = "dropped"
    created = await target.client.create(obj)
    assert created["spec"]["open"] == {"extra": 1, "known": {"a": "x"}}
    assert created["spec"]["embedded"]["metadata"] == {"name": "a"}
    assert "junk" not in created["metadata"]


async def test_embedded_resource_needs_api_version_and_kind(target: Target) -> None:
    """apiextensions-apiserver pkg/apiserver/schema/objectmeta/validation.go."""
    assert await _refused(target, {"embedded": {"metadata": {"name": "a"}}}) == [
        ("FieldValueRequired", "spec.embedded.apiVersion"),
        ("FieldValueRequired", "spec.embedded.kind"),
    ]


async def test_ratcheting_keeps_unchanged_invalid_values(target: Target) -> None:
    """apiextensions-apiserver pkg/apiserver/schema/ratcheting (CRDValidationRatcheting): an
    update that leaves an already invalid value as it is passes; changing it is validated."""
    props = {"a": {"type": "string"}, "b": {"type": "string"}}
    loose = {"type": "object", "description": unique("ratchet"), "properties": props}
    strict = {
        "type": "object",
        "properties": {"a": {"type": "string", "maxLength": 2}, "b": {"type": "string"}},
    }
    kind = await thing_kind(target, loose)
    created = await target.client.create(thing(kind, target.namespace, {"a": "long"}))
    group = kind[0].split("/")[0]
    crd_kind = ("apiextensions.k8s.io/v1", "CustomResourceDefinition")
    crd = await target.client.get(crd_kind, f"things.{group}")
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"] = strict
    await target.client.update(crd)

    async def strict_now() -> bool:
        try:
            await target.client.create(thing(kind, target.namespace, {"a": "xyz"}))
        except InvalidError:
            return True
        return False

    await eventually(strict_now, 30, describe="the stricter schema is in force")
    created["spec"]["b"] = "changed"
    updated = await target.client.update(created)
    assert updated["spec"] == {"a": "long", "b": "changed"}
    updated["spec"]["a"] = "longer"
    with pytest.raises(InvalidError) as info:
        await target.client.update(updated)
    assert fields(info.value) == [("FieldValueTooLong", "spec.a")]


async def test_selectable_fields(target: Target) -> None:
    """apiextensions-apiserver pkg/registry/customresource/strategy.go (selectableFields serve
    field selectors) and pkg/apis/apiextensions/validation."""
    spec = {"type": "object", "properties": {"color": {"type": "string"}}}
    kind = await thing_kind(target, spec, selectable=["spec.color"])
    ns = target.namespace
    blue, red = unique("blue"), unique("red")
    await target.client.create(thing(kind, ns, {"color": "blue"}, name=blue))
    await target.client.create(thing(kind, ns, {"color": "red"}, name=red))
    listed = await target.client.list(kind, namespace=ns, field_selector="spec.color=blue")
    assert [o["metadata"]["name"] for o in listed["items"]] == [blue]
    with pytest.raises(BadRequestError):
        await target.client.list(kind, namespace=ns, field_selector="spec.size=1")
