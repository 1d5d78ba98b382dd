"""Structural schemas of custom resources: pruning, defaulting and validation as the apiserver.

What a write of a custom object goes through, in the apiserver's order:

1. pruning (``apiextensions-apiserver pkg/apiserver/schema/pruning/algorithm.go``): fields the
   schema does not know are dropped, also under an ``x-kubernetes-preserve-unknown-fields``
   node's known properties; at the root and in embedded resources ``apiVersion``/``kind`` stay
   and ``metadata`` keeps only ``ObjectMeta``'s fields (``schema/objectmeta``);
2. nulls (``schema/defaulting/prunenulls.go``): a ``null`` for a field that is not nullable and
   has no default is dropped; with a default, the default replaces it
   (``schema/defaulting/algorithm.go``);
3. numbers: JSON's ``3.0`` is the integer 3 (Go decodes and re-encodes it so);
4. validation (kube-openapi ``pkg/validation/validate`` behind apiextensions'
   ``pkg/apiserver/validation/validation.go``): types (int-or-string, nullable), formats,
   bounds, lengths, RE2 patterns, ``enum``, ``allOf``/``anyOf``/``oneOf``/``not``, item and
   property counts; list types ``set``/``map`` without duplicates
   (``schema/listtype/validation.go``); embedded resources' ``apiVersion``/``kind``
   (``schema/objectmeta/validation.go``); CEL rules (:mod:`kubectrl.apiserver._schema.cel`). On an
   update, validation ratchets: a value equal to the old one at the same place is not checked
   again (``pkg/apiserver/schema/ratcheting``).
"""

from __future__ import annotations

import copy
import json
import math
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from kubectrl.apiserver._resources import versions
from kubectrl.apiserver._resources.info import schema_has
from kubectrl.apiserver._resources.objects import OBJECT_META_FIELDS
from kubectrl.apiserver._schema import cel as _cel
from kubectrl.apiserver._schema import re2
from kubectrl.apiserver._schema.defaults import with_defaults
from kubectrl.apiserver._schema.formats import SUPPORTED, check_format
from kubectrl.apiserver._schema.values import json_type, show
from kubectrl.apiserver._schema.values import number_text as _num

__all__ = [
    "MISSING",
    "Cause",
    "embedded_errors",
    "normalize",
    "process",
    "prune",
    "validate",
]

Cause = tuple[str, str, str]
#: "No old value here" (a create, or a field the old object did not have).
MISSING: Any = object()

_RESOURCE_FIELDS = ("apiVersion", "kind", "metadata")
_MAX_SAFE = 2**53
_INT64 = (-(2**63), 2**63 - 1)
_INT32 = (-(2**31), 2**31 - 1)


# ------------------------------------------------------------------------------ pruning


def _prune_meta(meta: Any) -> None:
    if isinstance(meta, dict):
        for key in [k for k in meta if k not in OBJECT_META_FIELDS]:
            del meta[key]


def prune(
    schema: Mapping[str, Any] | None, value: Any, *, root: bool = False, meta: bool = True
) -> Any:
    """Drop, in place, what ``schema`` does not know (``root``: the custom object itself;
    ``meta=False``: leave the ``metadata`` of resources alone, as ``pruning.Prune`` does, whose
    caller has ``objectmeta`` coerce it)."""
    _prune(schema, value, root, meta)
    return value


def _prune(s: Mapping[str, Any] | None, x: Any, resource: bool, meta: bool = True) -> None:
    preserve = s is not None and bool(s.get("x-kubernetes-preserve-unknown-fields"))
    if isinstance(x, dict):
        if s is None:
            x.clear()
            return
        resource = resource or bool(s.get("x-kubernetes-embedded-resource"))
        props = s.get("properties") or {}
        extra = s.get("additionalProperties")
        for key in list(x):
            if resource and key in ("apiVersion", "kind"):
                continue
            if resource and key == "metadata":
                if meta:
                    _prune_meta(x[key])
                continue
            if key in props:
                _prune(props[key], x[key], False, meta)
            elif isinstance(extra, Mapping):
                _prune(extra, x[key], False, meta)
            elif extra is True:
                _prune(None, x[key], False, meta)
            elif not preserve:
                del x[key]
    elif isinstance(x, list):
        items = s.get("items") if s is not None else None
        for item in x:
            if s is not None and preserve and not isinstance(items, Mapping):
                continue
            _prune(items if isinstance(items, Mapping) else None, item, False, meta)


