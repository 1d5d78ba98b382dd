"""CEL validation rules (``x-kubernetes-validations``) of custom resources.

Upstream: apiextensions-apiserver pkg/apiserver/schema/cel/validation.go (rules, messages,
messageExpression, reason, fieldPath, transition rules and optionalOldSelf), k8s.io/apiserver
pkg/cel/library (lists, regex), and pkg/apis/apiextensions/validation/validation.go (a rule
that does not compile makes the CRD invalid).
"""

from __future__ import annotations

from typing import Any

import pytest
from contract_helpers import Target
from schema_helpers import fields, schema_crd, thing, thing_kind

from kubectrl.errors import InvalidError

SPEC: dict[str, Any] = {
    "type": "object",
    "x-kubernetes-validations": [
        {"rule": "self.min <= self.max", "message": "min must not exceed max"},
        {
            "rule": "self.name.startsWith('a')",
            "messageExpression": "'name ' + self.name + ' must start with a'",
            "reason": "FieldValueForbidden",
            "fieldPath": ".name",
        },
        {"rule": "self.tags.isSorted()"},
        {"rule": "self.name == oldSelf.name", "message": "name is immutable"},
        {
            "rule": "!oldSelf.hasValue() || self.min >= oldSelf.value().min",
            "optionalOldSelf": True,
            "message": "min cannot shrink",
        },
    ],
    "properties": {
        "min": {"type": "integer"},
        "max": {"type": "integer"},
        "name": {"type": "string", "maxLength": 10},
        "tags": {"type": "array", "maxItems": 10, "items": {"type": "string", "maxLength": 10}},
        "word": {
            "type": "string",
            "maxLength": 10,
            "x-kubernetes-validations": [{"rule": "self.matches('^[a-z]+$')"}],
        },
    },
}
VALID = {"min": 1, "max": 5, "name": "ab", "tags": ["a", "b"], "word": "abc"}


async def test_rules_messages_reasons_and_field_paths(target: Target) -> None:
    """pkg/apiserver/schema/cel/validation.go: every failing rule is a cause at its node (or
    its fieldPath), with its message, messageExpression and reason."""
    kind = await thing_kind(target, SPEC)
    bad = {"min": 5, "max": 1, "name": "b", "tags": ["b", "a"], "word": "A"}
    with pytest.raises(InvalidError) as info:
        await target.client.create(thing(kind, target.namespace, bad))
    causes = {(c.type, c.field, c.message) for c in info.value.causes}
    assert causes == {
        ("FieldValueInvalid", "spec", "Invalid value: min must not exceed max"),
        ("FieldValueForbidden", "spec.name", "Forbidden: name b must start with a"),
        ("FieldValueInvalid", "spec", "Invalid value: failed rule: self.tags.isSorted()"),
        (
            "FieldValueInvalid",
            "spec.word",
            "Invalid value: \"A\": failed rule: self.matches('^[a-z]+$')",
        ),
    }


async def test_transition_rules(target: Target) -> None:
    """Transition rules (oldSelf) run on updates only; optionalOldSelf ones on creates too."""
    kind = await thing_kind(target, SPEC)
    created = await target.client.create(thing(kind, target.namespace, VALID))
    created["spec"]["name"] = "ac"
    created["spec"]["min"] = 0
    with pytest.raises(InvalidError) as info:
        await target.client.update(created)
    assert {(c.field, c.message) for c in info.value.causes} == {
        ("spec", "Invalid value: name is immutable"),
        ("spec", "Invalid value: min cannot shrink"),
    }


async def test_a_rule_that_does_not_compile_makes_the_crd_invalid(target: Target) -> None:
    """pkg/apis/apiextensions/validation/validation.go: compilation failed."""
    spec = {
        "type": "object",
        "x-kubernetes-validations": [{"rule": "self.min <"}],
        "properties": {"min": {"type": "integer"}},
    }
    crd = schema_crd("celbad.schema.kubectrl.test", spec)
    with pytest.raises(InvalidError) as info:
        await target.client.create(crd)
    assert fields(info.value) == [
        (
            "FieldValueInvalid",
            "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule",
        )
    ]
    assert "compilation failed" in info.value.causes[0].message


@pytest.mark.known_difference(
    "CEL functions of the Kubernetes url, ip, cidr, semver and format libraries: cel-python "
    "has none of them, and the fake names the function rather than guess"
)
async def test_kubernetes_url_library(target: Target) -> None:
    """k8s.io/apiserver pkg/cel/library/urls.go: the fake names the function it lacks."""
    spec = {
        "type": "object",
        "properties": {
            "u": {
                "type": "string",
                "maxLength": 100,
                "x-kubernetes-validations": [{"rule": "url(self).getHost() == 'example.com'"}],
            }
        },
    }
    kind = await thing_kind(target, spec)
    created = await target.client.create(
        thing(kind, target.namespace, {"u": "https://example.com/x"})
    )
    assert created["spec"]["u"] == "https://example.com/x"


async def test_kubernetes_quantity_library(target: Target) -> None:
    """k8s.io/apiserver pkg/cel/library/quantity.go: quantities compared by value; isInteger()
    as Quantity.AsInt64 reads it (1000m is not an integer there)."""
    rules = [
        {"rule": "isQuantity(self)", "message": "not a quantity"},
        {"rule": "!isQuantity(self) || quantity(self).isLessThan(quantity('2Gi'))"},
        {"rule": "!isQuantity(self) || quantity(self).add(1).compareTo(quantity('1')) > 0"},
    ]
    spec = {
        "type": "object",
        "properties": {
            "q": {"type": "string", "maxLength": 20, "x-kubernetes-validations": rules},
            "n": {
                "type": "string",
                "maxLength": 20,
                "x-kubernetes-validations": [
                    {"rule": "quantity(self).isInteger() && quantity(self).asInteger() == 1"}
                ],
            },
        },
    }
    kind = await thing_kind(target, spec)
    ok = thing(kind, target.namespace, {"q": "1500Mi", "n": "1"})
    assert (await target.client.create(ok, dry_run=True))["spec"]["q"] == "1500Mi"
    with pytest.raises(InvalidError) as info:
        await target.client.create(
            thing(kind, target.namespace, {"q": "3Gi", "n": "1000m"}), dry_run=True
        )
    assert fields(info.value) == [
        ("FieldValueInvalid", "spec.n"),
        ("FieldValueInvalid", "spec.q"),
    ]
    with pytest.raises(InvalidError) as info:
        await target.client.create(thing(kind, target.namespace, {"q": "abc"}), dry_run=True)
    assert fields(info.value) == [("FieldValueInvalid", "spec.q")]
