"""The probes + metrics HTTP server, on a free loopback port."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import pytest

from kubectrl.runtime import ping
from kubectrl.runtime._server import HTTPServer, parse_bind_address


async def get(port: int, path: str, method: str = "GET") -> tuple[int, str]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"{method} {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    await writer.drain()
    data = await reader.read()
    writer.close()
    await writer.wait_closed()
    head, _, body = data.decode().partition("\r\n\r\n")
    return int(head.split()[1]), body


def test_bind_addresses() -> None:
    assert parse_bind_address(":8080") == ("", 8080)
    assert parse_bind_address("0") is None
    assert parse_bind_address("") is None
    assert parse_bind_address("[::1]:9") == ("::1", 9)
    with pytest.raises(ValueError, match="host:port"):
        parse_bind_address("localhost")


async def test_disabled_server_does_nothing() -> None:
    server = HTTPServer("0")
    assert not server.enabled
    await server.start()
    assert server.port is None
    await server.stop()


async def test_probes_with_named_checks() -> None:
    ready = False

    async def synced() -> None:
        if not ready:
            raise RuntimeError("caches not synced: v1/ConfigMap")

    server = HTTPServer("127.0.0.1:0")
    server.add_healthz_check("ping", ping)
    server.add_readyz_check("informers", synced)
    server.add_readyz_check("ping", ping)
    with pytest.raises(ValueError, match="already"):
        server.add_readyz_check("ping", ping)
    await server.start()
    port = server.port
    assert port
    try:
        assert await get(port, "/healthz") == (200, "ok")
        status, body = await get(port, "/readyz")
        assert status == 503
        assert "[-]informers failed: caches not synced: v1/ConfigMap" in body
        assert "[+]ping ok" in body
        assert (await get(port, "/readyz?exclude=informers"))[0] == 200
        assert (await get(port, "/readyz/ping"))[0] == 200
        assert (await get(port, "/readyz/nope"))[0] == 404
        ready = True
        assert await get(port, "/readyz") == (200, "ok")
        status, body = await get(port, "/readyz?verbose")
        assert status == 200
        assert "[+]informers ok" in body
        assert (await get(port, "/other"))[0] == 404
        assert (await get(port, "/healthz", method="POST"))[0] == 405
        assert (await get(port, "/healthz", method="HEAD")) == (200, "")
    finally:
        await server.stop()


async def test_metrics_endpoint() -> None:
    prometheus_client = pytest.importorskip("prometheus_client")
    registry = prometheus_client.CollectorRegistry()
    prometheus_client.Counter("demo_total", "d", registry=registry).inc()
    server = HTTPServer("127.0.0.1:0", registry=registry)
    await server.start()
    try:
        assert server.port
        status, body = await get(server.port, "/metrics")
        assert status == 200
        assert "demo_total 1.0" in body
    finally:
        await server.stop()


async def test_bad_requests_do_not_kill_the_server() -> None:
    server = HTTPServer("127.0.0.1:0")
    await server.start()
    try:
        assert server.port
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        writer.write(b"\r\n")
        await writer.drain()
        assert b"400" in await reader.read()
        writer.close()
        assert (await get(server.port, "/healthz"))[0] == 200
    finally:
        await server.stop()


# ---------------------------------------------------------------- secure metrics (issue 16, #18)


async def test_tls_and_a_request_filter_guard_every_request() -> None:
    """HTTPS only, and the filter sees method, path and headers before anything is served."""

    import httpx

    from kubectrl.runtime._server import metrics_tls_context

    seen: list[tuple[str, str, str]] = []

    async def only_alice(method: str, path: str, headers: Mapping[str, str]) -> Any:
        seen.append((method, path, headers.get("authorization", "")))
        return None if headers.get("authorization") == "Bearer alice" else (403, b"no\n")

    server = HTTPServer(
        "127.0.0.1:0", tls=metrics_tls_context(), request_filter=only_alice, serve_probes=True
    )
    server.add_healthz_check("ping", ping)
    await server.start()
    try:
        url = f"https://127.0.0.1:{server.port}/healthz"
        async with httpx.AsyncClient(verify=False) as http:  # self-signed, on purpose
            assert (await http.get(url)).status_code == 403
            ok = await http.get(url, headers={"Authorization": "Bearer alice"})
            assert (ok.status_code, ok.text) == (200, "ok")
        with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):  # self-signed
            async with httpx.AsyncClient() as http:
                await http.get(url)
    finally:
        await server.stop()
    assert seen[:2] == [("GET", "/healthz", ""), ("GET", "/healthz", "Bearer alice")]


async def test_auth_filter_answers_401_without_a_bearer_token_before_any_api_call() -> None:
    from kubectrl.runtime._server import KubernetesAuthFilter

    class NoServer:
        async def create(self, obj: Any, **kwargs: Any) -> dict[str, Any]:
            raise AssertionError("no review may be sent without a token")

    auth = KubernetesAuthFilter(NoServer())  # type: ignore[arg-type]
    assert await auth("GET", "/metrics", {}) == (401, b"Unauthorized\n")
    assert await auth("GET", "/metrics", {"authorization": "Basic YTpi"}) == (
        401,
        b"Unauthorized\n",
    )
    assert await auth("GET", "/metrics", {"authorization": "Bearer "}) == (401, b"Unauthorized\n")


def test_metrics_tls_context_names_the_file_it_cannot_load(tmp_path: Any) -> None:
    from kubectrl.errors import ConfigError
    from kubectrl.runtime._server import metrics_tls_context

    with pytest.raises(ConfigError, match=r"tls\.crt"):
        metrics_tls_context(tmp_path)


def test_metrics_default_to_loopback_and_plain_non_loopback_is_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    import logging

    from kubectrl.client import ClientConfig
    from kubectrl.runtime import Manager, ManagerOptions

    # None: loopback port 8080 for a real server's config (off only for an in-process one).
    assert ManagerOptions().metrics_bind_address is None
    assert ManagerOptions().metrics_secure is False
    config = ClientConfig(server="https://127.0.0.1:9")
    assert Manager(config)._new_metrics_server()._address == ("127.0.0.1", 8080)
    with caplog.at_level(logging.WARNING, logger="kubectrl.runtime.manager"):
        Manager(config, options=ManagerOptions(metrics_bind_address="127.0.0.1:0"))
        assert "without authentication" not in caplog.text
        Manager(config, options=ManagerOptions(metrics_bind_address=":0"))
    assert "metrics served on :0 over plain HTTP without authentication" in caplog.text
