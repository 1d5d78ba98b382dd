"""A broken or hostile server's watch streams, through the real ``AsyncClient.watch`` path.

Each server is a scripted loopback server on 127.0.0.1 (``client_loopback``). Whatever it sends
(a gzip bomb, corrupt gzip, a line nested thousands of levels deep, truncated JSON, a line that is
not an event, an ``ERROR`` event carrying a malformed ``Status``), the events before the bad
input are delivered, then the stream ends with a :class:`~kubectrl.errors.KubectrlError` whose
message says what is wrong and quotes a bounded excerpt of it; never a ``RecursionError``, a
``TypeError`` or an httpx exception, and never gigabytes of memory.

Every test is bounded by ``asyncio.wait_for``; a hang fails the test instead of the suite.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import subprocess
import sys
import zlib
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from client_loopback import CONFIGMAPS, Request, loopback

from kubectrl.client import AsyncClient, EventType, WatchEvent, _pipeline
from kubectrl.client._watch import INFLATE_PIECE_BYTES, _chunks_of
from kubectrl.client._watch_decoder import DEFAULT_MAX_LINE_BYTES, MAX_NESTING_DEPTH
from kubectrl.errors import (
    APIError,
    ExpiredError,
    GoneError,
    KubectrlError,
    MalformedStreamError,
    NotFoundError,
)

DEADLINE = 20.0


def event(type_: str, rv: str, name: str = "a") -> bytes:
    obj = {"kind": "ConfigMap", "metadata": {"name": name, "resourceVersion": rv}}
    return json.dumps({"type": type_, "object": obj}).encode() + b"\n"


def nested(depth: int) -> bytes:
    """An ``ADDED`` event whose object holds arrays nested so that the line is ``depth``
    levels deep (the event object and its ``object`` count as two)."""
    inner = b"[" * (depth - 2) + b"]" * (depth - 2)
    return b'{"type":"ADDED","object":{"kind":"ConfigMap","deep":' + inner + b"}}"


def response_head(encoding: str | None = None, length: int | None = None) -> bytes:
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
    if encoding:
        head += b"Content-Encoding: " + encoding.encode() + b"\r\n"
    if length is None:
        head += b"Transfer-Encoding: chunked\r\n"
    else:
        head += b"Content-Length: %d\r\n" % length
    return head + b"\r\n"


def chunked(data: bytes, size: int = 1 << 20) -> bytes:
    out = b""
    for start in range(0, len(data), size):
        part = data[start : start + size]
        out += b"%x\r\n%s\r\n" % (len(part), part)
    return out + b"0\r\n\r\n"


async def watch_body(
    make_client: Callable[..., AsyncClient],
    body: bytes,
    *,
    encoding: str | None = None,
    chunk_size: int = 1 << 20,
    transport: httpx.AsyncBaseTransport | None = None,
) -> tuple[list[WatchEvent], BaseException | None]:
    """The events a watch yields from a server that answers with ``body`` (chunked), and the
    exception the stream ended with (None for a clean end)."""

    async def handler(request: Request, writer: asyncio.StreamWriter) -> None:
        writer.write(response_head(encoding) + chunked(body, chunk_size))
        await writer.drain()
        writer.close()

    seen: list[WatchEvent] = []
    async with loopback(handler) as server:
        options: dict[str, Any] = {} if transport is None else {"transport": transport}
        client = make_client(server.url, **options)
        try:

            async def run() -> None:
                async with client.watch(CONFIGMAPS, namespace="ns") as stream:
                    async for ev in stream:
                        seen.append(ev)

            try:
                await asyncio.wait_for(run(), DEADLINE)
            except asyncio.TimeoutError:
                raise
            except Exception as err:  # the test inspects whatever escaped
                return seen, err
            return seen, None
        finally:
            await client.aclose()


def assert_kubectrl_error(err: BaseException | None, *parts: str) -> str:
    assert err is not None, "the stream ended cleanly"
    assert isinstance(err, KubectrlError), f"{type(err).__name__} escaped: {err}"
    message = str(err)
    for part in parts:
        assert part in message, f"{part!r} not in {message!r}"
    return message


@pytest.fixture(params=["orjson", "json"])
def decoder_kind(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each decoding test runs with orjson (when installed) and with the standard library."""
    if request.param == "json":
        monkeypatch.setattr(_pipeline, "_orjson", None)
    elif _pipeline._orjson is None:
        pytest.skip("orjson is not installed (pip install kubectrl[speedups])")
    return str(request.param)


