"""The types the client verbs take and return, shared by the clients and their interfaces.

:data:`ResourceRef` and :data:`KindRef` name a kind, :class:`ModelList` is a typed list (one
page or all of it), :class:`PatchType` a patch flavour, :class:`Preconditions` a delete's
preconditions. They live apart from :class:`~kubectrl.client.AsyncClient` so the client
interfaces (:mod:`kubectrl.client._interfaces`) and every client can use them.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar, Union

from kubectrl.client._discovery import APIResource
from kubectrl.objects import GroupVersionKind, GroupVersionResource

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = [
    "KindRef",
    "M",
    "ModelList",
    "PatchType",
    "Preconditions",
    "ResourceRef",
    "WriteGuard",
    "WriteObserver",
]

#: A model class's instances (``kubernetes.client.models`` classes are pydantic models).
M = TypeVar("M", bound="BaseModel")

#: What names a resource: an :class:`APIResource`, a GVK, a GVR, or ``(apiVersion, kind)``.
ResourceRef = Union[APIResource, GroupVersionKind, GroupVersionResource, "tuple[str, str]"]
#: A :data:`ResourceRef` or a model class (``V1Deployment``, a custom resource class).
KindRef = Union[ResourceRef, "type[BaseModel]"]

#: ``guard(verb, what)``, called before a write (:meth:`AsyncClient.with_write_hooks
#: <kubectrl.client.AsyncClient.with_write_hooks>`); raising refuses the write.
WriteGuard = Callable[[str, str], None]
#: ``await observer(answer)`` after a write succeeded (:meth:`AsyncClient.with_write_hooks
#: <kubectrl.client.AsyncClient.with_write_hooks>`), with the server's answer.
WriteObserver = Callable[[dict[str, Any]], Awaitable[None]]


@dataclasses.dataclass(frozen=True)
class ModelList(Generic[M]):
    """A list (or one page of one) of typed objects: what ``list`` returns for a model class.

    ``metadata`` is the list's (``resourceVersion``, ``continue``); ``api_version``/``kind`` the
    list type's (``v1``, ``ConfigMapList``).

    Example::

        >>> page = ModelList(items=[], metadata={"resourceVersion": "42"})
        >>> page.resource_version, page.continue_
        ('42', '')
    """

    items: list[M]
    metadata: dict[str, Any]
    api_version: str = ""
    kind: str = ""

    @property
    def resource_version(self) -> str:
        """``metadata.resourceVersion``: watch from here to see later changes."""
        return str(self.metadata.get("resourceVersion") or "")

    @property
    def continue_(self) -> str:
        """``metadata.continue`` (``""`` on the last page)."""
        return str(self.metadata.get("continue") or "")


class PatchType(str, enum.Enum):
    """Patch flavours and their content types. Strings ``"json"``, ``"merge"``, ``"strategic"``,
    ``"apply"`` are accepted wherever a :class:`PatchType` is.

    Strategic merge patch works on built-in types only (CRDs reject it with 415).
    """

    JSON = "application/json-patch+json"
    MERGE = "application/merge-patch+json"
    STRATEGIC = "application/strategic-merge-patch+json"
    APPLY = "application/apply-patch+yaml"

    @classmethod
    def parse(cls, value: PatchType | str) -> PatchType:
        """Accept a member, its content type, or a short name."""
        if isinstance(value, PatchType):
            return value
        short = {
            "json": cls.JSON,
            "merge": cls.MERGE,
            "strategic": cls.STRATEGIC,
            "apply": cls.APPLY,
        }
        if value.lower() in short:
            return short[value.lower()]
        return cls(value)


class Preconditions:
    """Delete preconditions: refuse the delete unless the object still has this uid and/or
    resourceVersion (409 Conflict otherwise).

    Example::

        await client.delete(("v1", "ConfigMap"), "x", namespace="ns",
                            preconditions=Preconditions(uid=obj["metadata"]["uid"]))
    """

    __slots__ = ("resource_version", "uid")

    def __init__(self, *, uid: str | None = None, resource_version: str | None = None) -> None:
        self.uid = uid
        self.resource_version = resource_version

    def to_dict(self) -> dict[str, str]:
        """The ``DeleteOptions.preconditions`` JSON."""
        out: dict[str, str] = {}
        if self.uid:
            out["uid"] = self.uid
        if self.resource_version:
            out["resourceVersion"] = self.resource_version
        return out

    def __repr__(self) -> str:
        return f"Preconditions(uid={self.uid!r}, resource_version={self.resource_version!r})"
