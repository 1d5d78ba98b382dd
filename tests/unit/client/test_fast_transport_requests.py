"""AsyncClient's requests through the pipeline and the transport seam, on FastTransport.

A few lines of HTTP/1.1 served by ``asyncio.start_server`` check what the client itself decides
on this path: what it sends (compared with what httpx's transport sends for the same request,
through the client's httpx adapter), credentials refreshed after a 401, cookies, compressed and
chunked answers, keep-alive, cut connections, timeouts, cancellation and TLS. Everything
Kubernetes decides is tested against the real API server in the integration suite, whose
requests take this path too.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import gzip
import json
import ssl
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from client_loopback import CONFIGMAPS

from kubectrl.client import AsyncClient, ClientConfig, RetryPolicy, _fast_transport
from kubectrl.client._fast_transport import FastTransport
from kubectrl.client._pipeline import StaticTokenCredentials
from kubectrl.client._transport import HttpxTransport
from kubectrl.errors import (
    APIConnectionError,
    MalformedResponseError,
    RequestTimeoutError,
    UnauthorizedError,
)
from kubectrl.testing import eventually

pytestmark = pytest.mark.skipif(
    _fast_transport.httptools is None,
    reason="httptools is not installed (pip install kubectrl[speedups])",
)

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]
CM = CONFIGMAPS


async def read_request(reader: asyncio.StreamReader) -> tuple[bytes, dict[str, str], bytes]:
    """The request line, the headers (lower-case names) and the body of the next request."""
    head = await reader.readuntil(b"\r\n\r\n")
    line, *fields = head[:-4].split(b"\r\n")
    headers: dict[str, str] = {}
    for field in fields:
        name, _, value = field.decode().partition(":")
        headers[name.strip().lower()] = value.strip()
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    return line, headers, body


async def read_head(reader: asyncio.StreamReader) -> tuple[bytes, dict[str, str]]:
    line, headers, _ = await read_request(reader)
    return line, headers


def answer(body: object, status: int = 200, extra: bytes = b"") -> bytes:
    payload = json.dumps(body).encode()
    return b"HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: %d\r\n%s\r\n%s" % (
        status,
        len(payload),
        extra,
        payload,
    )


@pytest.fixture
async def serve() -> AsyncIterator[Callable[..., Awaitable[str]]]:
    servers: list[asyncio.AbstractServer] = []

    async def start(handler: Handler, ssl_context: ssl.SSLContext | None = None) -> str:
        async def guarded(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError):
                await handler(reader, writer)  # the client may close the connection first

        server = await asyncio.start_server(guarded, "127.0.0.1", 0, ssl=ssl_context)
        servers.append(server)
        port = server.sockets[0].getsockname()[1]
        return f"{'https' if ssl_context else 'http'}://127.0.0.1:{port}"

    yield start
    for server in servers:
        server.close()


def direct_client(url: str, **options: object) -> AsyncClient:
    """A client on a direct connection: its transport is FastTransport."""
    config = ClientConfig(server=url, rate_limit=None, retry=RetryPolicy(max_attempts=1))
    client = AsyncClient(config.with_options(**options))
    transport_of(client)
    return client


def transport_of(client: AsyncClient) -> FastTransport:
    transport = client._pipeline.transport
    assert isinstance(transport, FastTransport)
    return transport


def through_httpx(config: ClientConfig) -> ClientConfig:
    """``config`` on httpx's own transport (through the client's httpx adapter)."""
    return config.with_options(transport=httpx.AsyncHTTPTransport())


async def test_a_request_carries_what_httpx_sends_for_it(
    serve: Callable[..., Awaitable[str]],
) -> None:
    """The same patch sent through FastTransport and through httpx's transport: the same
    request line, headers (Host, Accept, Accept-Encoding, User-Agent, Authorization,
    Content-Type, Content-Length) and body; httpx's adds ``Connection: close`` (its parser's
    leftover bytes cannot be seen: kubectrl.client._transport)."""
    seen: list[tuple[bytes, dict[str, str], bytes]] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            seen.append(await read_request(reader))
            writer.write(answer({"kind": "ConfigMap", "metadata": {"name": "a"}}, 201))
            await writer.drain()

    url = await serve(handler)
    config = ClientConfig(server=url, rate_limit=None, credentials=StaticTokenCredentials("tok"))
    patch = {"data": {"a": "1"}}
    async with AsyncClient(config) as client:
        transport_of(client)
        await client.patch(CM, "a", patch, namespace="n")
    async with AsyncClient(through_httpx(config)) as client:
        assert isinstance(client._pipeline.transport, HttpxTransport)
        await client.patch(CM, "a", patch, namespace="n")
    (direct_line, direct_headers, direct_body), (httpx_line, httpx_headers, httpx_body) = seen
    assert direct_line == httpx_line == b"PATCH /api/v1/namespaces/n/configmaps/a HTTP/1.1"
    assert httpx_headers.pop("connection") == "close"
    assert direct_headers == httpx_headers
    assert direct_headers["authorization"] == "Bearer tok"
    assert direct_body == httpx_body


class RotatingToken:
    """A credential source whose token is replaced when a 401 invalidates it (once)."""

    blocking = False

    def __init__(self, refreshable: bool) -> None:
        self.token = "old"
        self.refreshable = refreshable

    def authorization(self) -> str | None:
        return f"Bearer {self.token}"

    def invalidate(self) -> bool:
        if not self.refreshable or self.token == "new":
            return False
        self.token = "new"
        return True


@pytest.mark.parametrize("refreshable", [True, False])
async def test_a_401_refreshes_the_credentials_and_sends_the_request_once_more(
    serve: Callable[..., Awaitable[str]], refreshable: bool
) -> None:
    """As ``KubeAuth`` (httpx's auth flow) does: a 401 asks the source to refresh; if it can,
    the request goes again with the new header, else the 401 is the answer."""
    tokens: list[str] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            _, headers = await read_head(reader)
            tokens.append(headers["authorization"])
            if headers["authorization"] == "Bearer new":
                writer.write(answer({"kind": "ConfigMap", "metadata": {"name": "a"}}))
            else:
                writer.write(answer({"kind": "Status", "code": 401, "reason": "Unauthorized"}, 401))
            await writer.drain()

    source = RotatingToken(refreshable)
    async with direct_client(await serve(handler), credentials=source) as client:
        if refreshable:
            got = await client.get(CM, "a", namespace="n")
            assert got["metadata"]["name"] == "a"
        else:
            with pytest.raises(UnauthorizedError):
                await client.get(CM, "a", namespace="n")
    assert tokens == (["Bearer old", "Bearer new"] if refreshable else ["Bearer old"])


async def test_a_cookie_the_server_sets_is_kept_and_sent_back(
    serve: Callable[..., Awaitable[str]],
) -> None:
    """A response's Set-Cookie goes to the client's jar, and the requests after it send the
    cookie (an API server sets none; a gateway in front of one may)."""
    cookies: list[str | None] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            _, headers = await read_head(reader)
            cookies.append(headers.get("cookie"))
            writer.write(answer({"kind": "ConfigMap"}, extra=b"Set-Cookie: session=s1; Path=/\r\n"))
            await writer.drain()

    config = ClientConfig(server=await serve(handler), rate_limit=None)
    async with AsyncClient(config) as client:
        await client.get(CM, "a", namespace="n")
        assert client._pipeline.cookies.get("session") == "s1"
        await client.get(CM, "a", namespace="n")
    assert cookies == [None, "session=s1"]


async def test_compressed_and_chunked_answers_are_read_whole(
    serve: Callable[..., Awaitable[str]],
) -> None:
    """A gzip answer (the apiserver compresses large ones, and the client accepts gzip as httpx
    does) is decoded; a chunked answer arrives whole across reads."""
    document = {"kind": "ConfigMap", "data": {f"k{i}": "v" * 100 for i in range(300)}}

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        _line, headers = await read_head(reader)
        assert "gzip" in headers["accept-encoding"]
        packed = gzip.compress(json.dumps(document).encode())
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\n"
            b"Content-Length: %d\r\n\r\n%s" % (len(packed), packed)
        )
        await read_head(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        text = json.dumps(document).encode()
        for start in range(0, len(text), 1000):
            piece = text[start : start + 1000]
            writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            await writer.drain()
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        await reader.read()

    async with direct_client(await serve(handler)) as client:
        assert await client.get(CM, "a", namespace="n") == document
        assert await client.get(CM, "b", namespace="n") == document


def _gzip_bodies() -> dict[str, bytes]:
    """gzip bodies a server might send: whole, with a trailer whose size (ISIZE) lies low or
    high, two members, cut short, and not gzip at all."""
    text = json.dumps({"kind": "ConfigMap", "data": {"k": "v" * 5000}}).encode()
    packed = gzip.compress(text)
    return {
        "whole": packed,
        "size too small": packed[:-4] + (7).to_bytes(4, "little"),
        "size too large": packed[:-4] + (2**32 - 1).to_bytes(4, "little"),
        "two members": packed + gzip.compress(b'{"kind": "Other"}'),
        "cut short": packed[:-6],
        "not gzip": text,
    }


@pytest.mark.parametrize("case", list(_gzip_bodies()))
async def test_a_gzip_answer_decodes_as_httpx_decodes_it(
    serve: Callable[..., Awaitable[str]], case: str
) -> None:
    """FastTransport and httpx's transport inflate gzip bodies alike (decode_body, under the
    body limit): the same document, or the same error. A stream without its trailer is refused,
    as Go's compress/gzip reader refuses it (io.ErrUnexpectedEOF, reader.go), where httpx's
    decoder let it through."""
    body = _gzip_bodies()[case]

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            await read_head(reader)
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                b"Content-Encoding: gzip\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
            )
            await writer.drain()

    async def outcome(client: AsyncClient) -> object:
        try:
            return await client.get(CM, "a", namespace="n")
        except Exception as err:  # the error is the outcome compared
            return (type(err), str(err))

    config = ClientConfig(
        server=await serve(handler), rate_limit=None, retry=RetryPolicy(max_attempts=1)
    )
    async with AsyncClient(config) as client:
        transport_of(client)
        direct = await outcome(client)
    async with AsyncClient(through_httpx(config)) as client:
        by_httpx = await outcome(client)
    assert direct == by_httpx
    if case in ("not gzip", "cut short") or case.startswith("size"):  # the trailer is checked
        assert isinstance(direct, tuple)
        assert issubclass(direct[0], MalformedResponseError)
    else:  # the first member, as httpx reads it
        assert direct == {"kind": "ConfigMap", "data": {"k": "v" * 5000}}


async def test_an_inflated_answer_reads_as_its_content(
    serve: Callable[..., Awaitable[str]],
) -> None:
    """A gzip answer FastTransport inflated keeps the server's headers (Content-Encoding
    included), and ``read()``/``aiter_bytes()`` give the inflated body, not a second decode."""
    text = b'{"kind": "ConfigMap"}'

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_head(reader)
        packed = gzip.compress(text)
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n%s"
            % (len(packed), packed)
        )
        await writer.drain()

    async with direct_client(await serve(handler)) as client:
        target = client._pipeline.target("/api/v1/namespaces/n/configmaps/a", {})
        response = await transport_of(client).send("GET", target, {}, None)
    assert response.headers["content-encoding"] == "gzip"
    assert response.content == text
    assert await response.aread() == text
    assert b"".join([part async for part in response.aiter_bytes()]) == text


async def test_keep_alive_reuses_one_connection(serve: Callable[..., Awaitable[str]]) -> None:
    connections = 0

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        while True:
            await read_head(reader)
            writer.write(answer({"kind": "ConfigMap"}))
            await writer.drain()

    async with direct_client(await serve(handler)) as client:
        for name in "abcde":
            await client.get(CM, name, namespace="n")
        assert transport_of(client).in_use() == 0
    assert connections == 1


async def test_a_connection_cut_inside_the_body_is_a_connection_error(
    serve: Callable[..., Awaitable[str]],
) -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_head(reader)
        writer.write(b'HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{"kind":')
        await writer.drain()
        writer.transport.abort()

    async with direct_client(await serve(handler)) as client:
        with pytest.raises(APIConnectionError):
            await client.get(CM, "a", namespace="n")
        transport = transport_of(client)
        assert (transport.in_use(), transport._idle_count) == (0, 0)


async def test_a_silent_server_is_a_request_timeout(serve: Callable[..., Awaitable[str]]) -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_head(reader)
        await asyncio.Event().wait()  # never answers

    async with direct_client(await serve(handler), timeout=0.05) as client:
        with pytest.raises(RequestTimeoutError):
            await client.get(CM, "a", namespace="n")
        assert transport_of(client).in_use() == 0


async def test_a_cancelled_request_frees_its_connection_and_is_not_answered_late(
    serve: Callable[..., Awaitable[str]],
) -> None:
    """The cancelled request's connection is closed (its late answer must not be read as the
    next request's) and its slot is free: with one connection allowed, the next request runs."""
    arrived = asyncio.Event()
    release = asyncio.Event()

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            line, _ = await read_head(reader)
            if b"/slow " in line:
                arrived.set()
                await release.wait()
                writer.write(answer({"kind": "ConfigMap", "metadata": {"name": "slow"}}))
            else:
                writer.write(answer({"kind": "ConfigMap", "metadata": {"name": "fast"}}))
            await writer.drain()

    async with direct_client(await serve(handler), max_connections=1) as client:
        slow = asyncio.ensure_future(client.get(CM, "slow", namespace="n"))
        await asyncio.wait_for(arrived.wait(), 5)
        slow.cancel()
        with pytest.raises(asyncio.CancelledError):
            await slow
        release.set()
        names = [(await client.get(CM, "fast", namespace="n"))["metadata"]["name"] for _ in "ab"]
    assert names == ["fast", "fast"]


