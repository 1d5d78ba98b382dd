"""Field validation of writes (``fieldValidation=Strict|Warn|Ignore``), as the apiserver does it.

The apiserver decodes a written object strictly and, by the request's ``fieldValidation``
(k8s.io/apiserver/pkg/endpoints/handlers: ``Warn`` when the parameter is absent):

* ``Strict``: a create or update (POST, PUT) with unknown fields is a 400 ``<Kind> in version
  "<v>" cannot be handled as a <Kind>: strict decoding error: unknown field "a", unknown field
  "b.c"``; a patch whose result has unknown fields is a 422 (``Invalid``, cause ``patch``)
  ending with the same ``strict decoding error``;
* ``Warn``: the write succeeds (the fields are dropped) and each field is a ``Warning`` response
  header ``299 - "unknown field \\"b.c\\""``;
* ``Ignore``: the fields are dropped silently.

A key given twice in a JSON body is a ``duplicate field "a.b"`` the same way (the last value
is kept).

Field paths are the object's JSON paths, list items indexed (``spec.tags[0].x``), in the
server's order (the body's for a built-in kind, sorted for a custom resource). Unknown fields
are those the kind's schema does not declare: the built-in OpenAPI definitions
(:mod:`kubectrl.apiserver._schema.gotypes`) or a CRD version's structural schema
(``x-kubernetes-preserve-unknown-fields`` and embedded resources honoured).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from kubectrl.apiserver._resources.info import ResourceInfo
from kubectrl.apiserver._resources.objects import OBJECT_META_FIELDS
from kubectrl.apiserver._schema.gotypes import _ANY, _definitions, definition_of
from kubectrl.apiserver._status import StatusError, bad_request

__all__ = [
    "MODES",
    "check_mode",
    "parse_pairs",
    "patch_error",
    "strict_error",
    "unknown_fields",
    "warnings",
]

#: The values ``fieldValidation`` takes (``""`` is the default, ``Warn``).
MODES = ("", "Ignore", "Strict", "Warn")

_OPTIONS = {"create": "CreateOptions", "update": "UpdateOptions", "patch": "PatchOptions"}


def check_mode(params: Mapping[str, str], verb: str) -> str:
    """The request's ``fieldValidation`` (``""`` when absent); 422 for a value the server does
    not know, worded as the server words it."""
    mode = params.get("fieldValidation", "")
    if mode in MODES:
        return mode
    options = _OPTIONS.get(verb, "CreateOptions")
    supported = ", ".join(f'"{m}"' for m in MODES)
    message = f'fieldValidation: Unsupported value: "{mode}": supported values: {supported}'
    raise StatusError.make(
        422,
        f'{options}.meta.k8s.io "" is invalid: {message}',
        reason="Invalid",
        details={
            "group": "meta.k8s.io",
            "kind": options,
            "causes": [
                {
                    "reason": "FieldValueNotSupported",
                    "message": message.split(": ", 1)[1],
                    "field": "fieldValidation",
                }
            ],
        },
    )


class _Pairs(list):  # type: ignore[type-arg]
    """A JSON object as its ``(key, value)`` pairs in the body's order, repeats kept."""


def parse_pairs(raw: bytes) -> Any:
    """``raw`` JSON with each object as :class:`_Pairs` (so repeated keys are seen), or
    ``None`` when it is not JSON (YAML: its decoder already kept the last value)."""
    try:
        return json.loads(raw, object_pairs_hook=_Pairs)
    except ValueError:
        return None


def _is_object(value: Any) -> bool:
    return isinstance(value, (dict, _Pairs))


def _items(value: Any) -> Any:
    return value if isinstance(value, _Pairs) else value.items()


def unknown_fields(
    info: ResourceInfo, version: str, obj: Any, raw: bytes | None = None
) -> list[str]:
    """What the strict decoder says of ``obj`` (the body ``raw`` when given, so repeated keys
    are seen): ``unknown field "a.b"`` for each field the kind does not declare, ``duplicate
    field "a"`` for each key given twice, in the server's order: as they come in the body for
    a built-in kind (its JSON decoder reports them as it reads); for a custom resource the
    duplicates first, then the unknown fields sorted (its schema's pruning reports them so)."""
    tree = parse_pairs(raw) if raw else None
    if tree is None:
        tree = obj
    found: list[str] = []
    if not _is_object(tree):
        return found
    if info.crd:
        unknown: list[str] = []
        _custom(info.schemas.get(version), tree, "", True, found, unknown)
        return found + [f"unknown field {go_quote(f)}" for f in sorted(unknown)]
    name = definition_of(info, version)
    if name is not None:
        _builtin({"$ref": name}, tree, "", found)
    return found


