"""Port-forward: local TCP ports to a pod's ports, each connection over its own WebSocket.

``pods/portforward`` over WebSocket (the kubelet's streaming server,
k8s.io/kubelet/pkg/cri/streaming/portforward/websocket.go; client framing as
k8s.io/apimachinery/pkg/util/httpstream/wsstream/conn.go) carries, per requested port ``i``,
a data channel ``2*i`` and an error channel ``2*i+1``; subprotocol ``v4.channel.k8s.io``: the
server's first message on each channel is the port number (two bytes, little endian), which is
not data. kubectrl opens one WebSocket (one ``?ports=N``) per accepted local connection, so any
number of connections run at once and one that fails (its error channel's text) ends only
itself.

A message on any other channel is discarded with a warning, as client-go's readDemuxLoop does
for a stream it did not create (tools/remotecommand/websocket.go). A connection that ends
abnormally (the heartbeat gave up, a message above the size limit, a close other than a normal
closure: see :mod:`kubectrl.client._websocket`) closes its local connection and its reason is
kept in ``errors``, as the error channel's text is.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from types import TracebackType

from kubectrl.client._websocket import WebSocket
from kubectrl.errors import KubectrlError

__all__ = ["PORTFORWARD_PROTOCOLS", "PortForward"]

log = logging.getLogger("kubectrl.client.portforward")

#: The subprotocols offered for port-forward (binary v4 channels).
PORTFORWARD_PROTOCOLS = ("v4.channel.k8s.io",)

_DATA, _ERROR = 0, 1


class PortForward:
    """A running port-forward to one pod port; an async context manager.

    ``address`` is the bound local ``(host, port)``; every connection accepted there is joined
    to the pod's ``remote_port`` through a WebSocket of its own. ``errors`` collects what the
    server's error channels said (one entry per failed connection: the connection is closed,
    the forward keeps serving). Leaving the context stops listening and closes every
    connection.

    Example::

        async with client.pods.port_forward("web-0", 8080, namespace="ns") as forward:
            host, port = forward.address
            reader, writer = await asyncio.open_connection(host, port)
    """

    def __init__(
        self,
        opener: Callable[[int], Awaitable[WebSocket]],
        *,
        what: str,
        remote_port: int,
        local_host: str = "127.0.0.1",
        local_port: int = 0,
    ) -> None:
        if not 0 < remote_port < 65536:
            raise ValueError(f"port-forward to {what}: remote port {remote_port} out of range")
        self._opener = opener
        self._what = what
        self.remote_port = remote_port
        self._local = (local_host, local_port)
        self._server: asyncio.base_events.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.errors: list[str] = []
        self.address: tuple[str, int] = (local_host, local_port)

    def __repr__(self) -> str:
        return (
            f"PortForward({self._what}:{self.remote_port} at {self.address[0]}:{self.address[1]})"
        )

    async def __aenter__(self) -> PortForward:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def start(self) -> None:
        """Listen on the local address (``address`` then holds the bound port)."""
        self._server = await asyncio.start_server(self._accept, *self._local)
        sockname = self._server.sockets[0].getsockname()
        self.address = (str(sockname[0]), int(sockname[1]))

    @property
    def connections(self) -> int:
        """How many forwarded connections are open now."""
        return len(self._tasks)

    def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.get_running_loop().create_task(self._serve(reader, writer))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            socket = await self._opener(self.remote_port)
        except Exception as err:  # reported; this connection closes
            self.errors.append(f"{type(err).__name__}: {err}")
            log.warning("port-forward to %s: %s", self._what, err)
            writer.close()
            return
        upstream = asyncio.get_running_loop().create_task(self._upstream(reader, socket))
        try:
            await self._downstream(socket, writer)
        except KubectrlError as err:  # the WebSocket ended abnormally; it says why
            self.errors.append(str(err))
            log.warning("port-forward to %s:%d: %s", self._what, self.remote_port, err)
        except (ConnectionError, OSError):
            pass  # the local peer went away: nothing more to forward
        finally:
            upstream.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await upstream
            with contextlib.suppress(Exception):
                await socket.close()
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _upstream(self, reader: asyncio.StreamReader, socket: WebSocket) -> None:
        while True:
            data = await reader.read(32 * 1024)
            if not data:
                return  # the local peer is done sending; its answer may still come
            await socket.send(bytes([_DATA]) + data)

    async def _downstream(self, socket: WebSocket, writer: asyncio.StreamWriter) -> None:
        prefixed = {_DATA: False, _ERROR: False}
        while True:
            message = await socket.receive()
            if message is None:
                return
            if not message:
                continue
            channel, data = message[0], message[1:]
            if channel in prefixed and not prefixed[channel]:
                # The first message of each channel starts with the port (2 bytes, LE).
                prefixed[channel] = True
                data = data[2:]
            if channel == _DATA and data:
                writer.write(data)
                await writer.drain()
            elif channel == _ERROR and data:
                text = data.decode(errors="replace")
                self.errors.append(text)
                log.warning("port-forward to %s:%d: %s", self._what, self.remote_port, text)
                return
            elif channel not in prefixed:
                log.warning(
                    "port-forward to %s:%d: a message on unknown channel %d (%d bytes) discarded",
                    self._what,
                    self.remote_port,
                    channel,
                    len(data),
                )

    async def close(self) -> None:
        """Stop listening and close every forwarded connection (idempotent)."""
        server, self._server = self._server, None
        if server is not None:
            server.close()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if server is not None:
            await server.wait_closed()
