"""The JSON merge patch (RFC 7386) between two objects: what ``patch_merge_from`` sends and
``create_or_patch`` compares."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

__all__ = ["merge_patch_diff"]


def merge_patch_diff(original: Mapping[str, Any], modified: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON merge patch (RFC 7386) that turns ``original`` into ``modified``.

    Removed keys become ``None`` (JSON ``null``); lists are replaced whole.

    Example::

        >>> merge_patch_diff({"a": 1, "b": {"c": 1, "d": 2}}, {"a": 1, "b": {"c": 2}})
        {'b': {'c': 2, 'd': None}}
    """
    patch: dict[str, Any] = {}
    for key, value in modified.items():
        if key not in original:
            patch[key] = copy.deepcopy(value)
            continue
        old = original[key]
        if isinstance(old, Mapping) and isinstance(value, Mapping):
            sub = merge_patch_diff(old, value)
            if sub:
                patch[key] = sub
        elif old != value:
            patch[key] = copy.deepcopy(value)
    for key in original:
        if key not in modified:
            patch[key] = None
    return patch
