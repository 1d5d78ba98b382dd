"""Random structural schemas round-trip: from_crd, import, crd.generate give the schema back."""

from __future__ import annotations

import string
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubectrl import models

from . import corpus

_NAMES = st.one_of(
    st.text(string.ascii_letters, min_size=1, max_size=8),
    st.sampled_from(
        ["class", "from", "hostIP", "x-y", "a.b", "9x", "$ref", "schema", "json", "fooBar",
         "foo_bar", "URL", "int", "Any", "model_x", "_p", "isCA", "podIp", "kind", "type"]
    ),
)  # fmt: skip


def _scalar() -> st.SearchStrategy[dict[str, Any]]:
    strings = st.fixed_dictionaries(
        {"type": st.just("string")},
        optional={
            "maxLength": st.integers(1, 50),
            "pattern": st.sampled_from(["^[a-z]+$", "^x-[0-9]*$"]),
            "format": st.sampled_from(["date-time", "byte", "uri"]),
            "enum": st.lists(st.text(string.ascii_lowercase, min_size=1), min_size=1, unique=True),
            "nullable": st.just(True),
            "description": st.text(max_size=30),
        },
    )
    integers = st.fixed_dictionaries(
        {"type": st.just("integer")},
        optional={
            "minimum": st.integers(-5, 0),
            "maximum": st.integers(1, 5),
            "format": st.sampled_from(["int32", "int64"]),
            "default": st.integers(1, 1),
        },
    )
    numbers = st.fixed_dictionaries(
        {"type": st.just("number")},
        optional={"multipleOf": st.just(0.5), "enum": st.just([0.5, 1])},
    )
    others = st.sampled_from(
        [
            {"type": "boolean", "default": True},
            {
                "anyOf": [{"type": "integer"}, {"type": "string"}],
                "x-kubernetes-int-or-string": True,
            },
            {"x-kubernetes-preserve-unknown-fields": True},
            {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            {"type": "object"},
        ]
    )
    return st.one_of(strings, integers, numbers, others)


def _node(depth: int) -> st.SearchStrategy[dict[str, Any]]:
    if depth == 0:
        return _scalar()
    child = _node(depth - 1)
    objects = st.dictionaries(_NAMES, child, min_size=1, max_size=4).flatmap(
        lambda properties: st.fixed_dictionaries(
            {"type": st.just("object"), "properties": st.just(properties)},
            optional={
                "required": st.lists(st.sampled_from(sorted(properties)), unique=True, min_size=1),
                "x-kubernetes-validations": st.just([{"rule": "true", "message": "m"}]),
                "oneOf": st.just([{"required": [sorted(properties)[0]]}]),
            },
        )
    )
    arrays = st.builds(lambda items: {"type": "array", "items": items, "maxItems": 3}, child)
    maps = st.builds(lambda value: {"type": "object", "additionalProperties": value}, child)
    return st.one_of(_scalar(), objects, arrays, maps)


def _crd(spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "things.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"kind": "Thing", "plural": "things"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec}}},
                }
            ],
        },
    }


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(spec=_node(3))
def test_random_schemas_round_trip(spec: dict[str, Any], tmp_path: Path) -> None:
    definition = _crd(spec)
    module = corpus.load(corpus.write(definition, tmp_path))
    expected = corpus.comparable(definition)
    actual = corpus.comparable(corpus.regenerated(definition, module))
    assert expected == actual, "\n".join(corpus.differences(expected, actual))
    assert models.from_crd(definition).count("class Thing(") == 1
