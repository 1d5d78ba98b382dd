"""The request pipeline (kubectrl.client._pipeline) and its transports, seen from the client.

What the steps decide, against a loopback server or an httpx transport of the test's own: the
transports the client builds from its config, the stream transport of watches, credentials
refreshed after a 401 when a watch opens, retries asked for only after a failure, HEAD
answered without a body, and an httpx transport called through its public API only.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hostile_http import Connection, HostileServer, answer, configmap, hostile_server

from kubectrl import FakeClock, RealClock
from kubectrl.client import APIResource, AsyncClient, ClientConfig, RetryPolicy, _retry
from kubectrl.client._fast_transport import FastTransport
from kubectrl.client._pipeline import TokenBucketRateLimiter
from kubectrl.client._transport import HttpxTransport
from kubectrl.errors import InternalError

CONFIGMAPS = APIResource(
    group="", version="v1", name="configmaps", kind="ConfigMap", namespaced=True
)


class RotatingToken:
    """A credential source whose token is replaced when a 401 invalidates it."""

    blocking = False

    def __init__(self) -> None:
        self.token = "old"

    def authorization(self) -> str | None:
        return f"Bearer {self.token}"

    def invalidate(self) -> bool:
        if self.token == "new":
            return False
        self.token = "new"
        return True


def name_of(target: str) -> str:
    return target.split("?")[0].rsplit("/", 1)[-1]


async def echo(conn: Connection) -> None:
    while (request := await conn.read_request()) is not None:
        if request.method == "HEAD":
            await conn.send(b"HTTP/1.1 200 OK\r\nContent-Length: 123\r\n\r\n")
        else:
            await conn.send(answer(configmap(name_of(request.target))))


@pytest.fixture
def server() -> Iterator[HostileServer]:
    with hostile_server(echo) as running:
        yield running


def test_the_client_builds_its_transports_from_its_config() -> None:
    config = ClientConfig(server="https://127.0.0.1:6443", max_connections=7, rate_limit=None)
    client = AsyncClient(config)
    requests = client._pipeline.transport
    streams = client._watch_pool()
    assert isinstance(requests, FastTransport)
    assert isinstance(streams, FastTransport)
    assert streams is not requests
    assert (requests._max_connections, streams._max_connections) == (7, None)
    assert client._watch_pool() is streams  # made once
    assert requests._ssl_context is streams._ssl_context is not None


async def test_a_head_request_is_answered_without_a_body_and_its_connection_kept(
    server: HostileServer,
) -> None:
    config = ClientConfig(server=server.url, rate_limit=None)
    async with AsyncClient(config) as client:
        head = await client._send("HEAD", "/api/v1/namespaces/n/configmaps/a", verb="get")
        got = await client.get(CONFIGMAPS, "b", namespace="n")
    assert (head.status_code, head.headers["content-length"], head.content) == (200, "123", b"")
    assert got["metadata"]["name"] == "b"
    assert server.connections == 1


async def test_a_watch_opens_again_with_refreshed_credentials_after_a_401() -> None:
    tokens: list[str] = []

    async def script(conn: Connection) -> None:
        while (request := await conn.read_request()) is not None:
            tokens.append(request.headers["authorization"])
            if request.headers["authorization"] != "Bearer new":
                status = {"kind": "Status", "code": 401, "reason": "Unauthorized"}
                await conn.send(answer(status, code=401, reason="Unauthorized"))
                continue
            line = json.dumps({"type": "ADDED", "object": configmap("a")}).encode() + b"\n"
            await conn.send(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(line), line))

    with hostile_server(script) as server:
        config = ClientConfig(server=server.url, rate_limit=None, credentials=RotatingToken())
        async with (
            AsyncClient(config) as client,
            client.watch(CONFIGMAPS, namespace="default") as stream,
        ):
            events = [event async for event in stream]
    assert [event.object["metadata"]["name"] for event in events] == ["a"]
    assert tokens == ["Bearer old", "Bearer new"]


async def test_retries_are_asked_for_only_after_a_failure(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked: list[Exception] = []
    real = _retry.retry_after

    async def spy(policy: RetryPolicy, failed: Exception, *args: Any, **kwargs: Any) -> Any:
        asked.append(failed)
        return await real(policy, failed, *args, **kwargs)

    monkeypatch.setattr("kubectrl.client._pipeline.retry_after", spy)
    answers = iter([500, 200, 200])

    async def script(conn: Connection) -> None:
        while (request := await conn.read_request()) is not None:
            code = next(answers)
            body = configmap(name_of(request.target))
            if code == 500:
                body = {"kind": "Status", "code": 500, "reason": "InternalError"}
            await conn.send(answer(body, code=code))

    with hostile_server(script) as server:
        config = ClientConfig(
            server=server.url, rate_limit=None, retry=RetryPolicy(initial_backoff=0.001)
        )
        async with AsyncClient(config) as client:
            first = await client.get(CONFIGMAPS, "a", namespace="n")  # 500, then 200
            assert [type(err) for err in asked] == [InternalError]
            second = await client.get(CONFIGMAPS, "b", namespace="n")  # 200 at once
    assert (first["metadata"]["name"], second["metadata"]["name"]) == ("a", "b")
    assert len(asked) == 1


async def test_a_transport_of_ones_own_is_called_through_its_public_api_only() -> None:
    """``handle_async_request`` with the whole request (defaults, credentials, body, timeouts,
    SNI name); ``aclose`` when the client closes."""
    seen: list[httpx.Request] = []

    class Recording(httpx.AsyncBaseTransport):
        closed = False

        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            seen.append(request)
            return httpx.Response(200, json=configmap("a"))

        async def aclose(self) -> None:
            Recording.closed = True

    class Token:
        blocking = False

        def authorization(self) -> str:
            return "Bearer t"

        def invalidate(self) -> bool:
            return False

    config = ClientConfig(
        server="https://kube.test:6443/prefix",
        transport=Recording(),
        rate_limit=None,
        credentials=Token(),
        tls_server_name="api.test",
    )
    async with AsyncClient(config) as client:
        assert isinstance(client._pipeline.transport, HttpxTransport)
        await client.patch(CONFIGMAPS, "a", {"data": {"k": "v"}}, namespace="n")
    (request,) = seen
    assert str(request.url) == "https://kube.test:6443/prefix/api/v1/namespaces/n/configmaps/a"
    assert request.headers["authorization"] == "Bearer t"
    assert request.headers["accept"] == "application/json"
    assert request.headers["accept-encoding"] == "gzip"
    assert request.headers["user-agent"] == config.user_agent
    assert request.headers["content-type"] == "application/merge-patch+json"
    assert "connection" not in request.headers
    assert json.loads(request.content) == {"data": {"k": "v"}}
    assert request.extensions["sni_hostname"] == "api.test"
    assert request.extensions["timeout"]["connect"] == config.connect_timeout
    assert Recording.closed


async def test_behind_a_proxy_no_connection_outlives_its_answer() -> None:
    """Through a proxy (httpx's transport, absolute-form targets) every request asks for
    ``Connection: close``: an answer glued after the real one is never the next request's."""
    seen: list[tuple[str, str | None]] = []

    async def script(conn: Connection) -> None:
        while (request := await conn.read_request()) is not None:
            seen.append((request.target, request.headers.get("connection")))
            stray = answer(configmap("stray"))
            await conn.send(answer(configmap(name_of(request.target))) + stray)

    with hostile_server(script) as proxy:
        config = ClientConfig(
            server="http://kube.test",
            proxy=proxy.url,
            rate_limit=None,
            retry=RetryPolicy(max_attempts=1),
        )
        async with AsyncClient(config) as client:
            assert isinstance(client._pipeline.transport, HttpxTransport)
            got = [await client.get(CONFIGMAPS, name, namespace="n") for name in ("a", "b")]
    assert [obj["metadata"]["name"] for obj in got] == ["a", "b"]
    base = "http://kube.test/api/v1/namespaces/n/configmaps/"
    assert seen == [(base + "a", "close"), (base + "b", "close")]
    assert proxy.connections == 2


def test_the_token_bucket_reads_the_machine_clock_directly_and_a_fake_one_through_it() -> None:
    fake = FakeClock()
    limiter = TokenBucketRateLimiter(qps=1, burst=1, clock=fake)
    assert limiter.try_acquire()
    assert not limiter.try_acquire()
    fake.advance(1.0)
    assert limiter.try_acquire()
    real = TokenBucketRateLimiter(qps=1000, burst=2, clock=RealClock())
    assert real._now is time.monotonic
    assert real.try_acquire()


async def test_a_closed_client_refuses_to_send(server: HostileServer) -> None:
    client = AsyncClient(ClientConfig(server=server.url, rate_limit=None))
    await client.aclose()
    with pytest.raises(RuntimeError, match="closed"):
        await client.get(CONFIGMAPS, "a", namespace="n")
