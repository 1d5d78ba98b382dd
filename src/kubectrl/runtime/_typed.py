"""Typed views of cached dicts, and the dict behind a model instance.

The cache keeps the server's dicts, shared by every reader. A typed read builds a *new* model
instance from the cached dict each time (:func:`model_view`), so no two readers ever share a
mutable view and the cache is never changed through one.

Whether the dict must be copied first depends on the model: pydantic builds new containers for
every field it validates into a typed shape (``dict[str, str]``, ``list[V1Container]``, a nested
model), but keeps the very object it was given for a field typed ``Any`` (or a bare
``dict``/``list``, or ``object``), which would then be the cache's own. So the cached dict is
validated as is, except along the paths that lead to such fields: there new dicts are made, and
the kept values themselves are copied (JSON-shaped data: dicts, lists and scalars). The paths
are worked out once per class from its field annotations. For a built-in kind that is only
``metadata.managedFields[].fieldsV1`` (typed ``Any``); a custom resource also copies the keys
its models do not declare (``extra="allow"`` keeps them as given).
"""

from __future__ import annotations

import copy
import dataclasses
import datetime as _dt
import enum
import types
import typing
from collections.abc import Mapping
from typing import Any, TypeVar

from kubectrl import kinds as _kinds

__all__ = ["json_copy", "model_view", "object_dict", "validation_shares_input"]

M = TypeVar("M")

# Leaf types pydantic validates into new immutable values.
_IMMUTABLE: tuple[type, ...] = (
    str,
    int,
    float,
    bool,
    bytes,
    type(None),
    _dt.datetime,
    _dt.date,
    _dt.time,
    _dt.timedelta,
)
_SEQUENCES = (list, set, frozenset, tuple)


@dataclasses.dataclass(frozen=True)
class _CopyPlan:
    """Where, in a dict validated as one model, pydantic would keep objects of the input."""

    #: Keys whose values are kept as given (``Any``, bare containers): copied whole.
    whole: frozenset[str]
    #: ``(key, shape, model)``: descend into the value (one model, a list or a dict of them).
    nested: tuple[tuple[str, str, type[Any]], ...]
    #: For ``extra="allow"`` models, the keys the model knows: any other key is kept as given.
    allow_known: frozenset[str] | None


_PASS = "pass"  # noqa: S105 - a marker, not a password
_WHOLE = "whole"
_COPY_PLANS: dict[type[Any], _CopyPlan | None] = {}


def _keys(name: str, info: Any) -> set[str]:
    # Every key the field may be read from (a superset is harmless: more is copied).
    keys = {name}
    for alias in (info.alias, info.serialization_alias):
        if isinstance(alias, str):
            keys.add(alias)
    choices = info.validation_alias
    if isinstance(choices, str):
        keys.add(choices)
    elif choices is not None:
        keys.update(c for c in getattr(choices, "choices", ()) if isinstance(c, str))
    return keys


def _classify(annotation: Any, stack: tuple[type[Any], ...]) -> Any:
    """``_PASS`` (pydantic copies it), ``_WHOLE`` (copy it) or ``(shape, model)``."""
    if annotation is Any or annotation is object:
        return _WHOLE
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        return _classify(args[0], stack)
    if origin is typing.Literal:
        return _PASS
    if origin is typing.Union or origin is getattr(types, "UnionType", None):
        members = [_classify(a, stack) for a in args if a is not type(None)]
        if len(members) == 1:
            return members[0]
        return _PASS if all(m == _PASS for m in members) else _WHOLE
    if origin in _SEQUENCES or origin is dict:
        if not args:
            return _WHOLE
        item = _classify(args[-1] if origin is dict else args[0], stack)
        if item == _PASS:
            return _PASS
        if isinstance(item, tuple) and item[0] == "one" and origin in (list, dict):
            return ("list" if origin is list else "dict", item[1])
        return _WHOLE
    if origin is not None or annotation in (*_SEQUENCES, dict):
        return _WHOLE
    if isinstance(annotation, type):
        if _kinds.is_model_class(annotation):
            if annotation in stack:
                return _WHOLE  # a recursive model: copy it whole rather than reason about it
            return _PASS if _copy_plan(annotation, stack) is None else ("one", annotation)
        if issubclass(annotation, (enum.Enum, *_IMMUTABLE)):
            return _PASS
    return _WHOLE  # anything else: assume pydantic may keep the input object