# ------------------------------------------------------------------------------ defaulting


def normalize(value: Any) -> Any:
    """Integral floats as integers, as Go's JSON round trip of an unstructured object makes them."""
    if isinstance(value, float) and value.is_integer() and abs(value) <= _MAX_SAFE:
        return int(value)
    if isinstance(value, dict):
        for key, item in value.items():
            value[key] = normalize(item)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            value[i] = normalize(item)
    return value


# ------------------------------------------------------------------------------ validation


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


class _Validator:
    """One validation pass over an object (``old``: the stored one, for ratcheting and CEL)."""

    def __init__(self, ratchet: bool, default: bool = False) -> None:
        self.ratchet = ratchet
        self.default = default  # a CRD's default: int-or-string is not type-checked there
        self.cel: list[Cause] = []
        self.nested = 0  # inside allOf/anyOf/oneOf/not: no CEL there

    def node(
        self, s: Mapping[str, Any], v: Any, path: str, old: Any, cel: str | None = None
    ) -> list[Cause]:
        """The causes of value ``v`` at ``path`` (``cel``: the path CEL rules report, where
        a map's entries are ``[key]``; ``path`` as kube-openapi names it otherwise)."""
        if self.ratchet and old is not MISSING and _same(old, v):
            return []
        where = path or "<root>"
        if v is None and s.get("nullable"):
            return self._enum(s, v, where)  # only the enum still applies to a null
        # kube-openapi runs every validator that applies to the value's kind, the type's too:
        # a value of the wrong type also gets the enum, allOf/anyOf/oneOf/not and the bounds of
        # its own kind checked (CEL rules are not run then).
        typed = self._type(s, v, where)
        if typed is None and s.get("x-kubernetes-validations") and not self.nested:
            self.cel += _cel.check_rules(s, v, old, path if cel is None else cel, MISSING)
        errors: list[Cause] = list(typed or ())
        errors += self._composition(s, v, path, old)
        if isinstance(v, str):
            errors += self._string(s, v, where)
        if json_type(v) in ("integer", "number"):
            errors += self._number(s, v, where)
        if isinstance(v, list):
            errors += self._array(s, v, path, where, old, where if cel is None else cel)
        errors += self._enum(s, v, where)
        if isinstance(v, dict):
            errors += self._object(s, v, path, where, old, path if cel is None else cel)
        return errors

    @staticmethod
    def _enum(s: Mapping[str, Any], v: Any, where: str) -> list[Cause]:
        if "enum" not in s or any(_enum_match(v, e) for e in s["enum"] or ()):
            return []
        allowed = ", ".join(show(e) for e in s["enum"] or ())
        return [
            (
                "FieldValueNotSupported",
                where,
                f"Unsupported value: {show(v)}: supported values: {allowed}",
            )
        ]

    def _type(self, s: Mapping[str, Any], v: Any, where: str) -> list[Cause] | None:
        actual = json_type(v)
        if s.get("x-kubernetes-int-or-string"):
            if actual in ("integer", "string") or self.default:
                return None
            return [_type_error(where, actual, "integer,string", actual)]
        typ = s.get("type")
        if not typ:
            return None
        fmt = s.get("format")
        if fmt in SUPPORTED and typ not in ("integer", "number"):
            # kube-openapi's typeValidator with a format: a string or an array passes it (the
            # format is the string validator's), any other kind must carry the format
            if actual in ("string", "array"):
                return None
            if actual != typ:
                shown = {"integer": "int64", "number": "float64"}.get(actual, "")
                return [_type_error(where, shown, str(fmt), shown)]
            return None
        if typ == "integer":
            if not versions.at_least("1.36"):
                # Up to 1.35 an integer's format is stripped (apiextensions-apiserver pkg/
                # apiserver/validation/formats.go StripUnsupportedFormatsPostProcessor keeps
                # string formats only) and kube-openapi's numberValidator gets no type and
                # format (pkg/validation/validate/schema.go): no range or integer check, only
                # the type's (both added for 1.36: apiextensions-apiserver v0.36.3, kube-openapi
                # 43fb72c5454a).
                return None if actual == "integer" else [_type_error(where, actual, typ, actual)]
            if actual == "integer":
                bounds = _INT32 if fmt == "int32" else _INT64
                if not bounds[0] <= v <= bounds[1]:
                    return [_range_error(fmt or "int64", where)]
                return None
            if actual == "number" and fmt in ("int32", "int64"):
                return [_type_error(where, "float64", fmt, "float64"), _range_error(fmt, where)]
            if actual == "number":  # and the number validator's integer check
                return [
                    _type_error(where, actual, "integer", actual),
                    _nil(f"Checked value must be of type integer (default format) in {where}"),
                ]
            return [_type_error(where, actual, "integer", actual)]
        ok = {
            "number": actual in ("integer", "number"),
            "string": actual == "string",
            "boolean": actual == "boolean",
            "object": actual == "object",
            "array": actual == "array",
        }.get(str(typ), True)
        return None if ok else [_type_error(where, actual, str(typ), actual)]

    def _composition(self, s: Mapping[str, Any], v: Any, path: str, old: Any) -> list[Cause]:
        self.nested += 1
        try:
            return self._compose(s, v, path, old)
        finally:
            self.nested -= 1

    def _compose(self, s: Mapping[str, Any], v: Any, path: str, old: Any) -> list[Cause]:
        errors: list[Cause] = []
        quoted = json.dumps(path)
        results = [self.node(sub, v, path, old) for sub in s.get("allOf") or ()]
        for result in results:
            errors += result
        if any(results):
            none = "" if any(not r for r in results) else ". None validated"
            errors.append(_nil(f"{quoted} must validate all the schemas (allOf){none}"))
        if s.get("anyOf"):
            results = [self.node(sub, v, path, old) for sub in s["anyOf"]]
            if all(results):
                errors.append(_nil(f"{quoted} must validate at least one schema (anyOf)"))
                errors += _fewest(results)
        if s.get("oneOf"):
            results = [self.node(sub, v, path, old) for sub in s["oneOf"]]
            valid = sum(1 for r in results if not r)
            if valid == 0:
                errors.append(
                    _nil(
                        f"{quoted} must validate one and only one schema (oneOf). Found none valid"
                    )
                )
                errors += _fewest(results)
            elif valid > 1:
                errors.append(
                    _nil(
                        f"{quoted} must validate one and only one schema (oneOf). Found {valid} "
                        "valid alternatives"
                    )
                )
        if isinstance(s.get("not"), Mapping) and not self.node(s["not"], v, path, old):
            errors.append(_nil(f"{quoted} must not validate the schema (not)"))
        return errors

    @staticmethod
    def _string(s: Mapping[str, Any], v: str, where: str) -> list[Cause]:
        if "maxLength" in s and len(v) > s["maxLength"]:
            return [
                (
                    "FieldValueTooLong",
                    where,
                    f"Too long: may not be more than {s['maxLength']} "
                    f"byte{'' if s['maxLength'] == 1 else 's'}",
                )
            ]
        if "minLength" in s and len(v) < s["minLength"]:
            return [
                _invalid(
                    where, v, f"{where} in body should be at least {s['minLength']} chars long"
                )
            ]
        if "pattern" in s and not re2.search(str(s["pattern"]), v):
            return [_invalid(where, v, f"{where} in body should match '{s['pattern']}'")]
        fmt = s.get("format")
        if fmt and fmt in SUPPORTED and not check_format(str(fmt), v):
            return [_type_error(where, v, str(fmt), v, quote_value=True)]
        return []

    @staticmethod
    def _number(s: Mapping[str, Any], v: float, where: str) -> list[Cause]:
        errors: list[Cause] = []
        step = s.get("multipleOf")
        if isinstance(step, (int, float)) and step > 0:
            if isinstance(v, int) and float(step).is_integer():
                exact = v % int(step) == 0  # MultipleOfInt: integers are not floats here
            else:
                ratio = v / step if step >= 1 else 1 / step * v
                exact = float(ratio).is_integer() or abs(ratio - round(ratio)) < 1e-9
            if not exact:
                errors.append(
                    _invalid(where, v, f"{where} in body should be a multiple of {_num(step)}")
                )
        if "maximum" in s:
            top = s["maximum"]
            if s.get("exclusiveMaximum") and v >= top:
                errors.append(
                    _invalid(where, v, f"{where} in body should be less than {_num(top)}")
                )
            elif v > top:
                errors.append(
                    _invalid(
                        where, v, f"{where} in body should be less than or equal to {_num(top)}"
                    )
                )
        if "minimum" in s:
            low = s["minimum"]
            if s.get("exclusiveMinimum") and v <= low:
                errors.append(
                    _invalid(where, v, f"{where} in body should be greater than {_num(low)}")
                )
            elif v < low:
                errors.append(
                    _invalid(
                        where, v, f"{where} in body should be greater than or equal to {_num(low)}"
                    )
                )
        return errors

    def _array(
        self, s: Mapping[str, Any], v: list[Any], path: str, where: str, old: Any, cel: str
    ) -> list[Cause]:
        errors: list[Cause] = []
        if "minItems" in s and len(v) < s["minItems"]:
            errors.append(
                _invalid(
                    where, len(v), f"{where} in body should have at least {s['minItems']} items"
                )
            )
        if "maxItems" in s and len(v) > s["maxItems"]:
            errors.append(
                (
                    "FieldValueTooMany",
                    where,
                    f"Too many: {len(v)}: must have at most {s['maxItems']} items",
                )
            )
        items = s.get("items")
        if isinstance(items, Mapping):
            olds = _correlate_items(s, v, old)
            for i, item in enumerate(v):
                errors += self.node(items, item, f"{where}[{i}]", olds[i], f"{cel}[{i}]")
        errors += _list_type(s, v, where)
        return errors

    def _object(
        self, s: Mapping[str, Any], v: dict[str, Any], path: str, where: str, old: Any, cel: str
    ) -> list[Cause]:
        errors: list[Cause] = []
        if "maxProperties" in s and len(v) > s["maxProperties"]:
            errors.append(
                (
                    "FieldValueTooMany",
                    where,
                    f"Too many: {len(v)}: must have at most {s['maxProperties']} items",
                )
            )
        if "minProperties" in s and len(v) < s["minProperties"]:
            errors.append(
                _invalid(
                    where,
                    len(v),
                    f"{where} in body should have at least {s['minProperties']} properties",
                )
            )
        resource = not path or bool(s.get("x-kubernetes-embedded-resource"))
        for name in s.get("required") or ():
            if name not in v:
                errors.append(("FieldValueRequired", _child(path, name), "Required value"))
        if s.get("x-kubernetes-embedded-resource"):
            errors += _embedded_resource(v, path, s.get("required") or ())
        props = s.get("properties") or {}
        extra = s.get("additionalProperties")
        old_map = old if isinstance(old, dict) else {}
        for name, item in v.items():
            if resource and name in _RESOURCE_FIELDS:
                continue
            sub, child = props.get(name), _child(cel, name)
            if sub is None and isinstance(extra, Mapping):
                sub, child = extra, f"{cel}[{name}]"  # CEL names a map entry by its key
            if sub is not None:
                was = old_map.get(name, MISSING)
                errors += self.node(sub, item, _child(path, name), was, child)
        return errors


