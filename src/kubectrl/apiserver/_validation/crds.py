"""Validation of a CustomResourceDefinition itself, as the apiserver admits one.

A subset of apiextensions-apiserver ``pkg/apis/apiextensions/validation/validation.go``
(``ValidateCustomResourceDefinition``) and of the structural-schema rules
(``pkg/apiserver/schema/validation.go``): the name is ``<plural>.<group>``; exactly one version
is the storage version; the root of a schema is an object; every field has a ``type`` (unless
``x-kubernetes-int-or-string`` or ``x-kubernetes-preserve-unknown-fields`` stands for it) and a
known one; no ``$ref``, no ``uniqueItems: true``, not both ``properties`` and
``additionalProperties``; ``metadata`` only constrains ``name``/``generateName``; patterns
compile with RE2; map lists name their keys; defaults are valid against their own schema; CEL
rules compile. Anything else is accepted as it is.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

from kubectrl.apiserver._schema import cel, re2
from kubectrl.apiserver._schema import structural as _schema

__all__ = ["admit"]

Cause = tuple[str, str, str]
_TYPES = ("array", "boolean", "integer", "number", "object", "string")
_COMBINERS = ("allOf", "anyOf", "oneOf")


def admit(crd: Mapping[str, Any]) -> list[Cause]:
    """The causes for which the apiserver refuses ``crd`` (empty: it is accepted).

    ``crd`` is first read as the apiserver decodes it, in place: a ``default: null`` is no
    default (``JSONSchemaProps.Default`` is a ``*JSON``, nil for a JSON null).
    """
    spec = crd.get("spec") or {}
    for version in spec.get("versions") or ():
        if isinstance(version, Mapping):
            _drop_null_defaults((version.get("schema") or {}).get("openAPIV3Schema"))
    names = spec.get("names") or {}
    causes: list[Cause] = []
    name = str((crd.get("metadata") or {}).get("name") or "")
    expected = f"{names.get('plural', '')}.{spec.get('group', '')}"
    if name != expected:
        causes.append(
            (
                "FieldValueInvalid",
                "metadata.name",
                f'Invalid value: {json.dumps(name)}: must be spec.names.plural+"."+spec.group',
            )
        )
    versions = [v for v in spec.get("versions") or () if isinstance(v, Mapping)]
    storage = sum(1 for v in versions if v.get("storage"))
    if versions and storage != 1:
        causes.append(
            (
                "FieldValueInvalid",
                "spec.versions",
                f"Invalid value: {json.dumps([v.get('name') for v in versions])}: must have "
                "exactly one version marked as storage version",
            )
        )
    schemas = [((v.get("schema") or {}).get("openAPIV3Schema"), i) for i, v in enumerate(versions)]
    shared = len({json.dumps(s, sort_keys=True) for s, _ in schemas}) == 1
    for schema, i in schemas:
        if not isinstance(schema, Mapping):
            continue
        path = (
            "spec.validation.openAPIV3Schema"
            if shared
            else f"spec.versions[{i}].schema.openAPIV3Schema"
        )
        if schema.get("type") != "object":
            causes.append(
                (
                    "FieldValueInvalid",
                    f"{path}.type",
                    f"Invalid value: {json.dumps(schema.get('type', ''))}: "
                    "must be object at the root",
                )
            )
        found = _node(schema, path, structural=True, root=True)
        causes.extend(found)
        if not any(".x-kubernetes-validations[" not in cause[1] for cause in found):
            # a structural schema: every default in it is validated (and pruned)
            causes.extend(_defaults(schema, path, structural=True))
        if shared:
            break
    return causes


def _list_type(s: Mapping[str, Any], path: str) -> list[Cause]:
    """``x-kubernetes-list-type`` and ``-list-map-keys`` as ``ValidateCustomResourceDefinition
    OpenAPISchema`` and ``validateMapListKeysMapSet`` check them (a map list's items are objects
    whose key properties are scalars, required or defaulted, and not nullable)."""
    causes: list[Cause] = []
    kind, keys = s.get("x-kubernetes-list-type"), s.get("x-kubernetes-list-map-keys") or []
    items, typ, map_type = s.get("items"), s.get("type") or "", s.get("x-kubernetes-map-type")
    for marker, value, wanted, allowed in (
        ("x-kubernetes-map-type", map_type, "object", ("atomic", "granular")),
        ("x-kubernetes-list-type", kind, "array", ("atomic", "set", "map")),
    ):
        if value is None:
            continue
        if typ != wanted:
            message = f"must be {wanted} if {marker} is specified"
            if typ:
                causes.append(_invalid_cause(f"{path}.type", typ, message))
            else:
                causes.append(("FieldValueRequired", f"{path}.type", f"Required value: {message}"))
        if value not in allowed:
            shown = ", ".join(json.dumps(a) for a in allowed)
            message = f"Unsupported value: {json.dumps(value)}: supported values: {shown}"
            causes.append(("FieldValueNotSupported", f"{path}.{marker}", message))
    if kind == "set" and typ == "array" and isinstance(items, Mapping):
        message = "must be atomic as item of a list with x-kubernetes-list-type=set"
        inner = items.get("x-kubernetes-list-type")
        if items.get("type") == "array" and inner is not None and inner != "atomic":
            causes.append(_invalid_cause(f"{path}.items.x-kubernetes-list-type", inner, message))
        if items.get("type") == "object" and items.get("x-kubernetes-map-type") != "atomic":
            # Go shows the item's list type here (null when it has none)
            causes.append(_invalid_cause(f"{path}.items.x-kubernetes-map-type", inner, message))
    if keys and kind is None:
        message = "Required value: must be map if x-kubernetes-list-map-keys is non-empty"
        causes.append(("FieldValueRequired", f"{path}.x-kubernetes-list-type", message))
    elif keys and kind != "map":
        message = "must be map if x-kubernetes-list-map-keys is non-empty"
        causes.append(_invalid_cause(f"{path}.x-kubernetes-list-type", kind, message))
    if kind == "map":
        if not keys:
            message = "Required value: must not be empty if x-kubernetes-list-type is map"
            causes.append(("FieldValueRequired", f"{path}.x-kubernetes-list-map-keys", message))
        if items is None:
            message = "Required value: must have a schema if x-kubernetes-list-type is map"
            causes.append(("FieldValueRequired", f"{path}.items", message))
        elif isinstance(items, Mapping) and items.get("type") != "object":
            message = "must be object if parent array's x-kubernetes-list-type is map"
            causes.append(_invalid_cause(f"{path}.items.type", items.get("type", ""), message))
        elif isinstance(items, Mapping):
            props = items.get("properties") or {}
            seen: set[str] = set()
            for key in keys:
                if key in props:
                    if (props[key] or {}).get("type") in ("array", "object"):
                        message = (
                            "must be a scalar type if parent array's x-kubernetes-list-type is map"
                        )
                        where = f"{path}.items.properties[{key}].type"
                        causes.append(_invalid_cause(where, "object", message))
                else:
                    message = "entries must all be names of item properties"
                    causes.append(
                        _invalid_cause(f"{path}.x-kubernetes-list-map-keys", keys, message)
                    )
                if key in seen:
                    message = "must not contain duplicate entries"
                    causes.append(
                        _invalid_cause(f"{path}.x-kubernetes-list-map-keys", keys, message)
                    )
                seen.add(key)
    if kind in ("set", "map") and isinstance(items, Mapping):
        if items.get("nullable"):
            message = f"Forbidden: cannot be nullable when x-kubernetes-list-type is {kind}"
            causes.append(("FieldValueForbidden", f"{path}.items.nullable", message))
        if kind == "map":
            props, required = items.get("properties") or {}, set(items.get("required") or ())
            for key in keys:
                sub = props.get(key)
                if not isinstance(sub, Mapping):
                    continue
                where = f"{path}.items.properties[{key}]"
                if key not in required and sub.get("default") is None:
                    message = (
                        "Required value: this property is in x-kubernetes-list-map-keys, so it "
                        "must have a default or be a required property"
                    )
                    causes.append(("FieldValueRequired", f"{where}.default", message))
                if sub.get("nullable"):
                    message = (
                        "Forbidden: this property is in x-kubernetes-list-map-keys, so it cannot "
                        "be nullable"
                    )
                    causes.append(("FieldValueForbidden", f"{where}.nullable", message))
    return causes


def _invalid_cause(field: str, value: Any, message: str) -> Cause:
    shown = json.dumps(value, separators=(",", ":"))
    return ("FieldValueInvalid", field, f"Invalid value: {shown}: {message}")


def _node(
    s: Mapping[str, Any],
    path: str,
    *,
    structural: bool,
    root: bool = False,
    uncorrelatable: str | None = None,
) -> list[Cause]:
    """``uncorrelatable``: the path of the list (not ``x-kubernetes-list-type: map``) this node
    is inside, where an update's old value cannot be found, so ``oldSelf`` cannot be used."""
    causes: list[Cause] = []
    if "$ref" in s:
        causes.append(("FieldValueForbidden", f"{path}.$ref", "Forbidden: $ref is not supported"))
    typ = s.get("type")
    if (
        structural
        and not root
        and "$ref" not in s
        and typ is None
        and not (
            s.get("x-kubernetes-int-or-string") or s.get("x-kubernetes-preserve-unknown-fields")
        )
    ):
        causes.append(
            (
                "FieldValueRequired",
                f"{path}.type",
                "Required value: must not be empty for specified object fields",
            )
        )
    if typ is not None and typ not in _TYPES:
        allowed = ", ".join(json.dumps(t) for t in _TYPES)
        causes.append(
            (
                "FieldValueNotSupported",
                f"{path}.type",
                f"Unsupported value: {json.dumps(typ)}: supported values: {allowed}",
            )
        )
    if s.get("uniqueItems") is True:
        causes.append(
            (
                "FieldValueForbidden",
                f"{path}.uniqueItems",
                "Forbidden: uniqueItems cannot be set to true since the runtime complexity "
                "becomes quadratic",
            )
        )
    if s.get("properties") and isinstance(s.get("additionalProperties"), Mapping):
        causes.append(
            (
                "FieldValueForbidden",
                f"{path}.additionalProperties",
                "Forbidden: additionalProperties and properties are mutual exclusive",
            )
        )
    if isinstance(s.get("pattern"), str):
        try:
            re2.compile_pattern(s["pattern"])
        except re2.PatternError as err:
            causes.append(
                (
                    "FieldValueInvalid",
                    f"{path}.pattern",
                    f"Invalid value: {json.dumps(s['pattern'])}: must be a valid regular "
                    f"expression, but isn't: error parsing regexp: {err}",
                )
            )
    causes.extend(_list_type(s, path))
    causes.extend(_rules(s, path, uncorrelatable))
    if root:
        meta = (s.get("properties") or {}).get("metadata")
        if isinstance(meta, Mapping) and set(meta.get("properties") or {}) - {
            "name",
            "generateName",
        }:
            causes.append(
                (
                    "FieldValueForbidden",
                    f"{path}.properties[metadata]",
                    "Forbidden: must not specify anything other than name and generateName, but "
                    "metadata is implicitly specified",
                )
            )
    for key, sub in (s.get("properties") or {}).items():
        if isinstance(sub, Mapping):
            causes.extend(
                _node(
                    sub,
                    f"{path}.properties[{key}]",
                    structural=structural,
                    uncorrelatable=uncorrelatable,
                )
            )
    for key in ("items", "additionalProperties"):
        if isinstance(s.get(key), Mapping):
            inside = uncorrelatable
            if key == "items" and s.get("x-kubernetes-list-type") != "map":
                inside = inside or path
            causes.extend(
                _node(s[key], f"{path}.{key}", structural=structural, uncorrelatable=inside)
            )
    for key in _COMBINERS:
        for i, sub in enumerate(s.get(key) or ()):
            if isinstance(sub, Mapping):
                causes.extend(_node(sub, f"{path}.{key}[{i}]", structural=False))
    if isinstance(s.get("not"), Mapping):
        causes.extend(_node(s["not"], f"{path}.not", structural=False))
    return causes


