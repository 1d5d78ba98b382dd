"""Event handlers: which keys an event should enqueue (controller-runtime's ``handler``).

A handler maps an event on *some* object to :class:`Request` keys of the objects the controller
reconciles. Three cover nearly every controller:

- :func:`enqueue_request_for_object`: the object itself (for the controller's own kind).
- :func:`enqueue_request_for_owner`: the object's owner of a given group and kind, found through
  ``metadata.ownerReferences`` (by default only the *controller* owner), for owned kinds.
- :func:`enqueue_requests_from_map_func`: whatever a function of the object returns.

A plain function ``obj -> Iterable[Request]`` is accepted wherever a handler is
(:func:`as_event_handler`); it is treated as a map function.

The owner handler needs to know whether the owner kind is namespaced: a cluster-scoped owner's
key has no namespace, whatever the owned object's namespace (else one owner of ConfigMaps in two
namespaces would be two keys, reconciled at once). Like controller-runtime's
``EnqueueRequestForOwner`` (pkg/handler/enqueue_owner.go), it asks the RESTMapper: a
:class:`~kubectrl.runtime.KindSource` resolves the scope through discovery when it starts.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Protocol, TypeAlias, runtime_checkable

from kubectrl import kinds as _kinds
from kubectrl.objects import metadata_of, split_api_version
from kubectrl.runtime._event import (
    CreateEvent,
    DeleteEvent,
    Event,
    GenericEvent,
    Object,
    UpdateEvent,
)
from kubectrl.runtime._reconcile import Request

__all__ = [
    "EventHandler",
    "EventHandlerLike",
    "MapFunc",
    "MapHandler",
    "OwnerHandler",
    "ScopeResolver",
    "as_event_handler",
    "enqueue_request_for_object",
    "enqueue_request_for_owner",
    "enqueue_requests_from_map_func",
    "owner_requests",
    "resolve_handler_scope",
]

MapFunc: TypeAlias = Callable[[Object], Iterable[Request]]
Enqueue: TypeAlias = Callable[[Request], None]


@runtime_checkable
class EventHandler(Protocol):
    """Turns one event into zero or more keys, passed to ``enqueue``."""

    def handle(self, event: Event, enqueue: Enqueue) -> None:
        """Enqueue the requests ``event`` calls for."""
        ...


EventHandlerLike: TypeAlias = "EventHandler | MapFunc"


class MapHandler:
    """An :class:`EventHandler` built from a function of one object.

    For updates, ``update_maps_old`` decides whether the old object is mapped too (so a change
    of owner or of labels also enqueues the previous target); keys are de-duplicated per event.

    Example::

        handler = MapHandler(lambda obj: [Request("ns", obj["metadata"]["name"])])
    """

    def __init__(self, map_func: MapFunc, *, update_maps_old: bool = True, name: str = "") -> None:
        self._map = map_func
        self._update_maps_old = update_maps_old
        self._name = name or getattr(map_func, "__qualname__", repr(map_func))

    def requests(self, event: Event) -> list[Request]:
        """The keys ``event`` maps to, de-duplicated, in order."""
        if isinstance(event, UpdateEvent):
            objects = (
                (event.object_old, event.object_new)
                if self._update_maps_old
                else (event.object_new,)
            )
        elif isinstance(event, CreateEvent | DeleteEvent | GenericEvent):
            objects = (event.object,)
        else:  # pragma: no cover - typed away
            raise TypeError(f"unknown event {event!r}")
        seen: dict[Request, None] = {}
        for obj in objects:
            for request in self._map(obj):
                seen.setdefault(request, None)
        return list(seen)

    def handle(self, event: Event, enqueue: Enqueue) -> None:
        """Enqueue every key of :meth:`requests`."""
        for request in self.requests(event):
            enqueue(request)

    def __repr__(self) -> str:
        return f"MapHandler({self._name})"


def _request_for(obj: Object) -> Iterable[Request]:
    metadata = metadata_of(obj)
    name = metadata.get("name")
    if not name:
        return ()
    return (Request(str(metadata.get("namespace") or ""), str(name)),)


def enqueue_request_for_object() -> MapHandler:
    """Enqueue the object's own ``namespace/name`` (for updates, the new object's).

    Example::

        >>> h = enqueue_request_for_object()
        >>> h.requests(CreateEvent({"metadata": {"name": "a", "namespace": "ns"}}))
        [Request(namespace='ns', name='a')]
    """
    return MapHandler(_request_for, update_maps_old=False, name="enqueue_request_for_object")


def owner_requests(
    obj: Object, *, group: str, kind: str, controller_only: bool = True, namespaced: bool = True
) -> list[Request]:
    """Keys of ``obj``'s owners of ``group``/``kind`` (group+kind match; any version).

    A namespaced owner lives in the owned object's namespace (cross-namespace owner references
    are not allowed); a cluster-scoped one (``namespaced=False``) gets the key ``("", name)``.
    With ``controller_only`` only the reference marked ``controller: true`` counts, as
    controller-runtime's ``OnlyControllerOwner``.

    Example::

        >>> pod = {"metadata": {"namespace": "ns", "ownerReferences": [
        ...     {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "1",
        ...      "controller": True}]}}
        >>> owner_requests(pod, group="apps", kind="ReplicaSet")
        [Request(namespace='ns', name='rs')]
        >>> owner_requests(pod, group="apps", kind="ReplicaSet", namespaced=False)
        [Request(namespace='', name='rs')]
    """
    metadata = metadata_of(obj)
    namespace = str(metadata.get("namespace") or "") if namespaced else ""
    found: list[Request] = []
    for ref in metadata.get("ownerReferences") or ():
        if controller_only and not ref.get("controller"):
            continue
        ref_group, _ = split_api_version(str(ref.get("apiVersion") or ""))
        if ref_group != group or ref.get("kind") != kind or not ref.get("name"):
            continue
        request = Request(namespace, str(ref["name"]))
        if request not in found:
            found.append(request)
    return found


class _Scoped(Protocol):
    namespaced: bool


#: What resolves a kind's scope: a client's ``resource`` method (``AsyncClient.resource``),
#: returning something with a ``namespaced`` attribute (an :class:`~kubectrl.client.APIResource`).
ScopeResolver: TypeAlias = Callable[[tuple[str, str]], Awaitable[_Scoped]]


class OwnerHandler(MapHandler):
    """Enqueues the owners of one group and kind; see :func:`enqueue_request_for_owner`.

    ``namespaced`` is the owner kind's scope: given, or resolved through discovery by
    :meth:`resolve_scope` (a :class:`~kubectrl.runtime.KindSource` calls it on start). Until it
    is known, an event on a namespaced object raises :class:`RuntimeError` (logged by the
    source; the event is dropped) rather than guess a key.

    Example::

        handler = OwnerHandler("rbac.authorization.k8s.io", "ClusterRole", version="v1")
        await handler.resolve_scope(client.resource)      # ClusterRole: cluster-scoped
    """

    def __init__(
        self,
        group: str,
        kind: str,
        *,
        version: str = "",
        controller_only: bool = True,
        namespaced: bool | None = None,
    ) -> None:
        super().__init__(self._owners, name=f"enqueue_request_for_owner({group!r}, {kind!r})")
        self.group = group
        self.kind = kind
        # The core group's only version is v1; other groups need one to ask discovery.
        self.version = version or ("v1" if not group else "")
        self.controller_only = controller_only
        self.namespaced = namespaced

    async def resolve_scope(self, resolve: ScopeResolver) -> None:
        """Ask discovery (``resolve``, e.g. ``client.resource``) whether the owner is namespaced.

        No-op when the scope is already known. Raises :class:`ValueError` when only a group was
        given (no version to ask about), and what ``resolve`` raises for an unknown kind.
        """
        if self.namespaced is not None:
            return
        if not self.version:
            raise ValueError(
                f"{self!r}: cannot look up the scope of {self.kind} from the group "
                f"{self.group!r} alone; pass an apiVersion such as "
                f"'{self.group}/v1' or namespaced=True/False"
            )
        api_version = f"{self.group}/{self.version}" if self.group else self.version
        resource = await resolve((api_version, self.kind))
        self.namespaced = bool(resource.namespaced)

    def _owners(self, obj: Object) -> list[Request]:
        namespaced = self.namespaced
        if namespaced is None:
            if not metadata_of(obj).get("namespace"):
                namespaced = False  # a cluster-scoped object can only have cluster-scoped owners
            else:
                raise RuntimeError(
                    f"{self!r}: the scope of owner kind {self.kind} is unknown; use the handler "
                    "on a KindSource (it resolves it through discovery on start), await "
                    "resolve_scope(client.resource), or pass namespaced=True/False"
                )
        return owner_requests(
            obj,
            group=self.group,
            kind=self.kind,
            controller_only=self.controller_only,
            namespaced=namespaced,
        )


async def resolve_handler_scope(handler: object, resolve: ScopeResolver | None) -> None:
    """Resolve what ``handler`` needs from discovery before events flow (no-op for most).

    Sources call it on start. ``resolve`` ``None`` (no client at hand) leaves the handler as is.

    Example::

        await resolve_handler_scope(handler, client.resource)
    """
    if isinstance(handler, OwnerHandler) and resolve is not None:
        await handler.resolve_scope(resolve)


def enqueue_request_for_owner(
    owner_api_version_or_group: str | type[Any],
    owner_kind: str = "",
    *,
    controller_only: bool = True,
    namespaced: bool | None = None,
) -> OwnerHandler:
    """Enqueue the owner of the given type (for updates, the owners of old and new).

    The owner type is a model class (``V1Deployment``, a custom resource class: group, version
    and kind come from :func:`kubectrl.kinds.kind_info`, and so does the scope when the class
    knows it), or the owner's apiVersion (``"apps/v1"``, ``"v1"``) or group (``"apps"``, ``""``
    for core) followed by its kind; only group and kind are compared, so any served version
    matches. The owner kind's scope (``namespaced``) is looked up through discovery when the
    handler's :class:`~kubectrl.runtime.KindSource` starts, which needs the apiVersion form for
    a non-core group; or pass ``namespaced`` yourself. A cluster-scoped owner is enqueued as
    ``("", name)``, never under the owned object's namespace.

    Example::

        handler = enqueue_request_for_owner("samplecontroller.k8s.io/v1alpha1", "Foo")

        >>> from kubernetes.client.models import V1ReplicaSet
        >>> handler = enqueue_request_for_owner(V1ReplicaSet)
        >>> handler.group, handler.kind, handler.version, handler.namespaced
        ('apps', 'ReplicaSet', 'v1', True)
    """
    if isinstance(owner_api_version_or_group, type):
        info = _kinds.kind_info(owner_api_version_or_group)
        if owner_kind and owner_kind != info.kind:
            raise ValueError(
                f"enqueue_request_for_owner({owner_api_version_or_group.__name__}, "
                f"{owner_kind!r}): the class names kind {info.kind!r}; leave the kind out"
            )
        return OwnerHandler(
            info.group,
            info.kind,
            version=info.version,
            controller_only=controller_only,
            namespaced=namespaced if namespaced is not None else info.namespaced,
        )
    if not owner_kind:
        raise ValueError(
            f"enqueue_request_for_owner({owner_api_version_or_group!r}): pass the owner kind "
            "too, or a model class"
        )
    text = owner_api_version_or_group
    if "/" in text:
        group, version = split_api_version(text)
    elif text == "v1":
        group, version = "", "v1"
    else:
        group, version = text, ""
    return OwnerHandler(
        group, owner_kind, version=version, controller_only=controller_only, namespaced=namespaced
    )


def enqueue_requests_from_map_func(map_func: MapFunc) -> MapHandler:
    """Enqueue whatever ``map_func(obj)`` returns (for updates: of old and new).

    Example::

        def by_label(obj):
            target = obj["metadata"].get("labels", {}).get("foo")
            return [Request(obj["metadata"]["namespace"], target)] if target else []

        handler = enqueue_requests_from_map_func(by_label)
    """
    return MapHandler(map_func)


def as_event_handler(handler: EventHandlerLike) -> EventHandler:
    """An :class:`EventHandler` from a handler or a plain map function ``obj -> requests``."""
    if isinstance(handler, EventHandler):
        return handler
    if callable(handler):
        return MapHandler(handler)
    raise TypeError(f"not an event handler: {handler!r}")
