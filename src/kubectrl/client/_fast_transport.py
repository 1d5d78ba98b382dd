"""The client's transport: HTTP/1.1 written directly on asyncio's sockets, parsed in C.

:class:`FastTransport` is what an :class:`~kubectrl.client.AsyncClient` sends through on a
direct connection to the API server (no proxy, no transport of one's own): the bottom of the
request pipeline (:mod:`kubectrl.client._pipeline`), below the transport seam
(:class:`~kubectrl.client._transport.Transport`). It is built by the client from its config (TLS
context, limits, timeouts) and implements the seam itself: :meth:`FastTransport.send` answers a
request whole, :meth:`FastTransport.open_stream` opens a watch or a followed log. It is also an
httpx transport (``handle_async_request``) for :meth:`ClientConfig.async_httpx_client
<kubectrl.client.ClientConfig.async_httpx_client>`.

What it is made of:

- Responses are parsed by `httptools <https://github.com/MagicStack/httptools>`_ (MagicStack),
  the binding of llhttp (Node.js's HTTP/1.1 parser, in C) that uvicorn uses, installed with
  ``pip install kubectrl[speedups]``. The parser calls back into the connection's protocol
  object as bytes arrive; a body chunk goes from the socket to the response's reader without an
  intermediate state machine. Without httptools, and for HEAD requests (whose response has a
  length but no body, which llhttp cannot be told), h11 parses (httpx's own parser, through its
  public API) behind the same callbacks.
- A request's head and body leave in one write. The head of a request sent through the seam is
  written from bytes prepared once per transport (Host and the client's default headers); every
  head is checked for CR and LF (one scan of the joined header bytes), so nothing can split it.
- The pool is a dict of idle connections per origin and a counter; a request waits only when
  ``max_connections`` are busy. A connection is reused only when it is idle, open, within its
  keep-alive expiry and nothing waits unread on its socket, and only after an answer that ended
  exactly where its framing said: bytes after it (a second answer, garbage) end the connection
  instead of becoming the next request's answer.
- Answers are read whole under the client's limits, whatever carried them (the httpx adapter
  reads its answers through the same functions): a head of at most :data:`MAX_HEAD_BYTES` and
  :data:`MAX_HEADER_FIELDS` fields, a body of at most ``max_body`` bytes received, then inflated
  (``gzip``, ``deflate``) into at most as many (zlib's ``max_length``: a 64 KiB gzip bomb of
  64 MiB never holds more than the limit), within ``total_timeout`` seconds in all. A body that
  does not inflate, or an encoding the client never asked for, is refused. Refusals are
  :class:`ResponseRefusedError`, an ``httpx.RemoteProtocolError`` the pipeline turns into
  :class:`~kubectrl.errors.MalformedResponseError` naming the request's verb and resource.
"""

from __future__ import annotations

import asyncio
import collections
import http.cookiejar
import importlib
import select
import ssl
import time
import zlib
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any

import h11
import httpx

from kubectrl._internal.aio import wait_within

httptools: Any
try:
    httptools = importlib.import_module("httptools")
except ImportError:  # the optional speedup is not installed: h11 parses
    httptools = None