def _defaults(s: Mapping[str, Any], path: str, *, structural: bool) -> list[Cause]:
    """The causes of every default in schema ``s`` (outside allOf/anyOf/oneOf/not)."""
    causes: list[Cause] = []
    if "default" in s and s["default"] is not None and structural:
        causes.extend(_default(s, path))
    for key, sub in (s.get("properties") or {}).items():
        if isinstance(sub, Mapping):
            causes.extend(_defaults(sub, f"{path}.properties[{key}]", structural=structural))
    for key in ("items", "additionalProperties"):
        if isinstance(s.get(key), Mapping):
            causes.extend(_defaults(s[key], f"{path}.{key}", structural=structural))
    return causes


def _rules(s: Mapping[str, Any], path: str, uncorrelatable: str | None) -> list[Cause]:
    causes: list[Cause] = []
    for i, rule in enumerate(s.get("x-kubernetes-validations") or ()):
        if not isinstance(rule, Mapping):
            continue
        text = rule.get("rule")
        if uncorrelatable and isinstance(text, str) and text:
            try:
                uses_old = cel.compile_rule(text).uses_old
            except cel.CompileError:
                uses_old = False  # reported below
            if uses_old:
                causes.append(
                    (
                        "FieldValueInvalid",
                        f"{path}.x-kubernetes-validations[{i}].rule",
                        f"Invalid value: {json.dumps(text)}: oldSelf cannot be used on the "
                        f"uncorrelatable portion of the schema within {uncorrelatable}",
                    )
                )
        for key in ("rule", "messageExpression"):
            text = rule.get(key)
            if not isinstance(text, str) or not text:
                continue
            try:
                cel.compile_rule(text)
            except cel.CompileError as err:
                shown = json.dumps(
                    {
                        "Rule": rule.get("rule", ""),
                        "Message": rule.get("message", ""),
                        "MessageExpression": rule.get("messageExpression", ""),
                        "Reason": rule.get("reason"),
                        "FieldPath": rule.get("fieldPath", ""),
                        "OptionalOldSelf": rule.get("optionalOldSelf"),
                    },
                    separators=(",", ":"),
                )
                causes.append(
                    (
                        "FieldValueInvalid",
                        f"{path}.x-kubernetes-validations[{i}].{key}",
                        f"Invalid value: {shown}: {err}",
                    )
                )
    return causes


