"""Nulls and defaults of a custom resource settled by its structural schema, as
apiextensions-apiserver's ``pkg/apiserver/schema/defaulting`` settles them (``prunenulls.go``,
then ``algorithm.go``), copying only what changes: the one defaulter of both the write path
(:func:`kubectrl.apiserver._schema.structural.process`) and the read path
(:mod:`kubectrl.apiserver._schema.served`).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

__all__ = ["with_defaults"]


def with_defaults(
    schema: Mapping[str, Any] | None, value: Any, *, nulls: bool = True, fill: bool = True
) -> Any:
    """``value`` with its nulls and defaults settled as the apiserver settles them, without
    changing ``value``: a ``null`` the schema does not allow leaves when no ``default`` replaces
    it (apiextensions-apiserver ``PruneNonNullableNullsWithoutDefaults``), then a missing field,
    or a ``null`` one not nullable, gets its ``default`` (``Default``, which also defaults a
    default it filled in). Containers on the way to a change are copied, all else is shared,
    and ``value`` itself comes back when nothing changes (an object written through the API
    is already settled: reading it copies nothing). ``nulls=False`` leaves nulls without a
    default alone (inside a default just filled in, which the first pass never saw);
    ``fill=False`` runs the first pass alone (what a conversion's schema coercion does).

    Example::

        >>> schema = {"properties": {"a": {"default": 1}, "b": {"properties": {"c": {}}}}}
        >>> stored = {"b": {"c": 2}, "a": None}
        >>> served = with_defaults(schema, stored)
        >>> served, stored, served["b"] is stored["b"]
        ({'b': {'c': 2}, 'a': 1}, {'b': {'c': 2}, 'a': None}, True)
        >>> with_defaults(schema, served) is served
        True
        >>> nulls = {"properties": {"x": {}, "y": {"nullable": True}}}
        >>> with_defaults(nulls, {"x": None, "y": None})
        {'y': None}
    """
    if not schema or not isinstance(value, (dict, list)):
        return value
    if isinstance(value, dict):
        out = value
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        extra = extra if isinstance(extra, Mapping) else None
        if not props and extra is None:
            return value
        for name, item in value.items():
            sub = props.get(name, extra)
            if sub is None:
                continue
            if item is None and not sub.get("nullable"):
                default = sub.get("default")
                if (default is None and not nulls) or (default is not None and not fill):
                    continue  # a null left alone, or left for the defaulter
                if out is value:
                    out = dict(value)
                if default is None:
                    del out[name]
                else:
                    out[name] = with_defaults(sub, copy.deepcopy(default), nulls=False)
                continue
            filled = with_defaults(sub, item, nulls=nulls, fill=fill)
            if filled is not item:
                if out is value:
                    out = dict(value)
                out[name] = filled
        if not fill:
            return out
        for name, sub in props.items():
            if name not in value and sub.get("default") is not None:
                if out is value:
                    out = dict(value)
                out[name] = with_defaults(sub, copy.deepcopy(sub["default"]), nulls=False)
        return out
    items = schema.get("items")
    if not isinstance(items, Mapping):
        return value
    copied: list[Any] | None = None
    for i, item in enumerate(value):
        if item is None and fill and not items.get("nullable"):
            filled = copy.deepcopy(items.get("default"))
            filled = with_defaults(items, filled, nulls=False)
        else:
            filled = with_defaults(items, item, nulls=nulls, fill=fill)
        if filled is not item:
            if copied is None:
                copied = list(value)
            copied[i] = filled
    return value if copied is None else copied
