"""exec, attach and port-forward against WebSocket servers that hang, go silent or misbehave.

The servers are raw asyncio streams on 127.0.0.1 (``ws_hostile_server``), so each can break the
protocol in one precise way. Bounds are those of :class:`kubectrl.client._websocket.WebSocketLimits`
(set small here so the cases run fast); nothing waits on a clock: each case waits on a condition
under a generous deadline. Every error must be a kubectrl error naming the pod and the container.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import struct
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from ws_hostile_server import OP_PING, OP_PONG, OP_TEXT, Connection, HostileServer

from kubectrl.client import AsyncClient, ClientConfig, _websocket
from kubectrl.client._websocket import WebSocketLimits
from kubectrl.errors import (
    APIConnectionError,
    InternalError,
    KubectrlError,
    RequestTimeoutError,
)

T = TypeVar("T")

#: A deadline for each case: far above the bounds configured below, far below "hangs forever".
DEADLINE = 20.0
FAST = WebSocketLimits(heartbeat_period=0.05, heartbeat_timeout=0.5, close_timeout=1.0)
SUCCESS = json.dumps({"metadata": {}, "status": "Success"}).encode()
WHERE = ("ns/web", "container main")


@pytest.fixture(autouse=True)
def fast_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_websocket, "LIMITS", FAST)


async def within(awaitable: Awaitable[T]) -> T:
    return await asyncio.wait_for(awaitable, DEADLINE)


async def until(predicate: Callable[[], object], what: str) -> None:
    """Wait (yielding to the loop) until ``predicate()`` is true, at most DEADLINE seconds."""
    loop = asyncio.get_running_loop()
    end = loop.time() + DEADLINE
    while not predicate():
        assert loop.time() < end, f"not within {DEADLINE} s: {what}"
        await asyncio.sleep(0.01)


@pytest.fixture
def serve() -> Callable[[Callable[[Connection], Awaitable[None]]], Any]:
    """``async with serve(handler) as (server, client):`` a hostile server and a client of it
    whose upgrade bounds are small (connect 0.3 s, each read 0.3 s)."""

    class _Served:
        def __init__(self, handler: Callable[[Connection], Awaitable[None]]) -> None:
            self.server = HostileServer(handler)
            self.client: AsyncClient | None = None

        async def __aenter__(self) -> tuple[HostileServer, AsyncClient]:
            await self.server.__aenter__()
            config = ClientConfig(
                server=self.server.url, rate_limit=None, connect_timeout=0.3, timeout=0.3
            )
            self.client = AsyncClient(config)
            await self.client.__aenter__()
            return self.server, self.client

        async def __aexit__(self, *exc: object) -> None:
            assert self.client is not None
            await self.client.__aexit__(None, None, None)
            await self.server.__aexit__(None, None, None)

    return _Served


def exec_web(client: AsyncClient) -> Awaitable[Any]:
    return client.pods.exec("web", ["true"], namespace="ns", container="main")


def assert_names_target(err: BaseException, *more: str) -> str:
    assert isinstance(err, KubectrlError), f"{type(err).__name__} is not a kubectrl error"
    message = str(err)
    for part in (*WHERE, *more):
        assert part in message, f"{part!r} not in {message!r}"
    return message


# -- the upgrade ------------------------------------------------------------------------------


async def never_answer(connection: Connection) -> None:
    await connection.drain_frames()  # reads nothing more: the request is never answered


async def test_an_upgrade_never_answered_times_out_within_the_configured_bounds(
    serve: Any,
) -> None:
    """The upgrade is bounded by the config's connect_timeout and timeout (read), their sum in
    all. client-go leaves it to the caller's context (transport/websocket/roundtripper.go dials
    without a HandshakeTimeout); a controller has no one to cancel it, so kubectrl bounds it."""
    async with serve(never_answer) as (_, client):
        with pytest.raises(RequestTimeoutError) as caught:
            await within(exec_web(client))
        assert_names_target(caught.value, "not answered in time", "0.3 s")
        # port-forward: the local connection is closed and the reason kept.
        async with client.pods.port_forward("web", 8080, namespace="ns") as forward:
            reader, writer = await asyncio.open_connection(*forward.address)
            assert await within(reader.read()) == b""
            writer.close()
            await until(lambda: forward.errors, "the port-forward error is recorded")
        assert "not answered in time" in forward.errors[0]
        assert "pods/portforward ns/web" in forward.errors[0]


# -- the heartbeat ----------------------------------------------------------------------------


async def silent(connection: Connection) -> None:
    await connection.accept()
    await connection.drain_frames(pong=False)


async def test_a_silent_peer_is_given_up_by_the_heartbeat(serve: Any) -> None:
    """kubectrl pings every heartbeat_period and gives the connection up after
    heartbeat_timeout without any frame, as client-go's wsStreamCreator heartbeat
    (staging/src/k8s.io/client-go/tools/remotecommand/websocket.go: pingPeriod 5 s,
    pingReadDeadline 12 periods + 1 s, the deadline pushed on by every pong)."""
    async with serve(silent) as (server, client):
        with pytest.raises(APIConnectionError) as caught:
            await within(exec_web(client))
        assert_names_target(caught.value, "no frame from the server for 0.5 s", "pods/exec")
        connection = server.connections[0]
        assert OP_PING in connection.opcodes, "the client pings"
        await within(connection.eof.wait())  # and drops the connection it gave up

        async with client.pods.port_forward("web", 8080, namespace="ns") as forward:
            reader, writer = await asyncio.open_connection(*forward.address)
            assert await within(reader.read()) == b""
            writer.close()
            await until(lambda: forward.errors, "the port-forward error is recorded")
        assert "no frame from the server for 0.5 s" in forward.errors[0]


async def quiet_but_answering(connection: Connection) -> None:
    await connection.accept()
    # Answer pings, say nothing else for twice the heartbeat timeout (counted in pings seen).
    enough = int(2 * FAST.heartbeat_timeout / FAST.heartbeat_period) + 1
    while connection.opcodes.count(OP_PING) < enough:
        opcode, payload = await connection.read_frame()
        if opcode == OP_PING:
            await connection.send_frame(OP_PONG, payload)
    await connection.send_channel(1, b"late\n")
    await connection.send_channel(3, SUCCESS)
    await connection.send_close(1000)
    await connection.drain_frames(pong=True)


async def test_pongs_keep_a_quiet_connection_alive(serve: Any) -> None:
    """A command that prints nothing for longer than heartbeat_timeout is not given up while
    the server answers the pings (client-go tools/remotecommand/websocket.go: the pong handler
    pushes the read deadline)."""
    async with serve(quiet_but_answering) as (_, client):
        result = await within(exec_web(client))
    assert (result.stdout, result.exit_code) == (b"late\n", 0)


# -- channels ---------------------------------------------------------------------------------


async def unknown_channel(connection: Connection) -> None:
    await connection.accept()
    await connection.send_channel(7, b"not a stream")
    await connection.send_channel(1, b"out\n")
    await connection.send_channel(3, SUCCESS)
    await connection.send_close(1000)
    await connection.drain_frames(pong=True)


async def test_a_message_on_an_unknown_channel_is_discarded_with_a_warning(
    serve: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """client-go discards a message for a stream it has not created and logs it ("Unknown
    stream id %d, discarding message": readDemuxLoop in
    staging/src/k8s.io/client-go/tools/remotecommand/websocket.go); the command's result
    stands."""
    caplog.set_level(logging.WARNING, logger="kubectrl")
    async with serve(unknown_channel) as (_, client):
        result = await within(exec_web(client))
    assert (result.stdout, result.stderr, result.exit_code) == (b"out\n", b"", 0)
    warned = [r.getMessage() for r in caplog.records if "unknown channel 7" in r.getMessage()]
    assert warned, caplog.text
    for part in (*WHERE, "discarded"):
        assert part in warned[0], warned[0]


async def portforward_unknown_channel(connection: Connection) -> None:
    await connection.accept("v4.channel.k8s.io")
    port = struct.pack("<H", 8080)
    await connection.send_channel(0, port)
    await connection.send_channel(1, port)
    await connection.send_channel(9, b"junk")
    await connection.send_channel(0, b"pong")
    await connection.send_close(1000)
    await connection.drain_frames(pong=True)


async def test_port_forward_discards_an_unknown_channel_with_a_warning(
    serve: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """As exec (client-go tools/remotecommand/websocket.go readDemuxLoop): discarded and logged,
    the forwarded bytes are unharmed."""
    caplog.set_level(logging.WARNING, logger="kubectrl")
    async with (
        serve(portforward_unknown_channel) as (_, client),
        client.pods.port_forward("web", 8080, namespace="ns") as forward,
    ):
        reader, writer = await asyncio.open_connection(*forward.address)
        assert await within(reader.read()) == b"pong"
        writer.close()
    assert forward.errors == []
    warned = [r.getMessage() for r in caplog.records if "unknown channel 9" in r.getMessage()]
    assert warned, caplog.text
    assert "pods/portforward ns/web" in warned[0]


# -- message size -----------------------------------------------------------------------------


def sized_messages(*sizes: int) -> Callable[[Connection], Awaitable[None]]:
    async def handler(connection: Connection) -> None:
        await connection.accept()
        for size in sizes:  # each message is the channel byte and size - 1 bytes of stdout
            await connection.send_channel(1, b"x" * (size - 1))
        await connection.send_channel(3, SUCCESS)
        await connection.send_close(1000)
        await connection.drain_frames(pong=True)

    return handler


async def test_a_message_above_the_limit_is_refused_naming_the_limit(
    serve: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A message of max_message_size bytes (channel byte included) passes; one byte more closes
    the connection with an error naming the size and the limit. client-go has no such limit (it
    streams each message through a 32 KiB buffer, transport/websocket/roundtripper.go
    DataBufferSize); aiohttp buffers whole messages, so kubectrl caps them."""
    monkeypatch.setattr(_websocket, "LIMITS", WebSocketLimits(max_message_size=4096))
    async with serve(sized_messages(4096, 10)) as (_, client):
        result = await within(exec_web(client))
        assert (len(result.stdout), result.exit_code) == (4095 + 9, 0)
    async with serve(sized_messages(10, 4097)) as (server, client):
        with pytest.raises(APIConnectionError) as caught:
            await within(exec_web(client))
        assert_names_target(caught.value, "message of 4097 bytes", "limit of 4096 bytes", "1009")
        await within(server.connections[0].eof.wait())


