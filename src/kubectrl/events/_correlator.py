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
Entries that can no longer change a decision leave early: an aggregate record older than the
window, a token bucket that has filled up again (each is what a missing entry means). An
object is known by a 16-byte digest of its source and reference, so the caches keep none of
its strings. The correlator is not thread-safe: the broadcaster's single writer task owns it.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import hashlib
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

    def drop_oldest_while(self, stale: Callable[[V], bool]) -> None:
        """Forget the least recently used entries for as long as ``stale`` says so of them."""
        items = self._items
        while items and stale(next(iter(items.values()))):
            items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)


_EMPTY: Mapping[str, Any] = {}


def _mapping(value: Any) -> Mapping[str, Any]:
    """``value`` when it is a mapping (a dict first: no ABC check), else an empty one."""
    return value if value.__class__ is dict or isinstance(value, Mapping) else _EMPTY


def _text(value: Any) -> str:
    return value if value.__class__ is str else ("" if value is None else str(value))


def _object_key(event: Mapping[str, Any]) -> tuple[str, ...]:
    source = _mapping(event.get("source"))
    involved = _mapping(event.get("involvedObject"))
    return (
        _text(source.get("component")),
        _text(source.get("host")),
        _text(involved.get("kind")),
        _text(involved.get("namespace")),
        _text(involved.get("name")),
        _text(involved.get("uid")),
        _text(involved.get("apiVersion")),
    )


def _as_is(value: str) -> str:
    return value


def _digest(parts: tuple[str, ...]) -> bytes:
    """16 bytes standing for ``parts`` (BLAKE2b of its ``repr``, which differs for any two
    tuples of strings): what the caches key an object by instead of its strings."""
    return hashlib.blake2b(repr(parts).encode(), digest_size=16).digest()


def _event_key(
    okey: Any, event: Mapping[str, Any], share: Callable[[str], str] = _as_is
) -> tuple[Any, ...]:
    return (
        okey,
        share(_text(_mapping(event.get("involvedObject")).get("fieldPath"))),
        share(_text(event.get("type"))),
        share(_text(event.get("reason"))),
        share(_text(event.get("message"))),
    )


def _aggregate_key(
    okey: bytes, event: Mapping[str, Any], share: Callable[[str], str]
) -> tuple[Any, ...]:
    """Key of "similar" events: the event's key without the message, with the reporter."""
    return (
        okey,
        share(_text(event.get("type"))),
        share(_text(event.get("reason"))),
        share(_text(event.get("reportingComponent"))),
        share(_text(event.get("reportingInstance"))),
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


#: Distinct strings the correlator shares between the keys of different objects (types,
#: reasons, reporters, messages: each object's event would otherwise keep its own copy alive).
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
        self._aggregates: _LRU[tuple[Any, ...], _Aggregate] = _LRU(size)
        self._observations: _LRU[tuple[Any, ...], _Observation] = _LRU(size)
        self._buckets: _LRU[bytes, _Bucket] = _LRU(size)
        self._strings: dict[str, str] = {}

    @property
    def options(self) -> CorrelatorOptions:
        """The limits in use."""
        return self._options

    def correlate(self, event: Mapping[str, Any]) -> CorrelationResult:
        """Aggregate, observe and filter one new event (see the module docstring)."""
        okey = _digest(_object_key(event))
        aggregated, key = self._aggregate(event, okey)
        observed, patch = self._observe(aggregated, key)
        if not self._allow(okey):
            return CorrelationResult(observed, None, skip=True)
        return CorrelationResult(observed, patch)

    def update_state(self, event: Mapping[str, Any]) -> None:
        """Remember an Event the server accepted (its name, resourceVersion and count)."""
        # An entry already there keeps its key: the server's strings are not held twice.
        key = _event_key(_digest(_object_key(event)), event, self._shared)
        self._observations.put(key, _observation_of(event))

    # -------------------------------------------------------------- keys

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
        self, event: Mapping[str, Any], okey: bytes
    ) -> tuple[dict[str, Any], tuple[Any, ...]]:
        now = self._clock.now()
        akey = _aggregate_key(okey, event, self._shared)
        aggregates, window = self._aggregates, self._options.max_interval
        record = aggregates.get(akey)
        # The window slides: it is measured from the last similar event, as in client-go.
        if record is None or now - record.last_seen > window:
            record = _Aggregate((), now)
        message = self._shared(_text(event.get("message")))
        if message not in record.messages:
            record.messages += (message,)
        record.last_seen = now
        aggregates.put(akey, record)
        # Records past the window count as missing (above): the oldest go now, not at 4096.
        aggregates.drop_oldest_while(lambda old: now - old.last_seen > window)
        if len(record.messages) < self._options.max_similar_events:
            return _copied(event), _event_key(okey, event, self._shared)
        # Do not let the message set grow past the threshold (client-go drops any one of them).
        record.messages = record.messages[:-1]
        combined = _copied(event)
        combined["message"] = COMBINED_PREFIX + _text(event.get("message"))
        combined["count"] = 1
        stamp = _text(event.get("lastTimestamp"))
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

    def _allow(self, key: bytes) -> bool:
        now = self._clock.now()
        burst = float(self._options.spam_burst)
        period = self._options.spam_refill_seconds
        buckets = self._buckets
        bucket = buckets.get(key)
        if bucket is None:
            bucket = _Bucket(burst, now)
        else:
            bucket.tokens = min(burst, bucket.tokens + (now - bucket.updated) / period)
            bucket.updated = now
        allowed = bucket.tokens >= 1.0
        if allowed:
            bucket.tokens -= 1.0
        buckets.put(key, bucket)
        # A bucket that has filled up again is what a missing one means: the oldest go now.
        buckets.drop_oldest_while(lambda old: old.tokens + (now - old.updated) / period >= burst)
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
        first_timestamp=_text(event.get("firstTimestamp")),
        name=str(metadata.get("name") or ""),
        resource_version=str(metadata.get("resourceVersion") or ""),
    )
