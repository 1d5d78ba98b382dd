"""FastTransport as an httpx transport, against real local sockets, with each of its parsers:
httptools (``kubectrl[speedups]``) and h11 (without it).

A few lines of HTTP/1.1 served by ``asyncio.start_server``: enough to check what a transport
itself decides (timeouts, broken connections, keep-alive reuse, TLS, cancellation); everything
Kubernetes decides is tested against the real API server in the integration suite. Every test
runs on both parsers.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from kubectrl.client import _fast_transport, load_kubeconfig
from kubectrl.client._fast_transport import FastTransport, SetCookieJar, direct_transport

HAVE_HTTPTOOLS = _fast_transport.httptools is not None

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def _read_request(reader: asyncio.StreamReader) -> bytes:
    return await reader.readuntil(b"\r\n\r\n")


@pytest.fixture
async def serve() -> AsyncIterator[Callable[[Handler], Awaitable[str]]]:
    servers: list[asyncio.AbstractServer] = []

    async def start(handler: Handler) -> str:
        server = await asyncio.start_server(handler, "127.0.0.1", 0)
        servers.append(server)
        port = server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    yield start
    for server in servers:
        server.close()


TransportFactory = Callable[..., httpx.AsyncBaseTransport]


@pytest.fixture(autouse=True, params=["h11", "httptools"])
def parser(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The parser under FastTransport (every test runs once per parser)."""
    if request.param == "httptools":
        if not HAVE_HTTPTOOLS:
            pytest.skip("httptools is not installed (pip install kubectrl[speedups])")
    else:
        monkeypatch.setattr(_fast_transport, "httptools", None)
    return str(request.param)


TRANSPORT: TransportFactory = FastTransport


def new_transport(
    max_connections: int = 4, ssl_context: ssl.SSLContext | None = None
) -> httpx.AsyncBaseTransport:
    return TRANSPORT(
        ssl_context=ssl_context,
        max_connections=max_connections,
        max_keepalive_connections=max_connections,
    )


def client(
    base_url: str, transport: httpx.AsyncBaseTransport | None = None, **timeouts: float
) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        transport=transport or new_transport(),
        base_url=base_url,
        timeout=httpx.Timeout(5.0, **timeouts),
    )


def idle_connections_closed(transport: httpx.AsyncBaseTransport) -> bool:
    """Whether every idle connection of ``transport`` has seen its peer close it."""
    assert isinstance(transport, FastTransport)
    return all(c.closed for idle in transport._idle.values() for c in idle)


async def test_chunked_body_arrives_in_order_across_reads(
    serve: Callable[..., Awaitable[str]],
) -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        for i in range(50):
            line = f'{{"n":{i}}}\n'.encode()
            writer.write(f"{len(line):x}\r\n".encode() + line + b"\r\n")
            if i % 10 == 0:
                await writer.drain()
                await asyncio.sleep(0)
        writer.write(b"0\r\n\r\n")
        await writer.drain()

    async with client(await serve(handler)) as http, http.stream("GET", "/watch") as response:
        body = b"".join([chunk async for chunk in response.aiter_bytes()])
    assert body.decode().splitlines() == [f'{{"n":{i}}}' for i in range(50)]


async def test_a_silent_server_is_a_read_timeout(serve: Callable[..., Awaitable[str]]) -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        await writer.drain()
        await asyncio.Event().wait()  # headers, then nothing

    base = await serve(handler)
    async with client(base, read=0.05) as http, http.stream("GET", "/watch") as response:
        with pytest.raises(httpx.ReadTimeout):
            async for _ in response.aiter_bytes():
                pass


async def test_a_connection_cut_inside_the_body_is_a_transport_error(
    serve: Callable[..., Awaitable[str]],
) -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel")
        await writer.drain()
        writer.transport.abort()

    async with client(await serve(handler)) as http, http.stream("GET", "/watch") as response:
        with pytest.raises(httpx.TransportError):
            async for _ in response.aiter_bytes():
                pass


async def test_refused_connection_is_a_connect_error() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.close()

    probe = await asyncio.start_server(handler, "127.0.0.1", 0)
    free_port = probe.sockets[0].getsockname()[1]
    probe.close()
    await probe.wait_closed()
    async with client(f"http://127.0.0.1:{free_port}") as http:
        with pytest.raises(httpx.ConnectError):
            await http.get("/")