def _default(s: Mapping[str, Any], path: str) -> list[Cause]:
    """A default must be valid against the schema it is the default of."""
    value = _schema.normalize(json.loads(json.dumps(s["default"])))
    bare = {k: v for k, v in s.items() if k != "default"}
    causes: list[Cause] = []
    where = f"{path}.default"
    pruned = _schema.prune(bare, copy.deepcopy(value), meta=False)
    if pruned != value:  # a default must be pruned already (what pruning drops is unknown)
        shown = json.dumps(value, separators=(",", ":"), sort_keys=True)
        causes.append(
            ("FieldValueInvalid", where, f"Invalid value: {shown}: must not have unknown fields")
        )
    # objectmeta.Validate comes first (field paths: default[0].kind); the schema is not checked
    # when it fails
    embedded = _schema.embedded_errors(bare, value)
    for kind, field, message in embedded:
        causes.append((kind, where + ("" if field.startswith("[") else ".") + field, message))
    if embedded:
        return causes
    for kind, field, message in _schema.validate(bare, value, default=True):
        # kube-openapi's errors without a field name are at the validated root: the default's
        # path here, nil (shown <nil>) in an object; its names below the root are joined with a
        # dot (default.[0].x)
        below = field.removeprefix("<root>")
        shown = where if field in ("<root>", "<nil>") else f"{where}.{below}"
        causes.append(
            (kind, shown, message.replace("<root> in body", " in body").replace("<root>", ""))
        )
    return causes


def _drop_null_defaults(s: Any) -> None:
    if isinstance(s, dict):
        if "default" in s and s["default"] is None:
            del s["default"]
        for key, value in s.items():
            if key not in ("default", "enum", "example"):
                _drop_null_defaults(value)
    elif isinstance(s, list):
        for item in s:
            _drop_null_defaults(item)