def _copy_plan(cls: type[Any], stack: tuple[type[Any], ...] = ()) -> _CopyPlan | None:
    if cls in _COPY_PLANS:
        return _COPY_PLANS[cls]
    stack = (*stack, cls)
    whole: set[str] = set()
    nested: list[tuple[str, str, type[Any]]] = []
    known: set[str] = set()
    for name, info in cls.model_fields.items():
        keys = _keys(name, info)
        known.update(keys)
        how = _classify(info.annotation, stack)
        if how == _WHOLE:
            whole.update(keys)
        elif how != _PASS:
            nested.extend((key, how[0], how[1]) for key in keys)
    config = getattr(cls, "model_config", {}) or {}
    allow = frozenset(known) if config.get("extra") == "allow" else None
    plan = None
    if whole or nested or allow is not None:
        plan = _CopyPlan(frozenset(whole), tuple(nested), allow)
    _COPY_PLANS[cls] = plan  # answers given under recursion are conservative (copy whole)
    return plan


def _copied(cls: type[Any], data: Any) -> Any:
    """``data`` with new containers exactly where validation as ``cls`` would keep the input's."""
    plan = _copy_plan(cls)
    if plan is None or not isinstance(data, dict):
        return data
    out = dict(data)
    for key in plan.whole:
        if key in out:
            out[key] = json_copy(out[key])
    for key, shape, model in plan.nested:
        value = out.get(key)
        if value is None:
            continue
        if shape == "one":
            out[key] = _copied(model, value)
        elif shape == "list" and isinstance(value, list):
            out[key] = [_copied(model, v) for v in value]
        elif shape == "dict" and isinstance(value, dict):
            out[key] = {k: _copied(model, v) for k, v in value.items()}
    if plan.allow_known is not None:
        for key, value in data.items():
            if key not in plan.allow_known:
                out[key] = json_copy(value)
    return out


def validation_shares_input(cls: type[Any]) -> bool:
    """Whether validating a dict as ``cls`` may keep objects of that dict inside the instance.

    True when some field anywhere in the model's tree is typed ``Any``, ``object``, a bare
    ``dict``/``list``, or the model keeps extra keys (``extra="allow"``).

    Example::

        >>> from pydantic import BaseModel
        >>> class Tight(BaseModel):
        ...     labels: dict[str, str] = {}
        >>> class Loose(BaseModel):
        ...     blob: dict[str, Any] = {}
        >>> validation_shares_input(Tight), validation_shares_input(Loose)
        (False, True)
    """
    return _copy_plan(cls) is not None


def model_view(cls: type[M], obj: Mapping[str, Any], api_version: str, kind: str) -> M:
    """A new ``cls`` instance from the cached dict ``obj``, sharing nothing mutable with it.

    ``apiVersion``/``kind`` are filled in when the cached dict lacks them (list items of
    built-in types). Raises :class:`~kubectrl.errors.ModelValidationError` naming the object,
    its kind and the fields when ``obj`` does not fit ``cls``.

    Example::

        >>> from kubernetes.client.models import V1ConfigMap
        >>> cached = {"metadata": {"name": "x", "namespace": "a"}, "data": {"k": "v"}}
        >>> cm = model_view(V1ConfigMap, cached, "v1", "ConfigMap")
        >>> cm.data["k"] = "changed"
        >>> cached["data"]["k"], cm.kind
        ('v', 'ConfigMap')
    """
    data: Mapping[str, Any] = _copied(cls, obj) if validation_shares_input(cls) else obj
    if "apiVersion" not in data or "kind" not in data:
        data = {"apiVersion": api_version, "kind": kind, **data}
    return _kinds.from_dict(cls, data)


def json_copy(value: Any) -> Any:
    """A deep copy of JSON-shaped data (dicts, lists, scalars); other objects are deep-copied.

    Example::

        >>> a = {"x": [{"y": 1}]}
        >>> b = json_copy(a)
        >>> b == a, b["x"][0] is a["x"][0]
        (True, False)
    """
    if isinstance(value, dict):
        return {k: json_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [json_copy(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return copy.deepcopy(value)


def object_dict(obj: Any) -> dict[str, Any]:
    """The API's dict for ``obj``: a dict as is, a model serialized by
    :func:`kubectrl.kinds.to_dict` (unknown server fields kept).

    Example::

        >>> object_dict({"kind": "ConfigMap"})
        {'kind': 'ConfigMap'}
    """
    if isinstance(obj, dict):
        return obj
    return _kinds.to_dict(obj)