async def test_keep_alive_reuses_a_connection_and_replaces_one_the_server_closed(
    serve: Callable[..., Awaitable[str]],
) -> None:
    connections = 0
    hung_up = asyncio.Event()

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        for _ in range(2):  # two requests on this connection, then the server hangs up
            await _read_request(reader)
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            await writer.drain()
        writer.close()
        await writer.wait_closed()
        hung_up.set()

    transport = new_transport()
    async with httpx.AsyncClient(transport=transport, base_url=await serve(handler)) as http:
        answers = [(await http.get("/")).text, (await http.get("/")).text]
        await asyncio.wait_for(hung_up.wait(), 5)
        # The idle connection turns readable (EOF) once the close reaches it; the transport
        # then drops it rather than sending on it.
        deadline = asyncio.get_running_loop().time() + 5
        while not idle_connections_closed(transport):
            assert asyncio.get_running_loop().time() < deadline, "the close never arrived"
            await asyncio.sleep(0.001)
        answers += [(await http.get("/")).text, (await http.get("/")).text]
    assert answers == ["ok"] * 4
    assert connections == 2


def test_the_configs_httpx_client_uses_it_for_direct_connections_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[httpx.AsyncBaseTransport] = []

    def recorded(**options: Any) -> httpx.AsyncBaseTransport:
        made.append(direct_transport(**options))
        return made[-1]

    monkeypatch.setattr(_fast_transport, "direct_transport", recorded)
    load_kubeconfig(_kubeconfig(tmp_path, proxy=None)).async_httpx_client()
    assert [type(t) for t in made] == [FastTransport]
    proxied = load_kubeconfig(_kubeconfig(tmp_path, proxy="http://proxy.example:3128"))
    proxied.async_httpx_client()
    # The documented way back to httpx's own network layer: a transport in the config.
    config = load_kubeconfig(_kubeconfig(tmp_path, proxy=None))
    own = httpx.AsyncHTTPTransport(verify=config.ssl_context())
    config.with_options(transport=own).async_httpx_client()
    assert len(made) == 1


def _kubeconfig(folder: Path, proxy: str | None) -> str:
    path = folder / f"kubeconfig-{'proxy' if proxy else 'direct'}"
    proxy_line = f"\n    proxy-url: {proxy}" if proxy else ""
    path.write_text(
        f"""apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: http://127.0.0.1:1{proxy_line}
contexts:
- name: c
  context: {{cluster: c, user: u}}
current-context: c
users:
- name: u
  user: {{token: t}}
""",
        encoding="utf-8",
    )
    return str(path)


async def test_small_and_large_request_bodies_arrive_whole(
    serve: Callable[..., Awaitable[str]],
) -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            try:
                head = await _read_request(reader)
            except asyncio.IncompleteReadError:
                return
            length = next(
                int(line.split(b":")[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            )
            body = await reader.readexactly(length)
            answer = str(sum(body) % 1000003).encode()
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(answer), answer))
            await writer.drain()

    bodies = [b"x", bytes(range(256)) * 40, bytes(range(256)) * 8192]  # 1 B, 10 KiB, 2 MiB
    async with client(await serve(handler)) as http:
        answers = [(await http.post("/", content=body)).text for body in bodies]
    assert answers == [str(sum(body) % 1000003) for body in bodies]


# ------------------------------------------------------------------ added with FastTransport


def _ok(body: bytes = b"ok") -> bytes:
    return b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)


async def test_a_body_delimited_by_the_close_and_an_interim_response_are_read(
    serve: Callable[..., Awaitable[str]],
) -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil ")
        await writer.drain()
        writer.write(b"the end")
        await writer.drain()
        writer.close()

    async with client(await serve(handler)) as http:
        response = await http.get("/")
    assert (response.status_code, response.text) == (200, "until the end")