# ``IsDNS1035Label`` (k8s.io/apimachinery/pkg/util/validation/validation.go).
_DNS1035_LABEL = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
_DNS1035_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
    "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)


def _embedded_resource(v: Mapping[str, Any], path: str, required: Any) -> list[Cause]:
    """The type meta of an embedded resource as ``schema/objectmeta/validation.go``
    (``validateEmbeddedResource``) checks it: a missing ``apiVersion`` or ``kind`` is required
    (an error that keeps CEL rules from running), an empty one, a non-string, an apiVersion with
    more than one ``/`` (``schema.ParseGroupVersion``) or a kind that is not a DNS-1035 label
    once lower-cased is invalid (CEL rules still run)."""
    errors: list[Cause] = []
    for name in ("apiVersion", "kind"):
        where = _child(path, name)
        if name not in v:
            if name not in required:  # the schema's own ``required`` already said it
                errors.append(("FieldValueRequired", where, "Required value"))
            continue
        value = v[name]
        if not isinstance(value, str):
            errors.append(_invalid(where, value, "must be a string"))
        elif not value:
            errors.append(_invalid(where, value, "must not be empty"))
        elif name == "apiVersion":
            if value != "/" and value.count("/") > 1:
                errors.append(_invalid(where, value, f"unexpected GroupVersion string: {value}"))
        else:
            lower, problems = value.lower(), []
            if len(lower) > 63:
                problems.append("must be no more than 63 characters")
            if not _DNS1035_LABEL.fullmatch(lower):
                problems.append(_DNS1035_MSG)
            if problems:
                message = "may have mixed case, but should otherwise match: " + ",".join(problems)
                errors.append(_invalid(where, value, message))
    return errors