_MEASURE = """
import asyncio, json, resource, sys, tracemalloc
from ws_hostile_server import OP_BINARY, HostileServer
from kubectrl.client import AsyncClient, ClientConfig
from kubectrl.errors import APIConnectionError

ANNOUNCED = int(sys.argv[1])
CHUNK = bytes(64 * 1024)

async def ordinary(connection):
    await connection.accept()
    await connection.send_frame(OP_BINARY, b"\\x01" + bytes(32 * 1024))
    await connection.send_frame(OP_BINARY, b'\\x03{"status": "Success"}')
    await connection.send_close(1000)
    await connection.drain_frames()

async def huge(connection):
    await connection.accept()
    connection.writer.write(connection.frame_header(OP_BINARY, ANNOUNCED) + b"\\x01")
    left = ANNOUNCED - 1
    try:
        while left:
            connection.writer.write(CHUNK[:left])
            await connection.writer.drain()
            left -= min(left, len(CHUNK))
        await connection.send_close(1000)  # a client without a limit took it all
    except ConnectionError:
        pass
    await connection.drain_frames()

async def run(handler):
    async with HostileServer(handler) as server:
        async with AsyncClient(ClientConfig(server=server.url, rate_limit=None)) as client:
            try:
                result = await client.pods.exec("web", ["true"], namespace="ns", container="main")
                return f"accepted {len(result.stdout)} bytes"
            except APIConnectionError as err:
                return str(err)

async def main():
    tracemalloc.start()
    await run(ordinary)  # imports and first-use allocations out of the way
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    await run(ordinary)
    ordinary_peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    outcome = await run(huge)
    peak = tracemalloc.get_traced_memory()[1] - base
    print(json.dumps({"peak": peak, "ordinary_peak": ordinary_peak, "outcome": outcome,
                      "maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))

asyncio.run(main())
"""


