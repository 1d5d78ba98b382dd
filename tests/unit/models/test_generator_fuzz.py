"""Fuzzing the model generator with hostile schemas: random and hostile property names (control
characters, names that NFKC-normalise to keywords, builtins or pydantic's attributes, dunders,
empty, very long), descriptions, enums, defaults and patterns. Every module parses, holds exactly
the names intended, imports without side effects (nothing printed, written or imported beyond
the generator's own imports) and gives back the CRD and a valid object."""

from __future__ import annotations

import ast
import builtins
import keyword
import re
import sys
import types
import unicodedata
from datetime import timedelta
from pathlib import Path
from typing import Any

import pydantic
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubectrl import models

from . import corpus

_SENTINEL = Path("/nonexistent-kubectrl-fuzz-sentinel")
_INJECTIONS = [
    f"x\nimport pathlib; pathlib.Path({str(_SENTINEL)!r}).touch()\n#",
    f"x\r    import pathlib; pathlib.Path({str(_SENTINEL)!r}).touch()  #",
    "x\u2028print('pwned')",
    'x"""\nprint("pwned")\n"""',
    "x\\\nprint('pwned')",
]


def _fullwidth(text: str) -> str:
    """``text`` in fullwidth letters (NFKC gives ``text`` back)."""
    return "".join(chr(ord(c) + 0xFEE0) if c.isalpha() else c for c in text)


def _bold(text: str) -> str:
    """``text`` in mathematical-bold letters (NFKC gives ``text`` back)."""
    return "".join(chr(0x1D41A + ord(c) - ord("a")) if c.isalpha() else c for c in text)


_HOSTILE_NAMES = [
    "_", "__", "__init__", "__class__", "__dict__", "class", "None", "True", "import",
    _bold("class"), _fullwidth("int"), _fullwidth("none"), _fullwidth("model_config"),
    _bold("model_fields"), _fullwidth("replicas"), _bold("import"), _fullwidth("__init__"),
    "replicas", "model_config", "model_fields", "model_validate", "copy", "dict", "json",
    "schema", "validate", "construct", "Field", "Annotated", "Any", "str", "int", "rules",
    "\u00bd", "\u210c", "\ufb01", "\x00", "\u202e", "a\x00b", "\ufeff", "a" * 300, "fooBar",
    "foo_bar", "isCA", "hostIP", "9lives", "a-b", "a.b", "$ref", "名前",
    *_INJECTIONS,
]  # fmt: skip
_NAMES = st.one_of(st.sampled_from(_HOSTILE_NAMES), st.text(max_size=12))
_TEXT = st.one_of(
    st.text(max_size=30),
    st.sampled_from(
        ['"""', "\\", '\\"""', "\x00", "\r\n", "a\u2028b", "\u202e", "'''", *_INJECTIONS]
    ),
)
_PATTERNS = st.sampled_from(
    ["^[a-z]+$", '^a"""b$', "^\\\\$", "^[\\x00-\\x1f]*$", "^\u202e$", "^\\n$", "^'\"$"]
)


def _default_fits(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema without its default when the default breaks it: the API server refuses such a
    CRD (apiextensions-apiserver pkg/apiserver/schema/defaulting/validation.go), and so does
    kubectrl.crd.generate, so no real CRD has one."""
    if "default" not in schema:
        return schema
    default = schema["default"]
    fits = (
        ("enum" not in schema or default in schema["enum"])
        and ("maxLength" not in schema or len(default) <= schema["maxLength"])
        and ("pattern" not in schema or re.search(schema["pattern"], default) is not None)
    )
    return schema if fits else {k: v for k, v in schema.items() if k != "default"}


def _string() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {"type": st.just("string")},
        optional={
            "description": _TEXT,
            "enum": st.lists(_TEXT, min_size=1, max_size=4, unique=True),
            "default": _TEXT,
            "pattern": _PATTERNS,
            "maxLength": st.integers(0, 5),
        },
    ).map(_default_fits)


def _leaf() -> st.SearchStrategy[dict[str, Any]]:
    integers = st.fixed_dictionaries(
        {"type": st.just("integer")},
        optional={"description": _TEXT, "maximum": st.integers(0, 5), "default": st.just(0)},
    )
    oddities = st.sampled_from(
        [
            # What the generator cannot express: kept as any JSON, with a comment naming it.
            {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
            {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            {"type": "number", "enum": [0.5, 1]},
        ]
    )
    return st.one_of(_string(), integers, oddities)


def _object(child: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    return st.dictionaries(_NAMES, child, min_size=1, max_size=5).flatmap(
        lambda properties: st.fixed_dictionaries(
            {"type": st.just("object"), "properties": st.just(properties)},
            optional={
                "description": _TEXT,
                "required": st.lists(st.sampled_from(sorted(properties)), unique=True),
                "x-kubernetes-validations": st.lists(
                    st.fixed_dictionaries(
                        {"rule": _TEXT}, optional={"message": _TEXT.filter(bool)}
                    ),
                    min_size=1,
                    max_size=2,
                ),
            },
        )
    )


_SPEC = _object(st.one_of(_leaf(), _object(_leaf())))


def _crd(spec: dict[str, Any], kind: str) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "things.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"kind": kind, "plural": "things"},
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


_ALLOWED_IMPORTS = {"typing", "pydantic", "kubectrl.resources"}


def _exec_fresh(text: str, name: str) -> types.ModuleType:
    """Run the module in a fresh namespace whose builtins refuse side effects: printing,
    opening files, and importing anything but the generator's usual imports."""
    imported: list[str] = []

    def guarded_import(module: str, *args: Any, **kwargs: Any) -> Any:
        imported.append(module)
        assert module in _ALLOWED_IMPORTS, f"the module imported {module!r}"
        return builtins.__import__(module, *args, **kwargs)

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"the module called a side effect: {args!r}")

    guarded = dict(vars(builtins))
    guarded.update(
        __import__=guarded_import, print=refused, open=refused, exec=refused, eval=refused
    )
    module = types.ModuleType(name)
    module.__dict__["__builtins__"] = guarded
    sys.modules[name] = module
    try:
        exec(compile(text, f"<{name}>", "exec"), module.__dict__)
    except BaseException:
        del sys.modules[name]
        raise
    assert set(imported) <= _ALLOWED_IMPORTS
    return module