def embedded_errors(s: Mapping[str, Any], v: Any, path: str = "") -> list[Cause]:
    """The ``apiVersion``/``kind`` an embedded resource lacks, anywhere in ``v``
    (``schema/objectmeta/validation.go`` ``Validate``, which a CRD's default passes first)."""
    errors: list[Cause] = []
    if isinstance(v, dict):
        if s.get("x-kubernetes-embedded-resource"):
            errors += _embedded_resource(v, path, ())
        props = s.get("properties") or {}
        extra = s.get("additionalProperties")
        for name, item in v.items():
            sub = props.get(name, extra if isinstance(extra, Mapping) else None)
            if isinstance(sub, Mapping):
                errors += embedded_errors(sub, item, _child(path, name))
    elif isinstance(v, list) and isinstance(s.get("items"), Mapping):
        for i, item in enumerate(v):
            errors += embedded_errors(s["items"], item, f"{path}[{i}]")
    return errors


def _enum_match(value: Any, allowed: Any) -> bool:
    """kube-openapi's enum check: the value converted to the allowed value's Go type (when Go
    can convert it: a number to another number, truncating, or an integer to a string as a
    rune), then compared."""
    if isinstance(value, bool) or isinstance(allowed, bool) or value is None or allowed is None:
        return _same(value, allowed)
    if isinstance(value, (int, float)) and isinstance(allowed, (int, float)):
        if isinstance(allowed, int):
            return math.isfinite(value) and int(value) == allowed
        return float(value) == allowed
    if isinstance(value, int) and isinstance(allowed, str):
        return 0 <= value <= 0x10FFFF and chr(value) == allowed
    return _same(value, allowed)


