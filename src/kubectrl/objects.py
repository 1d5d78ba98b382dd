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
from typing import TYPE_CHECKING, Any, NamedTuple, overload

if TYPE_CHECKING:
    from kubernetes.client.models import V1ObjectReference
    from pydantic import BaseModel

__all__ = [
    "GroupVersionKind",
    "GroupVersionResource",
    "ObjectKey",
    "api_version_of",
    "controller_of",
    "get_reference",
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
    if meta.__class__ is dict:  # what the client decodes: no ABC check
        return meta
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
    meta = obj.get("metadata")
    if meta.__class__ is dict:  # a decoded object: its key without an ObjectKey in between
        name = meta.get("name")
        namespace = meta.get("namespace")
        if name.__class__ is str and (namespace is None or namespace.__class__ is str):
            return f"{namespace}/{name}" if namespace else name
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


#: The ``metadata`` keys an object reference copies, under the same names.
_REFERENCE_FIELDS = ("name", "namespace", "uid", "resourceVersion")


@overload
def get_reference(obj: Mapping[str, Any], *, field_path: str = "") -> dict[str, str]: ...


@overload
def get_reference(obj: BaseModel, *, field_path: str = "") -> V1ObjectReference: ...


def get_reference(obj: Any, *, field_path: str = "") -> Any:
    """An ``ObjectReference`` to ``obj`` (client-go's ``tools/reference.GetReference``).

    The reference has the object's ``apiVersion``, ``kind``, ``name``, ``namespace``, ``uid``
    and ``resourceVersion``; ``fieldPath`` is ``field_path`` (``GetPartialReference``), empty by
    default. As in Go, empty fields are left out (a list's reference has only ``kind``,
    ``apiVersion`` and ``resourceVersion``).

    A dict gives a dict. A model instance (a ``kubernetes.client.models`` class or a
    :class:`~kubectrl.resources.CustomResource`) gives a ``V1ObjectReference``; its apiVersion and
    kind come from the object or, when it has none, from its class (the scheme lookup of the Go
    function); a ``V1ObjectReference`` is returned as is (no reference to a reference).

    Raises :class:`ValueError` naming what is missing when the apiVersion or kind is unknown
    (the items of a list response may lack them: set them from the list's), and
    :class:`TypeError` when ``obj`` is neither a mapping nor a model.

    Example::

        >>> get_reference({"apiVersion": "apps/v1", "kind": "Deployment",
        ...                "metadata": {"name": "web", "namespace": "default", "uid": "u-1",
        ...                             "resourceVersion": "42"}})
        {'kind': 'Deployment', 'apiVersion': 'apps/v1', 'name': 'web', 'namespace': 'default', \
'uid': 'u-1', 'resourceVersion': '42'}
        >>> get_reference({"metadata": {"name": "web"}})
        Traceback (most recent call last):
        ...
        ValueError: get_reference: object 'web' has no apiVersion and no kind; an \
ObjectReference needs both
    """
    if not isinstance(field_path, str):
        raise TypeError(f"get_reference: field_path must be a string, not {field_path!r}")
    if isinstance(obj, Mapping):
        return _dict_reference(obj, field_path)
    if obj is None:
        raise TypeError("get_reference: can't reference None")
    if not any(
        base.__name__ == "BaseModel" and base.__module__.startswith("pydantic")
        for base in type(obj).__mro__
    ):
        raise TypeError(
            f"get_reference needs an object dict or a model instance, not {type(obj).__name__}"
        )
    from kubernetes.client.models import V1ObjectReference

    if isinstance(obj, V1ObjectReference):
        return obj
    api_version = getattr(obj, "api_version", None)
    kind = getattr(obj, "kind", None)
    meta = getattr(obj, "metadata", None)
    if not (api_version and kind):
        declared = _class_kind(type(obj))
        if declared is None:
            missing = _missing(api_version, kind)
            name = getattr(meta, "name", None) or ""
            raise ValueError(
                f"get_reference: {type(obj).__name__} {name!r} has {missing} and its class names "
                "no kind; set apiVersion and kind on the object"
            )
        api_version, kind = declared
    values = {
        "name": getattr(meta, "name", None),
        "namespace": getattr(meta, "namespace", None),
        "uid": getattr(meta, "uid", None),
        "resource_version": getattr(meta, "resource_version", None),
    }
    return V1ObjectReference(
        api_version=api_version,
        kind=kind,
        field_path=field_path or None,
        **{key: str(value) for key, value in values.items() if value},
    )


def _class_kind(cls: type[Any]) -> tuple[str, str] | None:
    """``(apiVersion, kind)`` a model class declares, as :func:`kubectrl.kinds.kind_info` reads it.

    Read here without importing :mod:`kubectrl.kinds` (which imports this module): a
    :class:`~kubectrl.resources.CustomResource`'s ``__kubectrl_kind__``, or the built-in table for
    a ``kubernetes.client.models`` class (by name and by origin).
    """
    info = getattr(cls, "__kubectrl_kind__", None)
    if info is not None:
        return str(info.api_version), str(info.kind)
    module = getattr(cls, "__module__", "") or ""
    if module == "kubernetes.client.models" or module.startswith("kubernetes.client.models."):
        from kubectrl._builtin_kinds import BUILTIN_KINDS

        row = BUILTIN_KINDS.get(cls.__name__)
        if row is not None:
            return join_api_version(row[0], row[1]), row[2]
    return None


def _missing(api_version: object, kind: object) -> str:
    names = [n for n, v in (("apiVersion", api_version), ("kind", kind)) if not v]
    return " and ".join(f"no {n}" for n in names)


def _dict_reference(obj: Mapping[str, Any], field_path: str) -> dict[str, str]:
    api_version = api_version_of(obj)
    kind = obj.get("kind")
    if not api_version or not isinstance(kind, str) or not kind:
        raise ValueError(
            f"get_reference: object {meta_namespace_key(obj)!r} has "
            f"{_missing(api_version, kind if isinstance(kind, str) else '')}; an ObjectReference "
            "needs both"
        )
    reference = {"kind": kind, "apiVersion": api_version}
    meta = metadata_of(obj)
    for key in _REFERENCE_FIELDS:
        value = meta.get(key)
        if value:
            reference[key] = str(value)
    if field_path:
        reference["fieldPath"] = field_path
    return reference
