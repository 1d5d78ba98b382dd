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
  a stream that ends inside a line that is not a complete JSON event. Nothing else escapes: the
  message says what is wrong and quotes at most 200 bytes of the line.
- Memory is bounded: a line longer than ``max_line_bytes`` raises instead of growing forever.
- Nesting is bounded: a line nested deeper than :data:`MAX_NESTING_DEPTH` objects and arrays
  raises :class:`~kubectrl.errors.MalformedStreamError` ("too deeply nested") instead of a
  ``RecursionError``. Go's ``encoding/json``, and so the API server, stops at 10000 levels (its
  scanner keeps an explicit stack); Python's decoders recurse, and ``orjson`` stops at 1024.
  The check costs nothing per event with ``orjson``, which refuses such a line itself. The
  standard library decoder (without ``orjson``) raises ``RecursionError`` at the interpreter's
  recursion limit (about 1000 levels on Python 3.11), turned into the same error; where it could
  go deeper (Python 3.12 and later, or a raised recursion limit) a line longer than
  ``2 * MAX_NESTING_DEPTH`` bytes (a shorter one cannot be that deep) has its brackets counted
  first, and only one with more opening brackets than the bound is scanned exactly.
"""

from __future__ import annotations

import builtins
import dataclasses
import enum
import gc
import itertools
import json
import re
import sys
from collections.abc import Iterator, Mapping
from typing import Any, TypeVar

from kubectrl import kinds as _kinds
from kubectrl.client import _pipeline
from kubectrl.errors import MalformedStreamError, api_error_from_status
from kubectrl.objects import metadata_of

__all__ = ["EventType", "WatchDecoder", "WatchEvent"]

M = TypeVar("M")

#: 32 MiB: far above etcd's 1.5 MiB object limit, low enough to stop runaway garbage.
DEFAULT_MAX_LINE_BYTES = 32 * 1024 * 1024

#: Objects and arrays nested deeper than this in one line are refused (``orjson``'s own limit).
MAX_NESTING_DEPTH = 1024

_BLANK: Any = object()  # a blank line (a proxy's keep-alive): skipped

# Python 3.12+ bounds the standard library decoder's recursion by a C limit of its own (1500
# levels on 3.12, about 10000 on 3.13), not by sys.getrecursionlimit().
_STDLIB_RECURSION_IS_C_BOUND = sys.version_info >= (3, 12)
_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKETS = bytes(sorted(set(range(256)) - set(b"[]{}")))
_BRACKET_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}


def _nested_deeper_than(line: bytes, limit: int) -> bool:
    """Whether the JSON text ``line`` nests objects and arrays more than ``limit`` deep: cheap
    (two counts) unless it holds more than ``limit`` opening brackets, then exact (brackets
    inside strings do not count; an unterminated string's do, which errs towards refusing
    a line that is not JSON anyway)."""
    if line.count(b"[") + line.count(b"{") <= limit:
        return False
    brackets = _JSON_STRING.sub(b"", line).translate(None, _NOT_BRACKETS)
    return max(itertools.accumulate(map(_BRACKET_STEP.__getitem__, brackets)), default=0) > limit


def _loads(line: bytes | memoryview) -> Any:
    """One line decoded: ``orjson`` straight away when installed (it refuses nesting deeper
    than :data:`MAX_NESTING_DEPTH` by a ``JSONDecodeError``;
    :func:`kubectrl.client._pipeline.loads` would retry such a line with the standard library,
    which may then decode it), else :func:`kubectrl.client._pipeline.loads`. A long line is
    decoded with the garbage collector paused, as :func:`kubectrl.client._pipeline.loads`
    does."""
    orjson = _pipeline._orjson
    if orjson is None:
        if (
            len(line) > 2 * MAX_NESTING_DEPTH
            and (_STDLIB_RECURSION_IS_C_BOUND or sys.getrecursionlimit() > MAX_NESTING_DEPTH)
            and _nested_deeper_than(bytes(line), MAX_NESTING_DEPTH)
        ):
            raise RecursionError("depth limit exceeded")  # what the decoder might not refuse
        return _pipeline.loads(line)
    if len(line) < _pipeline.GC_PAUSE_BYTES or not gc.isenabled():
        return orjson.loads(line)
    gc.disable()
    try:
        return orjson.loads(line)
    finally:
        gc.enable()


def _nesting_refused(err: BaseException) -> bool:
    """Whether a decoder refused a line for its nesting: the standard library by running out of
    recursion, ``orjson`` by its depth limit (its message: ``depth limit exceeded``)."""
    return isinstance(err, RecursionError) or "depth limit" in str(err)


class EventType(str, enum.Enum):
    """The ``type`` of a watch event. ``ERROR`` never reaches users: it is raised as an error."""

    ADDED = "ADDED"
    MODIFIED = "MODIFIED"
    DELETED = "DELETED"
    BOOKMARK = "BOOKMARK"
    ERROR = "ERROR"

    def __str__(self) -> str:
        return self.value


#: Each event type by its wire name: one dict lookup per event instead of ``EventType(name)``.
_EVENT_TYPES: dict[str, EventType] = {t.value: t for t in EventType}


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
        value = metadata_of(self.object).get("resourceVersion")
        return value if isinstance(value, str) else ""

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


def _excerpt_of(value: object) -> str:
    """A decoded JSON value for a message: a scalar's repr, at most 200 characters (never the
    repr of a container, which could be deep or huge)."""
    if isinstance(value, (str, int, float, bool)):
        try:
            text = repr(value)
        except ValueError:  # an int beyond the interpreter's digit limit
            return f"<{type(value).__name__}>"
        return text[:200] + ("..." if len(text) > 200 else "")
    return f"<{type(value).__name__}>"


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
            raw = _loads(rest)
        except (ValueError, RecursionError) as err:
            raw = self._decode_slow(rest, err, at_end=True)
        event = self._event_from(raw, rest)
        if event is not None:
            yield event

    def _decode_line(self, line: bytes | memoryview) -> WatchEvent | None:
        try:
            raw = _loads(line)  # the common case: one JSON object, nothing around it
        except (ValueError, RecursionError) as err:
            raw = self._decode_slow(bytes(line), err)
        return self._event_from(raw, line)

    def _event_from(self, raw: Any, line: bytes | memoryview) -> WatchEvent | None:
        if raw is _BLANK:
            return None
        if not isinstance(raw, dict):
            raise MalformedStreamError(
                f"watch {self._resource}: line is not a JSON object "
                f"({type(raw).__name__}): {_excerpt(bytes(line))}"
            )
        type_name = raw.get("type")
        obj = raw.get("object")
        if type_name is None:
            raise MalformedStreamError(
                f'watch {self._resource}: event without a "type": {_excerpt(bytes(line))}'
            )
        try:
            event_type = (
                _EVENT_TYPES[type_name] if type_name.__class__ is str else EventType(type_name)
            )
        except (KeyError, ValueError):
            raise MalformedStreamError(
                f"watch {self._resource}: unknown event type {_excerpt_of(type_name)}: "
                f"{_excerpt(bytes(line))}"
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

    def _decode_slow(self, line: bytes, refusal: BaseException, *, at_end: bool = False) -> Any:
        """A line the fast path refused (``refusal``): blank (:data:`_BLANK`), padded with
        whitespace, what only the standard library decodes (``NaN``), nested too deeply, or not
        JSON. ``at_end``: the stream ended inside this line (it had no newline)."""
        if _nesting_refused(refusal):
            raise self._too_deep(line)
        line = line.strip()
        if not line:
            return _BLANK  # tolerate blank lines (keep-alives from proxies)
        if _nested_deeper_than(line, MAX_NESTING_DEPTH):
            raise self._too_deep(line)
        try:
            return json.loads(line)
        except RecursionError:
            raise self._too_deep(line) from None
        except ValueError as err:  # UnicodeDecodeError included
            if isinstance(err, json.JSONDecodeError):
                reason = err.msg
            elif isinstance(err, UnicodeDecodeError):
                reason = f"undecodable bytes: not UTF-8, {err.reason} at byte {err.start}"
            else:
                reason = str(err)[:200]
            if at_end:
                raise MalformedStreamError(
                    f"watch {self._resource}: stream ended inside an event ({reason}; "
                    f"{len(line)} bytes without a newline: {_excerpt(line)})"
                ) from None
            raise MalformedStreamError(
                f"watch {self._resource}: line is not JSON ({reason}): {_excerpt(line)}"
            ) from None

    def _too_deep(self, line: bytes) -> MalformedStreamError:
        return MalformedStreamError(
            f"watch {self._resource}: line is too deeply nested (more than {MAX_NESTING_DEPTH} "
            f"levels of objects and arrays, or more than Python's recursion limit allows; "
            f"{len(line)} bytes): {_excerpt(line)}"
        )
