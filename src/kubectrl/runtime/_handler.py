"""Event handlers: which keys an event should enqueue (controller-runtime's ``handler``).

A handler maps an event on *some* object to :class:`Request` keys of the objects the controller
reconciles. Three cover nearly every controller:

- :func:`enqueue_request_for_object`: the object itself (for the controller's own kind).
- :func:`enqueue_request_for_owner`: the object's owner of a given group and kind, found through
  ``metadata.ownerReferences`` (by default only the *controller* owner), for owned kinds.
- :func:`enqueue_requests_from_map_func`: whatever a function of the object returns.

A plain function ``obj -> Iterable[Request]`` is accepted wherever a handler is
(:func:`as_event_handler`); it is treated as a map function.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Protocol, TypeAlias, runtime_checkable

from kubectrl.objects import split_api_version
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
    "as_event_handler",
    "enqueue_request_for_object",
    "enqueue_request_for_owner",
    "enqueue_requests_from_map_func",
    "owner_requests",
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
    metadata = obj.get("metadata") or {}
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
    obj: Object, *, group: str, kind: str, controller_only: bool = True
) -> list[Request]:
    """Keys of ``obj``'s owners of ``group``/``kind`` (group+kind match; any version).

    Owners live in the owned object's namespace (cross-namespace owner references are not
    allowed), or are cluster-scoped when ``obj`` is. With ``controller_only`` only the reference
    marked ``controller: true`` counts, as controller-runtime's ``OnlyControllerOwner``.

    Example::

        >>> pod = {"metadata": {"namespace": "ns", "ownerReferences": [
        ...     {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "1",
        ...      "controller": True}]}}
        >>> owner_requests(pod, group="apps", kind="ReplicaSet")
        [Request(namespace='ns', name='rs')]
    """
    metadata = obj.get("metadata") or {}
    namespace = str(metadata.get("namespace") or "")
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


def enqueue_request_for_owner(
    owner_api_version_or_group: str, owner_kind: str, *, controller_only: bool = True
) -> MapHandler:
    """Enqueue the owner of the given type (for updates, the owners of old and new).

    The first argument is the owner's group (``"apps"``, ``""`` for core) or an apiVersion
    (``"apps/v1"``); only group and kind are compared, so any served version matches.

    Example::

        handler = enqueue_request_for_owner("samplecontroller.k8s.io/v1alpha1", "Foo")
    """
    text = owner_api_version_or_group
    # "apps/v1" -> "apps"; the core apiVersion "v1" -> ""; otherwise it already is a group.
    group = split_api_version(text)[0] if "/" in text else ("" if text == "v1" else text)

    def map_owner(obj: Object) -> Iterable[Request]:
        return owner_requests(obj, group=group, kind=owner_kind, controller_only=controller_only)

    return MapHandler(map_owner, name=f"enqueue_request_for_owner({group!r}, {owner_kind!r})")


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