def measure_oversized(announced: int) -> dict[str, Any]:
    here = Path(__file__).parent
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(here), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(announced)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    data: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return data


def test_an_oversized_frame_is_refused_before_its_payload_is_buffered() -> None:
    """A 256 MiB frame announced by the server is refused from its header with the default
    limit (1 MiB): refusing it costs about what an ordinary exec costs.

    Measured (tracemalloc in a subprocess, server included, after a warm-up exec): refusing the
    256 MiB frame peaked at 0.40 MB, an ordinary exec (one 32 KiB message) at 0.34 MB; without
    the limit the same frame peaked at 805 MB (839 MiB RSS). The bound asserted: an ordinary
    exec plus one message at the limit."""
    measured = measure_oversized(256 << 20)
    limit = WebSocketLimits().max_message_size
    assert f"above the limit of {limit} bytes" in measured["outcome"], measured
    for part in WHERE:
        assert part in measured["outcome"], measured
    assert measured["peak"] < measured["ordinary_peak"] + limit, measured


# -- the end of the connection ----------------------------------------------------------------


def ends_with(
    *, status: bytes | None, close: int | None, send_close: bool = True
) -> Callable[[Connection], Awaitable[None]]:
    async def handler(connection: Connection) -> None:
        await connection.accept()
        await connection.send_channel(1, b"out\n")
        if status is not None:
            await connection.send_channel(3, status)
        if send_close:
            await connection.send_close(close)
            await connection.drain_frames(pong=True)
        else:
            connection.writer.close()  # no close frame: the TCP connection just ends

    return handler


