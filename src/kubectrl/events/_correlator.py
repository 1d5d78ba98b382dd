"""client-go's event correlation (``tools/record/events_cache.go``) as plain, clock-driven logic.

Three steps run on every event before it is written, in this order:

1. **Aggregate**: events that are *similar* (same source, involved object, type, reason and
   reporting controller/instance, but different messages) are counted per 10-minute sliding
   window. Once 10 distinct messages have been seen, further similar events are replaced by one
   ``"(combined from similar events): <message>"`` event whose ``count`` grows instead.
2. **Observe**: an event identical to one already written (same key, message included) becomes a
   PATCH of that Event's ``count``, ``lastTimestamp`` and ``message`` instead of a new object.
3. **Spam filter**: a token bucket per source + involved object (burst 25, one token per 300 s)
   drops events from an object that keeps producing them.

Every cache is an LRU of 4096 entries, so memory is bounded whatever the number of objects.
The correlator is not thread-safe: the broadcaster's single writer task owns it.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any, Generic, TypeVar

from kubectrl._internal.clock import Clock

__all__ = [
    "CorrelationResult",
    "CorrelatorOptions",
    "EventCorrelator",
    "event_key",
    "format_time",
]

K = TypeVar("K")
V = TypeVar("V")

COMBINED_PREFIX = "(combined from similar events): "


def format_time(value: Any) -> str:
    """Kubernetes ``Time`` (RFC 3339, whole seconds, UTC): ``2026-01-01T00:00:00Z``.

    Example::

        >>> import datetime
        >>> format_time(datetime.datetime(2026, 1, 2, 3, 4, 5, 678, tzinfo=datetime.timezone.utc))
        '2026-01-02T03:04:05Z'
    """
    if isinstance(value, _dt.datetime) and value.year >= 1000:
        # Once per recorded event: formatting the fields is a third of strftime's cost.
        return (
            f"{value.year}-{value.month:02d}-{value.day:02d}T"
            f"{value.hour:02d}:{value.minute:02d}:{value.second:02d}Z"
        )
    return str(value.strftime("%Y-%m-%dT%H:%M:%SZ"))


@dataclasses.dataclass(frozen=True)
class CorrelatorOptions:
    """Limits of the correlator; every default is client-go's.

    ``lru_size`` 4096 entries per cache; ``max_similar_events`` 10 distinct messages before
    combining; ``max_interval`` 600 s sliding window for similar events; ``spam_burst`` 25 and
    ``spam_refill_seconds`` 300 for the per-object token bucket.

    Example::

        >>> CorrelatorOptions().spam_burst
        25
    """

    lru_size: int = 4096
    max_similar_events: int = 10
    max_interval: float = 600.0
    spam_burst: int = 25
    spam_refill_seconds: float = 300.0


@dataclasses.dataclass(frozen=True)
class CorrelationResult:
    """What to write: ``event`` (created when ``patch`` is ``None``, patched otherwise), or
    nothing at all when ``skip`` (the spam filter dropped it)."""

    event: dict[str, Any]
    patch: dict[str, Any] | None
    skip: bool = False


class _LRU(Generic[K, V]):
    def __init__(self, size: int) -> None:
        self._size = size
        self._items: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        value = self._items.get(key)
        if value is not None:
            self._items.move_to_end(key)
        return value

    def put(self, key: K, value: V) -> None:
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > self._size:
            self._items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)


def _part(value: Any, key: str) -> Any:
    if value.__class__ is dict or isinstance(value, Mapping):  # dict first: no ABC check
        return value.get(key)
    return None


def _text(value: Any) -> str:
    return value if value.__class__ is str else ("" if value is None else str(value))


def _get(event: Mapping[str, Any], *path: str) -> str:
    value: Any = event
    for part in path:
        value = _part(value, part)
    return _text(value)


def _object_key(event: Mapping[str, Any]) -> tuple[str, ...]:
    source = _part(event, "source")
    involved = _part(event, "involvedObject")
    return (
        _text(_part(source, "component")),
        _text(_part(source, "host")),
        _text(_part(involved, "kind")),
        _text(_part(involved, "namespace")),
        _text(_part(involved, "name")),
        _text(_part(involved, "uid")),
        _text(_part(involved, "apiVersion")),
    )


def _as_is(value: str) -> str:
    return value


def _event_key(
    okey: tuple[str, ...], event: Mapping[str, Any], share: Callable[[str], str] = _as_is
) -> tuple[Any, ...]:
    return (
        okey,
        share(_text(_part(_part(event, "involvedObject"), "fieldPath"))),
        share(_text(_part(event, "type"))),
        share(_text(_part(event, "reason"))),
        share(_text(_part(event, "message"))),
    )


def _aggregate_key(
    okey: tuple[str, ...], event: Mapping[str, Any], share: Callable[[str], str]
) -> tuple[Any, ...]:
    """Key of "similar" events: the event's key without the message, with the reporter."""
    return (
        okey,
        share(_text(_part(event, "type"))),
        share(_text(_part(event, "reason"))),
        share(_text(_part(event, "reportingComponent"))),
        share(_text(_part(event, "reportingInstance"))),
    )


