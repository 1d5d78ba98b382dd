"""Classes the schema differential fuzzer found, one case each (each failed on the fake before its
fix; the real apiserver answers as asserted).

Upstream: kube-openapi pkg/validation/validate/schema.go (every validator that applies to the
value's kind runs, the type's failure notwithstanding), validators.go (the enum compares after
converting the value to each allowed value's Go type), number_validator.go (a fraction for an
integer fails its integer check; MultipleOfInt for integers), apiextensions-apiserver
pkg/apis/apiextensions/v1/types_jsonschema.go (``Default *JSON``: a null default is none) and
pkg/apis/apiextensions/validation/validation.go (a default validated at its own path).
"""

from __future__ import annotations

from typing import Any

import pytest
from contract_helpers import Target, unique
from schema_helpers import fields, schema_crd, thing, thing_kind

from kubectrl.errors import InvalidError

SPEC: dict[str, Any] = {
    "type": "object",
    "properties": {
        "short": {"type": "string", "not": {"maxLength": 2}},
        "level": {"type": "integer", "nullable": True, "enum": [1, 2]},
        "count": {"type": "integer"},
        "odd": {"type": "integer", "not": {"multipleOf": 2}},
        "nodefault": {"type": "string", "default": None},
    },
}


async def _causes(target: Target, spec: Any) -> list[tuple[str, str]]:
    kind = await thing_kind(target, SPEC)
    with pytest.raises(InvalidError) as caught:
        await target.client.create(thing(kind, target.namespace, spec), dry_run=True)
    return fields(caught.value)


async def test_a_value_of_the_wrong_type_is_checked_by_the_other_validators(
    target: Target,
) -> None:
    assert await _causes(target, {"short": 0}) == [
        ("FieldValueInvalid", "<nil>"),
        ("FieldValueTypeInvalid", "spec.short"),
    ]


async def test_a_fraction_for_an_integer_fails_its_integer_check(target: Target) -> None:
    assert await _causes(target, {"count": 2.5}) == [
        ("FieldValueInvalid", "<nil>"),
        ("FieldValueTypeInvalid", "spec.count"),
    ]


async def test_the_enum_compares_after_go_converts_the_value(target: Target) -> None:
    # 2.5 converted to an integer is 2: only the integer checks fail
    assert await _causes(target, {"level": 2.5}) == [
        ("FieldValueInvalid", "<nil>"),
        ("FieldValueTypeInvalid", "spec.level"),
    ]


async def test_a_null_on_a_nullable_field_is_still_checked_against_the_enum(
    target: Target,
) -> None:
    assert await _causes(target, {"level": None}) == [("FieldValueNotSupported", "spec.level")]


async def test_multiple_of_is_exact_for_integers(target: Target) -> None:
    kind = await thing_kind(target, SPEC)
    odd = 2**63 - 1  # a float would round it to an even number
    created = await target.client.create(thing(kind, target.namespace, {"odd": odd}), dry_run=True)
    assert created["spec"] == {"odd": odd}


async def test_a_null_default_is_no_default(target: Target) -> None:
    kind = await thing_kind(target, SPEC)
    created = await target.client.create(
        thing(kind, target.namespace, {"nodefault": None}), dry_run=True
    )
    assert created["spec"] == {}


async def test_a_default_failing_its_not_is_refused_at_the_default(target: Target) -> None:
    group = f"{unique('d')}.schema.kubectrl.test"
    crd = schema_crd(group, {"type": "string", "not": {"maxLength": 2}, "default": ""})
    with pytest.raises(InvalidError) as caught:
        await target.client.create(crd)
    assert [cause.field for cause in caught.value.causes] == [
        "spec.validation.openAPIV3Schema.properties[spec].default"
    ]


async def test_rules_are_not_run_after_a_blocking_error(target: Target) -> None:
    # a required field missing blocks CEL (hasBlockingErr): the rule's own cause is not there
    schema = {
        "type": "object",
        "required": ["p0"],
        "properties": {"p0": {"type": "string"}},
        "x-kubernetes-validations": [{"rule": "has(self.p0)", "message": "p0 is required"}],
    }
    kind = await thing_kind(target, {"type": "object", "properties": {"v": schema}})
    with pytest.raises(InvalidError) as caught:
        await target.client.create(thing(kind, target.namespace, {"v": {}}), dry_run=True)
    assert fields(caught.value) == [
        ("FieldValueInvalid", "<nil>"),
        ("FieldValueRequired", "spec.v.p0"),
    ]


async def test_a_default_with_unknown_fields_is_refused(target: Target) -> None:
    group = f"{unique('d')}.schema.kubectrl.test"
    crd = schema_crd(group, {"type": "string", "default": {"x": 1}})
    with pytest.raises(InvalidError) as caught:
        await target.client.create(crd)
    messages = [cause.message for cause in caught.value.causes]
    assert len(messages) == 2
    assert messages[0].endswith("must not have unknown fields")


async def test_a_defaults_rules_run_only_when_its_schema_found_nothing(target: Target) -> None:
    group = f"{unique('d')}.schema.kubectrl.test"
    schema = {
        "type": "object",
        "properties": {"p0": {"type": "string"}},
        "x-kubernetes-validations": [{"rule": "has(self.p0)", "message": "p0 is required"}],
        "default": "",
    }
    with pytest.raises(InvalidError) as caught:
        await target.client.create(schema_crd(group, schema))
    # the type error alone: no note that rules were not checked
    assert [cause.type for cause in caught.value.causes] == ["FieldValueTypeInvalid"]


