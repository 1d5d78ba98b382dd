"""The asyncio network layer under httpx (kubectrl.client._transport), against real local sockets.

A few lines of HTTP/1.1 served by ``asyncio.start_server``: enough to check what the transport
itself decides (timeouts, broken connections, keep-alive reuse); everything Kubernetes decides is
tested against the real API server in the integration suite.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import httpx
import pytest

from kubectrl.client import load_kubeconfig
from kubectrl.client._transport import AsyncioTransport

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


def client(base_url: str, **timeouts: float) -> httpx.AsyncClient:
    transport = AsyncioTransport(ssl_context=None, max_connections=4, max_keepalive_connections=4)
    return httpx.AsyncClient(
        transport=transport, base_url=base_url, timeout=httpx.Timeout(5.0, **timeouts)
    )


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

    transport = AsyncioTransport(ssl_context=None, max_connections=4, max_keepalive_connections=4)
    async with httpx.AsyncClient(transport=transport, base_url=await serve(handler)) as http:
        answers = [(await http.get("/")).text, (await http.get("/")).text]
        await asyncio.wait_for(hung_up.wait(), 5)
        # The idle connection turns readable (EOF) once the close reaches it; httpcore then
        # drops it rather than sending on it.
        deadline = asyncio.get_running_loop().time() + 5
        while not all(c.has_expired() for c in transport._pool.connections):
            assert asyncio.get_running_loop().time() < deadline, "the close never arrived"
            await asyncio.sleep(0.001)
        answers += [(await http.get("/")).text, (await http.get("/")).text]
    assert answers == ["ok"] * 4
    assert connections == 2


def test_the_client_uses_it_for_direct_connections_and_not_behind_a_proxy(
    tmp_path: Path,
) -> None:
    direct = load_kubeconfig(_kubeconfig(tmp_path, proxy=None)).async_httpx_client()
    assert isinstance(direct._transport, AsyncioTransport)
    proxied = load_kubeconfig(_kubeconfig(tmp_path, proxy="http://proxy.example:3128"))
    assert not isinstance(proxied.async_httpx_client()._transport, AsyncioTransport)
    # The documented way back to httpx's own network layer: a transport in the config.
    config = load_kubeconfig(_kubeconfig(tmp_path, proxy=None))
    own = httpx.AsyncHTTPTransport(verify=config.ssl_context())
    assert config.with_options(transport=own).async_httpx_client()._transport is own


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
