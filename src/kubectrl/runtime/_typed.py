"""Typed views of cached dicts, and the dict behind a model instance.

The cache keeps the server's dicts, shared by every reader. A typed read builds a *new* model
instance from the cached dict each time (:func:`model_view`), so no two readers ever share a
mutable view and the cache is never changed through one.

Whether the dict must be deep-copied first depends on the model: pydantic builds new containers
for every field it validates into a typed shape (``dict[str, str]``, ``list[V1Container]``, a
nested model), but keeps the very object it was given for a field typed ``Any`` (or a bare
``dict``/``list``, or ``object``), which would then be the cache's own. So a model whose tree has
no such field is validated straight from the cached dict (pydantic copies as it validates), and
one that has any is validated from a copy (of JSON-shaped data: dicts, lists and scalars, about
2.5 times cheaper than ``copy.deepcopy``). The answer is computed once per class. Every built-in
kind has such a field (``metadata.managedFields[].fieldsV1`` is ``Any``), so built-in kinds are
copied.
"""

from __future__ import annotations

import copy
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
_SHARES: dict[type[Any], bool] = {}


def _annotation_shares(annotation: Any, seen: set[type[Any]]) -> bool:
    if annotation is Any or annotation is object:
        return True
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        return _annotation_shares(args[0], seen)
    if origin is typing.Literal:
        return False
    if origin is not None:
        union = origin is typing.Union or origin is getattr(types, "UnionType", None)
        if union or origin in (list, dict, set, frozenset, tuple):
            # Parameterized containers and unions: new containers; look at the members.
            if not args:
                return True
            return any(_annotation_shares(a, seen) for a in args if a is not Ellipsis)
        return True
    if annotation in (list, dict, set, tuple):
        return True  # bare containers validate their items as Any
    if isinstance(annotation, type):
        if _kinds.is_model_class(annotation):
            return _model_shares(annotation, seen)
        if issubclass(annotation, (enum.Enum, *_IMMUTABLE)):
            return False
    return True  # anything else: assume pydantic may keep the input object


def _model_shares(cls: type[Any], seen: set[type[Any]]) -> bool:
    known = _SHARES.get(cls)
    if known is not None:
        return known
    if cls in seen:
        return False  # a recursive model: decided by its other fields
    seen.add(cls)
    config = getattr(cls, "model_config", {}) or {}
    result = config.get("extra") == "allow" or any(
        _annotation_shares(field.annotation, seen) for field in cls.model_fields.values()
    )
    _SHARES[cls] = result
    return result


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
    return _model_shares(cls, set())


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
    data: Mapping[str, Any] = obj
    if validation_shares_input(cls):
        data = json_copy(obj)
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
