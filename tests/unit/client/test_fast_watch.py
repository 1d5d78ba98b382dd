"""A watch over FastTransport reads the body's chunks straight from the transport (no httpx
decoding per chunk) when the server sent them uncompressed, and through httpx's decoders when
it compressed them; both give the same events, whatever the chunk boundaries."""

from __future__ import annotations

import asyncio
import gzip
import json
from collections.abc import AsyncIterator, Awaitable, Callable

import httpx
import pytest

from kubectrl.client import _fast_transport
from kubectrl.client._fast_transport import RAW_BODY, FastTransport
from kubectrl.client._watch import WatchStream

pytestmark = pytest.mark.skipif(
    _fast_transport.httptools is None, reason="httptools is not installed (kubectrl[speedups])"
)

LINES = b"".join(
    json.dumps(
        {"type": "MODIFIED", "object": {"metadata": {"name": f"cm-{i}", "resourceVersion": str(i)}}}
    ).encode()
    + b"\n"
    for i in range(1, 41)
)


def chunked(data: bytes, size: int) -> bytes:
    out = b""
    for start in range(0, len(data), size):
        part = data[start : start + size]
        out += b"%x\r\n%s\r\n" % (len(part), part)
    return out + b"0\r\n\r\n"


@pytest.fixture
async def server() -> AsyncIterator[Callable[[bytes], Awaitable[str]]]:
    servers: list[asyncio.AbstractServer] = []

    async def start(response: bytes) -> str:
        async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await reader.readuntil(b"\r\n\r\n")
            writer.write(response)
            await writer.drain()
            writer.close()

        server = await asyncio.start_server(handler, "127.0.0.1", 0)
        servers.append(server)
        return f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"

    yield start
    for server in servers:
        server.close()


async def watch_names(base: str) -> tuple[list[str], bool]:
    transport = FastTransport(ssl_context=None, max_connections=2, max_keepalive_connections=2)
    raw_used = False
    async with httpx.AsyncClient(transport=transport, base_url=base) as http:

        async def opener(timeout: float | None) -> tuple[httpx.Response, str, str | None]:
            nonlocal raw_used
            response = await http.send(http.build_request("GET", "/watch"), stream=True)
            raw_used = RAW_BODY in response.extensions and (
                response.headers.get("content-encoding") is None
            )
            return response, "configmaps", None

        async with WatchStream(opener) as stream:
            names = [event.object["metadata"]["name"] async for event in stream]
    return names, raw_used


@pytest.mark.parametrize("size", [7, 100, 4096])
async def test_uncompressed_chunks_are_read_from_the_transport(
    server: Callable[[bytes], Awaitable[str]], size: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    def not_here(self: httpx.Response, chunk_size: int | None = None) -> None:
        raise AssertionError("the watch read its chunks through httpx")

    monkeypatch.setattr(httpx.Response, "aiter_bytes", not_here)
    head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    names, raw_used = await watch_names(await server(head + chunked(LINES, size)))
    assert names == [f"cm-{i}" for i in range(1, 41)]
    assert raw_used


async def test_a_gzip_body_is_inflated_by_the_watch_itself(
    server: Callable[[bytes], Awaitable[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A gzip watch is inflated piece by piece under the line bound by the watch
    (kubectrl.client._watch), never through httpx's decoders, which inflate a chunk whole."""

    def not_here(self: httpx.Response, chunk_size: int | None = None) -> None:
        raise AssertionError("the watch read its chunks through httpx's decoders")

    monkeypatch.setattr(httpx.Response, "aiter_bytes", not_here)
    body = gzip.compress(LINES)
    head = b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n"
    names, _ = await watch_names(await server(head + chunked(body, 50)))
    assert names == [f"cm-{i}" for i in range(1, 41)]