async def test_a_header_with_a_line_break_is_refused_before_sending(
    serve: Callable[..., Awaitable[str]],
) -> None:
    received: list[bytes] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        received.append(await reader.read(1000))

    url = await serve(handler)
    source = StaticTokenCredentials("tok")
    source._header = "Bearer tok\r\nX-Injected: 1"  # a token file holding a line break
    async with direct_client(url, credentials=source) as client:
        with pytest.raises(APIConnectionError, match="LocalProtocolError"):
            await client.get(CM, "a", namespace="n")
    assert received in ([], [b""])


async def test_tls_with_the_sni_name_of_the_config(
    serve: Callable[..., Awaitable[str]], tls_files: tuple[Path, Path, Path]
) -> None:
    ca, cert, key = tls_files
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_context.load_cert_chain(cert, key)
    names: list[str | None] = []
    server_context.sni_callback = lambda sock, name, context: names.append(name)  # type: ignore[assignment, func-returns-value]

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            await read_head(reader)
            writer.write(answer({"kind": "ConfigMap", "metadata": {"name": "tls"}}))
            await writer.drain()

    url = await serve(handler, server_context)
    async with direct_client(url, ca_file=str(ca), tls_server_name="api.test") as client:
        got = await client.get(CM, "a", namespace="n")
    assert got["metadata"]["name"] == "tls"
    assert names == ["api.test"]
    async with direct_client(url) as client:  # the CA not trusted
        with pytest.raises(APIConnectionError, match="CERTIFICATE_VERIFY_FAILED"):
            await client.get(CM, "a", namespace="n")


