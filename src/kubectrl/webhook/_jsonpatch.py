"""RFC 6902 JSON patches between two JSON documents (what a mutating webhook answers with)."""

from __future__ import annotations

from typing import Any

__all__ = ["json_patch"]


def _pointer(path: tuple[str | int, ...]) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def json_patch(original: Any, mutated: Any) -> list[dict[str, Any]]:
    """The operations that turn ``original`` into ``mutated`` (``[]`` when they are equal).

    Maps are compared key by key (``add``, ``remove``, ``replace``); lists of equal length item
    by item, otherwise replaced whole (always correct, and what a defaulter rarely produces).

    Example::

        >>> json_patch({"spec": {"a": 1}}, {"spec": {"a": 1, "replicas": 1}})
        [{'op': 'add', 'path': '/spec/replicas', 'value': 1}]
        >>> json_patch({"a/b": [1, 2]}, {"a/b": [1, 3]})
        [{'op': 'replace', 'path': '/a~1b/1', 'value': 3}]
        >>> json_patch({"x": 1}, {"x": 1})
        []
    """
    ops: list[dict[str, Any]] = []
    _diff(original, mutated, (), ops)
    return ops


def _same(a: Any, b: Any) -> bool:
    # 1 == 1.0 == True in Python but not in JSON: compare types too.
    if type(a) is not type(b):
        return False
    return bool(a == b)


def _diff(a: Any, b: Any, path: tuple[str | int, ...], ops: list[dict[str, Any]]) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in a:
            if key not in b:
                ops.append({"op": "remove", "path": _pointer((*path, key))})
        for key, value in b.items():
            if key not in a:
                ops.append({"op": "add", "path": _pointer((*path, key)), "value": value})
            else:
                _diff(a[key], value, (*path, key), ops)
        return
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for index, (x, y) in enumerate(zip(a, b, strict=True)):
            _diff(x, y, (*path, index), ops)
        return
    if not _same(a, b):
        ops.append({"op": "replace", "path": _pointer(path), "value": b})