async def test_a_request_cancelled_while_waiting_does_not_leak_its_connection(
    serve: Callable[..., Awaitable[str]],
) -> None:
    """The cancelled request's connection is not reused (its late answer would be read as the
    next request's), and its pool slot is free again: with one slot, the next request runs."""
    requests: list[bytes] = []
    first_arrived = asyncio.Event()

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            try:
                head = await _read_request(reader)
            except (asyncio.IncompleteReadError, ConnectionError):
                return
            requests.append(head.split(b" ")[1])
            if head.startswith(b"GET /slow "):
                first_arrived.set()
                await asyncio.sleep(0.2)  # answers late, after the client gave up
                writer.write(_ok(b"slow"))
            else:
                writer.write(_ok(b"fast"))
            try:
                await writer.drain()
            except ConnectionError:
                return

    async with client(await serve(handler), new_transport(max_connections=1)) as http:
        slow = asyncio.ensure_future(http.get("/slow"))
        await asyncio.wait_for(first_arrived.wait(), 5)
        slow.cancel()
        with pytest.raises(asyncio.CancelledError):
            await slow
        answers = [(await http.get("/fast")).text for _ in range(3)]
    assert answers == ["fast"] * 3
    assert requests[0] == b"/slow"


def _answer_holding(release: asyncio.Event) -> Callable[..., Awaitable[None]]:
    """A server handler answering every request "ok", ``GET /hold`` only once ``release``
    is set."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            try:
                head = await _read_request(reader)
            except (asyncio.IncompleteReadError, ConnectionError):
                return
            if head.startswith(b"GET /hold "):
                await release.wait()
            writer.write(_ok())
            await writer.drain()

    return handler


async def test_a_request_cancelled_while_waiting_for_a_free_connection_leaves_it_free(
    serve: Callable[..., Awaitable[str]],
) -> None:
    release = asyncio.Event()
    handler = _answer_holding(release)

    async with client(await serve(handler), new_transport(max_connections=1)) as http:
        holder = asyncio.ensure_future(http.get("/hold"))
        waiting = asyncio.ensure_future(http.get("/queued"))
        for _ in range(20):  # let both reach their waits
            await asyncio.sleep(0)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        release.set()
        assert (await holder).text == "ok"
        assert (await http.get("/after")).text == "ok"


async def test_no_free_connection_within_the_pool_timeout_is_a_pool_timeout(
    serve: Callable[..., Awaitable[str]],
) -> None:
    """PoolTimeout when no connection frees up in time; and the request that timed out leaves
    the queue: the slot freed later goes to the next request, not to the one that gave up
    (which would hold it forever)."""
    release = asyncio.Event()
    handler = _answer_holding(release)

    transport = new_transport(max_connections=1)
    async with client(await serve(handler), transport, pool=0.05) as http:
        holder = asyncio.ensure_future(http.get("/hold"))
        for _ in range(20):
            await asyncio.sleep(0)
        with pytest.raises(httpx.PoolTimeout):
            await http.get("/queued")
        release.set()
        assert (await holder).text == "ok"
        assert (await http.get("/after")).text == "ok"


async def test_tls_verifies_the_server_and_sends_the_sni_name(
    tls_files: tuple[Path, Path, Path],
) -> None:
    ca, cert, key = tls_files
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_context.load_cert_chain(cert, key)
    names: list[str | None] = []

    def record_sni(sock: ssl.SSLObject, name: str | None, context: ssl.SSLContext) -> None:
        names.append(name)

    server_context.sni_callback = record_sni

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            try:
                await _read_request(reader)
            except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
                return  # the client left, or the test ended with the connection open
            writer.write(_ok(b"secret"))
            await writer.drain()

    server = await asyncio.start_server(handler, "127.0.0.1", 0, ssl=server_context)
    port = server.sockets[0].getsockname()[1]
    try:
        verified = ssl.create_default_context(cafile=str(ca))
        base = f"https://127.0.0.1:{port}"
        async with client(base, new_transport(ssl_context=verified)) as http:
            plain = await http.get("/")
        async with client(base, new_transport(ssl_context=verified)) as http:
            named = await http.get("/", extensions={"sni_hostname": "api.test"})
        assert (plain.text, named.text) == ("secret", "secret")
        assert "api.test" in names
        # A client that does not trust the CA refuses the server.
        untrusting = ssl.create_default_context()
        async with client(
            f"https://127.0.0.1:{port}", new_transport(ssl_context=untrusting)
        ) as http:
            with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
                await http.get("/")
    finally:
        server.close()


async def test_a_server_that_never_completes_the_tls_handshake_is_a_connect_timeout(
    serve: Callable[..., Awaitable[str]],
) -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await asyncio.Event().wait()  # accepts the TCP connection, never answers the hello

    base = (await serve(handler)).replace("http://", "https://")
    async with client(
        base, new_transport(ssl_context=ssl.create_default_context()), connect=0.1
    ) as http:
        with pytest.raises(httpx.ConnectTimeout):
            await http.get("/")


async def test_a_header_with_a_line_break_is_refused_before_sending(
    serve: Callable[..., Awaitable[str]],
) -> None:
    received: list[bytes] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        received.append(await reader.read(65536))
        writer.close()

    async with client(await serve(handler)) as http:
        with pytest.raises(httpx.LocalProtocolError):
            await http.get("/", headers={"x-note": "a\r\nx-injected: 1"})
    assert not any(b"x-injected" in data for data in received)


async def test_head_requests_are_answered_without_a_body(
    serve: Callable[..., Awaitable[str]],
) -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            try:
                head = await _read_request(reader)
            except (asyncio.IncompleteReadError, ConnectionError):
                return
            body = b"" if head.startswith(b"HEAD ") else b"12345"
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n" + body)
            await writer.drain()

    async with client(await serve(handler)) as http:
        head = await http.head("/")
        get = await http.get("/")
    assert (head.headers["content-length"], head.content) == ("5", b"")
    assert get.text == "12345"


def test_direct_transport_is_fast_transport_with_or_without_httptools(parser: str) -> None:
    transport = direct_transport(ssl_context=None, max_connections=1, max_keepalive_connections=1)
    assert type(transport) is FastTransport


async def test_the_cookie_jar_keeps_cookies_and_skips_responses_that_set_none(
    serve: Callable[..., Awaitable[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    heads: list[bytes] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            try:
                head = await _read_request(reader)
            except (asyncio.IncompleteReadError, ConnectionError):
                return
            heads.append(head)
            if head.startswith(b"GET /login "):
                writer.write(
                    b"HTTP/1.1 200 OK\r\nSet-Cookie: session=abc; Path=/\r\n"
                    b"Content-Length: 2\r\n\r\nok"
                )
            else:
                writer.write(_ok())
            await writer.drain()

    real_info = httpx.Cookies._CookieCompatResponse.info
    parsed: list[str] = []

    def counting_info(self: Any) -> Any:
        parsed.append(str(self.response.url.path))
        return real_info(self)

    monkeypatch.setattr(httpx.Cookies._CookieCompatResponse, "info", counting_info)
    base = await serve(handler)
    async with httpx.AsyncClient(
        transport=new_transport(), base_url=base, cookies=SetCookieJar()
    ) as http:
        await http.get("/before")
        await http.get("/login")
        await http.get("/after")
    assert set(parsed) == {"/login"}  # only the response that set a cookie was looked at
    assert b"cookie: session=abc" not in heads[0].lower()
    assert b"cookie: session=abc" in heads[2].lower()


async def test_idle_connections_past_their_expiry_are_closed_not_kept(
    serve: Callable[..., Awaitable[str]],
) -> None:
    """The newest idle connection is picked first, so older ones may never be picked again:
    each use of the pool closes those past ``keepalive_expiry`` (as httpcore does). Kept, each
    held its socket and asyncio's 128 KiB TLS buffer until the pool was closed: the creep a
    controller soak showed (12 then 18 TLS buffers alive over five minutes)."""
    release = asyncio.Event()
    handler = _answer_holding(release)
    opened = closed = 0

    async def counting(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal opened, closed
        opened += 1
        try:
            await handler(reader, writer)
        finally:
            closed += 1

    transport = FastTransport(ssl_context=None, max_connections=4, max_keepalive_connections=4)
    async with client(await serve(counting), transport) as http:
        held = [asyncio.ensure_future(http.get("/hold")) for _ in range(4)]
        deadline = asyncio.get_running_loop().time() + 5
        while opened < 4:
            assert asyncio.get_running_loop().time() < deadline, "four connections never opened"
            await asyncio.sleep(0.001)
        release.set()
        assert [(await answer).text for answer in held] == ["ok"] * 4
        idle = [c for connections in transport._idle.values() for c in connections]
        assert len(idle) == 4
        for connection in idle[:-1]:  # idle for longer than the 5 s expiry: all but the newest
            connection.idle_since -= 60
        assert (await http.get("/after")).text == "ok"  # on the newest, still fresh
        while closed < 3:
            assert asyncio.get_running_loop().time() < deadline, f"{3 - closed} kept open"
            await asyncio.sleep(0.001)
        assert (opened, closed) == (4, 3)
