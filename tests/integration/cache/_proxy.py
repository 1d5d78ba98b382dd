"""A loopback TCP proxy that can cut live connections and refuse new ones (a network partition).

TLS passes through untouched: the client still verifies the apiserver's certificate (its SANs
include 127.0.0.1).
"""

from __future__ import annotations

import asyncio
import contextlib


class TCPProxy:
    def __init__(self, target_host: str, target_port: int) -> None:
        self.target_host = target_host
        self.target_port = target_port
        self.port = 0
        self.partitioned = False
        self.connections = 0
        self._server: asyncio.base_events.Server | None = None
        self._live: set[asyncio.StreamWriter] = set()

    async def start(self) -> TCPProxy:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.partitioned:
            writer.transport.abort()
            return
        try:
            up_reader, up_writer = await asyncio.open_connection(self.target_host, self.target_port)
        except OSError:
            writer.transport.abort()
            return
        self.connections += 1
        self._live.update((writer, up_writer))
        try:
            await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer))
        finally:
            for w in (writer, up_writer):
                self._live.discard(w)
                w.transport.abort()

    @staticmethod
    async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError, asyncio.IncompleteReadError):
            while True:
                data = await reader.read(65536)
                if not data:
                    break
                writer.write(data)
                await writer.drain()
        writer.transport.abort()

    def cut(self) -> int:
        """Abort every live connection; return how many were cut."""
        live = list(self._live)
        for w in live:
            w.transport.abort()
        return len(live) // 2

    def partition(self, on: bool) -> None:
        """Refuse (abort) new connections while on; cut the live ones when turning on."""
        self.partitioned = on
        if on:
            self.cut()

    async def close(self) -> None:
        self.cut()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
