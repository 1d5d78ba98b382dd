"""Names for Kubernetes types and objects: GVK, GVR, object keys and small metadata helpers.

Objects are plain dicts, as the API server sends them; these helpers read them without copying.

Example::

    >>> gvk = GroupVersionKind.from_api_version("apps/v1", "Deployment")
    >>> gvk.group, gvk.api_version
    ('apps', 'apps/v1')
    >>> str(ObjectKey("default", "web"))
    'default/web'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

__all__ = [
    "GroupVersionKind",
    "GroupVersionResource",
    "ObjectKey",
    "api_version_of",
    "controller_of",
    "gvk_of",
    "is_controlled_by",
    "join_api_version",
    "key_of",
    "meta_namespace_key",
    "metadata_of",
    "split_api_version",
]


def split_api_version(api_version: str) -> tuple[str, str]:
    """Split ``"apps/v1"`` into ``("apps", "v1")`` and ``"v1"`` into ``("", "v1")``.

    Example::

        >>> split_api_version("v1")
        ('', 'v1')
    """
    group, sep, version = api_version.rpartition("/")
    return (group, version) if sep else ("", api_version)


def join_api_version(group: str, version: str) -> str:
    """Inverse of :func:`split_api_version`. Example: ``join_api_version("", "v1") == "v1"``."""
    return f"{group}/{version}" if group else version


class GroupVersionKind(NamedTuple):
    """A type as objects name it: group, version and kind (``apps``, ``v1``, ``Deployment``).

    The core group is ``""``.

    Example::

        >>> GroupVersionKind("", "v1", "ConfigMap").api_version
        'v1'
    """

    group: str
    version: str
    kind: str

    @classmethod
    def from_api_version(cls, api_version: str, kind: str) -> GroupVersionKind:
        """Build from an object's ``apiVersion`` and ``kind``."""
        group, version = split_api_version(api_version)
        return cls(group, version, kind)

    @property
    def api_version(self) -> str:
        """``group/version``, or just ``version`` for the core group."""
        return join_api_version(self.group, self.version)

    def __str__(self) -> str:
        return f"{self.api_version}, Kind={self.kind}"


class GroupVersionResource(NamedTuple):
    """A type as URLs name it: group, version and plural resource (``apps``, ``v1``,
    ``deployments``). The core group is ``""``.

    Example::

        >>> GroupVersionResource("apps", "v1", "deployments").api_version
        'apps/v1'
    """

    group: str
    version: str
    resource: str

    @property
    def api_version(self) -> str:
        """``group/version``, or just ``version`` for the core group."""
        return join_api_version(self.group, self.version)

    def __str__(self) -> str:
        return (
            f"{self.resource}.{self.version}.{self.group}"
            if self.group
            else (f"{self.resource}.{self.version}")
        )


class ObjectKey(NamedTuple):
    """An object's identity within one type: namespace (``""`` if cluster-scoped) and name.

    ``str(key)`` is client-go's ``MetaNamespaceKey``: ``namespace/name`` or ``name``.

    Example::

        >>> str(ObjectKey("", "node-1"))
        'node-1'
    """

    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    @classmethod
    def parse(cls, key: str) -> ObjectKey:
        """Inverse of ``str(key)``: ``"ns/name"`` or ``"name"``."""
        namespace, sep, name = key.partition("/")
        return cls(namespace, name) if sep else cls("", key)


def metadata_of(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """An object's ``metadata`` mapping, or an empty one when it is missing or not a mapping.

    Read-only use: the empty mapping returned for a missing ``metadata`` is not attached to
    ``obj``.

    Example::

        >>> metadata_of({"metadata": {"name": "a"}})["name"]
        'a'
        >>> metadata_of({})
        {}
    """
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def key_of(obj: Mapping[str, Any]) -> ObjectKey:
    """The :class:`ObjectKey` of an object dict.

    Example::

        >>> key_of({"metadata": {"namespace": "ns", "name": "a"}})
        ObjectKey(namespace='ns', name='a')
    """
    meta = metadata_of(obj)
    return ObjectKey(str(meta.get("namespace") or ""), str(meta.get("name") or ""))


def meta_namespace_key(obj: Mapping[str, Any]) -> str:
    """client-go's ``MetaNamespaceKeyFunc``: ``"namespace/name"`` or ``"name"``.

    Example::

        >>> meta_namespace_key({"metadata": {"name": "node-1"}})
        'node-1'
    """
    return str(key_of(obj))


def api_version_of(obj: Mapping[str, Any]) -> str:
    """The object's ``apiVersion`` (``""`` if missing). Example: ``api_version_of(cm) == "v1"``."""
    value = obj.get("apiVersion")
    return value if isinstance(value, str) else ""


def gvk_of(obj: Mapping[str, Any]) -> GroupVersionKind:
    """The :class:`GroupVersionKind` named by an object's ``apiVersion`` and ``kind``.

    Raises ``ValueError`` when either is missing.

    Example::

        >>> gvk_of({"apiVersion": "apps/v1", "kind": "Deployment"})
        GroupVersionKind(group='apps', version='v1', kind='Deployment')
    """
    api_version = api_version_of(obj)
    kind = obj.get("kind")
    if not api_version or not isinstance(kind, str) or not kind:
        raise ValueError("object has no apiVersion and kind; both are needed to find its resource")
    return GroupVersionKind.from_api_version(api_version, kind)


def controller_of(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The owner reference marked ``controller: true``, or ``None`` (``metav1.GetControllerOf``).

    Example::

        >>> controller_of({"metadata": {"ownerReferences": [
        ...     {"kind": "Foo", "name": "a", "uid": "1", "controller": True}]}})["name"]
        'a'
    """
    for ref in metadata_of(obj).get("ownerReferences") or ():
        if isinstance(ref, Mapping) and ref.get("controller"):
            return ref
    return None


def is_controlled_by(obj: Mapping[str, Any], owner: Mapping[str, Any]) -> bool:
    """Whether ``owner`` (matched by uid) is ``obj``'s controller (``metav1.IsControlledBy``).

    Example::

        >>> foo = {"metadata": {"uid": "1"}}
        >>> is_controlled_by({"metadata": {"ownerReferences": [
        ...     {"uid": "1", "controller": True}]}}, foo)
        True
    """
    ref = controller_of(obj)
    uid = metadata_of(owner).get("uid")
    return ref is not None and bool(uid) and ref.get("uid") == uid