def test_the_httpx_adapter_behind_a_proxy_or_over_a_transport_of_ones_own() -> None:
    """FastTransport on a direct connection; behind a proxy, httpx's transport (it speaks the
    proxy protocols) with ``Connection: close``; a transport of one's own as it is, except
    httpx's own, which gets ``Connection: close`` too."""
    base = ClientConfig(server="http://127.0.0.1:1", rate_limit=None)
    assert isinstance(AsyncClient(base)._pipeline.transport, FastTransport)
    proxied = AsyncClient(base.with_options(proxy="http://127.0.0.1:2"))._pipeline.transport
    assert isinstance(proxied, HttpxTransport)
    assert isinstance(proxied.transport, httpx.AsyncHTTPTransport)
    assert proxied._headers["Connection"] == "close"
    own = httpx.AsyncHTTPTransport()
    adapter = AsyncClient(base.with_options(transport=own))._pipeline.transport
    assert isinstance(adapter, HttpxTransport)
    assert adapter.transport is own
    assert adapter._headers["Connection"] == "close"
    mock = httpx.MockTransport(lambda request: httpx.Response(200))
    adapter = AsyncClient(base.with_options(transport=mock))._pipeline.transport
    assert isinstance(adapter, HttpxTransport)
    assert "Connection" not in adapter._headers