def _value(schema: dict[str, Any]) -> Any:
    """A value the schema accepts (None: leave the property out)."""
    if schema.get("type") == "object" and "properties" in schema:
        return {
            wire: value
            for wire, sub in schema["properties"].items()
            if (value := _value(sub)) is not None
        }
    if schema.get("type") == "integer":
        return 0
    if schema.get("type") == "array":
        return []
    if schema.get("type") == "number":
        return 1
    if schema.get("type") == "object":
        return {}
    if schema.get("type") == "string" and "pattern" not in schema:
        if "enum" in schema:
            candidates = schema["enum"]
        else:
            candidates = [schema["default"]] if "default" in schema else [""]
        limit = schema.get("maxLength")
        fitting = [c for c in candidates if limit is None or len(c) <= limit]
        return fitting[0] if fitting else None
    return None


def _satisfiable(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with only the required properties :func:`_value` can give a value."""
    if "properties" not in schema:
        return schema
    properties = {wire: _satisfiable(sub) for wire, sub in schema["properties"].items()}
    out = {**schema, "properties": properties}
    required = [r for r in schema.get("required", []) if _value(properties[r]) is not None]
    out.pop("required", None)
    if required:
        out["required"] = required
    return out


def _kept_as_any(schema: dict[str, Any]) -> dict[str, Any]:
    if "uniqueItems" in schema:
        return {"x-kubernetes-preserve-unknown-fields": True}
    if "properties" not in schema:
        return schema
    properties = {wire: _kept_as_any(sub) for wire, sub in schema["properties"].items()}
    return {**schema, "properties": properties}


def _check_names(cls: type[pydantic.BaseModel], wires: list[str]) -> None:
    fields = cls.model_fields
    assert len(fields) == len(wires)
    assert {name if info.alias is None else info.alias for name, info in fields.items()} == set(
        wires
    )
    for name in fields:
        assert name.isascii()
        assert name.isidentifier()
        assert unicodedata.normalize("NFKC", name) == name
        assert not keyword.iskeyword(name)
        assert not name.startswith(("_", "model_"))
        assert name not in dir(pydantic.BaseModel)


@settings(
    max_examples=200,
    deadline=timedelta(seconds=10),  # a hang guard, not a timing assertion
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    spec=_SPEC, kind=st.sampled_from(["Thing", "none", "class", "½", "Field", _fullwidth("thing")])
)
def test_hostile_schemas_give_exactly_the_intended_module(spec: dict[str, Any], kind: str) -> None:
    spec = _satisfiable(spec)
    definition = _crd(spec, kind)
    text = models.from_crd(definition)
    assert "\x00" not in text
    tree = ast.parse(text)
    assert not [node for node in ast.walk(tree) if isinstance(node, ast.Import)]
    top = [node for node in tree.body if not isinstance(node, ast.Expr)]
    assert all(isinstance(node, (ast.ImportFrom, ast.ClassDef)) for node in top)
    assert {n.module for n in top if isinstance(n, ast.ImportFrom)} <= _ALLOWED_IMPORTS

    name = f"_kubectrl_fuzz_{abs(hash(text))}"
    module = _exec_fresh(text, name)
    try:
        assert not _SENTINEL.exists()
        (resource,) = corpus.resources(module)
        assert resource.__kubectrl_resource__.kind == kind
        spec_class = resource.model_fields["spec"].annotation.__args__[0]  # type: ignore[union-attr]
        _check_names(spec_class, list(spec["properties"]))
        classes = {
            cls.__name__
            for cls in vars(module).values()
            if isinstance(cls, type) and cls.__module__ == name
        }
        assert classes == {n.name for n in top if isinstance(n, ast.ClassDef)}

        # The CRD back from the models, as the round-trip tests compare it.
        # (what the generator cannot express is kept as any JSON, as its comment says).
        expected = corpus.comparable(_crd(_kept_as_any(spec), kind))
        actual = corpus.comparable(corpus.regenerated(definition, module))
        assert expected == actual, "\n".join(corpus.differences(expected, actual))

        # A valid object: validated and dumped back unchanged.
        body = _value(spec)
        thing = resource.model_validate({"spec": body})
        assert thing.model_dump(by_alias=True, exclude_unset=True)["spec"] == body
    finally:
        del sys.modules[name]
