"""Opening a watch is bounded on its own, and each failed open reaches the caller (no retries).

client-go's reflector makes one watch request per attempt and handles every failure itself
(tools/cache/reflector.go ``watchWithResync``/``watch``: on error it backs off and lists or
watches again); the REST client does not retry a watch. Its transport has no response-header
timeout, but its HTTP/2 connection health check (k8s.io/apimachinery pkg/util/net/http.go:
``ReadIdleTimeout`` 30 s, ``PingTimeout`` 15 s) ends a silent connection after about 45 s, which is
our default ``watch_open_timeout``.

Every test is bounded by ``asyncio.wait_for``; a hang fails the test instead of the suite.
"""

from __future__ import annotations

import asyncio

import pytest
from client_loopback import CONFIGMAPS, Request, json_response, loopback

from kubectrl.client import ClientConfig
from kubectrl.errors import RequestTimeoutError, ServiceUnavailableError

DEADLINE = 10.0


async def test_watch_open_on_a_silent_server_fails_once_after_the_open_bound(make_client) -> None:
    connections = 0
    release = asyncio.Event()

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        await release.wait()  # accept, read nothing, answer nothing
        writer.close()

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    client = make_client(f"http://127.0.0.1:{port}", watch_open_timeout=0.3)
    try:
        stream = client.watch(CONFIGMAPS, namespace="ns")  # stall bound stays at 90 s

        async def run() -> None:
            async with stream:
                async for _ in stream:
                    pass

        with pytest.raises(RequestTimeoutError) as info:
            await asyncio.wait_for(run(), DEADLINE)
        assert connections == 1
        assert "watch" in str(info.value)
        assert "configmaps" in str(info.value)
        assert "0.3 s" in str(info.value)
    finally:
        release.set()
        await client.aclose()
        server.close()
        await server.wait_closed()


async def test_watch_open_error_is_not_retried_inside_the_client(make_client) -> None:
    async def handler(request: Request, writer: asyncio.StreamWriter) -> None:
        writer.write(
            json_response(503, {"kind": "Status", "code": 503, "reason": "ServiceUnavailable"})
        )
        await writer.drain()

    async with loopback(handler) as server:
        client = make_client(server.url)
        try:
            with pytest.raises(ServiceUnavailableError):
                await asyncio.wait_for(client.watch(CONFIGMAPS).__aenter__(), DEADLINE)
            assert len(server.requests) == 1
        finally:
            await client.aclose()


def test_watch_open_timeout_default_is_documented() -> None:
    assert ClientConfig(server="https://k:6443").watch_open_timeout == 45.0
