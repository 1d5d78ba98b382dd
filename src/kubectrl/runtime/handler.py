"""Event handlers and the events they handle (controller-runtime's ``pkg/handler`` and
``pkg/event``).

Example::

    from kubectrl.runtime.handler import CreateEvent
"""

from __future__ import annotations

from kubectrl._internal.exports import publish as _publish
from kubectrl.runtime._event import CreateEvent, DeleteEvent, Event, GenericEvent, UpdateEvent
from kubectrl.runtime._handler import (
    EventHandler,
    MapHandler,
    OwnerHandler,
    enqueue_request_for_object,
    enqueue_request_for_owner,
    enqueue_requests_from_map_func,
)

__all__ = [
    "CreateEvent",
    "DeleteEvent",
    "Event",
    "EventHandler",
    "GenericEvent",
    "MapHandler",
    "OwnerHandler",
    "UpdateEvent",
    "enqueue_request_for_object",
    "enqueue_request_for_owner",
    "enqueue_requests_from_map_func",
]

_publish(__name__, globals(), __all__, private_of="kubectrl.runtime")
