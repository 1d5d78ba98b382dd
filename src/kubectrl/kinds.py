"""Kinds named by classes: the group/version/kind (and, when known, plural and scope) of a model.

A kind can be named three ways anywhere kubectrl takes one: a ``("apps/v1", "Deployment")``
tuple, a :class:`~kubectrl.objects.GroupVersionKind` / ``GroupVersionResource``, or a **model
class** — a ``kubernetes.client.models`` class such as ``V1Deployment`` or a user's
:class:`~kubectrl.resources.CustomResource` subclass. This module answers, for a class, which kind
it stands for (:func:`kind_info`).

A class says what it stands for through a ``__kubectrl_kind__`` class attribute holding a
:class:`KindInfo` (custom resources set it from their class arguments); the ``kubernetes``
package's built-in models are looked up in a table kept equal to the pinned Kubernetes version's
discovery by a test.

Example::

    >>> info = KindInfo(group="apps", version="v1", kind="Deployment", plural="deployments",
    ...                 namespaced=True)
    >>> info.api_version, info.gvk
    ('apps/v1', GroupVersionKind(group='apps', version='v1', kind='Deployment'))
"""

from __future__ import annotations

import dataclasses
from typing import Any

from kubectrl import objects as _objects

__all__ = ["KindInfo", "is_model_class", "kind_info"]


@dataclasses.dataclass(frozen=True)
class KindInfo:
    """What a model class stands for: group, version, kind, and plural + scope when known.

    ``plural`` is ``""`` and ``namespaced`` ``None`` when only discovery can tell.
    """

    group: str
    version: str
    kind: str
    plural: str = ""
    namespaced: bool | None = None

    @property
    def api_version(self) -> str:
        """``group/version`` (``v1`` for the core group)."""
        return _objects.join_api_version(self.group, self.version)

    @property
    def gvk(self) -> _objects.GroupVersionKind:
        """The :class:`~kubectrl.objects.GroupVersionKind`."""
        return _objects.GroupVersionKind(self.group, self.version, self.kind)

    @property
    def gvr(self) -> _objects.GroupVersionResource | None:
        """The :class:`~kubectrl.objects.GroupVersionResource`, when the plural is known."""
        if not self.plural:
            return None
        return _objects.GroupVersionResource(self.group, self.version, self.plural)


def is_model_class(value: Any) -> bool:
    """Whether ``value`` is a class kubectrl can name a kind by (a pydantic model class)."""
    if not isinstance(value, type):
        return False
    return any(
        base.__name__ == "BaseModel" and base.__module__.startswith("pydantic")
        for base in value.__mro__
    )


def kind_info(cls: type[Any]) -> KindInfo:
    """The :class:`KindInfo` of a model class; ``TypeError`` naming the class when it has none.

    Example::

        >>> class Widget:
        ...     __kubectrl_kind__ = KindInfo("example.com", "v1", "Widget", "widgets", True)
        >>> kind_info(Widget).api_version
        'example.com/v1'
    """
    info = getattr(cls, "__kubectrl_kind__", None)
    if isinstance(info, KindInfo):
        return info
    raise TypeError(
        f"{getattr(cls, '__qualname__', cls)!r} does not name a Kubernetes kind: expected a "
        "kubernetes.client.models class or a kubectrl.resources.CustomResource subclass"
    )