def _fewest(results: list[list[Cause]]) -> list[Cause]:
    """The errors of the alternative that failed least (the first of those)."""
    best = results[0]
    for result in results[1:]:
        if len(result) < len(best):
            best = result
    return best


def _correlate_items(s: Mapping[str, Any], v: list[Any], old: Any) -> list[Any]:
    """The old item each new item is compared with (map lists by keys, sets by value)."""
    if not isinstance(old, list):
        return [MISSING] * len(v)
    kind = s.get("x-kubernetes-list-type")
    if kind == "map":
        keys = list(s.get("x-kubernetes-list-map-keys") or ())

        def key(item: Any) -> str:
            return json.dumps([item.get(k) if isinstance(item, dict) else None for k in keys])

        by_key = {key(item): item for item in old}
        return [by_key.get(key(item), MISSING) for item in v]
    if kind == "set":
        return [item if any(_same(item, o) for o in old) else MISSING for item in v]
    return [MISSING] * len(v)


def _list_type(s: Mapping[str, Any], v: list[Any], where: str) -> list[Cause]:
    """``schema/listtype/validation.go``: a ``set`` or ``map`` list's duplicates, each value
    reported once, at its second appearance; a ``map`` list's items are objects (or null, an
    item without keys), else only the first other item is reported."""
    kind = s.get("x-kubernetes-list-type")
    if kind == "set":
        shown = [_compact(item) for item in v]
    elif kind == "map":
        for i, item in enumerate(v):
            if item is not None and not isinstance(item, dict):
                message = "must be an object for an array of list-type map"
                return [_invalid(f"{where}[{i}]", item, message)]
        keys = list(s.get("x-kubernetes-list-map-keys") or ())
        shown = [
            _compact({k: item[k] for k in keys if k in item} if isinstance(item, dict) else {})
            for item in v
        ]
    else:
        return []
    errors: list[Cause] = []
    counts: dict[str, int] = {}
    for i, text in enumerate(shown):
        counts[text] = counts.get(text, 0) + 1
        if counts[text] == 2:
            errors.append(("FieldValueDuplicate", f"{where}[{i}]", f"Duplicate value: {text}"))
    return errors


