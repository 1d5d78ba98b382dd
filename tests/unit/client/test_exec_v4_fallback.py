"""Exec against a server that offers only ``v4.channel.k8s.io`` (an older apiserver or kubelet):
a local aiohttp WebSocket server speaking the channel protocol (the framing of
k8s.io/apimachinery wsstream/conn.go; the error channel's Status as in client-go
tools/remotecommand/v4.go: ``NonZeroExitCode`` with an ``ExitCode`` cause)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest
from aiohttp import WSMsgType, web

from kubectrl.client import AsyncClient, ClientConfig
from kubectrl.errors import APIConnectionError, UnsupportedFeatureError

OFFERED: list[list[str]] = []


async def _exec(request: web.Request) -> web.WebSocketResponse:
    OFFERED.append(
        [p.strip() for p in request.headers.get("Sec-WebSocket-Protocol", "").split(",")]
    )
    ws = web.WebSocketResponse(protocols=("v4.channel.k8s.io",))
    await ws.prepare(request)
    command = request.query.getall("command")
    if command[0] == "cat":  # echo stdin: a v4 client cannot close it, so read a known length
        want = int(command[1])
        got = bytearray()
        async for message in ws:
            assert message.type == WSMsgType.BINARY
            assert message.data[0] == 0, "only stdin is sent"
            got += message.data[1:]
            if len(got) >= want:
                break
        await ws.send_bytes(b"\x01" + bytes(got))
        status: dict[str, object] = {"metadata": {}, "status": "Success"}
    elif command[0] == "cut":
        await ws.send_bytes(b"\x01partial")
        await ws.close()
        return ws
    else:
        code = int(command[1])
        await ws.send_bytes(b"\x01out\n")
        await ws.send_bytes(b"\x02err\n")
        status = (
            {"metadata": {}, "status": "Success"}
            if code == 0
            else {
                "metadata": {},
                "status": "Failure",
                "reason": "NonZeroExitCode",
                "message": f"command terminated with non-zero exit code: exit status {code}",
                "details": {"causes": [{"reason": "ExitCode", "message": str(code)}]},
            }
        )
    await ws.send_bytes(b"\x03" + json.dumps(status).encode())
    await ws.close()
    return ws


@pytest.fixture
async def client() -> AsyncIterator[AsyncClient]:
    app = web.Application()
    app.router.add_get("/api/v1/namespaces/ns/pods/web/exec", _exec)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    config = ClientConfig(server=f"http://127.0.0.1:{port}", rate_limit=None)
    try:
        async with AsyncClient(config) as c:
            yield c
    finally:
        await runner.cleanup()


async def test_v5_is_offered_first_and_v4_is_spoken(client: AsyncClient) -> None:
    OFFERED.clear()
    result = await client.pods.exec("web", ["run", "3"], namespace="ns")
    assert OFFERED == [["v5.channel.k8s.io", "v4.channel.k8s.io"]]
    assert (result.stdout, result.stderr, result.exit_code) == (b"out\n", b"err\n", 3)
    assert not result.ok
    assert (await client.pods.exec("web", ["run", "0"], namespace="ns")).ok


async def test_v4_session_cannot_close_stdin_but_stdin_flows(client: AsyncClient) -> None:
    async with client.pods.open_exec("web", ["cat", "5"], namespace="ns", stdin=True) as session:
        assert session.protocol == "v4.channel.k8s.io"
        with pytest.raises(UnsupportedFeatureError, match=r"needs v5\.channel\.k8s\.io"):
            await session.close_stdin()
        await session.write(b"hello")
        assert await session.stdout.read() == b"hello"
        assert await session.wait() == 0
    # The one-shot form sends stdin and, on v4, leaves closing it to the command.
    result = await client.pods.exec("web", ["cat", "3"], namespace="ns", stdin=b"abc")
    assert (result.stdout, result.exit_code) == (b"abc", 0)


async def test_a_connection_closed_without_status_names_pod_and_subresource(
    client: AsyncClient,
) -> None:
    async with client.pods.open_exec("web", ["cut"], namespace="ns") as session:
        assert await session.stdout.read() == b"partial"
        with pytest.raises(APIConnectionError) as caught:
            await session.wait()
    message = str(caught.value)
    assert "pods/exec ns/web" in message
    assert "ended before the command's exit status arrived (closed by the server)" in message
