"""Label and annotation filters of handlers (kopf's ``labels=``/``annotations=``,
``kopf/_core/intents/filters.py``), spelled as the daemons' filters: ``{key: value}`` where a
string must equal, ``True`` (or ``None``) means present, ``False`` absent, and a callable is
called with the value (``None`` when the key is missing)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeAlias

__all__ = ["MetaFilter", "check_meta_filter", "meta_matches"]

#: ``{key: "value" | True | False | None | callable(value) -> bool}``.
MetaFilter: TypeAlias = "Mapping[str, str | bool | Callable[[str | None], bool] | None]"


def check_meta_filter(name: str, value: object) -> MetaFilter | None:
    """``value`` as a filter, or a ``TypeError`` naming the key at fault.

    Example::

        >>> check_meta_filter("labels", {"app": 1})  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        TypeError: labels['app'] must be a string, True (present), ... or a callable, not 1
    """
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise TypeError(f"{name} must be a mapping of key to filter, not {value!r}")
    for key, want in value.items():
        if not isinstance(key, str):
            raise TypeError(f"{name} keys must be strings, not {key!r}")
        if not (want is None or isinstance(want, (str, bool)) or callable(want)):
            raise TypeError(
                f"{name}[{key!r}] must be a string, True (present), False (absent), None "
                f"(present) or a callable, not {want!r}"
            )
    return value


def meta_matches(want: MetaFilter | None, have: Mapping[str, Any]) -> bool:
    """Whether the labels or annotations ``have`` pass the filter ``want``.

    Example::

        >>> meta_matches({"app": "web", "tier": False}, {"app": "web"})
        True
    """
    if not want:
        return True
    for key, expected in want.items():
        value = have.get(key)
        if expected is None or isinstance(expected, bool):
            if (key in have) is not (expected is None or expected):
                return False
        elif isinstance(expected, str):
            if value != expected:
                return False
        elif not expected(value):
            return False
    return True
