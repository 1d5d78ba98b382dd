"""The event recorder: builds core/v1 Events about an object and hands them to the broadcaster."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kubectrl import kinds
from kubectrl.events._correlator import format_time

if TYPE_CHECKING:
    from pydantic import BaseModel

    from kubectrl.events._broadcaster import EventBroadcaster

__all__ = ["NORMAL", "WARNING", "EventRecorder"]

log = logging.getLogger("kubectrl.events")

#: Event type for things that went as expected.
NORMAL = "Normal"
#: Event type for things a human may need to look at.
WARNING = "Warning"


def object_reference(obj: Mapping[str, Any], field_path: str = "") -> dict[str, Any]:
    """The ``involvedObject`` reference of an object dict (kind, apiVersion, namespace, name,
    uid, resourceVersion), as client-go's ``ref.GetReference``.

    Example::

        >>> object_reference({"apiVersion": "v1", "kind": "ConfigMap",
        ...                   "metadata": {"name": "a", "namespace": "ns"}})["kind"]
        'ConfigMap'
    """
    metadata = obj.get("metadata") or {}
    ref: dict[str, Any] = {
        "kind": obj.get("kind", ""),
        "apiVersion": obj.get("apiVersion", ""),
        "name": metadata.get("name", ""),
    }
    for source, target in (
        ("namespace", "namespace"),
        ("uid", "uid"),
        ("resourceVersion", "resourceVersion"),
    ):
        if metadata.get(source):
            ref[target] = metadata[source]
    if field_path:
        ref["fieldPath"] = field_path
    return ref


class EventRecorder:
    """Records events about objects, as client-go's ``record.EventRecorder``.

    Make one with :meth:`EventBroadcaster.new_recorder`. ``event(obj, type, reason, message)``
    builds a core/v1 Event whose ``involvedObject`` is ``obj`` (which needs ``apiVersion``,
    ``kind`` and ``metadata.name``), stamps ``source``, ``reportingComponent`` and
    ``reportingInstance``, and queues it; correlation, spam filtering and the write happen in the
    broadcaster's task.

    Guarantees: never blocks, never raises for a bad event (it is logged and dropped); safe from
    any thread, so sync reconcilers running in worker threads can use it. Caveats: an event is
    written some time later, or not at all (queue full, spam filter, server rejects it); do not
    use events as a data channel. Events on cluster-scoped objects go to namespace ``default``.

    Example::

        recorder = broadcaster.new_recorder("foo-controller")
        recorder.event(foo, WARNING, "ErrResourceExists", "Resource 'web' already exists")
        recorder.eventf(foo, NORMAL, "Synced", "Foo %s synced", foo["metadata"]["name"])
    """

    def __init__(
        self,
        broadcaster: EventBroadcaster,
        *,
        component: str,
        host: str = "",
        reporting_instance: str | None = None,
    ) -> None:
        self._broadcaster = broadcaster
        self._component = component
        self._host = host
        self._reporting_instance = reporting_instance if reporting_instance is not None else host

    @property
    def component(self) -> str:
        """``source.component`` and ``reportingComponent`` of the events."""
        return self._component

    def event(
        self, obj: Mapping[str, Any] | BaseModel, type: str, reason: str, message: str
    ) -> None:
        """Record an event of ``type`` (``"Normal"`` or ``"Warning"``) about ``obj``.

        ``obj`` is an object dict or a typed model (``V1Deployment``, a custom resource).
        """
        self._generate(obj, type, reason, message)

    def eventf(
        self,
        obj: Mapping[str, Any] | BaseModel,
        type: str,
        reason: str,
        message_format: str,
        *args: object,
    ) -> None:
        """Like :meth:`event` with a ``%``-format message: ``eventf(o, NORMAL, "R", "%s", x)``."""
        self._generate(obj, type, reason, message_format % args if args else message_format)

    def _generate(
        self,
        obj: Mapping[str, Any] | BaseModel,
        event_type: str,
        reason: str,
        message: str,
    ) -> None:
        if event_type not in (NORMAL, WARNING):
            log.error(
                "unsupported event type %r (want Normal or Warning), dropping event %s",
                event_type,
                reason,
                extra={"type": event_type, "reason": reason},
            )
            return
        ref = object_reference(obj if isinstance(obj, Mapping) else kinds.to_dict(obj))
        if not ref["name"] or not ref["kind"]:
            log.error(
                "cannot record event %s: the object has no kind or name",
                reason,
                extra={"reason": reason},
            )
            return
        stamp = format_time(self._broadcaster.clock.wall())
        metadata: dict[str, Any] = {
            "name": f"{ref['name']}.{self._broadcaster.unique_name_suffix()}",
            "namespace": ref.get("namespace") or "default",
        }
        event: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": metadata,
            "involvedObject": ref,
            "reason": reason,
            "message": message,
            "type": event_type,
            "source": {
                "component": self._component,
                **({"host": self._host} if self._host else {}),
            },
            "firstTimestamp": stamp,
            "lastTimestamp": stamp,
            "count": 1,
            "reportingComponent": self._component,
            "reportingInstance": self._reporting_instance,
        }
        self._broadcaster.action(event)

    def __repr__(self) -> str:
        return f"EventRecorder(component={self._component!r})"
