"""The event recorder: builds core/v1 Events about an object and hands them to the broadcaster.

The recorder knows the broadcaster only through :class:`EventQueue` (what it needs of it), so
this module does not import ``_broadcaster``; ``_broadcaster`` imports this one.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from kubectrl import kinds
from kubectrl.events._correlator import format_time
from kubectrl.events._series import format_micro_time

if TYPE_CHECKING:
    from pydantic import BaseModel

    from kubectrl._internal.clock import Clock

__all__ = [
    "CORE_V1",
    "EVENTS_V1",
    "NORMAL",
    "WARNING",
    "EventQueue",
    "EventRecorder",
    "object_reference",
]

log = logging.getLogger("kubectrl.events")

#: Event type for things that went as expected.
NORMAL = "Normal"
#: Event type for things a human may need to look at.
WARNING = "Warning"

#: Events written through ``events.k8s.io/v1`` (client-go's ``tools/events``; controller-runtime
#: 0.23's ``GetEventRecorder``): a ``series`` for repeats, ``action``, ``related``.
EVENTS_V1 = "events.k8s.io/v1"
#: Events written through core ``v1`` (client-go's ``tools/record``): a growing ``count``.
CORE_V1 = "v1"

# pkg/apis/core/validation/events.go: what the API server refuses in an events.k8s.io/v1 Event.
_EVENTS_V1_LIMITS = {"action": 128, "reason": 128, "reportingInstance": 128, "note": 1024}

# How many distinct bad message formats a recorder remembers having warned about.
_WARNED_FORMATS_MAX = 256

# One printf conversion: %[(key)][flags][width][.precision][length]conversion. An empty
# conversion is a "%" at the very end of the format.
_DIRECTIVE = re.compile(
    r"%(?:\((?P<key>[^)]*)\))?(?P<flags>[-#0 +]*)(?P<width>\*|\d+)?"
    r"(?:\.(?P<precision>\*|\d*))?[hlL]?(?P<conversion>.?)",
    re.DOTALL,
)


class EventQueue(Protocol):
    """What an :class:`EventRecorder` needs of its broadcaster (:class:`EventBroadcaster` has it).

    ``clock`` stamps the event, ``unique_name_suffix()`` names it, ``action(event)`` queues it
    (``False`` when it was dropped; it never raises).
    """

    @property
    def clock(self) -> Clock:
        """The clock whose wall time stamps events."""
        ...

    def unique_name_suffix(self) -> str:
        """A suffix that makes a new Event's name unique."""
        ...

    def action(self, event: dict[str, Any]) -> bool:
        """Queue ``event`` for writing; ``False`` when it was dropped."""
        ...


def _safe_str(value: object) -> str:
    try:
        return str(value)
    except Exception as err:  # a user's __str__ must not break the event
        return f"<str() raised {type(err).__name__}>"


def _shown(value: object) -> str:
    return f"{type(value).__name__}={_safe_str(value)}"


def _percent(spec: str, value: object) -> str | None:
    """``spec % (value,)``, or ``None`` when the value does not fit the conversion."""
    try:
        return spec % (value,)
    except Exception:  # wrong type, unknown conversion, or a raising __str__
        return None