# --------------------------------------------------------------------------- gzip


def gzip_bomb(inflated_mib: int, block: bytes = b"a" * (1 << 20)) -> bytes:
    """A gzip member of ``inflated_mib`` MiB of ``block`` (no newline: one endless line),
    compressed about 1000:1, built without holding the inflated bytes."""
    deflate = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    parts = [deflate.compress(block) for _ in range(inflated_mib)]
    parts.append(deflate.flush())
    return b"".join(parts)


# The bomb runs in a subprocess of its own so that its peak RSS (ru_maxrss) is the watch's alone.
_BOMB_SCRIPT = r"""
import asyncio, json, resource, sys, zlib

import httpx

from kubectrl.client import APIResource, AsyncClient, ClientConfig
from kubectrl.errors import MalformedStreamError

CONFIGMAPS = APIResource(group="", version="v1", name="configmaps", kind="ConfigMap",
                         namespaced=True)


def rss_kib() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


async def main(inflated_mib: int, transport_kind: str) -> None:
    deflate = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = b"a" * (1 << 20)
    body = b"".join([deflate.compress(block) for _ in range(inflated_mib)] + [deflate.flush()])

    async def handler(reader, writer):
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                     b"Content-Encoding: gzip\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handler, "127.0.0.1", 0)
    url = "http://127.0.0.1:%d" % server.sockets[0].getsockname()[1]
    options = {"transport": httpx.AsyncHTTPTransport()} if transport_kind == "httpx" else {}
    client = AsyncClient(ClientConfig(server=url, rate_limit=None).with_options(**options))
    before = rss_kib()
    try:
        async with client.watch(CONFIGMAPS, namespace="ns") as stream:
            async for _ in stream:
                pass
        outcome = "clean end"
    except MalformedStreamError as err:
        outcome = "MalformedStreamError: " + str(err)
    except BaseException as err:
        outcome = type(err).__name__ + ": " + str(err)[:200]
    after = rss_kib()
    await client.aclose()
    server.close()
    print(json.dumps({"compressed": len(body), "before_kib": before, "after_kib": after,
                      "outcome": outcome}))


asyncio.run(main(int(sys.argv[1]), sys.argv[2]))
"""

#: The bomb: 512 MiB of one line, 0.5 MiB of gzip.
BOMB_INFLATED_MIB = 512
#: Peak RSS growth allowed while a watch refuses the bomb. Measured (Python 3.11, glibc) with the
#: incremental inflating: 29 MiB over the default transport, 30 MiB over httpx's (the decoder's
#: 32 MiB line buffer, then the error). Before it: 948 MiB over the default transport (httpx's
#: decoder inflated each network chunk whole, about 500 MiB, and the decoder copied it) and
#: 125 MiB over httpx's own (64 KiB reads, each 64 MiB inflated). Three times the line bound
#: leaves room for an allocator that copies a growing buffer instead of remapping it.
BOMB_RSS_BOUND_KIB = 3 * DEFAULT_MAX_LINE_BYTES // 1024