@pytest.mark.parametrize(
    ("path", "query"),
    [
        ("/api/v1/namespaces/n/configmaps/a.b-c", {}),
        (
            "/apis/apps/v1/deployments",
            {
                "labelSelector": "app in (a,b),!x,tier!=db",
                "fieldSelector": "metadata.name=a,status.phase!=Running",
                "limit": "500",
                "continue": "eyJ2IjoibWV0YS5rOHMuaW8vdjEi+/==",
            },
        ),
        (
            "/api/v1/namespaces/n/pods/p/log",
            {"container": "c", "sinceTime": "2026-11-24T10:00:00Z"},
        ),
        ("/api/v1/namespaces/n/configmaps", {"labelSelector": "owner=caf\u00e9 x&y"}),
        ("/apis/example.com/v1/namespaces/n/things/a:b@c~d", {"dryRun": "All"}),
    ],
)
@pytest.mark.parametrize("base", ["https://127.0.0.1:6443", "https://proxy.test/k8s/clusters/c-1/"])
def test_a_request_target_is_the_one_httpx_writes_for_the_same_url(
    path: str, query: dict[str, str], base: str
) -> None:
    """The target is built without parsing a URL (a controller's URLs mostly name one object
    each, so caching httpx's parse did not help): it must be byte for byte httpx's."""
    client = AsyncClient(ClientConfig(server=base, rate_limit=None))
    prefix = httpx.URL(base).raw_path.rstrip(b"/")
    target = client._pipeline.target(path, query).encode("ascii")
    assert prefix + target == client._url(path, query).raw_path


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/namespaces/n/configmaps/with space",
        "/api/v1/namespaces/n/configmaps/caf\u00e9",
        "/api/v1/namespaces/n/configmaps/100%",
    ],
)
def test_a_path_that_needs_quoting_is_quoted_by_httpx(path: str) -> None:
    client = AsyncClient(ClientConfig(server="https://127.0.0.1:6443", rate_limit=None))
    target = client._pipeline.target(path, {"a": "b c"})
    assert target.encode("ascii") == client._url(path, {"a": "b c"}).raw_path


