"""The pure watch decoder: bytes in, events or typed errors out."""

from __future__ import annotations

import json

import pytest

from kubectrl.client import EventType
from kubectrl.client._watch_decoder import WatchDecoder
from kubectrl.errors import ExpiredError, InternalError, MalformedStreamError


def line(type_: str, obj: dict[str, object]) -> bytes:
    return json.dumps({"type": type_, "object": obj}).encode() + b"\n"


def cm(name: str, rv: str) -> dict[str, object]:
    return {"kind": "ConfigMap", "metadata": {"name": name, "resourceVersion": rv}}


def test_events_split_at_every_byte_boundary() -> None:
    stream = (
        line("ADDED", cm("a", "1")) + line("MODIFIED", cm("a", "2")) + line("DELETED", cm("a", "3"))
    )
    for size in (1, 2, 7, 64, len(stream)):
        decoder = WatchDecoder()
        events = []
        for start in range(0, len(stream), size):
            events.extend(decoder.feed(stream[start : start + size]))
        assert [e.type for e in events] == [EventType.ADDED, EventType.MODIFIED, EventType.DELETED]
        assert [e.resource_version for e in events] == ["1", "2", "3"]
        assert list(decoder.close()) == []
        assert decoder.pending_bytes == 0


def test_bookmark_and_initial_events_end() -> None:
    bookmark = {
        "kind": "ConfigMap",
        "metadata": {"resourceVersion": "42", "annotations": {"k8s.io/initial-events-end": "true"}},
    }
    (event,) = WatchDecoder().feed(line("BOOKMARK", bookmark))
    assert event.type is EventType.BOOKMARK
    assert event.resource_version == "42"
    assert event.is_initial_events_end


def test_empty_stream_is_a_clean_end() -> None:
    decoder = WatchDecoder()
    assert list(decoder.feed(b"")) == []
    assert list(decoder.close()) == []


def test_blank_lines_are_ignored() -> None:
    events = list(WatchDecoder().feed(b"\n\r\n" + line("ADDED", cm("a", "1")) + b"\n"))
    assert len(events) == 1


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (b"<html>502 Bad Gateway</html>\n", "not JSON"),
        (b"[1, 2]\n", "not a JSON object"),
        (b'{"type": "EXPLODED", "object": {}}\n', "unknown event type 'EXPLODED'"),
        (b'{"type": "ADDED"}\n', "ADDED event without an object"),
        (b'{"type": "ADDED", "object": "x"}\n', "ADDED event without an object"),
        (b"\xff\xfe\n", "not JSON"),
    ],
)
def test_garbage_raises_malformed(data: bytes, match: str) -> None:
    decoder = WatchDecoder(resource="configmaps")
    with pytest.raises(MalformedStreamError, match=match) as info:
        list(decoder.feed(data))
    assert "watch configmaps" in str(info.value)


def test_events_before_garbage_are_delivered_first() -> None:
    decoder = WatchDecoder()
    it = decoder.feed(line("ADDED", cm("a", "1")) + b"garbage\n")
    assert next(it).type is EventType.ADDED
    with pytest.raises(MalformedStreamError):
        next(it)


def test_stream_cut_inside_an_event_raises_on_close() -> None:
    decoder = WatchDecoder()
    data = line("ADDED", cm("a", "1"))
    assert list(decoder.feed(data[:-10])) == []
    with pytest.raises(MalformedStreamError, match="ended inside an event"):
        list(decoder.close())


def test_final_event_without_newline_is_accepted() -> None:
    decoder = WatchDecoder()
    assert list(decoder.feed(line("ADDED", cm("a", "1"))[:-1])) == []
    (event,) = decoder.close()
    assert event.type is EventType.ADDED


def test_runaway_line_is_bounded() -> None:
    decoder = WatchDecoder(max_line_bytes=1024)
    with pytest.raises(MalformedStreamError, match="exceeded 1024 bytes"):
        list(decoder.feed(b"x" * 2048))


def test_error_event_410_raises_expired() -> None:
    status = {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "message": "too old resource version: 5 (120)",
        "reason": "Expired",
        "code": 410,
    }
    decoder = WatchDecoder(resource="configmaps", namespace="ns")
    it = decoder.feed(line("ADDED", cm("a", "1")) + line("ERROR", status))
    assert next(it).type is EventType.ADDED
    with pytest.raises(ExpiredError) as info:
        next(it)
    assert info.value.code == 410
    assert "watch configmaps in namespace ns" in str(info.value)
    assert "too old resource version" in str(info.value)


def test_error_event_500_raises_internal_error() -> None:
    status = {"kind": "Status", "status": "Failure", "message": "etcd down", "code": 500}
    with pytest.raises(InternalError, match="etcd down"):
        list(WatchDecoder().feed(line("ERROR", status)))