_GO_ESCAPES = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    '"': '\\"',
    "\\": "\\\\",
}


def go_quote(text: str) -> str:
    r"""``text`` quoted as Go's ``strconv.Quote`` (``%q``) does: how the apiserver's decoder
    names a field in ``unknown field "..."``, control characters escaped.

    Example::

        >>> print(go_quote("a\r\nb\x01é"))
        "a\r\nb\x01é"
    """
    out = []
    for c in text:
        if c in _GO_ESCAPES:
            out.append(_GO_ESCAPES[c])
        elif c.isprintable():
            out.append(c)
        elif ord(c) < 0x80:
            out.append(f"\\x{ord(c):02x}")
        elif ord(c) < 0x10000:
            out.append(f"\\u{ord(c):04x}")
        else:
            out.append(f"\\U{ord(c):08x}")
    return '"' + "".join(out) + '"'


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _builtin(schema: Mapping[str, Any], value: Any, path: str, found: list[str]) -> None:
    ref = schema.get("$ref")
    if ref:
        if ref in _ANY:
            return
        definition = _definitions().get(str(ref))
        if definition is None:
            return
        schema = definition
    if _is_object(value):
        props = schema.get("properties")
        extra = schema.get("additionalProperties")
        seen: set[str] = set()
        for key, item in _items(value):
            where = _join(path, key)
            if key in seen:
                found.append(f"duplicate field {go_quote(where)}")
            seen.add(key)
            if isinstance(props, Mapping):
                sub = props.get(key)
                if sub is None:
                    if key not in ("apiVersion", "kind") or path:
                        found.append(f"unknown field {go_quote(where)}")
                    continue
                _builtin(sub, item, where, found)
            elif isinstance(extra, Mapping):
                _builtin(extra, item, where, found)
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, Mapping):
            for index, item in enumerate(value):
                _builtin(items, item, f"{path}[{index}]", found)


def _custom(
    schema: Mapping[str, Any] | None,
    value: Any,
    path: str,
    resource: bool,
    found: list[str],
    unknown: list[str],
) -> None:
    if _is_object(value):
        seen: set[str] = set()
        for key, _ in _items(value):
            if key in seen:
                found.append(f"duplicate field {go_quote(_join(path, key))}")
            seen.add(key)
    if schema is None:
        return
    preserve = bool(schema.get("x-kubernetes-preserve-unknown-fields"))
    if _is_object(value):
        resource = resource or bool(schema.get("x-kubernetes-embedded-resource"))
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        for key, item in _items(value):
            where = _join(path, key)
            if resource and key in ("apiVersion", "kind"):
                continue
            if resource and key == "metadata":
                if _is_object(item):
                    unknown.extend(
                        _join(where, k) for k, _ in _items(item) if k not in OBJECT_META_FIELDS
                    )
                continue
            if key in props:
                _custom(props[key], item, where, False, found, unknown)
            elif isinstance(extra, Mapping):
                _custom(extra, item, where, False, found, unknown)
            elif extra is True or preserve:
                continue
            else:
                unknown.append(where)
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, Mapping):
            for index, item in enumerate(value):
                _custom(items, item, f"{path}[{index}]", False, found, unknown)


def _listed(problems: list[str]) -> str:
    return "strict decoding error: " + ", ".join(problems)


def strict_error(info: ResourceInfo, version: str, fields: list[str]) -> StatusError:
    """The 400 a strict create or update answers, ``fields`` being :func:`unknown_fields`'
    findings."""
    return bad_request(
        f'{info.kind} in version "{version}" cannot be handled as a {info.kind}: ' + _listed(fields)
    )


def patch_error(patched: Mapping[str, Any], fields: list[str]) -> StatusError:
    """The 422 a strict patch whose result ``patched`` has unknown ``fields`` (the findings of
    :func:`unknown_fields`) answers."""
    detail = f"Invalid value: {json.dumps(json.dumps(patched, separators=(',', ':')))}: "
    detail += _listed(fields)
    return StatusError.make(
        422,
        f' "" is invalid: patch: {detail}',
        reason="Invalid",
        details={"causes": [{"reason": "FieldValueInvalid", "message": detail, "field": "patch"}]},
    )


def warnings(fields: list[str]) -> list[str]:
    """The warning texts of a ``Warn`` write's findings (one ``Warning`` header each)."""
    return list(fields)
