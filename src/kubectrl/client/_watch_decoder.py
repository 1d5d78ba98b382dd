"""The watch stream decoder: bytes in, typed events out, no I/O.

The API server frames a watch as newline-delimited JSON, one ``{"type": ..., "object": ...}`` per
line. Network reads cut those lines anywhere, so the decoder buffers partial lines across
:meth:`WatchDecoder.feed` calls. It is a pure piece (no sockets, no clock) so every edge case
(split lines, garbage, an ``ERROR`` event, a stream that ends inside an event) is unit-tested by
feeding it bytes.

Guarantees:

- Every complete line yields exactly one event or raises; nothing is dropped silently.
- ``ERROR`` events raise the matching :class:`~kubectrl.errors.APIError` (410 ->
  :class:`~kubectrl.errors.ExpiredError`) *after* the events before them were yielded.
- A line that is not a watch event raises :class:`~kubectrl.errors.MalformedStreamError`, as does
  a stream that ends inside a line that is not a complete JSON event.
- Memory is bounded: a line longer than ``max_line_bytes`` raises instead of growing forever.
"""

from __future__ import annotations

import builtins
import dataclasses
import enum
import json
from collections.abc import Iterator, Mapping
from typing import Any, TypeVar

from kubectrl import kinds as _kinds
from kubectrl.client import _json
from kubectrl.errors import MalformedStreamError, api_error_from_status

__all__ = ["EventType", "WatchDecoder", "WatchEvent"]

M = TypeVar("M")

#: 32 MiB: far above etcd's 1.5 MiB object limit, low enough to stop runaway garbage.
DEFAULT_MAX_LINE_BYTES = 32 * 1024 * 1024


class EventType(str, enum.Enum):
    """The ``type`` of a watch event. ``ERROR`` never reaches users: it is raised as an error."""

    ADDED = "ADDED"
    MODIFIED = "MODIFIED"
    DELETED = "DELETED"
    BOOKMARK = "BOOKMARK"
    ERROR = "ERROR"

    def __str__(self) -> str:
        return self.value


@dataclasses.dataclass(frozen=True)
class WatchEvent:
    """One watch event: its :class:`EventType` and the object as a plain dict.

    For ``BOOKMARK`` the object carries only ``metadata.resourceVersion`` (and annotations such as
    ``k8s.io/initial-events-end``).

    Example::

        async for event in stream:
            if event.type is EventType.DELETED:
                forget(event.object["metadata"]["name"])
    """

    type: EventType
    object: dict[str, Any]

    def as_model(self, model: builtins.type[M]) -> M:
        """The object as an instance of ``model`` (:func:`kubectrl.kinds.from_dict`; a new
        instance per call, so the event's dict is never shared with it).

        Example::

            >>> from kubernetes.client.models import V1ConfigMap
            >>> event = WatchEvent(EventType.ADDED, {"apiVersion": "v1", "kind": "ConfigMap",
            ...                                     "metadata": {"name": "x"}})
            >>> event.as_model(V1ConfigMap).metadata.name
            'x'
        """
        return _kinds.from_dict(model, self.object)

    @property
    def resource_version(self) -> str:
        """The object's ``metadata.resourceVersion`` (``""`` if absent)."""
        meta = self.object.get("metadata")
        if isinstance(meta, Mapping):
            value = meta.get("resourceVersion")
            if isinstance(value, str):
                return value
        return ""

    @property
    def is_initial_events_end(self) -> bool:
        """True for the bookmark that closes a ``sendInitialEvents`` stream."""
        if self.type is not EventType.BOOKMARK:
            return False
        meta = self.object.get("metadata")
        annotations = meta.get("annotations") if isinstance(meta, Mapping) else None
        return (
            isinstance(annotations, Mapping)
            and annotations.get("k8s.io/initial-events-end") == "true"
        )


def _excerpt(line: bytes) -> str:
    text = line[:200].decode("utf-8", "replace")
    return repr(text) + ("..." if len(line) > 200 else "")


