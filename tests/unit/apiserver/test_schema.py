"""Unit cases of the API core's structural-schema, RE2 and CEL modules (the contract suite
compares them with kube-apiserver; these pin what it cannot show)."""

from __future__ import annotations

import sys

import pytest

from kubectrl.apiserver._schema import cel
from kubectrl.apiserver._schema import re2 as _re2
from kubectrl.apiserver._schema import structural as _schema
from kubectrl.apiserver._status import FeatureNotImplementedError


def test_a_missing_engine_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without google-re2 a pattern raises FeatureNotImplementedError naming kubectrl[testing]."""
    _re2._engine.cache_clear()
    _re2.compile_pattern.cache_clear()
    monkeypatch.setitem(sys.modules, "re2", None)  # import re2 fails
    try:
        with pytest.raises(FeatureNotImplementedError, match=r"kubectrl\[testing\]"):
            _re2.search("^a$", "a")
    finally:
        monkeypatch.undo()
        _re2._engine.cache_clear()
    assert _re2.search("^a$", "a")


def test_a_lacking_cel_function_is_named_never_passed() -> None:
    """A rule calling a Kubernetes library function the fake lacks raises when it runs."""
    schema = {"type": "string", "x-kubernetes-validations": [{"rule": "isURL(self)"}]}
    with pytest.raises(FeatureNotImplementedError, match=r"isURL"):
        _schema.validate(schema, "https://example.com")


def test_an_unknown_function_does_not_compile() -> None:
    with pytest.raises(cel.CompileError, match="undeclared reference to 'nope'"):
        cel.compile_rule("self.nope()")


def test_ratcheting_skips_unchanged_values_only() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string", "maxLength": 1}}}
    assert _schema.validate(schema, {"a": "long"}, old={"a": "long"}) == []
    assert [c[1] for c in _schema.validate(schema, {"a": "longer"}, old={"a": "long"})] == ["a"]


def test_null_in_a_list_is_a_type_error_unless_nullable() -> None:
    items = {"type": "array", "items": {"type": "string"}}
    assert [c[0] for c in _schema.validate(items, [None])] == ["FieldValueTypeInvalid"]
    nullable = {"type": "array", "items": {"type": "string", "nullable": True}}
    assert _schema.validate(nullable, [None]) == []
