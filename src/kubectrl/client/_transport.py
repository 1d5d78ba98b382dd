"""The HTTP transport: httpx and httpcore on asyncio's own sockets and TLS.

httpx's default async transport reaches the network through anyio. Every socket read there
enters a timeout scope and a few context managers before it waits, which is most of a watch
event's cost once the event itself is decoded (a watch delivers one event per read). This
transport keeps httpx (requests, auth, redirects, responses) and httpcore (connection pool,
HTTP/1.1) and swaps only the network layer for asyncio's protocols and TLS: a read that finds
data buffered returns at once, and one that waits arms a single timer.

It is used for direct connections to the API server; with a proxy configured the client uses
httpx's default transport, which implements the proxy protocols.
"""

from __future__ import annotations

import asyncio
import collections
import socket
import ssl
from collections.abc import AsyncIterator, Awaitable, Iterable
from typing import Any

import httpcore
import httpx

from kubectrl._aio import wait_within
from kubectrl.client._sockets import socket_readable, stream_transport

__all__ = ["AsyncioTransport", "drop_spoiled_connections"]

#: Stop reading from the socket while this much is received and not yet consumed.
_READ_HIGH_WATER = 1024 * 1024
#: Writes smaller than this together wait for the reader or the loop's next turn to go out.
_COALESCE_BYTES = 64 * 1024


class _TimedOutError(Exception):
    pass