__all__ = [
    "MAX_HEADER_FIELDS",
    "MAX_HEAD_BYTES",
    "RAW_BODY",
    "Answer",
    "BodyTooLargeError",
    "FastTransport",
    "ResponseRefusedError",
    "SetCookieJar",
    "decode_body",
    "direct_transport",
    "set_cookie_in",
    "socket_readable",
    "stream_transport",
    "too_large",
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
_EXTENSIONS = {"http_version": b"HTTP/1.1", "reason_phrase": b""}
_GZIP_WBITS = 16 + zlib.MAX_WBITS


# ------------------------------------------------------------------------------- sockets


def stream_transport(transport: asyncio.BaseTransport | None) -> asyncio.Transport:
    """``transport`` as the stream transport it is. asyncio hands a stream connection an
    ``asyncio.Transport``; uvloop's ``TCPTransport`` has its methods without being a subclass,
    so the check is for what a stream transport does (write, pause and resume reading)."""
    if isinstance(transport, asyncio.Transport):
        return transport
    if transport is None or not all(
        hasattr(transport, name) for name in ("write", "pause_reading", "resume_reading")
    ):
        raise TypeError(f"expected a stream transport for a TCP connection, got {transport!r}")
    return transport  # type: ignore[return-value]  # a stream transport, duck-typed


_POLL_READABLE = select.POLLIN | select.POLLPRI | select.POLLERR | select.POLLHUP


def socket_readable(transport: asyncio.BaseTransport | None) -> bool:
    """Whether ``transport``'s socket has bytes (or an end) that asyncio has not read yet.

    An idle connection with anything to read is never reused: it is an answer nobody asked for
    (which the next request would take as its own) or the server's close. The loop reads such
    bytes only when it gets to it, and a busy loop (a reconcile) may not have.
    """
    sock = transport.get_extra_info("socket") if transport is not None else None
    if sock is None:
        return True
    poller = select.poll()
    poller.register(sock.fileno(), _POLL_READABLE)
    return bool(poller.poll(0))


# ------------------------------------------------------------------------------- answers


class ResponseRefusedError(httpx.RemoteProtocolError):
    """The answer broke HTTP/1.1 or one of the client's limits; the message says which."""


class BodyTooLargeError(ResponseRefusedError):
    """The body, received or inflated, is over the client's limit."""


def too_large(limit: int) -> BodyTooLargeError:
    return BodyTooLargeError(
        f"the response body is larger than the client's limit of {limit} bytes "
        "(ClientConfig.max_response_bytes)"
    )


_SET_COOKIE = (b"set-cookie", b"set-cookie2")


def set_cookie_in(headers: list[tuple[bytes, bytes]]) -> bool:
    """Whether ``headers`` set a cookie (``Set-Cookie``, ``Set-Cookie2``)."""
    return any(name.lower() in _SET_COOKIE for name, _ in headers)


class Answer(httpx.Response):
    """A response read whole, its content already decoded; the headers are the server's,
    ``Content-Encoding`` included. ``content``, ``read()`` and ``iter_bytes()`` (and their async
    twins) give that content as it is: httpx would pass it through the decoders the header
    names a second time. ``sets_cookie``: whether a header sets a cookie (the transport knows
    its headers' names already; an API server sets none)."""

    def __init__(
        self,
        status: int,
        headers: list[tuple[bytes, bytes]],
        body: bytes,
        *,
        sets_cookie: bool | None = None,
    ) -> None:
        super().__init__(
            status, headers=headers, stream=httpx.ByteStream(body), extensions=_EXTENSIONS
        )
        self._decoded = body
        self.sets_cookie = set_cookie_in(headers) if sets_cookie is None else sets_cookie

    @property
    def content(self) -> bytes:
        return self._decoded

    def read(self) -> bytes:
        return self._decoded

    async def aread(self) -> bytes:
        return self._decoded

    def iter_bytes(self, chunk_size: int | None = None) -> Iterator[bytes]:
        body = self._decoded
        size = chunk_size or max(len(body), 1)
        for start in range(0, max(len(body), 1), size):
            yield body[start : start + size]

    async def aiter_bytes(self, chunk_size: int | None = None) -> AsyncIterator[bytes]:
        for part in self.iter_bytes(chunk_size):
            yield part


def _inflate(body: bytes, wbits: int, limit: int, what: str) -> bytes:
    inflater = zlib.decompressobj(wbits)
    try:
        data = inflater.decompress(body, limit + 1)
    except zlib.error as err:
        raise ResponseRefusedError(f"the {what} body does not inflate: {err}") from None
    if len(data) > limit or inflater.unconsumed_tail:
        raise too_large(limit)
    if not inflater.eof:
        raise ResponseRefusedError(f"the {what} body is truncated (no end of its stream)")
    return data


def decode_body(headers: list[tuple[bytes, bytes]], body: bytes, limit: int) -> bytes:
    """``body`` as its ``Content-Encoding`` (identity, gzip or deflate) says, inflated into at
    most ``limit`` bytes."""
    encoding = b""
    for name, value in headers:
        if name.lower() == b"content-encoding":
            encoding = value.strip().lower()
    if encoding in (b"", b"identity"):
        return body
    if encoding in (b"gzip", b"x-gzip"):
        return _inflate(body, _GZIP_WBITS, limit, "gzip") if body else body
    if encoding == b"deflate":
        # RFC 9110's deflate is zlib-wrapped; some servers send it raw (httpx accepts both)
        try:
            return _inflate(body, zlib.MAX_WBITS, limit, "deflate")
        except BodyTooLargeError:
            raise
        except ResponseRefusedError:
            return _inflate(body, -zlib.MAX_WBITS, limit, "deflate")
    shown = encoding.decode("latin-1")[:40]
    raise ResponseRefusedError(
        f"the response is encoded as {shown!r}, which the client does not decode "
        "(it asks for gzip or deflate)"
    )


# ------------------------------------------------------------------------------- parsing


class _TimedOutError(Exception):
    pass


class _RefusedError(Exception):
    """Raised from a parser callback to stop parsing; the reason is the connection's."""


class _ParserError(Exception):
    """h11 refused the bytes (or a callback refused them): httptools' ``HttpParserError``."""


#: What a parser raises for bytes it (or a callback) refuses.
_PARSE_ERRORS: tuple[type[Exception], ...] = (
    (httptools.HttpParserError, _ParserError) if httptools is not None else (_ParserError,)
)


def _expire(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_exception(_TimedOutError())


class _H11Parser:
    """httptools' ``HttpResponseParser`` interface (``feed_data``, ``get_status_code``,
    ``should_keep_alive`` and the callbacks), on h11: one request's answer. Without httptools,
    and for HEAD requests, which h11 knows have no body.

    h11 is told the request's method (a request it never writes: the connection wrote its own
    bytes). Bytes after the answer's end (h11's ``trailing_data``) are refused as llhttp refuses
    them, as a second message, so the connection is never reused."""

    def __init__(self, callbacks: _Connection, method: bytes) -> None:
        self._callbacks = callbacks
        self._h11 = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_HEAD_BYTES)
        self._h11.send(h11.Request(method=method, target=b"/", headers=[(b"Host", b"-")]))
        self._h11.send(h11.EndOfMessage())
        self._status = 0
        self._keep_alive = False
        self._done = False

    def get_status_code(self) -> int:
        return self._status

    def should_keep_alive(self) -> bool:
        return self._keep_alive

    def feed_data(self, data: bytes) -> None:
        try:
            self._feed(data)
        except h11.RemoteProtocolError as err:
            if err.error_status_hint == 431 and not self._callbacks.headers_done:
                # h11's "Receive buffer too long" while the head is incomplete: the head limit
                self._refuse_head()
            raise _ParserError(str(err)) from None
        except _RefusedError:
            raise _ParserError("refused") from None

    def _refuse_head(self) -> None:
        try:
            self._callbacks.refuse_head()
        except _RefusedError:
            raise _ParserError("refused") from None

    def _feed(self, data: bytes) -> None:
        callbacks, parser = self._callbacks, self._h11
        if self._done:
            callbacks.on_message_begin()  # bytes after the answer: refused
        parser.receive_data(data)
        while True:
            event = parser.next_event()
            if event is h11.NEED_DATA or event is h11.PAUSED:
                return
            if isinstance(event, (h11.InformationalResponse, h11.Response)):
                self._status = event.status_code
                callbacks.on_message_begin()
                for name, value in event.headers.raw_items():
                    callbacks.on_header(name, value)
                callbacks.on_headers_complete()
                if isinstance(event, h11.InformationalResponse):
                    callbacks.on_message_complete()
            elif isinstance(event, h11.Data):
                callbacks.on_body(bytes(event.data))
            elif isinstance(event, h11.EndOfMessage):
                self._done = True
                self._keep_alive = parser.their_state is h11.DONE
                callbacks.on_message_complete()
                if parser.trailing_data[0]:
                    callbacks.on_message_begin()  # a second message: refused
                return
            else:  # ConnectionClosed: the end comes from the socket (connection_lost)
                return


class _Connection(asyncio.Protocol):
    """One HTTP/1.1 connection: the socket's protocol and the parser's callbacks at once."""

    def __init__(
        self, key: tuple[bytes, bytes, int, str | None], registry: set[_Connection]
    ) -> None:
        self.key = key
        self.registry = registry
        self.transport: asyncio.Transport | None = None
        # llhttp's parser lasts as long as the connection; h11's is made for each answer
        self._llhttp: Any = httptools.HttpResponseParser(self) if httptools is not None else None
        self.parser: Any = self._llhttp
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
        self.sets_cookie = False
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
        except _PARSE_ERRORS as err:
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
        # The parser's callbacks point back at this connection: drop it, so a lost connection
        # (its TLS object, buffers and socket) is freed by reference counting, not at the
        # cycle collector's next full pass, minutes later. Nothing feeds it after this.
        self.parser = self._llhttp = None
        self._wake()

    # ----------------------------------------------------------------- parser callbacks

    def _refuse(self, error: BaseException) -> None:
        self.refusal = error
        raise _RefusedError

    def on_message_begin(self) -> None:
        if self.complete:
            self._refuse(httpx.RemoteProtocolError("a second response to one request"))

    def refuse_head(self) -> None:
        self._refuse(
            ResponseRefusedError(
                f"the response head (status line and headers) is larger than the client's "
                f"limit of {MAX_HEAD_BYTES} bytes"
            )
        )

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
        self.sets_cookie = b"set-cookie" in names or b"set-cookie2" in names
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

    def send(self, data: bytes, method: bytes = b"GET") -> None:
        """Write one request (``data``, head and body) whose method is ``method``."""
        self._reset()
        self.in_flight = True
        if self._llhttp is None or method == b"HEAD":
            self.parser = _H11Parser(self, method)
        else:
            self.parser = self._llhttp
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
    """HTTP/1.1 over asyncio, parsed by httptools (h11 without it): the client's transport on
    a direct connection (module docstring).

    Given a ``base_url``, it implements the transport seam
    (:class:`~kubectrl.client._transport.Transport`) for that server: :meth:`send` and
    :meth:`open_stream` take a request target below the base URL and the request's own headers;
    ``headers`` (the client's defaults: User-Agent, Accept, Accept-Encoding), ``timeout``,
    ``sni_hostname`` (a ``tls-server-name``), ``max_body`` and ``total_timeout`` bound them all.
    Without one it is only an httpx transport (any origin; ``handle_async_request``).

    Example::

        transport = FastTransport(ssl_context=ctx, max_connections=100,
                                  max_keepalive_connections=20, base_url="https://kube:6443")
        answer = await transport.send("GET", "/api/v1/namespaces/a/configmaps/b", {}, None)
    """

    def __init__(
        self,
        *,
        ssl_context: ssl.SSLContext | None,
        max_connections: int | None,
        max_keepalive_connections: int | None,
        keepalive_expiry: float = 5.0,
        base_url: str | None = None,
        sni_hostname: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: httpx.Timeout | None = None,
        max_body: int = 1 << 30,
        total_timeout: float | None = None,
    ) -> None:
        self._ssl_context = ssl_context
        self._max_connections = max_connections
        self._max_idle = max_keepalive_connections
        self._keepalive_expiry = keepalive_expiry
        self._idle: dict[tuple[bytes, bytes, int, str | None], list[_Connection]] = {}
        self._idle_count = 0
        self._active = 0
        self._slot_waiters: collections.deque[asyncio.Future[None]] = collections.deque()
        self._closed = False
        self._open_connections: set[_Connection] = set()
        # the seam's request: its origin, timeouts and bounds, and the head's fixed lines
        self._timeouts: dict[str, float | None] = (timeout or httpx.Timeout(30.0)).as_dict()
        self._max_body = max_body
        self._total_timeout = total_timeout
        self._key: tuple[bytes, bytes, int, str | None] | None = None
        self._prefix = b""
        self._fixed = b""
        self._accept = b"*/*"
        if base_url is not None:
            self._bind(httpx.URL(base_url), sni_hostname, dict(headers or {}))

    def _bind(self, base: httpx.URL, sni_hostname: str | None, headers: dict[str, str]) -> None:
        scheme = base.raw_scheme
        if scheme not in _DEFAULT_PORTS:
            raise ValueError(f"FastTransport needs an http(s) base URL, not {base}")
        self._key = (scheme, base.raw_host, base.port or _DEFAULT_PORTS[scheme], sni_hostname)
        self._prefix = base.raw_path.rstrip(b"/")
        accept = next((v for k, v in headers.items() if k.lower() == "accept"), None)
        self._accept = (accept or "*/*").encode("ascii")
        fixed = [(b"Host", base.netloc)] + [
            (name.encode("ascii"), value.encode("ascii"))
            for name, value in headers.items()
            if name.lower() != "accept"
        ]
        if any(b"\r" in name + value or b"\n" in name + value for name, value in fixed):
            raise ValueError("a default header of the client contains CR or LF")
        self._fixed = b"".join(b"%s: %s\r\n" % pair for pair in fixed)

    # ----------------------------------------------------------------- the seam

    async def send(
        self, method: str, target: str, headers: Mapping[str, str], content: bytes | None
    ) -> Answer:
        """One request for ``target`` (path and query below the base URL), its answer read
        whole: an :class:`Answer` within ``total_timeout``, its body at most ``max_body`` bytes
        received and decoded. Errors are httpx's exception types (``ReadTimeout``,
        ``ConnectError``, ``RemoteProtocolError``...) and :class:`ResponseRefusedError`."""
        data = self._head(method, target, headers, content)
        total, limit = self._total_timeout, self._max_body
        status, raw, cookie, body = await self._exchange(data, method, total=total, limit=limit)
        return Answer(status, raw, decode_body(raw, body, limit), sets_cookie=cookie)

    async def open_stream(
        self, method: str, target: str, headers: Mapping[str, str], *, read_timeout: float | None
    ) -> httpx.Response:
        """One request for ``target`` answered as a stream: the response once its head has
        arrived, its body read as it comes (a watch, a followed log), ``read_timeout`` seconds of
        silence at most; closing the response releases the connection."""
        if self._key is None or self._closed:
            raise RuntimeError(f"{type(self).__name__} is closed or has no base URL")
        data = self._head(method, target, headers, None)
        timeouts = {**self._timeouts, "read": read_timeout}
        connection = await self._open(self._key, data, timeouts, method=method.encode("ascii"))
        return self._streamed(connection, read_timeout)

    def _head(
        self, method: str, target: str, headers: Mapping[str, str], content: bytes | None
    ) -> bytes:
        lines = [
            b"%s %s%s HTTP/1.1" % (method.encode("ascii"), self._prefix, target.encode("ascii")),
            b"Accept: "
            + (headers["Accept"].encode("ascii") if "Accept" in headers else self._accept),
        ]
        for name, value in headers.items():
            if name != "Accept":
                lines.append(b"%s: %s" % (name.encode("ascii"), value.encode("ascii")))
        if content is not None:
            lines.append(b"Content-Length: %d" % len(content))
        elif method in ("POST", "PUT", "PATCH"):
            lines.append(b"Content-Length: 0")
        joined = b"".join(lines)
        if b"\n" in joined or b"\r" in joined:
            raise httpx.LocalProtocolError(
                f"{method} {target}: the target or a header contains CR or LF"
            )
        return b"\r\n".join(lines) + b"\r\n" + self._fixed + b"\r\n" + (content or b"")

    async def _exchange(
        self, data: bytes, method: str, *, total: float | None, limit: int
    ) -> tuple[int, list[tuple[bytes, bytes]], bool, bytes]:
        """``data`` (a whole request, its head checked) sent to the base URL's server; the
        answer's status, headers, whether they set a cookie, and its whole body as received
        (not decoded), the whole within ``total`` seconds and the body at most ``limit``
        bytes."""
        if self._key is None or self._closed:
            raise RuntimeError(f"{type(self).__name__} is closed or has no base URL")
        deadline = time.monotonic() + total if total is not None else None
        connection = await self._open(
            self._key, data, self._timeouts, deadline, method=method.encode("ascii")
        )
        read_timeout = self._timeouts.get("read")
        chunks: list[bytes] = []
        size = 0
        try:
            while True:
                if connection.chunks:
                    chunk = connection.take()
                    size += len(chunk)
                    if size > limit:
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
        status, headers, cookie = connection.status, connection.headers, connection.sets_cookie
        self._release(connection, reuse=connection.keep_alive)
        return status, headers, cookie, chunks[0] if len(chunks) == 1 else b"".join(chunks)

    def _streamed(self, connection: _Connection, read_timeout: float | None) -> httpx.Response:
        body = _Body(self, connection, read_timeout)
        return httpx.Response(
            status_code=connection.status,
            headers=connection.headers,
            stream=body,
            extensions={**_EXTENSIONS, RAW_BODY: body},
        )

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
            now = connection.idle_since = time.monotonic()
            idle = self._idle.setdefault(connection.key, [])
            self._sweep(idle, now)
            idle.append(connection)
            self._idle_count += 1
        else:
            connection.close()
        self._free_slot()

    def _sweep(self, idle: list[_Connection], now: float) -> None:
        """Close the idle connections past ``keepalive_expiry`` or closed by the server, oldest
        first (the list is in the order they went idle): a connection that is never picked
        again (the newest is picked first) must not keep its socket and TLS buffers alive."""
        expiry = self._keepalive_expiry
        while idle and (idle[0].closed or now - idle[0].idle_since >= expiry):
            idle.pop(0).close()
            self._idle_count -= 1

    def _idle_connection(self, key: tuple[bytes, bytes, int, str | None]) -> _Connection | None:
        idle = self._idle.get(key)
        now = time.monotonic()
        if idle:
            self._sweep(idle, now)
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

    # ----------------------------------------------------------------- an httpx request

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self._closed:
            raise RuntimeError(f"{type(self).__name__} is closed")
        method = request.method.encode("ascii")
        url = request.url
        scheme = url.raw_scheme
        if scheme not in _DEFAULT_PORTS:
            raise httpx.UnsupportedProtocol(
                f"{type(self).__name__} speaks http and https, not {url.scheme!r} ({url})"
            )
        if not isinstance(request.stream, httpx.AsyncByteStream):
            raise TypeError(
                f"{type(self).__name__} sends async request bodies only, got "
                f"{type(request.stream).__name__} for {request.method} {request.url}"
            )
        data = await self._encode(request, method)
        timeouts = _timeouts(request)
        sni = request.extensions.get("sni_hostname")
        key = (scheme, url.raw_host, url.port or _DEFAULT_PORTS[scheme], sni)
        connection = await self._open(key, data, timeouts, method=method)
        return self._streamed(connection, timeouts.get("read"))

    async def _open(
        self,
        key: tuple[bytes, bytes, int, str | None],
        data: bytes,
        timeouts: Mapping[str, float | None],
        deadline: float | None = None,
        *,
        method: bytes,
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
            connection.send(data, method)
            read_timeout = timeouts.get("read")
            while not connection.headers_done:
                if connection.error is not None:
                    raise connection.error
                await connection.wait(read_timeout, deadline)
        except BaseException:
            self._release(connection, reuse=False)
            raise
        return connection

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

    def in_use(self) -> int:
        """How many connections a request or a stream holds now."""
        return self._active

    async def aclose(self) -> None:
        """Close every connection, idle or answering (an open watch ends with an error)."""
        self._closed = True
        self._idle.clear()
        self._idle_count = 0
        for connection in list(self._open_connections):
            connection._fail(httpx.ReadError("the client was closed"))
        self._open_connections.clear()


async def _close_opened(opened: tuple[asyncio.BaseTransport, Any]) -> None:
    opened[0].close()  # a connection that completed after its opener was cancelled


def direct_transport(
    *,
    ssl_context: ssl.SSLContext | None,
    max_connections: int | None,
    max_keepalive_connections: int | None,
) -> httpx.AsyncBaseTransport:
    """The httpx transport of direct connections to the API server (a :class:`FastTransport`;
    :meth:`ClientConfig.async_httpx_client <kubectrl.client.ClientConfig.async_httpx_client>`
    puts it under its ``httpx.AsyncClient``)."""
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
