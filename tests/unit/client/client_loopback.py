"""A tiny loopback HTTP/1.1 server for client unit tests (transport behaviour only).

Tests script the bytes the "server" sends, which is how we reproduce a connection that stops
sending, garbage on the wire, or a throttled answer. Nothing here decides Kubernetes semantics;
those are tested against the real control plane in tests/integration.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field

import pytest

from kubectrl.client import APIResource, AsyncClient, ClientConfig


@dataclass
class Request:
    method: str
    target: str
    headers: dict[str, str]
    body: bytes


Handler = Callable[[Request, asyncio.StreamWriter], Awaitable[None]]


@dataclass
class LoopbackServer:
    url: str
    requests: list[Request] = field(default_factory=list)


async def _read_request(reader: asyncio.StreamReader) -> Request | None:
    line = await reader.readline()
    if not line:
        return None
    method, target, _ = line.decode().split(" ", 2)
    headers: dict[str, str] = {}
    while True:
        raw = await reader.readline()
        if raw in (b"\r\n", b"\n", b""):
            break
        key, _, value = raw.decode().partition(":")
        headers[key.strip().lower()] = value.strip()
    body = b""
    if int(headers.get("content-length", "0")):
        body = await reader.readexactly(int(headers["content-length"]))
    return Request(method, target, headers, body)


@contextlib.asynccontextmanager
async def loopback(handler: Handler) -> AsyncIterator[LoopbackServer]:
    """Serve ``handler`` on 127.0.0.1; each request is handled on its own connection task."""
    state = LoopbackServer(url="")
    tasks: set[asyncio.Task[None]] = set()

    async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        tasks.add(task)
        try:
            while True:
                request = await _read_request(reader)
                if request is None:
                    break
                state.requests.append(request)
                await handler(request, writer)
                if writer.is_closing():
                    break
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(on_connect, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    state.url = f"http://127.0.0.1:{port}"
    try:
        yield state
    finally:
        server.close()
        for task in list(tasks):
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await server.wait_closed()


def json_response(status: int, body: object, headers: dict[str, str] | None = None) -> bytes:
    payload = json.dumps(body).encode()
    extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
    return (
        f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(payload)}\r\n{extra}\r\n"
    ).encode() + payload


STREAM_HEAD = (
    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
)


def chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


CONFIGMAPS = APIResource(
    group="", version="v1", name="configmaps", kind="ConfigMap", namespaced=True
)


@pytest.fixture
def make_client() -> Callable[..., AsyncClient]:
    def make(url: str, **options: object) -> AsyncClient:
        config = ClientConfig(server=url, rate_limit=None).with_options(**options)
        return AsyncClient(config)

    return make