async def test_identical_errors_are_reported_once(target: Target) -> None:
    schema = {
        "type": "object",
        "required": ["p0"],
        "properties": {"p0": {"type": "string"}},
        "allOf": [{"required": ["p0"]}],
    }
    kind = await thing_kind(target, {"type": "object", "properties": {"v": schema}})
    with pytest.raises(InvalidError) as caught:
        await target.client.create(thing(kind, target.namespace, {"v": {}}), dry_run=True)
    assert fields(caught.value) == [
        ("FieldValueInvalid", "<nil>"),
        ("FieldValueRequired", "spec.v.p0"),
    ]
    assert caught.value.causes[1].message.endswith("(allOf). None validated")


async def test_a_rule_under_a_map_names_the_entry_by_its_key(target: Target) -> None:
    entry = {
        "type": "object",
        "properties": {
            "n": {"type": "number", "x-kubernetes-validations": [{"rule": "self < 10"}]}
        },
    }
    schema = {"type": "object", "additionalProperties": entry}
    kind = await thing_kind(target, {"type": "object", "properties": {"v": schema}})
    with pytest.raises(InvalidError) as caught:
        await target.client.create(
            thing(kind, target.namespace, {"v": {"a": {"n": 12}}}), dry_run=True
        )
    assert fields(caught.value) == [("FieldValueInvalid", "spec.v[a].n")]


async def test_an_embedded_defaults_kind_and_api_version_are_checked_first(
    target: Target,
) -> None:
    group = f"{unique('d')}.schema.kubectrl.test"
    schema = {
        "type": "object",
        "x-kubernetes-embedded-resource": True,
        "x-kubernetes-preserve-unknown-fields": True,
        "anyOf": [{"required": ["p1"]}],
        "default": {"zz": 1},
    }
    with pytest.raises(InvalidError) as caught:
        await target.client.create(schema_crd(group, schema))
    prefix = "spec.validation.openAPIV3Schema.properties[spec].default"
    assert [cause.field for cause in caught.value.causes] == [
        f"{prefix}.apiVersion",
        f"{prefix}.kind",
    ]


async def test_an_int_or_string_default_is_not_type_checked(target: Target) -> None:
    # accepted with the CRD; the object it defaults is what fails
    kind = await thing_kind(
        target,
        {
            "type": "object",
            "properties": {"v": {"x-kubernetes-int-or-string": True, "default": 2.5}},
        },
    )
    with pytest.raises(InvalidError) as caught:
        await target.client.create(thing(kind, target.namespace, {}), dry_run=True)
    assert fields(caught.value) == [("FieldValueTypeInvalid", "spec.v")]


async def test_a_string_with_a_format_takes_an_array(target: Target) -> None:
    # kube-openapi's typeValidator leaves strings and slices to the format validator
    schema = {"type": "string", "format": "hostname"}
    kind = await thing_kind(target, {"type": "object", "properties": {"v": schema}})
    created = await target.client.create(thing(kind, target.namespace, {"v": ["a"]}), dry_run=True)
    assert created["spec"] == {"v": ["a"]}
    with pytest.raises(InvalidError) as caught:
        await target.client.create(thing(kind, target.namespace, {"v": True}), dry_run=True)
    assert caught.value.causes[0].message.endswith('must be of type hostname: ""')


async def test_every_default_of_a_structural_schema_is_validated(target: Target) -> None:
    group = f"{unique('d')}.schema.kubectrl.test"
    schema = {
        "type": "object",
        "properties": {
            "p0": {
                "type": "object",
                "required": ["p1"],
                "properties": {"p1": {"type": "string"}},
                "default": {},
            },
        },
        "default": {"p0": {}},
    }
    with pytest.raises(InvalidError) as caught:
        await target.client.create(schema_crd(group, schema))
    prefix = "spec.validation.openAPIV3Schema.properties[spec]"
    assert sorted(cause.field for cause in caught.value.causes) == [
        f"{prefix}.default.p0.p1",
        f"{prefix}.properties[p0].default.p1",
    ]


async def test_old_self_cannot_be_used_inside_a_list_that_is_not_a_map(target: Target) -> None:
    group = f"{unique('d')}.schema.kubectrl.test"
    item = {
        "type": "string",
        "maxLength": 10,
        "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "immutable"}],
    }
    schema = {"type": "array", "x-kubernetes-list-type": "set", "maxItems": 1, "items": item}
    with pytest.raises(InvalidError) as caught:
        await target.client.create(schema_crd(group, schema))
    assert [cause.field for cause in caught.value.causes] == [
        "spec.validation.openAPIV3Schema.properties[spec].items.x-kubernetes-validations[0].rule"
    ]


async def test_a_float_for_a_stored_integer_moves_the_generation(target: Target) -> None:
    # the strategy compares the decoded float 3.0 with the stored 3; 3 is what is stored
    kind = await thing_kind(target, {"type": "object", "properties": {"n": {"type": "number"}}})
    created = await target.client.create(thing(kind, target.namespace, {"n": 3}))
    created["spec"]["n"] = 3.0
    updated = await target.client.update(created)
    assert updated["spec"] == {"n": 3}
    assert updated["metadata"]["generation"] == created["metadata"]["generation"] + 1


async def test_the_paths_of_a_list_defaults_errors(target: Target) -> None:
    group = f"{unique('d')}.schema.kubectrl.test"
    items = {"type": "object", "properties": {"n": {"type": "integer", "multipleOf": 2}}}
    crd = schema_crd(group, {"type": "array", "items": items, "default": [{"n": 1}]})
    with pytest.raises(InvalidError) as caught:
        await target.client.create(crd)
    assert [cause.field for cause in caught.value.causes] == [
        "spec.validation.openAPIV3Schema.properties[spec].default.[0].n"
    ]
    assert "<root>" not in caught.value.causes[0].message
