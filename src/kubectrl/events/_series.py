"""client-go's ``tools/events`` correlation for events.k8s.io/v1 Events: isomorphic events
become one Event with a ``series``.

Two events are *isomorphic* when they share type, action, reason, reporting controller and
instance, regarding and related object (client-go's ``getKey``; the note may differ). The
first is created; the second turns it into a series (a PATCH of ``series: {count: 2,
lastObservedTime}``); later ones only count, in memory. The count reaches the server when the
series ends (no isomorphic event for 6 minutes: the final count is written and the entry
forgotten), every 30 minutes while it goes on (so the Event outlives its TTL), and when the
broadcaster shuts down (kubectrl's addition: client-go loses the counts of a process that
stops). A single event is forgotten 6 minutes after it was recorded.

Memory: at most ``max_entries`` (4096) Events are remembered; the least recently seen is
forgotten first (its count written, if it has one to write). client-go's map is unbounded
between its 6-minute sweeps.

Like :class:`~kubectrl.events.EventCorrelator`, not thread-safe: the broadcaster's writer
task owns it.
"""

from __future__ import annotations

import copy
import datetime as _dt
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from kubectrl._internal.clock import Clock
from kubectrl.events._correlator import CorrelationResult

__all__ = ["FINISH_SECONDS", "REFRESH_SECONDS", "SeriesCorrelator", "format_micro_time"]

#: A series with no isomorphic event for this long has ended (client-go's ``finishTime``).
FINISH_SECONDS = 6 * 60.0
#: A running series' count is written this often (client-go's ``refreshTime``).
REFRESH_SECONDS = 30 * 60.0

_REF_FIELDS = ("apiVersion", "kind", "namespace", "name", "uid", "resourceVersion", "fieldPath")


def format_micro_time(value: _dt.datetime) -> str:
    """Kubernetes ``MicroTime`` (RFC 3339, microseconds, UTC): ``2026-01-01T00:00:00.000000Z``.

    Example::

        >>> from datetime import datetime, timezone
        >>> format_micro_time(datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=timezone.utc))
        '2026-01-02T03:04:05.000006Z'
    """
    if value.tzinfo is not None:
        value = value.astimezone(_dt.timezone.utc)
    return value.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _ref_key(ref: Any) -> tuple[str, ...]:
    if not isinstance(ref, Mapping):
        return ()
    return tuple(str(ref.get(field) or "") for field in _REF_FIELDS)


def series_key(event: Mapping[str, Any]) -> tuple[Any, ...]:
    """What makes two events isomorphic (client-go's ``getKey``): type, action, reason,
    reporting controller and instance, regarding and related object."""
    return (
        str(event.get("type") or ""),
        str(event.get("action") or ""),
        str(event.get("reason") or ""),
        str(event.get("reportingController") or ""),
        str(event.get("reportingInstance") or ""),
        _ref_key(event.get("regarding")),
        _ref_key(event.get("related")),
    )


class _Entry:
    __slots__ = ("event", "last_seen", "last_written", "unwritten")

    def __init__(self, event: dict[str, Any], now: float) -> None:
        self.event = event
        self.last_seen = now  # monotonic time of the last isomorphic event
        self.last_written = now  # monotonic time the count was last written
        self.unwritten = False  # the series count grew since it was last written