async def test_a_closed_connection_is_freed_without_the_cycle_collector(
    serve: Callable[..., Awaitable[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A connection the server closes is freed as soon as nothing uses it, not at the cycle
    collector's next full pass: each holds a TLS object, its buffers and a socket, and a
    controller that opens a dozen connections a minute would otherwise carry them for minutes
    (``benchmarks/soak.py``). asyncio's own protocol drops its references when the connection
    is lost (CPython's Lib/asyncio/sslproto.py, ``SSLProtocol.connection_lost``); the
    connection must drop its parser, whose callbacks point back at it."""
    made: list[weakref.ref[_fast_transport._Connection]] = []

    class Recorded(_fast_transport._Connection):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            made.append(weakref.ref(self))

    monkeypatch.setattr(_fast_transport, "_Connection", Recorded)

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_head(reader)
        writer.write(answer({"kind": "ConfigMap"}, extra=b"Connection: close\r\n"))
        await writer.drain()
        writer.close()

    gc.collect()
    gc.disable()
    try:
        async with direct_client(await serve(handler)) as client:
            for name in "ab":
                await client.get(CM, name, namespace="n")
        assert len(made) == 2  # Connection: close: one connection per request
        await eventually(lambda: all(ref() is None for ref in made), timeout=10)
    finally:
        gc.enable()