def run_bomb(transport_kind: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", _BOMB_SCRIPT, str(BOMB_INFLATED_MIB), transport_kind],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.parametrize("transport_kind", ["fast", "httpx"])
def test_a_gzip_bomb_is_refused_with_bounded_memory(transport_kind: str) -> None:
    """A 0.5 MiB gzip body that inflates to 512 MiB without a newline: the watch inflates it
    a piece at a time, so the decoder's 32 MiB line bound stops it at about 32 MiB held; the
    default transport (raw body extension) and httpx's own (``aiter_raw``) alike."""
    result = run_bomb(transport_kind)
    grown = result["after_kib"] - result["before_kib"]
    assert result["outcome"].startswith("MalformedStreamError: "), result
    assert f"a line exceeded {DEFAULT_MAX_LINE_BYTES} bytes" in result["outcome"], result
    assert grown < BOMB_RSS_BOUND_KIB, (
        f"peak RSS grew by {grown / 1024:.0f} MiB refusing a "
        f"{result['compressed'] / 1024:.0f} KiB gzip bomb (bound "
        f"{BOMB_RSS_BOUND_KIB / 1024:.0f} MiB)"
    )


async def test_inflated_pieces_are_bounded_whatever_the_ratio() -> None:
    """Each step hands the decoder at most ``INFLATE_PIECE_BYTES``, even from one network chunk
    that inflates to 64 MiB, and the pieces add up to the whole body."""
    bomb = gzip_bomb(64)
    response = httpx.Response(
        200, headers={"Content-Encoding": "gzip"}, stream=httpx.ByteStream(bomb)
    )
    sizes = [len(piece) async for piece in _chunks_of(response, "configmaps")]
    assert max(sizes) <= INFLATE_PIECE_BYTES
    assert sum(sizes) == 64 << 20


@pytest.mark.parametrize("chunk_size", [1, 50, 4096, 1 << 20])
@pytest.mark.parametrize("transport_kind", ["fast", "httpx"])
async def test_a_gzip_watch_delivers_every_event(
    make_client: Callable[..., AsyncClient], chunk_size: int, transport_kind: str
) -> None:
    """An honest gzip stream, cut at any size, gives every event in order, over both
    transports; two concatenated gzip members (RFC 1952 2.2) included: before, httpx's decoder
    stopped at the end of the first member and the second's 20 events were lost silently."""
    first = b"".join(event("ADDED", str(i), f"cm-{i}") for i in range(1, 21))
    second = b"".join(event("MODIFIED", str(i), f"cm-{i}") for i in range(21, 41))
    body = gzip.compress(first) + gzip.compress(second)
    transport = httpx.AsyncHTTPTransport() if transport_kind == "httpx" else None
    seen, err = await watch_body(
        make_client, body, encoding="gzip", chunk_size=chunk_size, transport=transport
    )
    assert err is None
    assert [ev.object["metadata"]["name"] for ev in seen] == [f"cm-{i}" for i in range(1, 41)]


async def test_corrupt_gzip_is_a_malformed_stream(make_client: Callable[..., AsyncClient]) -> None:
    """Before, httpx's ``DecodingError`` escaped the watch: not a kubectrl error."""
    body = gzip.compress(event("ADDED", "5"))
    corrupt = body[:10] + b"\xff" * 8 + body[18:]
    _, err = await watch_body(make_client, corrupt, encoding="gzip")
    assert_kubectrl_error(err, "gzip body is corrupt")
    assert isinstance(err, MalformedStreamError)


async def test_a_gzip_body_cut_inside_a_member_is_a_malformed_stream(
    make_client: Callable[..., AsyncClient],
) -> None:
    """The events inflated before the cut are delivered; the cut itself is reported (before,
    the stream ended as if cleanly: a lost tail went unnoticed)."""
    body = gzip.compress(event("ADDED", "5") + event("MODIFIED", "6"))
    seen, err = await watch_body(make_client, body[:-6], encoding="gzip")
    assert [ev.resource_version for ev in seen] == ["5", "6"]
    assert_kubectrl_error(err, "ended inside a gzip member")


# --------------------------------------------------------------------------- nesting


@pytest.mark.parametrize("depth", [MAX_NESTING_DEPTH + 1, 5000, 100_000])
async def test_a_deeply_nested_line_after_a_good_event(
    make_client: Callable[..., AsyncClient], decoder_kind: str, depth: int
) -> None:
    """The event before the bad line (same chunk) is delivered, then a MalformedStreamError
    says the line is too deeply nested; before, a ``RecursionError`` escaped and the event
    before it was never seen.

    The bound follows Go's JSON decoder, which the apiserver's decoding (sigs.k8s.io/json, a
    fork of encoding/json) inherits: ``maxNestingDepth`` (10000) in golang/go
    src/encoding/json/scanner.go, checked in ``pushParseState`` ("exceeded max depth"). Python's
    decoders recurse, so the bound here is lower: orjson refuses more than 1024 levels, the
    standard library what exceeds the interpreter's recursion limit.
    """
    body = event("ADDED", "5") + nested(depth) + b"\n" + event("MODIFIED", "6")
    seen, err = await watch_body(make_client, body)
    assert [ev.type for ev in seen] == [EventType.ADDED]
    message = assert_kubectrl_error(err, "too deeply nested", '\'{"type":"ADDED"')
    assert isinstance(err, MalformedStreamError)
    assert len(message) < 600  # an excerpt, not the line


async def test_a_deeply_nested_last_line_without_newline(
    make_client: Callable[..., AsyncClient], decoder_kind: str
) -> None:
    """The stream's end decodes its unterminated last line the same way (before: a
    ``RecursionError`` from the end-of-stream check)."""
    seen, err = await watch_body(make_client, event("ADDED", "5") + nested(50_000))
    assert [ev.type for ev in seen] == [EventType.ADDED]
    assert_kubectrl_error(err, "too deeply nested")


async def test_nesting_up_to_the_bound_is_decoded(make_client: Callable[..., AsyncClient]) -> None:
    """orjson's limit is the bound: a line exactly ``MAX_NESTING_DEPTH`` deep is an event."""
    if _pipeline._orjson is None:
        pytest.skip("orjson is not installed (pip install kubectrl[speedups])")
    seen, err = await watch_body(make_client, nested(MAX_NESTING_DEPTH) + b"\n")
    assert err is None
    assert [ev.type for ev in seen] == [EventType.ADDED]


@pytest.fixture
def raised_recursion_limit() -> Iterator[None]:
    """A recursion limit far above the bound (as hypothesis sets while it runs, or as an
    application may): the standard library decoder would then decode deeper than the bound."""
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(20_000)
    try:
        yield
    finally:
        sys.setrecursionlimit(before)


@pytest.mark.usefixtures("raised_recursion_limit")
async def test_the_bound_holds_for_the_standard_library_whatever_the_recursion_limit(
    make_client: Callable[..., AsyncClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without orjson and with the recursion limit raised, a line one level past the bound is
    refused (before, it was decoded), one at the bound decoded, and brackets inside a string
    do not count as nesting."""
    monkeypatch.setattr(_pipeline, "_orjson", None)
    brackets_in_a_string = (
        b'{"type":"ADDED","object":{"kind":"ConfigMap","data":{"a":"\\"' + b"[{" * 3000 + b'"}}}'
    )
    ok = nested(MAX_NESTING_DEPTH) + b"\n" + brackets_in_a_string + b"\n"
    seen, err = await watch_body(make_client, ok + nested(MAX_NESTING_DEPTH + 1) + b"\n")
    assert len(seen) == 2
    assert seen[1].object["data"]["a"] == '"' + "[{" * 3000  # an escaped quote first
    assert_kubectrl_error(err, "too deeply nested")


# --------------------------------------------------------------------------- not events

LONG = "x" * 5000

NOT_EVENTS = {
    # A truncated line (json.JSONDecodeError before the fast path's fallback).
    "truncated JSON": (
        b'{"type":"ADDED","object":{"metadata":{"name":"' + LONG.encode(),
        "not JSON",
    ),
    "invalid UTF-8": (b'{"type":"ADDED","object":{"name":"\xff\xfe"}}', "not UTF-8"),
    "a JSON array": (b'[{"type":"ADDED","object":{}}]', "not a JSON object (list)"),
    "a JSON string": (b'"ADDED"', "not a JSON object (str)"),
    "no type": (b'{"object":{"kind":"ConfigMap"}}', 'event without a "type"'),
    "no object": (b'{"type":"ADDED"}', "ADDED event without an object"),
    "object not an object": (b'{"type":"ADDED","object":[1]}', "ADDED event without an object"),
    "unknown type": (b'{"type":"UPSERTED","object":{}}', "unknown event type 'UPSERTED'"),
    "type not a string": (b'{"type":{"a":[1]},"object":{}}', "unknown event type <dict>"),
    "a big integer": (b'{"type":"ADDED","object":{"n":' + b"9" * 5000 + b"}}", "not JSON"),
}


@pytest.mark.parametrize("case", sorted(NOT_EVENTS))
async def test_a_line_that_is_not_an_event(
    make_client: Callable[..., AsyncClient], decoder_kind: str, case: str
) -> None:
    """The events before are delivered, then a MalformedStreamError says why and quotes at
    most 200 bytes of the line."""
    line, reason = NOT_EVENTS[case]
    seen, err = await watch_body(make_client, event("ADDED", "5") + line + b"\n")
    assert [ev.resource_version for ev in seen] == ["5"]
    message = assert_kubectrl_error(err, reason)
    assert isinstance(err, MalformedStreamError)
    assert len(message) < 600


async def test_a_stream_that_ends_inside_an_event(
    make_client: Callable[..., AsyncClient], decoder_kind: str
) -> None:
    seen, err = await watch_body(make_client, event("ADDED", "5") + b'{"type":"MODIFIED","obj')
    assert [ev.resource_version for ev in seen] == ["5"]
    assert_kubectrl_error(err, "stream ended inside an event", '\'{"type":"MODIFIED","obj\'')


# --------------------------------------------------------------------------- ERROR events

HOSTILE_STATUSES: list[tuple[dict[str, Any], type[APIError], str]] = [
    ({"code": 410, "reason": "Expired", "details": {"causes": 5}}, ExpiredError, "Expired (410)"),
    ({"code": 410, "reason": "Expired", "details": []}, ExpiredError, "Expired (410)"),
    ({"code": 404, "reason": 5, "message": {}}, NotFoundError, "5 (404)"),
    (
        {"code": 404, "message": {"a": [1]}, "details": {"causes": [7, None]}},
        NotFoundError,
        "(404)",
    ),
    (
        {"code": "x", "reason": "NotFound", "details": {"retryAfterSeconds": "abc"}},
        NotFoundError,
        "NotFound (404)",
    ),
    ({"code": True, "reason": ["Expired"], "message": 3}, APIError, ": 3"),
    (
        {"code": 410, "reason": "Gone", "details": {"causes": [{"field": {}, "message": []}]}},
        GoneError,
        "Gone (410)",
    ),
]


@pytest.mark.parametrize(("status", "expected", "text"), HOSTILE_STATUSES)
async def test_an_error_event_with_a_malformed_status(
    make_client: Callable[..., AsyncClient],
    status: dict[str, Any],
    expected: type[APIError],
    text: str,
) -> None:
    """An ``ERROR`` event raises the typed error its Status's reason or code asks for, its odd
    fields ignored or stringified (before, ``"causes": 5`` raised ``TypeError``)."""
    error = json.dumps({"type": "ERROR", "object": {"kind": "Status", **status}}).encode()
    seen, err = await watch_body(make_client, event("ADDED", "5") + error + b"\n")
    assert [ev.resource_version for ev in seen] == ["5"]
    assert_kubectrl_error(err, text)
    assert type(err) is expected