async def test_a_close_without_a_status_code_is_an_error_that_says_so(serve: Any) -> None:
    """A close frame without a status code (1005), or no close frame at all (1006), before the
    command's status: an error naming the close code. client-go's readDemuxLoop ends the
    streams quietly only for a normal closure (1000) and passes any other close on as an error
    (staging/src/k8s.io/client-go/tools/remotecommand/websocket.go)."""
    async with serve(ends_with(status=None, close=None)) as (_, client):
        with pytest.raises(APIConnectionError) as caught:
            await within(exec_web(client))
        assert_names_target(caught.value, "code 1005 (no status)")
    async with serve(ends_with(status=None, close=None, send_close=False)) as (_, client):
        with pytest.raises(APIConnectionError) as caught:
            await within(exec_web(client))
        assert_names_target(caught.value, "code 1006")
    async with serve(ends_with(status=None, close=1011)) as (_, client):
        with pytest.raises(APIConnectionError) as caught:
            await within(exec_web(client))
        assert_names_target(caught.value, "code 1011 (internal error)")


async def test_a_close_after_the_status_ends_cleanly(serve: Any) -> None:
    """Once the command's status has arrived the result stands, whatever the close: a normal
    closure, one without a status code, or none (the status is the command's end)."""
    for close, send_close in ((1000, True), (None, True), (None, False)):
        handler = ends_with(status=SUCCESS, close=close, send_close=send_close)
        async with serve(handler) as (_, client):
            result = await within(exec_web(client))
        assert (result.stdout, result.exit_code) == (b"out\n", 0), (close, send_close)


async def test_a_normal_close_without_the_commands_status_is_an_error(serve: Any) -> None:
    """client-go reads an empty error stream as success (tools/remotecommand/v4.go
    errorDecoderV4 via watchErrorStream); kubectrl cannot report an exit code it never got,
    so it raises, naming the pod, the container and the cause."""
    async with serve(ends_with(status=None, close=1000)) as (_, client):
        with pytest.raises(APIConnectionError) as caught:
            await within(exec_web(client))
        assert_names_target(caught.value, "ended before the command's exit status arrived")


async def test_a_failure_status_on_the_error_channel_is_the_typed_error(serve: Any) -> None:
    """The error channel's Status (client-go tools/remotecommand/v4.go errorDecoderV4): a
    failure without an exit code is the typed API error, naming the pod and the container."""
    status = {
        "metadata": {},
        "status": "Failure",
        "reason": "InternalError",
        "code": 500,
        "message": "command 'true' not found",
    }
    async with serve(ends_with(status=json.dumps(status).encode(), close=1000)) as (_, client):
        with pytest.raises(InternalError) as caught:
            await within(exec_web(client))
        assert_names_target(caught.value, "command 'true' not found")
    # A Status the server mangled is still a kubectrl error that says what came.
    for mangled in (
        {**status, "code": "five hundred"},
        {**status, "reason": "NonZeroExitCode", "details": "gone"},
    ):
        async with serve(ends_with(status=json.dumps(mangled).encode(), close=1000)) as (_, c):
            with pytest.raises(KubectrlError) as mangled_caught:
                await within(exec_web(c))
            assert_names_target(mangled_caught.value, "command 'true' not found")


async def test_a_text_message_ends_the_stream_with_an_error(serve: Any) -> None:
    """The channel protocols are binary; client-go stops on any other message type
    ("unexpected message type", tools/remotecommand/websocket.go readDemuxLoop)."""

    async def text(connection: Connection) -> None:
        await connection.accept()
        await connection.send_frame(OP_TEXT, b"1hello")
        await connection.drain_frames(pong=True)

    async with serve(text) as (_, client):
        with pytest.raises(APIConnectionError) as caught:
            await within(exec_web(client))
        assert_names_target(caught.value, "text message")


async def test_limits_are_checked() -> None:
    with pytest.raises(ValueError, match="heartbeat_period < heartbeat_timeout"):
        WebSocketLimits(heartbeat_period=5, heartbeat_timeout=5)
    with pytest.raises(ValueError, match="max_message_size"):
        WebSocketLimits(max_message_size=1)