class SeriesCorrelator:
    """Turns isomorphic events.k8s.io/v1 events into one Event with a growing ``series``.

    :meth:`correlate` says what to write now for a recorded event (a create, the PATCH that
    starts a series, or nothing: ``skip``, the count kept for later); :meth:`due` gives the
    writes the clock has made due (ended and refreshed series), :meth:`flush` every count not
    written yet. Times: ``clock.now()`` for the 6- and 30-minute rules, ``clock.wall()`` for
    ``lastObservedTime``.

    Example::

        correlator = SeriesCorrelator(RealClock())
        first = correlator.correlate(event)      # patch None: create it
        second = correlator.correlate(event)     # patch {"series": {"count": 2, ...}}
        third = correlator.correlate(event)      # skip: count 3, written later
    """

    def __init__(self, clock: Clock, *, max_entries: int = 4096) -> None:
        if max_entries < 1:
            raise ValueError(f"max_entries must be at least 1, not {max_entries}")
        self._clock = clock
        self._max = max_entries
        self._entries: OrderedDict[tuple[Any, ...], _Entry] = OrderedDict()
        self._evicted: list[CorrelationResult] = []
        # No entry has anything due before this time (None: nothing remembered). Every entry
        # ends at most FINISH_SECONDS after it was last seen, so a new entry never comes due
        # earlier than the ones already there, and an entry seen again only comes due later:
        # the bound stays true between the scans that recompute it.
        self._earliest: float | None = None

    def __len__(self) -> int:
        return len(self._entries)

    def correlate(self, event: Mapping[str, Any]) -> CorrelationResult:
        """What to write for ``event`` now (see the class)."""
        now = self._clock.now()
        key = series_key(event)
        entry = self._entries.get(key)
        if entry is None:
            stored = copy.deepcopy(dict(event))
            self._entries[key] = _Entry(stored, now)
            if self._earliest is None:
                self._earliest = now + FINISH_SECONDS
            self._evict()
            return CorrelationResult(copy.deepcopy(stored), None)
        self._entries.move_to_end(key)
        entry.last_seen = now
        observed = format_micro_time(self._clock.wall())
        series = entry.event.get("series")
        if isinstance(series, dict):
            series["count"] = int(series.get("count") or 1) + 1
            series["lastObservedTime"] = observed
            entry.unwritten = True
            # Nothing to write: the result is for the log only (the correlator's own dict).
            return CorrelationResult(entry.event, None, skip=True)
        entry.event["series"] = {"count": 2, "lastObservedTime": observed}
        entry.last_written = now
        return CorrelationResult(copy.deepcopy(entry.event), _series_patch(entry.event))

    def update_state(self, event: Mapping[str, Any]) -> None:
        """Nothing to learn from what the server stored: the series lives here."""
        del event

    def due(self) -> list[CorrelationResult]:
        """The writes the clock has made due: each ended series' final count (the entry is
        then forgotten, as is a single event 6 minutes old), each running series' count every
        30 minutes, and the counts of entries evicted for room."""
        now = self._clock.now()
        writes, self._evicted = self._evicted, []
        if self._earliest is None or now < self._earliest:
            return writes
        for key, entry in list(self._entries.items()):
            has_series = isinstance(entry.event.get("series"), dict)
            if now - entry.last_seen >= FINISH_SECONDS:
                del self._entries[key]
                if has_series and entry.unwritten:
                    writes.append(_write_of(entry))
            elif has_series and now - entry.last_written >= REFRESH_SECONDS:
                entry.last_written = now
                entry.unwritten = False
                writes.append(_write_of(entry))
        self._earliest = self._soonest()
        return writes

    def _soonest(self) -> float | None:
        soonest: float | None = None
        for entry in self._entries.values():
            at = entry.last_seen + FINISH_SECONDS
            if isinstance(entry.event.get("series"), dict):
                at = min(at, entry.last_written + REFRESH_SECONDS)
            soonest = at if soonest is None else min(soonest, at)
        return soonest

    def next_due(self) -> float | None:
        """Seconds until :meth:`due` may have something to do (``None``: nothing
        remembered)."""
        if self._evicted:
            return 0.0
        if self._earliest is None:
            return None
        return max(0.0, self._earliest - self._clock.now())

    def flush(self) -> list[CorrelationResult]:
        """Every series count not written yet (on shutdown); they count as written."""
        writes, self._evicted = self._evicted, []
        for entry in self._entries.values():
            if entry.unwritten:
                entry.unwritten = False
                entry.last_written = self._clock.now()
                writes.append(_write_of(entry))
        return writes

    def _evict(self) -> None:
        while len(self._entries) > self._max:
            _, entry = self._entries.popitem(last=False)
            if entry.unwritten:
                self._evicted.append(_write_of(entry))

    def __repr__(self) -> str:
        return f"SeriesCorrelator(entries={len(self._entries)})"


def _series_patch(event: Mapping[str, Any]) -> dict[str, Any]:
    return {"series": dict(event["series"])}


def _write_of(entry: _Entry) -> CorrelationResult:
    entry.unwritten = False
    return CorrelationResult(copy.deepcopy(entry.event), _series_patch(entry.event))
