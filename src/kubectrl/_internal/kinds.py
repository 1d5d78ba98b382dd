"""A kind as webhooks and the builder name it: a model class or an ``(apiVersion, kind)`` tuple."""

from __future__ import annotations

from typing import Any

from kubectrl import kinds as _kinds
from kubectrl import objects as _objects

__all__ = ["resolve_kind"]


def resolve_kind(kind: type[Any] | tuple[str, str]) -> tuple[_kinds.KindInfo, type[Any] | None]:
    """The kind's :class:`~kubectrl.kinds.KindInfo` and its model class (``None`` for dicts).

    A tuple's plural is the lower-cased kind + ``s`` (pass a model class where that is wrong).

    Example::

        >>> info, model = resolve_kind(("example.com/v1", "Gizmo"))
        >>> info.group, info.version, info.plural, model
        ('example.com', 'v1', 'gizmos', None)
    """
    if isinstance(kind, tuple):
        api_version, name = kind
        group, version = _objects.split_api_version(api_version)
        return _kinds.KindInfo(group, version, name, name.lower() + "s"), None
    return _kinds.kind_info(kind), kind
