"""A WebSocket server on 127.0.0.1 that misbehaves on purpose, written on raw asyncio streams.

aiohttp's server answers pings and frames messages correctly; the cases here need a server that
does neither: one that never answers the upgrade, never sends a pong, announces a 256 MiB frame,
closes without a status code or drops the TCP connection without any close frame. Each
connection runs ``handler(connection)``; frames are RFC 6455 (server frames unmasked).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import struct
from collections.abc import Awaitable, Callable
from types import TracebackType

__all__ = ["OP_BINARY", "OP_CLOSE", "OP_PING", "OP_PONG", "OP_TEXT", "Connection", "HostileServer"]

OP_CONTINUATION, OP_TEXT, OP_BINARY, OP_CLOSE, OP_PING, OP_PONG = 0, 1, 2, 8, 9, 10
_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


class Connection:
    """One client connection: its upgrade request, frames in, frames out."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.path = ""
        self.headers: dict[str, str] = {}
        #: Opcodes of the frames the client sent, in order (pings included).
        self.opcodes: list[int] = []
        #: Set when the client's side of the TCP connection is closed (EOF or reset).
        self.eof = asyncio.Event()

    async def read_request(self) -> None:
        head = await self.reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        self.path = lines[0].split(" ")[1]
        for line in lines[1:]:
            if ":" in line:
                key, _, value = line.partition(":")
                self.headers[key.strip().lower()] = value.strip()

    async def accept(self, protocol: str = "v5.channel.k8s.io") -> None:
        key = self.headers["sec-websocket-key"].encode()
        accept = base64.b64encode(hashlib.sha1(key + _GUID).digest()).decode()
        self.writer.write(
            (
                "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\n"
                f"Sec-WebSocket-Protocol: {protocol}\r\n\r\n"
            ).encode()
        )
        await self.writer.drain()

    def frame_header(self, opcode: int, length: int, *, fin: bool = True) -> bytes:
        first = (0x80 if fin else 0) | opcode
        if length < 126:
            return struct.pack("!BB", first, length)
        if length < 1 << 16:
            return struct.pack("!BBH", first, 126, length)
        return struct.pack("!BBQ", first, 127, length)

    async def send_frame(self, opcode: int, payload: bytes = b"", *, fin: bool = True) -> None:
        self.writer.write(self.frame_header(opcode, len(payload), fin=fin) + payload)
        await self.writer.drain()

    async def send_channel(self, channel: int, data: bytes) -> None:
        await self.send_frame(OP_BINARY, bytes([channel]) + data)

    async def send_close(self, code: int | None = None, reason: str = "") -> None:
        payload = b"" if code is None else struct.pack("!H", code) + reason.encode()
        await self.send_frame(OP_CLOSE, payload)

    async def read_frame(self) -> tuple[int, bytes]:
        """The next frame from the client, unmasked (raises ``IncompleteReadError`` at EOF)."""
        first, second = await self.reader.readexactly(2)
        length = second & 0x7F
        if length == 126:
            (length,) = struct.unpack("!H", await self.reader.readexactly(2))
        elif length == 127:
            (length,) = struct.unpack("!Q", await self.reader.readexactly(8))
        mask = await self.reader.readexactly(4) if second & 0x80 else b"\0\0\0\0"
        data = await self.reader.readexactly(length)
        payload = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
        self.opcodes.append(first & 0x0F)
        return first & 0x0F, payload

    async def drain_frames(self, *, pong: bool = False) -> None:
        """Read the client's frames until EOF, answering pings only if ``pong``."""
        with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError):
            while True:
                opcode, payload = await self.read_frame()
                if opcode == OP_PING and pong:
                    await self.send_frame(OP_PONG, payload)
        self.eof.set()


Handler = Callable[[Connection], Awaitable[None]]


class HostileServer:
    """``async with HostileServer(handler) as server:`` serves ``server.url``;
    ``server.connections`` lists every connection accepted."""

    def __init__(self, handler: Handler) -> None:
        self._handler = handler
        self._server: asyncio.base_events.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.connections: list[Connection] = []
        self.url = ""

    async def __aenter__(self) -> HostileServer:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        for connection in self.connections:
            connection.writer.close()
        await self._server.wait_closed()

    def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connection = Connection(reader, writer)
        self.connections.append(connection)
        task = asyncio.get_running_loop().create_task(self._run(connection))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _run(self, connection: Connection) -> None:
        with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError):
            await connection.read_request()
            await self._handler(connection)
