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
from contract_helpers import Target, kubernetes_at_least, unique
from schema_helpers import fields, schema_crd, thing, thing_kind

from kubectrl.errors import BadRequestError, InvalidError

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


def _integer_check() -> list[tuple[str, str]]:
    """The number validator's integer check, from 1.36 (kube-openapi pkg/validation/validate/
    schema.go passes it the type and format since 43fb72c5454a; 1.35's 589584f1c912 does not)."""
    return [("FieldValueInvalid", "<nil>")] if kubernetes_at_least("1.36") else []


async def test_a_fraction_for_an_integer_fails_its_integer_check(target: Target) -> None:
    assert await _causes(target, {"count": 2.5}) == [
        *_integer_check(),
        ("FieldValueTypeInvalid", "spec.count"),
    ]


async def test_the_enum_compares_after_go_converts_the_value(target: Target) -> None:
    # 2.5 converted to an integer is 2: only the integer checks fail
    assert await _causes(target, {"level": 2.5}) == [
        *_integer_check(),
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
    generation = created["metadata"]["generation"]
    created["spec"]["n"] = 3.0
    updated = await target.client.update(created)  # refreshes ``created`` too
    assert updated["spec"] == {"n": 3}
    assert updated["metadata"]["generation"] == generation + 1


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


# ------------------------------------------------------------- embedded resources and list maps
#
# Upstream: apiextensions-apiserver pkg/registry/customresource/strategy.go (schema errors, then
# objectmeta's, then the list types'; CEL rules run unless one of them is a "blocking" type:
# Required among them), pkg/apiserver/schema/objectmeta/validation.go (validateEmbeddedResource:
# a missing apiVersion/kind is Required, an empty one Invalid, and the metadata is validated as
# an object's) and algorithm.go (Coerce, in the request's decoder: a non-string apiVersion/kind
# or a metadata that is not an ObjectMeta is a 400), pkg/apiserver/schema/listtype/validation.go.

EMBEDDED: dict[str, Any] = {
    "type": "object",
    "properties": {
        "e": {
            "type": "object",
            "x-kubernetes-embedded-resource": True,
            "properties": {"x": {"type": "integer"}},
            "x-kubernetes-validations": [{"rule": "self.x > 0"}],
        }
    },
}
RESOURCE = {"apiVersion": "v1", "kind": "A", "x": 1}


async def _embedded_causes(target: Target, e: Any) -> list[tuple[str, str]]:
    kind = await thing_kind(target, EMBEDDED)
    with pytest.raises(InvalidError) as caught:
        await target.client.create(thing(kind, target.namespace, {"e": e}), dry_run=True)
    return fields(caught.value)


async def test_a_missing_api_version_keeps_an_embedded_resources_rules_from_running(
    target: Target,
) -> None:
    assert await _embedded_causes(target, {"kind": "A", "x": -1}) == [
        ("FieldValueInvalid", "<nil>"),
        ("FieldValueRequired", "spec.e.apiVersion"),
    ]


@pytest.mark.parametrize(
    ("field", "value"),
    [("apiVersion", ""), ("kind", ""), ("apiVersion", "a/b/c"), ("kind", "A_b")],
)
async def test_an_empty_or_malformed_type_meta_is_invalid_and_the_rules_still_run(
    target: Target, field: str, value: str
) -> None:
    assert await _embedded_causes(target, {**RESOURCE, field: value, "x": -1}) == [
        ("FieldValueInvalid", "spec.e"),
        ("FieldValueInvalid", f"spec.e.{field}"),
    ]


@pytest.mark.parametrize(
    ("metadata", "field"),
    [
        ({"name": "a/b"}, "name"),
        ({"name": ".."}, "name"),
        ({"generateName": "b%"}, "generateName"),
        ({"namespace": "Bad"}, "namespace"),
        ({"labels": {"a": "b c"}}, "labels"),
        ({"annotations": {"a b": "c"}}, "annotations"),
        ({"finalizers": ["a b"]}, "finalizers"),
        ({"generation": -1}, "generation"),
    ],
)
async def test_an_embedded_resources_metadata_is_validated(
    target: Target, metadata: dict[str, Any], field: str
) -> None:
    assert await _embedded_causes(target, {**RESOURCE, "metadata": metadata}) == [
        ("FieldValueInvalid", f"spec.e.metadata.{field}")
    ]


async def test_an_embedded_resources_metadata_keeps_only_object_meta_and_allows_what_it_may(
    target: Target,
) -> None:
    kind = await thing_kind(target, EMBEDDED)
    metadata = {"name": "ok", "generateName": "A_", "finalizers": ["abc"], "extra": 1}
    created = await target.client.create(
        thing(kind, target.namespace, {"e": {**RESOURCE, "metadata": metadata}}), dry_run=True
    )
    assert created["spec"]["e"]["metadata"] == {
        "name": "ok",
        "generateName": "A_",
        "finalizers": ["abc"],
    }


@pytest.mark.parametrize(
    ("e", "detail"),
    [
        ({**RESOURCE, "apiVersion": 5}, "spec.e.apiVersion: Invalid value: 5: must be a string"),
        ({**RESOURCE, "kind": ["A"]}, 'spec.e.kind: Invalid value: ["A"]: must be a string'),
        (
            {**RESOURCE, "metadata": 5},
            "spec.e.metadata: Invalid value: 5: json: cannot unmarshal number into Go value of "
            "type v1.ObjectMeta",
        ),
        (
            {**RESOURCE, "metadata": {"uid": 5}},
            'spec.e.metadata: Invalid value: {"uid":5}: json: cannot unmarshal number into Go '
            "struct field ObjectMeta.uid of type types.UID",
        ),
    ],
)
async def test_an_embedded_resource_that_does_not_decode_is_a_bad_request(
    target: Target, e: Any, detail: str
) -> None:
    kind = await thing_kind(target, EMBEDDED)
    with pytest.raises(BadRequestError) as caught:
        await target.client.create(thing(kind, target.namespace, {"e": e}), dry_run=True)
    assert caught.value.server_message == (
        f'Thing in version "v1" cannot be handled as a Thing: {detail}'
    )


async def test_a_list_map_item_that_is_not_an_object_is_reported_by_the_list_type_too(
    target: Target,
) -> None:
    items = {"type": "object", "properties": {"k": {"type": "string"}}, "required": ["k"]}
    schema = {
        "type": "array",
        "items": items,
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["k"],
    }
    kind = await thing_kind(target, {"type": "object", "properties": {"v": schema}})
    with pytest.raises(InvalidError) as caught:
        await target.client.create(thing(kind, target.namespace, {"v": ["a", 1]}), dry_run=True)
    # the schema's type error for each item, the list type's for the first only
    assert fields(caught.value) == [
        ("FieldValueInvalid", "spec.v[0]"),
        ("FieldValueTypeInvalid", "spec.v[0]"),
        ("FieldValueTypeInvalid", "spec.v[1]"),
    ]


async def test_a_list_maps_duplicate_is_reported_once_at_its_second_appearance(
    target: Target,
) -> None:
    key = {"type": "string", "default": "d"}  # a map list's key is required or defaulted
    schema = {
        "type": "array",
        "items": {"type": "object", "properties": {"k": key}},
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["k"],
    }
    kind = await thing_kind(target, {"type": "object", "properties": {"v": schema}})
    value = [{"k": "a"}, {"k": "a"}, {"k": "a"}, {}, {}]
    with pytest.raises(InvalidError) as caught:
        await target.client.create(thing(kind, target.namespace, {"v": value}), dry_run=True)
    assert fields(caught.value) == [
        ("FieldValueDuplicate", "spec.v[1]"),
        ("FieldValueDuplicate", "spec.v[4]"),
    ]


async def test_an_embedded_defaults_metadata_is_not_pruned_before_its_checks(
    target: Target,
) -> None:
    # defaulting/validation.go: the pruning check leaves a resource's metadata to objectmeta
    # (which drops unknown fields), so only the missing apiVersion is reported
    group = f"{unique('d')}.schema.kubectrl.test"
    schema = {
        "type": "object",
        "x-kubernetes-embedded-resource": True,
        "x-kubernetes-preserve-unknown-fields": True,
        "default": {"kind": "Thing", "metadata": {"name": "n", "junk": 1}},
    }
    with pytest.raises(InvalidError) as caught:
        await target.client.create(schema_crd(group, schema))
    prefix = "spec.validation.openAPIV3Schema.properties[spec].default"
    assert [cause.field for cause in caught.value.causes] == [f"{prefix}.apiVersion"]