def sprintf(message_format: str, args: tuple[object, ...]) -> tuple[str, str | None]:
    """Format like ``message_format % args``, never raising; ``(message, problem or None)``.

    A single non-empty mapping argument fills ``%(key)s`` conversions, as in :mod:`logging`.
    When the arguments do not fit the format, each conversion that fits is formatted and each
    that does not shows what went wrong in place, the way Go's ``fmt.Sprintf`` (and so
    client-go's ``Eventf``) does: ``%!d(str=many)`` for a value of the wrong type or an unknown
    conversion, ``%!s(MISSING)`` for a missing argument, ``%!(EXTRA str=x)`` for arguments left
    over, ``%!(NOVERB)`` for a lone ``%`` at the end, ``%!(BADWIDTH)`` / ``%!(BADPREC)`` for a
    ``*`` given a non-integer. ``problem`` is Python's own complaint, for the log.

    Example::

        >>> sprintf("%d replicas", ("many",))
        ('%!d(str=many) replicas', 'TypeError: %d format: a real number is required, not str')
        >>> sprintf("%s and %s", ("a",))[0]
        'a and %!s(MISSING)'
    """
    mapping = args[0] if len(args) == 1 and isinstance(args[0], Mapping) and args[0] else None
    try:
        return message_format % (mapping if mapping is not None else args), None
    except Exception as err:  # shown in the message instead, below
        problem = f"{type(err).__name__}: {_safe_str(err)}"
    out: list[str] = []
    position = 0
    next_arg = 0

    def take() -> tuple[bool, object]:
        nonlocal next_arg
        if next_arg >= len(args):
            return False, None
        next_arg += 1
        return True, args[next_arg - 1]

    for match in _DIRECTIVE.finditer(message_format):
        out.append(message_format[position : match.start()])
        position = match.end()
        conversion = match["conversion"]
        if not conversion:
            out.append("%!(NOVERB)")
            continue
        if conversion == "%":
            out.append("%")
            continue
        width, precision = match["width"] or "", match["precision"]
        key = match["key"]
        if key is None:
            if width == "*":
                found, value = take()
                width = str(value) if found and isinstance(value, int) else ""
                if not width:
                    out.append("%!(BADWIDTH)")
            if precision == "*":
                found, value = take()
                precision = str(value) if found and isinstance(value, int) else None
                if precision is None:
                    out.append("%!(BADPREC)")
        elif width == "*" or precision == "*":
            # Python refuses "*" next to a mapping key; so does this.
            out.append(f"%!{conversion}(BADWIDTH)")
            continue
        spec = "%" + match["flags"] + width + ("" if precision is None else "." + precision)
        spec += conversion
        if key is not None:
            if mapping is None or key not in mapping:
                out.append(f"%!{conversion}(MISSING {key!r})")
                continue
            value = mapping[key]
        else:
            found, value = take()
            if not found:
                out.append(f"%!{conversion}(MISSING)")
                continue
        text = _percent(spec, value)
        out.append(text if text is not None else f"%!{conversion}({_shown(value)})")
    out.append(message_format[position:])
    if mapping is None and next_arg < len(args):
        out.append("%!(EXTRA " + ", ".join(_shown(v) for v in args[next_arg:]) + ")")
    return "".join(out), problem


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


def _model_reference(obj: BaseModel) -> dict[str, Any]:
    """:func:`object_reference` of a model, read from its attributes (no conversion of the
    whole object to a dict); a model without its apiVersion, kind or metadata set goes through
    :func:`kubectrl.kinds.to_dict`, which fills them from its class."""
    api_version = getattr(obj, "api_version", None)
    kind = getattr(obj, "kind", None)
    meta = getattr(obj, "metadata", None)
    if not (api_version and kind) or meta is None:
        return object_reference(kinds.to_dict(obj))
    metadata = {
        "name": getattr(meta, "name", None),
        "namespace": getattr(meta, "namespace", None),
        "uid": getattr(meta, "uid", None),
        "resourceVersion": getattr(meta, "resource_version", None),
    }
    return object_reference(
        {
            "apiVersion": api_version,
            "kind": kind,
            "metadata": {key: value for key, value in metadata.items() if value is not None},
        }
    )