class _Protocol(asyncio.Protocol):
    """Buffers what the socket delivers; one reader (httpcore's connection) consumes it."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.chunks: collections.deque[bytes] = collections.deque()
        self.buffered = 0
        self.eof = False
        self.error: BaseException | None = None
        self.reader: asyncio.Future[None] | None = None
        self.writable: asyncio.Future[None] | None = None
        self.reading_paused = False
        self.writing_paused = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = stream_transport(transport)

    def data_received(self, data: bytes) -> None:
        self.chunks.append(data)
        self.buffered += len(data)
        if self.buffered > _READ_HIGH_WATER and not self.reading_paused:
            self.reading_paused = True
            if self.transport is not None:  # always set: data comes after connection_made
                self.transport.pause_reading()
        self._wake_reader()

    def eof_received(self) -> bool | None:
        self.eof = True
        self._wake_reader()
        return None  # close the transport

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof = True
        if exc is not None:
            self.error = exc
        self._wake_reader()
        self.writing_paused = False
        if self.writable is not None and not self.writable.done():
            self.writable.set_result(None)

    def pause_writing(self) -> None:
        self.writing_paused = True

    def resume_writing(self) -> None:
        self.writing_paused = False
        if self.writable is not None and not self.writable.done():
            self.writable.set_result(None)

    def _wake_reader(self) -> None:
        if self.reader is not None and not self.reader.done():
            self.reader.set_result(None)


async def _abort_tls(transport: asyncio.BaseTransport | None) -> None:
    if transport is not None:
        transport.close()  # a handshake that completed after its caller was cancelled


def _expire(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_exception(_TimedOutError())


class AsyncioStream(httpcore.AsyncNetworkStream):
    """One connection (plain TCP, or TLS after :meth:`start_tls`)."""

    def __init__(self, transport: asyncio.Transport, protocol: _Protocol) -> None:
        self._transport = transport
        self._protocol = protocol
        # httpcore writes a request's head and body separately; they leave in one send (and
        # one TLS record) when the reader asks for the answer, or at the loop's next turn.
        self._out: list[bytes] = []
        self._out_size = 0
        self._flush_scheduled = False

    def _flush(self) -> None:
        if self._out:
            data = self._out[0] if len(self._out) == 1 else b"".join(self._out)
            self._out.clear()
            self._out_size = 0
            if not self._transport.is_closing():
                self._transport.write(data)

    def _scheduled_flush(self) -> None:
        self._flush_scheduled = False
        self._flush()

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        protocol = self._protocol
        if self._out:
            self._flush()
        if not protocol.chunks:
            if protocol.eof:
                if protocol.error is not None:
                    raise httpcore.ReadError(str(protocol.error) or type(protocol.error).__name__)
                return b""
            await self._wait(timeout, httpcore.ReadTimeout)
            if not protocol.chunks:
                if protocol.error is not None:
                    raise httpcore.ReadError(str(protocol.error) or type(protocol.error).__name__)
                return b""
        data = protocol.chunks.popleft()
        if len(data) > max_bytes:
            protocol.chunks.appendleft(data[max_bytes:])
            data = data[:max_bytes]
        protocol.buffered -= len(data)
        if protocol.reading_paused and protocol.buffered <= _READ_HIGH_WATER // 2:
            protocol.reading_paused = False
            self._transport.resume_reading()
        return data

    async def _wait(self, timeout: float | None, timeout_error: type[Exception]) -> None:
        loop = asyncio.get_running_loop()
        waiter = loop.create_future()
        self._protocol.reader = waiter
        timer = loop.call_later(timeout, _expire, waiter) if timeout is not None else None
        try:
            await waiter
        except _TimedOutError:
            raise timeout_error(f"no data within {timeout:g} s") from None
        finally:
            self._protocol.reader = None
            if timer is not None:
                timer.cancel()

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        protocol = self._protocol
        if protocol.eof or self._transport.is_closing():
            raise httpcore.WriteError("the connection is closed")
        self._out.append(buffer)
        self._out_size += len(buffer)
        if self._out_size < _COALESCE_BYTES:
            if not self._flush_scheduled:
                self._flush_scheduled = True
                asyncio.get_running_loop().call_soon(self._scheduled_flush)
            return
        self._flush()
        if not protocol.writing_paused:
            return
        loop = asyncio.get_running_loop()
        waiter = loop.create_future()
        protocol.writable = waiter
        timer = loop.call_later(timeout, _expire, waiter) if timeout is not None else None
        try:
            await waiter
        except _TimedOutError:
            raise httpcore.WriteTimeout(f"could not send within {timeout:g} s") from None
        finally:
            protocol.writable = None
            if timer is not None:
                timer.cancel()
        if protocol.error is not None:
            raise httpcore.WriteError(str(protocol.error) or type(protocol.error).__name__)

    async def aclose(self) -> None:
        self._flush()
        self._transport.close()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> AsyncioStream:
        loop = asyncio.get_running_loop()
        try:
            transport = await wait_within(
                loop.start_tls(
                    self._transport,
                    self._protocol,
                    ssl_context,
                    server_hostname=server_hostname,
                ),
                timeout,
                discard=_abort_tls,
            )
        except asyncio.TimeoutError:
            self._transport.abort()
            raise httpcore.ConnectTimeout(f"TLS handshake not done within {timeout:g} s") from None
        except (OSError, ssl.SSLError) as err:
            self._transport.abort()
            raise httpcore.ConnectError(str(err) or type(err).__name__) from err
        if transport is None:  # pragma: no cover - the peer closed during the handshake
            raise httpcore.ConnectError("the connection closed during the TLS handshake")
        return AsyncioStream(stream_transport(transport), self._protocol)

    def get_extra_info(self, info: str) -> Any:
        if info == "ssl_object":
            return self._transport.get_extra_info("ssl_object")
        if info == "client_addr":
            return self._transport.get_extra_info("sockname")
        if info == "server_addr":
            return self._transport.get_extra_info("peername")
        if info == "socket":
            return self._transport.get_extra_info("socket")
        if info == "is_readable":
            # An idle keep-alive connection is readable only if the server closed it (or broke
            # protocol): httpcore then discards it instead of sending on it. Bytes the loop has
            # not read yet count too (a busy loop reads late): the socket is asked.
            return (
                bool(self._protocol.chunks)
                or self._protocol.eof
                or socket_readable(self._transport)
            )
        return None


async def _abort(opened: tuple[asyncio.BaseTransport, Any]) -> None:
    opened[0].close()  # a connection that completed after its opener was cancelled


async def _connect(
    opening: Awaitable[tuple[asyncio.BaseTransport, Any]], timeout: float | None
) -> asyncio.Transport:
    try:
        transport, _ = await wait_within(opening, timeout, discard=_abort)
    except asyncio.TimeoutError:
        raise httpcore.ConnectTimeout(f"no connection within {timeout:g} s") from None
    except OSError as err:
        raise httpcore.ConnectError(str(err) or type(err).__name__) from err
    return stream_transport(transport)


class AsyncioBackend(httpcore.AsyncNetworkBackend):
    """httpcore's network backend on asyncio streams (see the module docstring)."""

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> AsyncioStream:
        protocol = _Protocol()
        transport = await _connect(
            asyncio.get_running_loop().create_connection(
                lambda: protocol,
                host,
                port,
                local_addr=(local_address, 0) if local_address else None,
            ),
            timeout,
        )
        sock = transport.get_extra_info("socket")
        if sock is not None:
            for option in socket_options or ():
                sock.setsockopt(*option)
        return AsyncioStream(transport, protocol)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> AsyncioStream:
        protocol = _Protocol()
        opening = asyncio.get_running_loop().create_unix_connection(lambda: protocol, path)
        return AsyncioStream(await _connect(opening, timeout), protocol)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