def _compact(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _type_error(
    where: str, shown: Any, typ: str, actual: Any, *, quote_value: bool = False
) -> Cause:
    value = show(shown) if quote_value else json.dumps(shown)
    return (
        "FieldValueTypeInvalid",
        where,
        f"Invalid value: {value}: {where} in body must be of type {typ}: {value}",
    )


def _range_error(fmt: str, where: str) -> Cause:
    return _nil(f"Checked value must be of type integer with format {fmt} in {where}", quote=False)


def _nil(message: str, quote: bool = True) -> Cause:
    del quote
    return ("FieldValueInvalid", "<nil>", f'Invalid value: "": {message}')


def _invalid(where: str, value: Any, message: str) -> Cause:
    return ("FieldValueInvalid", where, f"Invalid value: {show(value)}: {message}")


def validate(
    schema: Mapping[str, Any] | None,
    value: Any,
    old: Any = MISSING,
    path: str = "",
    *,
    default: bool = False,
    embedded_meta: MetaCheck | None = None,
) -> list[Cause]:
    """``(cause type, field, message)`` for each violation, worded like the apiserver's.

    ``old`` (an update): values equal to the old ones at the same place are not checked again
    (validation ratcheting); CEL transition rules see it as ``oldSelf``. ``default``: a CRD's
    default value, whose rules run only when the schema found nothing, without a note when they
    did not, and whose int-or-string nodes take any type
    (``pkg/apis/apiextensions/validation/validation.go``).
    """
    if not schema:
        return []
    validator = _Validator(ratchet=old is not MISSING, default=default)
    # kube-openapi's Result keeps one of identical errors (AddErrors compares their texts)
    errors = list(dict.fromkeys(validator.node(schema, value, path, old)))
    if embedded_meta is not None:
        # ``schema/objectmeta`` Validate, after the schema and before the CEL rules: the
        # metadata of each embedded resource as ``ValidateObjectMeta`` checks an object's
        errors += _embedded_metadata(schema, value, path, embedded_meta)
    if default:
        return errors or validator.cel
    if any(cause[0] in _BLOCKING for cause in errors):
        if schema_has(schema, _rules):
            errors.append(_NOT_CHECKED)
    else:
        errors += validator.cel
    return errors


# Errors after which CEL rules are not run (apiextensions-apiserver pkg/apiserver/schema/cel
# hasBlockingErr): the value may not even have the shape the rules were compiled for.
_BLOCKING = frozenset(
    [
        "FieldValueNotSupported",
        "FieldValueRequired",
        "FieldValueTooLong",
        "FieldValueTooMany",
        "FieldValueTypeInvalid",
    ]
)
_NOT_CHECKED: Cause = (
    "FieldValueInvalid",
    "<nil>",
    "Invalid value: null: some validation rules were not checked because the object was "
    "invalid; correct the existing errors to complete validation",
)


def _rules(schema: Mapping[str, Any]) -> bool:
    return bool(schema.get("x-kubernetes-validations"))


def process(
    schema: Mapping[str, Any] | None,
    obj: dict[str, Any],
    old: Mapping[str, Any] | None,
    decoded: list[Any] | None = None,
    *,
    embedded_meta: MetaCheck | None = None,
    decode_meta: MetaDecode | None = None,
) -> list[Cause]:
    """Prune, default and validate a custom object in place; the causes of its rejection.

    ``decoded``: given, gets a copy of the object as the apiserver holds it before its JSON
    round trip (``3.0`` still a float), what its update strategy compares with the old object.
    ``decode_meta`` and ``embedded_meta`` check the ``metadata`` of embedded resources (the
    caller knows ``ObjectMeta``): the first says why one does not decode as Go's type (the
    request is then refused with :class:`EmbeddedDecodeError`), the second validates one.
    """
    if isinstance(obj.get("metadata"), dict):
        _prune_meta(obj["metadata"])
    if not schema:
        return []
    prune(schema, obj, root=True)
    if decode_meta is not None and (problem := _coerce(schema, obj, decode_meta)):
        raise EmbeddedDecodeError(problem)
    settled = with_defaults(schema, obj)
    if settled is not obj:  # the request's own object: its new top level replaces its old one
        obj.clear()
        obj.update(settled)
    if decoded is not None:
        decoded.append(copy.deepcopy(obj))
    normalize(obj)
    return validate(schema, obj, MISSING if old is None else old, embedded_meta=embedded_meta)


# What the caller checks of an embedded resource's ``metadata``: its causes at ``path``.
MetaCheck = Callable[[Mapping[str, Any], str], list[Cause]]
# Why an embedded resource's ``metadata`` does not decode as ``ObjectMeta`` (None when it does).
MetaDecode = Callable[[Any], "str | None"]


class EmbeddedDecodeError(ValueError):
    """An embedded resource the apiserver's decoder refuses (``schema/objectmeta`` Coerce:
    a non-string ``apiVersion``/``kind``, or ``metadata`` that is not an ``ObjectMeta``):
    400, with the detail in the message."""


def _go_value(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _resources(s: Mapping[str, Any], x: Any, path: str) -> Iterator[tuple[dict[str, Any], str]]:
    """Each embedded resource in ``x`` below the root and its path (``objectmeta``'s walk: a map
    entry is ``path[key]``), outer ones first."""
    if isinstance(x, dict):
        if path and s.get("x-kubernetes-embedded-resource"):
            yield x, path
        props = s.get("properties") or {}
        extra = s.get("additionalProperties")
        for key, item in x.items():
            sub, child = props.get(key), _child(path, key)
            if sub is None and isinstance(extra, Mapping):
                sub, child = extra, f"{path}[{key}]"
            if isinstance(sub, Mapping):
                yield from _resources(sub, item, child)
    elif isinstance(x, list) and isinstance(s.get("items"), Mapping):
        for i, item in enumerate(x):
            yield from _resources(s["items"], item, f"{path}[{i}]")


def _coerce(s: Mapping[str, Any], x: Any, decode_meta: MetaDecode) -> str | None:
    """The first thing ``objectmeta.Coerce`` refuses below the root (None: nothing)."""
    for resource, path in _resources(s, x, ""):
        for key in ("apiVersion", "kind"):
            if key in resource and not isinstance(resource[key], str):
                shown = _go_value(resource[key])
                return f"{_child(path, key)}: Invalid value: {shown}: must be a string"
        if "metadata" in resource and (problem := decode_meta(resource["metadata"])):
            where = _child(path, "metadata")
            return f"{where}: Invalid value: {_go_value(resource['metadata'])}: {problem}"
    return None


def _embedded_metadata(s: Mapping[str, Any], x: Any, path: str, check: MetaCheck) -> list[Cause]:
    """``check``'s causes for the ``metadata`` of each embedded resource below the root."""
    errors: list[Cause] = []
    for resource, where in _resources(s, x, path):
        meta = resource.get("metadata")
        if isinstance(meta, Mapping):
            errors += check(meta, _child(where, "metadata"))
    return errors
