"""Kubernetes Events about objects, with client-go's correlation (``tools/events`` for
events.k8s.io/v1, ``tools/record`` for core v1).

An :class:`EventRecorder` turns ``recorder.event(obj, "Warning", "Failed", "...")`` into an
Event about ``obj``: through events.k8s.io/v1 (``EventBroadcaster(sink, api=EVENTS_V1)``, what
``manager.event_recorder`` uses) isomorphic events become one Event with a ``series``
(:class:`SeriesCorrelator`); through core v1 (the broadcaster's default, :data:`CORE_V1`) the
Event's ``involvedObject`` is ``obj``. The :class:`EventBroadcaster` queues events (1000,
dropping beyond), and one task correlates and writes them so that a controller stuck in a
retry loop does not flood the API server; through core v1:

- identical events bump ``count`` on one Event (a PATCH) instead of creating new ones;
- more than 10 similar events (same object, type and reason, different messages) within 10
  minutes are combined into one ``"(combined from similar events): ..."`` Event;
- a token bucket per source + object (burst 25, one per 5 minutes) drops the rest;
- failed writes are retried up to 12 times, 10 s apart.

Example::

    broadcaster = EventBroadcaster(ClientEventSink(client))
    broadcaster.start()
    recorder = broadcaster.new_recorder("foo-controller")
    recorder.event(foo, NORMAL, "Synced", "Foo synced successfully")
    ...
    await broadcaster.shutdown()

See ``docs/events.md``.
"""

from __future__ import annotations

from kubectrl._internal.exports import publish as _publish
from kubectrl.events._broadcaster import ClientEventSink, EventBroadcaster, EventSink
from kubectrl.events._correlator import (
    CorrelationResult,
    CorrelatorOptions,
    EventCorrelator,
)
from kubectrl.events._recorder import (
    CORE_V1,
    EVENTS_V1,
    NORMAL,
    WARNING,
    EventRecorder,
    object_reference,
)
from kubectrl.events._series import SeriesCorrelator

__all__ = [
    "CORE_V1",
    "EVENTS_V1",
    "NORMAL",
    "WARNING",
    "ClientEventSink",
    "CorrelationResult",
    "CorrelatorOptions",
    "EventBroadcaster",
    "EventCorrelator",
    "EventRecorder",
    "EventSink",
    "SeriesCorrelator",
    "object_reference",
]

_publish(__name__, globals(), __all__)