class WatchDecoder:
    """Incremental decoder for one watch stream.

    ``verb``/``resource``/``namespace`` only label error messages.

    Example::

        >>> decoder = WatchDecoder()
        >>> list(decoder.feed(b'{"type":"ADDED","object":{"kind":"Pod"}}\\n{"type":'))
        [WatchEvent(type=<EventType.ADDED: 'ADDED'>, object={'kind': 'Pod'})]
        >>> list(decoder.feed(b'"DELETED","object":{}}\\n'))[0].type
        <EventType.DELETED: 'DELETED'>
        >>> list(decoder.close())  # no partial line left: a clean end
        []
    """

    def __init__(
        self,
        *,
        resource: str = "",
        namespace: str | None = None,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    ) -> None:
        self._buffer = bytearray()
        self._resource = resource
        self._namespace = namespace
        self._max_line_bytes = max_line_bytes
        self.events_decoded = 0

    @property
    def pending_bytes(self) -> int:
        """Bytes of an incomplete line held since the last newline."""
        return len(self._buffer)

    def feed(self, data: bytes) -> Iterator[WatchEvent]:
        """Add ``data`` and yield each event completed by it, in order.

        The iterator must be consumed; it raises at the first bad line or ``ERROR`` event.
        Complete lines are decoded straight from ``data`` (a view, no copy); only a line cut by
        the end of ``data`` is kept, and joined with the next chunk.
        """
        buffer = self._buffer
        if buffer:
            if data.find(b"\n") < 0:
                buffer += data
                self._check_size()
                return
            buffer += data
            data = bytes(buffer)
            buffer.clear()
        view = memoryview(data)
        find = data.find
        decode = self._decode_line
        start = 0
        while True:
            newline = find(b"\n", start)
            if newline < 0:
                break
            if newline > start:
                event = decode(view[start:newline])
                if event is not None:
                    yield event
            start = newline + 1
        if start < len(data):
            buffer += view[start:]
            self._check_size()

    def _check_size(self) -> None:
        if len(self._buffer) > self._max_line_bytes:
            size = len(self._buffer)
            self._buffer.clear()
            raise MalformedStreamError(
                f"watch {self._resource}: a line exceeded {self._max_line_bytes} bytes "
                f"({size} bytes without a newline)"
            )

    def close(self) -> Iterator[WatchEvent]:
        """Signal the end of the stream; yield a final event that lacked its newline.

        Raises :class:`MalformedStreamError` if the leftover bytes are not one complete event
        (the stream was cut inside an event).
        """
        rest = bytes(self._buffer).strip()
        self._buffer.clear()
        if not rest:
            return
        try:
            _json.loads(rest)
        except ValueError:
            raise MalformedStreamError(
                f"watch {self._resource}: stream ended inside an event "
                f"({len(rest)} bytes without a newline: {_excerpt(rest)})"
            ) from None
        event = self._decode_line(rest)
        if event is not None:
            yield event

    def _decode_line(self, line: bytes | memoryview) -> WatchEvent | None:
        try:
            raw = _json.loads(line)  # the common case: one JSON object, nothing around it
        except ValueError:
            raw = self._decode_slow(bytes(line))
            if raw is None:
                return None
        if not isinstance(raw, dict):
            raise MalformedStreamError(
                f"watch {self._resource}: line is not a JSON object: {_excerpt(bytes(line))}"
            )
        type_name = raw.get("type")
        obj = raw.get("object")
        try:
            event_type = EventType(type_name)
        except ValueError:
            raise MalformedStreamError(
                f"watch {self._resource}: unknown event type {type_name!r}: {_excerpt(bytes(line))}"
            ) from None
        if not isinstance(obj, dict):
            raise MalformedStreamError(
                f"watch {self._resource}: {event_type.value} event without an object: "
                f"{_excerpt(bytes(line))}"
            )
        self.events_decoded += 1
        if event_type is EventType.ERROR:
            raise api_error_from_status(
                obj, verb="watch", resource=self._resource, namespace=self._namespace
            )
        return WatchEvent(event_type, obj)

    def _decode_slow(self, line: bytes) -> Any:
        """A line the fast path refused: blank (None), padded with whitespace, or not JSON."""
        line = line.strip()
        if not line:
            return None  # tolerate blank lines (keep-alives from proxies)
        try:
            return _json.loads(line)
        except ValueError as err:
            reason = err.msg if isinstance(err, json.JSONDecodeError) else "undecodable bytes"
            raise MalformedStreamError(
                f"watch {self._resource}: line is not JSON ({reason}): {_excerpt(line)}"
            ) from None
