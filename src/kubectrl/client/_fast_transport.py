"""The fast HTTP transport: HTTP/1.1 written directly on asyncio, parsed by httptools.

httpx stays the client's API (requests, responses, auth, ``transport=``); this module replaces
what sits under it for direct connections to the API server: httpcore's connection pool and
h11's state machine (a few Python objects, anyio locks and ``asyncio.current_task`` calls per
request, headers validated again on every request) and the per-chunk context managers of
httpcore's reads. Instead:

- Responses are parsed by `httptools <https://github.com/MagicStack/httptools>`_ (MagicStack),
  the binding of llhttp (Node.js's HTTP/1.1 parser, in C) that uvicorn uses: maintained, wheels
  for every supported Python, no dependencies. The parser calls back into the connection's
  protocol object as bytes arrive; a body chunk goes from the socket to the response's reader
  without an intermediate state machine.
- A request's head and body leave in one write.
- Headers come from httpx, which validated them when the request was built; the head is
  checked once more only for CR/LF (one scan of the joined header bytes), so nothing can split it.
- The pool is a dict of idle connections per origin and a counter; a request waits only when
  ``max_connections`` are busy.

It is installed with ``pip install kubectrl[speedups]``; without httptools the client uses
:class:`~kubectrl.client._transport.AsyncioTransport` (httpcore over asyncio's sockets). HEAD
requests (whose response has a length but no body, which the parser cannot be told) go to that
transport too.
"""

from __future__ import annotations

import asyncio
import collections
import http.cookiejar
import importlib
import ssl
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx

from kubectrl._aio import wait_within
from kubectrl.client._body import ResponseRefusedError, too_large
from kubectrl.client._sockets import socket_readable, stream_transport

httptools: Any
try:
    httptools = importlib.import_module("httptools")
except ImportError:  # the optional speedup is not installed: direct_transport() falls back
    httptools = None

__all__ = [
    "RAW_BODY",
    "FastTransport",
    "SetCookieJar",
    "direct_transport",
]

#: The response extension holding the body as received (an async iterable of bytes, before
#: httpx's content decoding): a watch with no ``Content-Encoding`` reads its chunks from it
#: directly instead of through ``Response.aiter_bytes``.
RAW_BODY = "kubectrl.raw_body"

#: Stop reading from the socket while this much body is received and not yet consumed.
_READ_HIGH_WATER = 1024 * 1024
#: A response's head (status line and headers) may not be larger than this, nor have more
#: header fields than that. kube-apiserver's heads are a few hundred bytes: its warnings, the
#: only headers that grow, are truncated to 4 Ki runes in all (k8s.io/apiserver
#: pkg/endpoints/filters/warning.go). httpx (h11) allows 100 KiB, Go's client 10 MiB.
MAX_HEAD_BYTES = 256 * 1024
MAX_HEADER_FIELDS = 1000

_DEFAULT_PORTS = {b"http": 80, b"https": 443}


class _TimedOutError(Exception):
    pass


class _RefusedError(Exception):
    """Raised from a parser callback to stop parsing; the reason is the connection's."""


