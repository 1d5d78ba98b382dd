"""Sources: where a controller's keys come from.

A :class:`Source` feeds a controller's queue. The informer-backed source (``kind`` sources of
the Builder) lives with the cache; :class:`ChannelSource` here delivers events you send it,
e.g. from an external system or a test. Both run events through predicates and a handler with
:func:`dispatch`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from typing import Protocol, runtime_checkable

from kubectrl.objects import metadata_of
from kubectrl.runtime._event import (
    CreateEvent,
    DeleteEvent,
    Event,
    GenericEvent,
    Object,
    UpdateEvent,
)
from kubectrl.runtime._handler import (
    EventHandlerLike,
    as_event_handler,
    enqueue_request_for_object,
)
from kubectrl.runtime._predicate import PredicateLike, as_predicate, matches
from kubectrl.runtime._reconcile import Request

__all__ = ["ChannelSource", "Enqueue", "Source", "dispatch"]

log = logging.getLogger("kubectrl.runtime.source")

Enqueue = Callable[[Request], None]


@runtime_checkable
class Source(Protocol):
    """Something that enqueues requests into a controller.

    ``start(enqueue)`` begins delivery and returns (it must not block until the source ends);
    ``wait_for_sync(timeout)`` returns once the source has delivered its initial state and raises
    (with a message that names the reason: RBAC, a missing CRD, ...) when it cannot.
    ``name`` identifies the source in errors and logs.
    """

    @property
    def name(self) -> str:
        """Human name, e.g. ``"kind source: apps/v1, Kind=Deployment"``."""
        ...

    async def start(self, enqueue: Enqueue) -> None:
        """Begin delivering requests to ``enqueue``."""
        ...

    async def wait_for_sync(self, timeout: float) -> None:
        """Return once synced; raise on failure or after ``timeout`` seconds."""
        ...


def dispatch(
    event: Event,
    handler: EventHandlerLike,
    predicates: Sequence[PredicateLike],
    enqueue: Enqueue,
) -> None:
    """Pass ``event`` through every predicate, then the handler, into ``enqueue``.

    A predicate or handler that raises is logged and the event dropped; the source goes on.

    Example::

        dispatch(CreateEvent(obj), enqueue_request_for_object(), [generation_changed], queue.add)
    """
    try:
        for predicate in predicates:
            if not matches(as_predicate(predicate), event):
                return
        as_event_handler(handler).handle(event, enqueue)
    except Exception as err:
        obj = event.object_new if isinstance(event, UpdateEvent) else event.object
        meta = metadata_of(obj)
        target = f"{meta.get('namespace') or ''}/{meta.get('name') or ''}".lstrip("/")
        log.exception(
            "event handler or predicate failed on %s of %s; event dropped: %s: %s",
            type(event).__name__,
            target or "an object without name",
            type(err).__name__,
            err,
            extra={
                "event_type": type(event).__name__,
                "object": target,
                "handler": repr(handler),
                "error": str(err),
            },
        )


class ChannelSource:
    """A source you push events into (controller-runtime's ``source.Channel``).

    ``send(obj_or_event)`` delivers a :class:`GenericEvent` (or any event) through the
    predicates and handler (default: enqueue the object itself). Events sent before the
    controller starts are kept and delivered at start. Always synced.

    Example::

        external = ChannelSource("webhook-events")
        controller = Controller("foo", reconcile, sources=[external])
        external.send({"metadata": {"namespace": "ns", "name": "foo-1"}})
    """

    def __init__(
        self,
        name: str = "channel",
        *,
        handler: EventHandlerLike | None = None,
        predicates: Iterable[PredicateLike] = (),
    ) -> None:
        self._name = name
        self._handler = handler if handler is not None else enqueue_request_for_object()
        self._predicates = list(predicates)
        self._enqueue: Enqueue | None = None
        self._backlog: list[Event] = []

    @property
    def name(self) -> str:
        """The source's name."""
        return self._name

    async def start(self, enqueue: Enqueue) -> None:
        """Start delivering (including events sent before)."""
        self._enqueue = enqueue
        backlog, self._backlog = self._backlog, []
        for event in backlog:
            dispatch(event, self._handler, self._predicates, enqueue)

    async def wait_for_sync(self, timeout: float) -> None:
        """Always synced."""

    def send(self, item: Object | Event) -> None:
        """Deliver an object (as a :class:`GenericEvent`) or an event."""
        event: Event = (
            item
            if isinstance(item, CreateEvent | UpdateEvent | DeleteEvent | GenericEvent)
            else GenericEvent(item)
        )
        if self._enqueue is None:
            self._backlog.append(event)
        else:
            dispatch(event, self._handler, self._predicates, self._enqueue)

    def __repr__(self) -> str:
        return f"ChannelSource({self._name!r})"