def event_key(event: Mapping[str, Any]) -> tuple[Any, ...]:
    """Identity of an event for count bumping: everything but the timestamps and count (the
    source and involved object, then field path, type, reason, message)."""
    return _event_key(_object_key(event), event)


@dataclasses.dataclass(slots=True)
class _Aggregate:
    # a tuple: one or a few messages (at most max_similar_events), 48 bytes where a set is 216
    messages: tuple[str, ...]
    last_seen: float


@dataclasses.dataclass(frozen=True, slots=True)
class _Observation:
    count: int
    first_timestamp: str
    name: str
    resource_version: str


@dataclasses.dataclass(slots=True)
class _Bucket:
    tokens: float
    updated: float
    key: tuple[str, ...]  # the object's key, shared by the other two caches' keys


#: Distinct strings the correlator shares between the keys of different objects (kinds,
#: namespaces, reasons, messages: each object's event would otherwise keep its own copy alive).
#: Once full, further strings are kept as they come.
_SHARED_STRINGS = 1024


class EventCorrelator:
    """Decides, for each event, whether to create it, bump an existing one, or drop it.

    Guarantees: memory is bounded by three LRUs of ``lru_size`` entries; decisions depend only on
    the events seen and the injected clock. Caveats: not thread-safe (one writer task owns it);
    state is per process, so two replicas each write their own Events.

    Example::

        correlator = EventCorrelator(FakeClock())
        first = correlator.correlate(event)       # patch is None: create
        correlator.update_state(created_event)    # remember name and resourceVersion
        second = correlator.correlate(event)      # patch == {"count": 2, ...}
    """

    def __init__(self, clock: Clock, options: CorrelatorOptions | None = None) -> None:
        self._clock = clock
        self._options = options if options is not None else CorrelatorOptions()
        size = self._options.lru_size
        self._aggregates: _LRU[tuple[str, ...], _Aggregate] = _LRU(size)
        self._observations: _LRU[tuple[str, ...], _Observation] = _LRU(size)
        self._buckets: _LRU[tuple[str, ...], _Bucket] = _LRU(size)
        self._strings: dict[str, str] = {}

    @property
    def options(self) -> CorrelatorOptions:
        """The limits in use."""
        return self._options

    def correlate(self, event: Mapping[str, Any]) -> CorrelationResult:
        """Aggregate, observe and filter one new event (see the module docstring)."""
        okey = self._object_key(event)
        aggregated, key = self._aggregate(event, okey)
        observed, patch = self._observe(aggregated, key)
        if not self._allow(okey):
            return CorrelationResult(observed, None, skip=True)
        return CorrelationResult(observed, patch)

    def update_state(self, event: Mapping[str, Any]) -> None:
        """Remember an Event the server accepted (its name, resourceVersion and count)."""
        # An entry already there keeps its key: the server's strings are not held twice.
        self._observations.put(event_key(event), _observation_of(event))

    # -------------------------------------------------------------- keys

    def _object_key(self, event: Mapping[str, Any]) -> tuple[str, ...]:
        """The event's source and involved object (the spam filter's key): the same tuple for
        every event of one object while the spam filter remembers it, its strings shared where
        other objects have them too, so the three caches' keys of an object hold one copy of
        its source and reference."""
        okey = _object_key(event)
        bucket = self._buckets.get(okey)
        if bucket is not None:
            return bucket.key
        return tuple(self._shared(value) for value in okey)

    def _shared(self, value: str) -> str:
        strings = self._strings
        found = strings.get(value)
        if found is not None:
            return found
        if len(strings) < _SHARED_STRINGS:
            strings[value] = value
        return value

    # -------------------------------------------------------------- the three steps

    def _aggregate(
        self, event: Mapping[str, Any], okey: tuple[str, ...]
    ) -> tuple[dict[str, Any], tuple[Any, ...]]:
        now = self._clock.now()
        akey = _aggregate_key(okey, event, self._shared)
        record = self._aggregates.get(akey)
        # The window slides: it is measured from the last similar event, as in client-go.
        if record is None or now - record.last_seen > self._options.max_interval:
            record = _Aggregate((), now)
        message = self._shared(_get(event, "message"))
        if message not in record.messages:
            record.messages += (message,)
        record.last_seen = now
        self._aggregates.put(akey, record)
        if len(record.messages) < self._options.max_similar_events:
            return _copied(event), _event_key(okey, event, self._shared)
        # Do not let the message set grow past the threshold (client-go drops any one of them).
        record.messages = record.messages[:-1]
        combined = _copied(event)
        combined["message"] = COMBINED_PREFIX + _get(event, "message")
        combined["count"] = 1
        stamp = _get(event, "lastTimestamp")
        combined["firstTimestamp"] = stamp
        combined["lastTimestamp"] = stamp
        metadata = dict(combined.get("metadata") or {})
        metadata.pop("resourceVersion", None)
        combined["metadata"] = metadata
        return combined, akey

    def _observe(
        self, event: dict[str, Any], key: tuple[Any, ...]
    ) -> tuple[dict[str, Any], dict[str, Any] | None]:
        last = self._observations.get(key)
        patch: dict[str, Any] | None = None
        if last is not None and last.count > 0:
            metadata = dict(event.get("metadata") or {})
            metadata["name"] = last.name
            if last.resource_version:
                metadata["resourceVersion"] = last.resource_version
            event["metadata"] = metadata
            event["firstTimestamp"] = last.first_timestamp
            event["count"] = last.count + 1
            patch = {
                "count": event["count"],
                "lastTimestamp": event.get("lastTimestamp"),
                "message": event.get("message"),
            }
        self._observations.put(key, _observation_of(event))
        return event, patch

    def _allow(self, key: tuple[str, ...]) -> bool:
        now = self._clock.now()
        burst = float(self._options.spam_burst)
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = _Bucket(burst, now, key)
        else:
            refill = (now - bucket.updated) / self._options.spam_refill_seconds
            bucket.tokens = min(burst, bucket.tokens + refill)
            bucket.updated = now
        allowed = bucket.tokens >= 1.0
        if allowed:
            bucket.tokens -= 1.0
        self._buckets.put(key, bucket)
        return allowed


def _copied(event: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``event`` that the correlator may change: its top level and its metadata, the
    only parts it sets (nested values such as ``involvedObject`` are shared, never changed)."""
    copied = dict(event)
    metadata = event.get("metadata")
    if isinstance(metadata, Mapping):
        copied["metadata"] = dict(metadata)
    return copied


def _observation_of(event: Mapping[str, Any]) -> _Observation:
    metadata = event.get("metadata") or {}
    return _Observation(
        count=int(event.get("count") or 0),
        first_timestamp=_get(event, "firstTimestamp"),
        name=str(metadata.get("name") or ""),
        resource_version=str(metadata.get("resourceVersion") or ""),
    )