def _expire(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_exception(_TimedOutError())


class _Connection(asyncio.Protocol):
    """One HTTP/1.1 connection: the socket's protocol and the parser's callbacks at once."""

    def __init__(
        self, key: tuple[bytes, bytes, int, str | None], registry: set[_Connection]
    ) -> None:
        self.key = key
        self.registry = registry
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpResponseParser(self)
        self.closed = False
        self.error: BaseException | None = None
        self.refusal: BaseException | None = None
        self.idle_since = 0.0
        self.in_flight = False
        self._waiter: asyncio.Future[None] | None = None
        self._reset()

    def _reset(self) -> None:
        self.status = 0
        self.headers: list[tuple[bytes, bytes]] = []
        self.headers_done = False
        self.chunks: collections.deque[bytes] = collections.deque()
        self.buffered = 0
        self.complete = False
        self.keep_alive = False
        self.until_close = False
        self.received_any = False
        self.reading_paused = False
        self.head_bytes = 0

    # ----------------------------------------------------------------- asyncio protocol

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = stream_transport(transport)

    def data_received(self, data: bytes) -> None:
        if not self.in_flight:
            # Bytes on an idle connection: the server broke protocol; never reuse it.
            self.close()
            return
        self.received_any = True
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError as err:
            refusal, self.refusal = self.refusal, None
            if refusal is None:
                self._fail(httpx.RemoteProtocolError(f"malformed HTTP response: {err}"))
            elif self.complete:
                # bytes after the whole answer: not the next request's; end the connection
                self.keep_alive = False
                self.close()
            else:
                self._fail(refusal)
            return
        if not self.headers_done:
            self.head_bytes += len(data)
            if self.head_bytes > MAX_HEAD_BYTES:
                self._fail(
                    ResponseRefusedError(
                        f"the response head (status line and headers) is larger than the "
                        f"client's limit of {MAX_HEAD_BYTES} bytes"
                    )
                )
                return
        if self.buffered > _READ_HIGH_WATER and not self.reading_paused:
            self.reading_paused = True
            if self.transport is not None:
                self.transport.pause_reading()

    def eof_received(self) -> bool | None:
        return None  # close the transport; connection_lost follows

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.registry.discard(self)
        if self.until_close and self.headers_done and not self.complete:
            self.complete = True  # a body delimited by the end of the connection
        elif not self.complete and self.error is None:
            if exc is not None:
                self.error = httpx.ReadError(str(exc) or type(exc).__name__)
            elif not self.headers_done:
                self.error = httpx.RemoteProtocolError(
                    "server disconnected without sending a complete response"
                    if self.received_any
                    else "server disconnected without sending a response"
                )
            else:
                self.error = httpx.RemoteProtocolError(
                    "peer closed connection without sending complete message body"
                )
        self._wake()

    # ----------------------------------------------------------------- parser callbacks

    def _refuse(self, error: BaseException) -> None:
        self.refusal = error
        raise _RefusedError

    def on_message_begin(self) -> None:
        if self.complete:
            self._refuse(httpx.RemoteProtocolError("a second response to one request"))

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers.append((name, value))
        if len(self.headers) > MAX_HEADER_FIELDS:
            self._refuse(
                ResponseRefusedError(
                    f"the response has more than the client's limit of {MAX_HEADER_FIELDS} "
                    "header fields"
                )
            )

    def on_headers_complete(self) -> None:
        status = self.parser.get_status_code()
        if status == 101:
            # no request of this transport asks for an upgrade (WebSockets go through aiohttp)
            self._refuse(
                ResponseRefusedError(
                    "the server answered 101 Switching Protocols to a request that asked for "
                    "no upgrade"
                )
            )
        if 100 <= status < 200:
            self.headers = []  # an interim response (100 Continue): the real one follows
            return
        self.status = status
        self.headers_done = True
        names = {name.lower() for name, _ in self.headers}
        self.until_close = (
            b"content-length" not in names
            and b"transfer-encoding" not in names
            and status not in (204, 304)
        )
        self._wake()

    def on_body(self, body: bytes) -> None:
        self.chunks.append(body)
        self.buffered += len(body)
        self._wake()

    def on_message_complete(self) -> None:
        if not self.headers_done:
            return  # the end of an interim response
        self.complete = True
        self.keep_alive = self.parser.should_keep_alive()
        self._wake()

    # ----------------------------------------------------------------- the request's side

    def _fail(self, error: BaseException) -> None:
        if self.error is None:
            self.error = error
        self.close()
        self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def wait(self, timeout: float | None, deadline: float | None = None) -> None:
        """Until the next callback (bytes parsed, the end), ``timeout`` seconds of silence or
        the ``deadline`` (``time.monotonic()``) of the whole answer (httpx.ReadTimeout)."""
        loop = asyncio.get_running_loop()
        total = False
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if timeout is None or remaining < timeout:
                timeout, total = max(remaining, 0.0), True
        waiter = self._waiter = loop.create_future()
        timer = loop.call_later(timeout, _expire, waiter) if timeout is not None else None
        try:
            await waiter
        except _TimedOutError:
            if total:
                raise httpx.ReadTimeout("no whole answer within the total timeout") from None
            raise httpx.ReadTimeout(f"no data within {timeout:g} s") from None
        finally:
            self._waiter = None
            if timer is not None:
                timer.cancel()

    def take(self) -> bytes:
        """The body bytes received so far (``b""`` if none)."""
        chunks = self.chunks
        data = chunks.popleft() if len(chunks) == 1 else b"".join(chunks)
        chunks.clear()
        self.buffered = 0
        if self.reading_paused and self.transport is not None:
            self.reading_paused = False
            self.transport.resume_reading()
        return data

    def reusable(self, now: float, expiry: float) -> bool:
        """Idle, open, not past ``expiry`` seconds of idleness, and nothing waiting unread on
        its socket (:func:`socket_readable`)."""
        return (
            not self.closed
            and now - self.idle_since < expiry
            and not socket_readable(self.transport)
        )

    def send(self, data: bytes) -> None:
        self._reset()
        self.in_flight = True
        transport = self.transport
        if transport is None or transport.is_closing():
            raise httpx.WriteError("the connection is closed")
        transport.write(data)

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()


class _Body(httpx.AsyncByteStream):
    """A response body: chunks as the parser delivers them; the connection goes back to the
    pool at the end of the message, or is closed if the body is abandoned."""

    def __init__(self, pool: FastTransport, connection: _Connection, timeout: float | None):
        self._pool = pool
        self._connection: _Connection | None = connection
        self._timeout = timeout

    async def __aiter__(self) -> AsyncIterator[bytes]:
        connection = self._connection
        while connection is not None:
            if connection.chunks:
                yield connection.take()
                connection = self._connection
                continue
            if connection.complete:
                self._connection = None
                self._pool._release(connection, reuse=connection.keep_alive)
                return
            if connection.error is not None:
                self._connection = None
                self._pool._release(connection, reuse=False)
                raise connection.error
            try:
                await connection.wait(self._timeout)
            except BaseException:
                await self.aclose()
                raise

    async def aclose(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            reuse = connection.complete and not connection.chunks and connection.keep_alive
            self._pool._release(connection, reuse=reuse)


def _timeouts(request: httpx.Request) -> dict[str, float | None]:
    timeout = request.extensions.get("timeout")
    return timeout if isinstance(timeout, dict) else {}


class FastTransport(httpx.AsyncBaseTransport):
    """An httpx transport: HTTP/1.1 over asyncio with httptools' parser (module docstring).

    Example::

        transport = FastTransport(ssl_context=ctx, max_connections=100)
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
        if httptools is None:
            raise ImportError(
                "FastTransport needs httptools: pip install kubectrl[speedups] "
                "(or use kubectrl.client._transport.AsyncioTransport)"
            )
        self._ssl_context = ssl_context
        self._max_connections = max_connections
        self._max_idle = max_keepalive_connections
        self._keepalive_expiry = keepalive_expiry
        self._idle: dict[tuple[bytes, bytes, int, str | None], list[_Connection]] = {}
        self._idle_count = 0
        self._active = 0
        self._slot_waiters: collections.deque[asyncio.Future[None]] = collections.deque()
        self._fallback: httpx.AsyncBaseTransport | None = None
        self._closed = False
        self._open_connections: set[_Connection] = set()

    # ----------------------------------------------------------------- the pool

    async def _slot(self, timeout: float | None) -> None:
        limit = self._max_connections
        if limit is None or self._active < limit:
            self._active += 1
            return
        waiter = asyncio.get_running_loop().create_future()
        self._slot_waiters.append(waiter)
        try:
            await wait_within(asyncio.shield(waiter), timeout)
        except BaseException as err:
            # Timed out or cancelled: leave the queue, or pass on a slot handed over meanwhile.
            if waiter.done() and not waiter.cancelled():
                self._free_slot()
            else:
                waiter.cancel()
            if isinstance(err, asyncio.TimeoutError):
                raise httpx.PoolTimeout(f"no connection free within {timeout:g} s") from None
            raise
        # the releaser kept the slot counted for us

    def _free_slot(self) -> None:
        while self._slot_waiters:
            waiter = self._slot_waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)  # the slot passes to it; _active unchanged
                return
        self._active -= 1

    def _release(self, connection: _Connection, *, reuse: bool) -> None:
        connection.in_flight = False
        if (
            reuse
            and not self._closed
            and not connection.closed
            and (self._max_idle is None or self._idle_count < self._max_idle)
        ):
            connection.idle_since = time.monotonic()
            self._idle.setdefault(connection.key, []).append(connection)
            self._idle_count += 1
        else:
            connection.close()
        self._free_slot()

    def _idle_connection(self, key: tuple[bytes, bytes, int, str | None]) -> _Connection | None:
        idle = self._idle.get(key)
        now = time.monotonic()
        while idle:
            connection = idle.pop()
            self._idle_count -= 1
            if connection.reusable(now, self._keepalive_expiry):
                return connection
            connection.close()
        return None

    async def _connect(
        self, key: tuple[bytes, bytes, int, str | None], timeout: float | None
    ) -> _Connection:
        scheme, host, port, sni = key
        connection = _Connection(key, self._open_connections)
        tls = scheme == b"https"
        if tls and self._ssl_context is None:
            self._ssl_context = ssl.create_default_context()
        opening = asyncio.get_running_loop().create_connection(
            lambda: connection,
            host.decode("ascii"),
            port,
            ssl=self._ssl_context if tls else None,
            server_hostname=(sni or host.decode("ascii")) if tls else None,
        )
        try:
            transport, _ = await wait_within(opening, timeout, discard=_close_opened)
        except asyncio.TimeoutError:
            raise httpx.ConnectTimeout(f"no connection within {timeout:g} s") from None
        except (OSError, ssl.SSLError) as err:
            raise httpx.ConnectError(str(err) or type(err).__name__) from err
        if connection.transport is None:
            # uvloop calls connection_made() on the loop's next turn, after the connection is
            # handed back (asyncio's own loop calls it first)
            connection.transport = stream_transport(transport)
        self._open_connections.add(connection)
        return connection

    # ----------------------------------------------------------------- a request

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self._closed:
            raise RuntimeError(f"{type(self).__name__} is closed")
        method = request.method.encode("ascii")
        url = request.url
        scheme = url.raw_scheme
        if method == b"HEAD" or scheme not in _DEFAULT_PORTS:
            return await self._fallback_transport().handle_async_request(request)
        if not isinstance(request.stream, httpx.AsyncByteStream):
            raise TypeError(
                f"{type(self).__name__} sends async request bodies only, got "
                f"{type(request.stream).__name__} for {request.method} {request.url}"
            )
        data = await self._encode(request, method)
        timeouts = _timeouts(request)
        sni = request.extensions.get("sni_hostname")
        key = (scheme, url.raw_host, url.port or _DEFAULT_PORTS[scheme], sni)
        connection = await self._open(key, data, timeouts)
        read_timeout = timeouts.get("read")
        body = _Body(self, connection, read_timeout)
        return httpx.Response(
            status_code=connection.status,
            headers=connection.headers,
            stream=body,
            extensions={"http_version": b"HTTP/1.1", "reason_phrase": b"", RAW_BODY: body},
        )

    async def _open(
        self,
        key: tuple[bytes, bytes, int, str | None],
        data: bytes,
        timeouts: dict[str, float | None],
        deadline: float | None = None,
    ) -> _Connection:
        """A connection to ``key`` (idle or new) that sent ``data`` and received a response's
        head; it counts against ``max_connections`` until it is released."""
        await self._slot(timeouts.get("pool"))
        try:
            connection = self._idle_connection(key) or await self._connect(
                key, timeouts.get("connect")
            )
        except BaseException:
            self._free_slot()
            raise
        try:
            connection.send(data)
            read_timeout = timeouts.get("read")
            while not connection.headers_done:
                if connection.error is not None:
                    raise connection.error
                await connection.wait(read_timeout, deadline)
        except BaseException:
            self._release(connection, reuse=False)
            raise
        return connection

    async def exchange(
        self,
        key: tuple[bytes, bytes, int, str | None],
        data: bytes,
        timeouts: dict[str, float | None],
        *,
        total: float | None = None,
        limit: int | None = None,
    ) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        """One whole request without httpx's objects: ``data`` (a complete HTTP/1.1 request,
        head and body, whose head the caller checked) sent to ``key`` (scheme, host, port, SNI
        name); the response's status, headers and whole body as received (not decoded), the
        whole within ``total`` seconds and the body at most ``limit`` bytes.

        Timeouts and errors are :meth:`handle_async_request`'s (httpx's exception types); a
        body over ``limit`` is a :class:`~kubectrl.client._body.ResponseRefusedError`."""
        if self._closed:
            raise RuntimeError(f"{type(self).__name__} is closed")
        deadline = time.monotonic() + total if total is not None else None
        connection = await self._open(key, data, timeouts, deadline)
        read_timeout = timeouts.get("read")
        chunks: list[bytes] = []
        size = 0
        try:
            while True:
                if connection.chunks:
                    chunk = connection.take()
                    size += len(chunk)
                    if limit is not None and size > limit:
                        raise too_large(limit)
                    chunks.append(chunk)
                elif connection.complete:
                    break
                elif connection.error is not None:
                    raise connection.error
                else:
                    await connection.wait(read_timeout, deadline)
        except BaseException:
            self._release(connection, reuse=False)
            raise
        status, headers = connection.status, connection.headers
        self._release(connection, reuse=connection.keep_alive)
        return status, headers, chunks[0] if len(chunks) == 1 else b"".join(chunks)

    async def _encode(self, request: httpx.Request, method: bytes) -> bytes:
        body = b"".join([part async for part in request.stream])  # type: ignore[union-attr]
        headers = request.headers.raw
        chunked = any(
            name.lower() == b"transfer-encoding" and value.lower() == b"chunked"
            for name, value in headers
        )
        if chunked:  # the whole body is here: send it with its length
            headers = [(n, v) for n, v in headers if n.lower() != b"transfer-encoding"]
            headers.append((b"Content-Length", str(len(body)).encode("ascii")))
        lines = [b"%s %s HTTP/1.1" % (method, request.url.raw_path)]
        lines.extend([b"%s: %s" % pair for pair in headers])
        joined = b"".join(lines)
        if b"\n" in joined or b"\r" in joined:
            raise httpx.LocalProtocolError(
                f"{request.method} {request.url}: the target or a header contains CR or LF"
            )
        return b"\r\n".join(lines) + b"\r\n\r\n" + body

    def _fallback_transport(self) -> httpx.AsyncBaseTransport:
        if self._fallback is None:
            from kubectrl.client._transport import AsyncioTransport  # httpcore: import when used

            self._fallback = AsyncioTransport(
                ssl_context=self._ssl_context,
                max_connections=self._max_connections,
                max_keepalive_connections=self._max_idle,
                keepalive_expiry=self._keepalive_expiry,
            )
        return self._fallback

    async def aclose(self) -> None:
        """Close every connection, idle or answering (an open watch ends with an error)."""
        self._closed = True
        self._idle.clear()
        self._idle_count = 0
        for connection in list(self._open_connections):
            connection._fail(httpx.ReadError("the client was closed"))
        self._open_connections.clear()
        if self._fallback is not None:
            await self._fallback.aclose()


async def _close_opened(opened: tuple[asyncio.BaseTransport, Any]) -> None:
    opened[0].close()  # a connection that completed after its opener was cancelled


def direct_transport(
    *,
    ssl_context: ssl.SSLContext | None,
    max_connections: int | None,
    max_keepalive_connections: int | None,
) -> httpx.AsyncBaseTransport:
    """The transport of direct connections to the API server: :class:`FastTransport` when
    ``httptools`` is installed (``kubectrl[speedups]``), else
    :class:`~kubectrl.client._transport.AsyncioTransport`."""
    if httptools is None:
        from kubectrl.client._transport import AsyncioTransport  # httpcore: import when used

        return AsyncioTransport(
            ssl_context=ssl_context,
            max_connections=max_connections,
            max_keepalive_connections=max_keepalive_connections,
        )
    return FastTransport(
        ssl_context=ssl_context,
        max_connections=max_connections,
        max_keepalive_connections=max_keepalive_connections,
    )


class SetCookieJar(http.cookiejar.CookieJar):
    """A cookie jar that looks at a response only when it sets a cookie.

    httpx hands every response to its client's jar; the standard jar first copies all of the
    response's headers into an ``email.message.Message`` to look for ``Set-Cookie`` (about a
    tenth of a request's CPU against an API server, which sets none). This one checks the raw
    header names first and does the same as the standard jar when a cookie is set.

    Example::

        http = httpx.AsyncClient(cookies=SetCookieJar())
    """

    def extract_cookies(self, response: Any, request: Any) -> None:
        """Store the cookies ``response`` sets (httpx's adapter of a response), if any."""
        inner = getattr(response, "response", None)
        headers = getattr(inner, "headers", None)
        if isinstance(headers, httpx.Headers) and not any(
            name.lower() in _SET_COOKIE for name, _ in headers.raw
        ):
            return
        super().extract_cookies(response, request)


_SET_COOKIE = (b"set-cookie", b"set-cookie2")