class EventRecorder:
    """Records events about objects: client-go's ``tools/events`` recorder for
    ``events.k8s.io/v1``, or its ``tools/record`` recorder for core ``v1``.

    Make one with :meth:`EventBroadcaster.new_recorder` (or ``manager.event_recorder``).
    ``event(obj, type, reason, message)`` builds an Event about ``obj`` (which needs
    ``apiVersion``, ``kind`` and ``metadata.name``) and queues it; correlation and the write
    happen in the broadcaster's task. Through ``events.k8s.io/v1`` (``api`` :data:`EVENTS_V1`)
    the Event has ``regarding`` (``obj``), ``related`` (the ``related=`` object), ``action``
    (``action=``, by default the reason), ``note``, ``eventTime``, ``reportingController`` and
    ``reportingInstance``; through core ``v1`` (:data:`CORE_V1`) ``involvedObject``,
    ``message``, ``source``, ``count`` and first/last timestamps.

    Guarantees: never blocks; safe from any thread, so sync reconcilers running in worker
    threads can use it. The API server decides what is an Event: through core ``v1`` any
    ``type`` is sent (the server stores ``"SomeType"`` and ``"Error"``); through
    ``events.k8s.io/v1`` a ``type`` other than ``Normal``/``Warning``, an empty or too long
    ``reason`` or ``action`` (128) or a note over 1024 characters is refused here with a
    ``ValueError`` naming the field, as the server would refuse it. An object it cannot
    reference is logged and dropped. An ``eventf`` whose arguments do not fit its format is
    still recorded, with each problem shown in place as Go's ``fmt.Sprintf`` does
    (``%!d(str=many)``), and logged once per format as a warning.
    Caveats: an event is written some time later, or not at all (queue full, spam filter, server
    rejects it); do not use events as a data channel. Events on cluster-scoped objects go to
    namespace ``default``.

    Example::

        recorder = broadcaster.new_recorder("foo-controller")
        recorder.event(foo, WARNING, "ErrResourceExists", "Resource 'web' already exists")
        recorder.eventf(foo, NORMAL, "Synced", "Foo %s synced", foo["metadata"]["name"])
        recorder.event(foo, NORMAL, "Scaled", "scaled to 3", action="Scale", related=deploy)
    """

    def __init__(
        self,
        broadcaster: EventQueue,
        *,
        component: str,
        host: str = "",
        reporting_instance: str | None = None,
        api: str = CORE_V1,
    ) -> None:
        if api not in (EVENTS_V1, CORE_V1):
            raise ValueError(f"api must be {EVENTS_V1!r} or {CORE_V1!r}, not {api!r}")
        self._broadcaster = broadcaster
        self._component = component
        self._host = host
        self._reporting_instance = reporting_instance if reporting_instance is not None else host
        self._api = api
        if api == EVENTS_V1:
            _check_reporting(component, self._reporting_instance)
        self._warned_lock = threading.Lock()
        self._warned_formats: set[str] = set()

    @property
    def component(self) -> str:
        """``reportingController`` (and core/v1 ``source.component``) of the events."""
        return self._component

    @property
    def api(self) -> str:
        """The API the events are written through: :data:`EVENTS_V1` or :data:`CORE_V1`."""
        return self._api

    def event(
        self,
        obj: Mapping[str, Any] | BaseModel,
        type: str,
        reason: str,
        message: str,
        *,
        action: str | None = None,
        related: Mapping[str, Any] | BaseModel | None = None,
    ) -> None:
        """Record an event of ``type`` (``"Normal"`` or ``"Warning"``) about ``obj``.

        ``obj`` (and ``related``) is an object dict or a typed model (``V1Deployment``, a
        custom resource). ``action`` is what was done or failed (events.k8s.io/v1 requires
        one: by default the ``reason``).
        """
        self._generate(obj, type, reason, message, action, related)

    def eventf(
        self,
        obj: Mapping[str, Any] | BaseModel,
        type: str,
        reason: str,
        message_format: str,
        *args: object,
        action: str | None = None,
        related: Mapping[str, Any] | BaseModel | None = None,
    ) -> None:
        """Like :meth:`event` with a ``%``-format message: ``eventf(o, NORMAL, "R", "%s", x)``.

        Without ``args`` the message is used as written. A single mapping argument fills
        ``%(key)s`` conversions. Arguments that do not fit the format never raise: the event
        is recorded with each problem shown in place (``%!d(str=many)``, as Go's
        ``fmt.Sprintf`` renders it) and the format is logged once as a warning.
        """
        if not args:
            self._generate(obj, type, reason, message_format, action, related)
            return
        message, problem = sprintf(message_format, args)
        if problem is not None and self._first_warning(message_format):
            log.warning(
                "event message format %r does not fit its arguments (%s); recording %r",
                message_format,
                problem,
                message,
                extra={
                    "component": self._component,
                    "reason": reason,
                    "message_format": message_format,
                    "problem": problem,
                },
            )
        self._generate(obj, type, reason, message, action, related)

    def _first_warning(self, message_format: str) -> bool:
        with self._warned_lock:
            if message_format in self._warned_formats:
                return False
            if len(self._warned_formats) < _WARNED_FORMATS_MAX:
                self._warned_formats.add(message_format)
            return True

    def _reference(self, obj: Mapping[str, Any] | BaseModel, reason: str) -> dict[str, Any] | None:
        try:
            ref = object_reference(obj) if isinstance(obj, Mapping) else _model_reference(obj)
        except Exception as err:  # the promise: a bad object is logged, not raised
            log.error(
                "cannot record event %s about a %s: %s",
                reason,
                type(obj).__name__,
                _safe_str(err),
                extra={"reason": reason},
            )
            return None
        if not ref["name"] or not ref["kind"]:
            log.error(
                "cannot record event %s: the object has no kind or name",
                reason,
                extra={"reason": reason},
            )
            return None
        return ref

    def _generate(
        self,
        obj: Mapping[str, Any] | BaseModel,
        event_type: str,
        reason: str,
        message: str,
        action: str | None,
        related: Mapping[str, Any] | BaseModel | None,
    ) -> None:
        if self._api == EVENTS_V1:
            action = reason if action is None else action
            _check_events_v1(event_type, reason, action, message)
        ref = self._reference(obj, reason)
        if ref is None:
            return
        related_ref = self._reference(related, reason) if related is not None else None
        if related is not None and related_ref is None:
            return
        metadata: dict[str, Any] = {
            "name": f"{ref['name']}.{self._broadcaster.unique_name_suffix()}",
            "namespace": ref.get("namespace") or "default",
        }
        event: dict[str, Any]
        if self._api == EVENTS_V1:
            event = {
                "apiVersion": EVENTS_V1,
                "kind": "Event",
                "metadata": metadata,
                "eventTime": format_micro_time(self._broadcaster.clock.wall()),
                "reportingController": self._component,
                "reportingInstance": self._reporting_instance,
                "action": action,
                "reason": reason,
                "regarding": ref,
                "note": message,
                "type": event_type,
            }
            if related_ref is not None:
                event["related"] = related_ref
            self._broadcaster.action(event)
            return
        stamp = format_time(self._broadcaster.clock.wall())
        event = {
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
        if action is not None:
            event["action"] = action
        if related_ref is not None:
            event["related"] = related_ref
        self._broadcaster.action(event)

    def __repr__(self) -> str:
        return f"EventRecorder(component={self._component!r}, api={self._api!r})"


def _check_reporting(component: str, instance: str) -> None:
    """The reporting controller and instance events.k8s.io/v1 requires (a qualified name; 1 to
    128 characters), refused when the recorder is made rather than on every event."""
    if not _QUALIFIED.fullmatch(component) or len(component.rpartition("/")[2]) > 63:
        raise ValueError(
            f"reporting controller {component!r} is not a qualified name (events.k8s.io/v1 "
            "requires one: 'name' or 'example.com/name', alphanumerics, '-', '_', '.')"
        )
    if not instance or len(instance) > _EVENTS_V1_LIMITS["reportingInstance"]:
        raise ValueError(
            f"reporting instance {instance!r} must have 1 to 128 characters (events.k8s.io/v1)"
        )


_QUALIFIED = re.compile(
    r"(?:[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*/)?"
    r"[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?"
)


def _check_events_v1(event_type: str, reason: str, action: str, note: str) -> None:
    """Refuse what the API server refuses in an events.k8s.io/v1 Event, naming the field."""
    if event_type not in (NORMAL, WARNING):
        raise ValueError(
            f"event type {event_type!r} is refused by events.k8s.io/v1 (Normal or Warning); "
            "core v1 stores any type: ask for a recorder with api='v1'"
        )
    for field, value in (("reason", reason), ("action", action), ("note", note)):
        limit = _EVENTS_V1_LIMITS[field]
        if field != "note" and not value:
            raise ValueError(f"event {field} must not be empty (events.k8s.io/v1)")
        if len(value) > limit:
            raise ValueError(
                f"event {field} has {len(value)} characters; events.k8s.io/v1 allows {limit}"
            )