def _httpx_error(err: httpcore.TimeoutException | httpcore.NetworkError | Exception) -> Exception:
    # httpcore's and httpx's exception classes share their names (ReadTimeout, ConnectError,
    # RemoteProtocolError, ...); anything else is httpx's generic transport error.
    mapped = getattr(httpx, type(err).__name__, None)
    if isinstance(mapped, type) and issubclass(mapped, httpx.TransportError):
        return mapped(str(err))
    return httpx.TransportError(str(err) or type(err).__name__)


class _ResponseStream(httpx.AsyncByteStream):
    def __init__(self, stream: Any) -> None:
        self._stream = stream

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for part in self._stream:
                yield part
        except (httpcore.TimeoutException, httpcore.NetworkError, httpcore.ProtocolError) as err:
            raise _httpx_error(err) from err

    async def aclose(self) -> None:
        await self._stream.aclose()


class AsyncioTransport(httpx.AsyncBaseTransport):
    """An httpx transport: httpcore's connection pool over :class:`AsyncioBackend`.

    Example::

        transport = AsyncioTransport(ssl_context=ctx, max_connections=100)
        async with httpx.AsyncClient(transport=transport, base_url=server) as http:
            ...
    """

    def __init__(
        self,
        *,
        ssl_context: ssl.SSLContext | None,
        max_connections: int | None,
        max_keepalive_connections: int | None,
        keepalive_expiry: float = 5.0,
    ) -> None:
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=ssl_context,
            max_connections=max_connections,
            max_keepalive_connections=max_keepalive_connections,
            keepalive_expiry=keepalive_expiry,
            http1=True,
            http2=False,
            network_backend=AsyncioBackend(),
            socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)],
        )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if not isinstance(request.stream, httpx.AsyncByteStream):
            raise TypeError(
                f"{type(self).__name__} sends async request bodies only, got "
                f"{type(request.stream).__name__} for {request.method} {request.url}"
            )
        core_request = httpcore.Request(
            method=request.method,
            url=httpcore.URL(
                scheme=request.url.raw_scheme,
                host=request.url.raw_host,
                port=request.url.port,
                target=request.url.raw_path,
            ),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        try:
            response = await self._pool.handle_async_request(core_request)
        except (httpcore.TimeoutException, httpcore.NetworkError, httpcore.ProtocolError) as err:
            raise _httpx_error(err) from err
        except httpcore.UnsupportedProtocol as err:
            raise httpx.UnsupportedProtocol(str(err)) from err
        return httpx.Response(
            status_code=response.status,
            headers=response.headers,
            stream=_ResponseStream(response.stream),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self._pool.aclose()


async def drop_spoiled_connections(transport: object) -> None:
    """Close each idle connection of an httpcore pool under ``transport`` (an
    :class:`AsyncioTransport` or ``httpx.AsyncHTTPTransport``) whose parser holds bytes
    received after the last response: they are nobody's answer, and h11 would read them as
    the next request's (it keeps them for the next cycle). Call it after a response is read.
    Any other transport: nothing to do."""
    pool = getattr(transport, "_pool", None)
    for connection in list(getattr(pool, "connections", ())):
        http11 = getattr(connection, "_connection", None)
        state = getattr(http11, "_h11_state", None)
        if state is None or not http11.is_idle():  # type: ignore[union-attr]
            continue
        leftover, _ = state.trailing_data
        if leftover:
            await connection.aclose()
