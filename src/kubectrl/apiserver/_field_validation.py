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

Field paths are the object's JSON paths, list items indexed (``spec.tags[0].x``), in the
server's order (the body's for a built-in kind, sorted for a custom resource). Unknown fields
are those the kind's schema does not declare: the built-in OpenAPI definitions
(:mod:`kubectrl.apiserver._builtin_types`) or a CRD version's structural schema
(``x-kubernetes-preserve-unknown-fields`` and embedded resources honoured).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from kubectrl.apiserver._builtin_types import _ANY, _definitions, definition_of
from kubectrl.apiserver._resources import ResourceInfo
from kubectrl.apiserver._status import StatusError, bad_request

__all__ = ["MODES", "check_mode", "patch_error", "strict_error", "unknown_fields", "warnings"]

#: The values ``fieldValidation`` takes (``""`` is the default, ``Warn``).
MODES = ("", "Ignore", "Strict", "Warn")

_OBJECT_META = frozenset(
    [
        "name",
        "generateName",
        "namespace",
        "selfLink",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "labels",
        "annotations",
        "ownerReferences",
        "finalizers",
        "managedFields",
    ]
)
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


def unknown_fields(info: ResourceInfo, version: str, obj: Any) -> list[str]:
    """The paths of the fields of ``obj`` that its kind does not declare, in the server's
    order: as they come in the body for a built-in kind (its strict JSON decoder reports them
    as it reads), sorted for a custom resource (its schema's pruning reports them sorted)."""
    found: list[str] = []
    if not isinstance(obj, dict):
        return found
    if info.crd:
        _custom(info.schemas.get(version), obj, "", True, found)
        return sorted(found)
    name = definition_of(info, version)
    if name is not None:
        _builtin({"$ref": name}, obj, "", found)
    return found


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
    if isinstance(value, dict):
        props = schema.get("properties")
        if isinstance(props, Mapping):
            for key, item in value.items():
                sub = props.get(key)
                if sub is None:
                    if key not in ("apiVersion", "kind") or path:
                        found.append(_join(path, key))
                    continue
                _builtin(sub, item, _join(path, key), found)
            return
        extra = schema.get("additionalProperties")
        if isinstance(extra, Mapping):
            for key, item in value.items():
                _builtin(extra, item, _join(path, key), found)
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, Mapping):
            for index, item in enumerate(value):
                _builtin(items, item, f"{path}[{index}]", found)


def _custom(
    schema: Mapping[str, Any] | None, value: Any, path: str, resource: bool, found: list[str]
) -> None:
    if schema is None:
        return
    preserve = bool(schema.get("x-kubernetes-preserve-unknown-fields"))
    if isinstance(value, dict):
        resource = resource or bool(schema.get("x-kubernetes-embedded-resource"))
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        for key, item in value.items():
            where = _join(path, key)
            if resource and key in ("apiVersion", "kind"):
                continue
            if resource and key == "metadata":
                if isinstance(item, dict):
                    found.extend(_join(where, k) for k in item if k not in _OBJECT_META)
                continue
            if key in props:
                _custom(props[key], item, where, False, found)
            elif isinstance(extra, Mapping):
                _custom(extra, item, where, False, found)
            elif extra is True or preserve:
                continue
            else:
                found.append(where)
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, Mapping):
            for index, item in enumerate(value):
                _custom(items, item, f"{path}[{index}]", False, found)


def _listed(fields: list[str]) -> str:
    return "strict decoding error: " + ", ".join(f'unknown field "{f}"' for f in fields)


def strict_error(info: ResourceInfo, version: str, fields: list[str]) -> StatusError:
    """The 400 a strict create or update with unknown ``fields`` answers."""
    return bad_request(
        f'{info.kind} in version "{version}" cannot be handled as a {info.kind}: ' + _listed(fields)
    )


def patch_error(patched: Mapping[str, Any], fields: list[str]) -> StatusError:
    """The 422 a strict patch whose result ``patched`` has unknown ``fields`` answers."""
    detail = f"Invalid value: {json.dumps(json.dumps(patched, separators=(',', ':')))}: "
    detail += _listed(fields)
    return StatusError.make(
        422,
        f' "" is invalid: patch: {detail}',
        reason="Invalid",
        details={"causes": [{"reason": "FieldValueInvalid", "message": detail, "field": "patch"}]},
    )


def warnings(fields: list[str]) -> list[str]:
    """The warning texts of ``fields`` dropped by a ``Warn`` write."""
    return [f'unknown field "{f}"' for f in fields]
