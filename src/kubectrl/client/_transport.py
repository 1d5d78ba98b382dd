"""The transport seam: what the request pipeline asks of whatever carries its bytes.

:class:`Transport` is the one boundary between :mod:`kubectrl.client._pipeline` (throttle,
credentials, retries, warnings, errors) and the network, as httpx's ``AsyncBaseTransport`` is
under its client: send one request and get its answer whole, or open a stream. Two
implementations:

- :class:`~kubectrl.client._fast_transport.FastTransport`, the client's own, for a direct
  connection to the API server (built by the client from its config: TLS context, limits);
- :class:`HttpxTransport`, an adapter over any httpx transport: the one a config names
  (``ClientConfig.transport``: :class:`kubectrl.testing.FakeAPI`'s, one of your own), or
  httpx's ``AsyncHTTPTransport`` when a proxy is configured (httpx speaks the proxy protocols).

The adapter calls nothing but the httpx transport's public ``handle_async_request`` and
``aclose``, and reads answers through the same functions and limits as FastTransport
(:func:`~kubectrl.client._fast_transport.decode_body`). One thing it cannot see: httpx's own
transport (httpcore, h11) keeps bytes that arrive after an answer's end in its parser's buffer
and reads them as the next answer on that connection, and it offers no public way to look at
them. Over that transport every request is therefore sent with ``Connection: close``, so no
connection outlives its answer; other transports (an in-memory fake, your own) manage their
connections themselves.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol

import httpx

from kubectrl._internal.aio import wait_within
from kubectrl.client._fast_transport import Answer, decode_body, too_large

if TYPE_CHECKING:
    from kubectrl.client._fast_transport import FastTransport

__all__ = ["HttpxTransport", "Transport", "read_content"]


class Transport(Protocol):
    """Carries the pipeline's requests to one API server (the module docstring).

    ``target`` is the request target below the server's base URL (path and query, as the
    request line writes them); ``headers`` are the request's own (``Accept``, ``Content-Type``,
    ``Authorization``...): the transport adds ``Host`` and the client's defaults. Failures are
    httpx's exception types (``httpx.TransportError`` and its subclasses) and
    :class:`~kubectrl.client._fast_transport.ResponseRefusedError` for an answer over a limit.
    """

    async def send(
        self, method: str, target: str, headers: Mapping[str, str], content: bytes | None
    ) -> Answer:
        """The answer, read whole within the client's total timeout, its body at most the
        client's body limit received and decoded (``gzip``, ``deflate``)."""
        ...

    async def open_stream(
        self, method: str, target: str, headers: Mapping[str, str], *, read_timeout: float | None
    ) -> httpx.Response:
        """The answer once its head has arrived, its body streamed (at most ``read_timeout``
        seconds of silence); the caller closes it."""
        ...

    async def aclose(self) -> None:
        """Close every connection (an open stream ends with an error)."""
        ...


async def read_content(response: httpx.Response, limit: int) -> bytes:
    """The content of a streamed ``response`` (closed afterwards): its raw bytes, then decoded
    as its ``Content-Encoding`` says (:func:`~kubectrl.client._fast_transport.decode_body`),
    each at most ``limit`` bytes, else
    :class:`~kubectrl.client._fast_transport.BodyTooLargeError`. A response its transport built
    in memory and read already (the testing fake's) gives its content as it is."""
    if response.is_stream_consumed:
        content = response.content
        if len(content) > limit:
            raise too_large(limit)
        return content
    chunks: list[bytes] = []
    size = 0
    try:
        async for chunk in response.aiter_raw():
            size += len(chunk)
            if size > limit:
                raise too_large(limit)
            chunks.append(chunk)
    finally:
        await response.aclose()
    body = chunks[0] if len(chunks) == 1 else b"".join(chunks)
    return decode_body(response.headers.raw, body, limit)


class HttpxTransport:
    """The :class:`Transport` seam over an httpx transport (the module docstring).

    ``headers`` are the client's defaults, ``timeout`` its httpx timeouts, ``sni_hostname``
    its ``tls-server-name``; each answer takes at most ``total_timeout`` seconds and
    ``max_body`` bytes. ``reuse_connections=False`` sends every request with
    ``Connection: close``.

    Example::

        transport = HttpxTransport(FakeAPI().transport, base_url="https://fake.invalid")
        answer = await transport.send("GET", "/api/v1/namespaces", {}, None)
    """

    def __init__(
        self,
        transport: httpx.AsyncBaseTransport,
        *,
        base_url: str,
        headers: Mapping[str, str] | None = None,
        timeout: httpx.Timeout | None = None,
        sni_hostname: str | None = None,
        max_body: int = 1 << 30,
        total_timeout: float | None = None,
        reuse_connections: bool = True,
    ) -> None:
        self.transport = transport
        self._base = base_url.rstrip("/")
        self._headers = dict(headers or {})
        if not reuse_connections:
            self._headers["Connection"] = "close"
        self._timeout = timeout or httpx.Timeout(30.0)
        self._extensions = {"sni_hostname": sni_hostname} if sni_hostname else {}
        self._max_body = max_body
        self._total_timeout = total_timeout

    def _request(
        self,
        method: str,
        target: str,
        headers: Mapping[str, str],
        content: bytes | None,
        timeout: httpx.Timeout,
    ) -> httpx.Request:
        merged = {**self._headers, **headers}
        return httpx.Request(
            method,
            httpx.URL(self._base + target),
            headers=merged,
            content=content,
            extensions={"timeout": timeout.as_dict(), **self._extensions},
        )

    async def send(
        self, method: str, target: str, headers: Mapping[str, str], content: bytes | None
    ) -> Answer:
        request = self._request(method, target, headers, content, self._timeout)
        return await wait_within(self._answer(request), self._total_timeout)

    async def _answer(self, request: httpx.Request) -> Answer:
        response = await self.transport.handle_async_request(request)
        content = await read_content(response, self._max_body)
        answer = Answer(response.status_code, response.headers.raw, content)
        answer.request = request
        return answer

    async def open_stream(
        self, method: str, target: str, headers: Mapping[str, str], *, read_timeout: float | None
    ) -> httpx.Response:
        base = self._timeout
        timeout = httpx.Timeout(
            connect=base.connect, read=read_timeout, write=base.write, pool=base.pool
        )
        request = self._request(method, target, headers, None, timeout)
        response = await self.transport.handle_async_request(request)
        response.request = request
        return response

    async def aclose(self) -> None:
        await self.transport.aclose()

    def __repr__(self) -> str:
        return f"HttpxTransport({self.transport!r}, base_url={self._base!r})"


if TYPE_CHECKING:
    # Both implementations fit the seam (a missing or mistyped method is a mypy error here).
    _fast: type[Transport] = FastTransport
    _adapter: type[Transport] = HttpxTransport
