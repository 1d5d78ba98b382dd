"""A response body read whole under the client's limits, whatever transport carried it.

The transports under the client (FastTransport, httpcore, httpx's own behind a proxy) differ in
how they frame a response; what a body may cost does not depend on them. Here:

- :func:`read_content` reads a streamed httpx response's body and decodes it, both under
  ``limit``;
- :func:`decode_body` inflates a ``gzip`` or ``deflate`` body into at most ``limit`` bytes
  (zlib's ``max_length``: a 64 KiB gzip bomb of 64 MiB never holds more than the limit), and
  refuses a body that does not inflate, or an encoding the client never asked for;
- :class:`Answer` is the ``httpx.Response`` the client's verbs read, its content already decoded.

Errors are :class:`ResponseRefusedError`, an ``httpx.RemoteProtocolError`` that the client turns
into :class:`~kubectrl.errors.MalformedResponseError` with the request's verb and resource.
"""

from __future__ import annotations

import zlib
from typing import Any

import httpx

from kubectrl.client import _json
from kubectrl.errors import MalformedResponseError

__all__ = [
    "Answer",
    "BodyTooLargeError",
    "ResponseRefusedError",
    "decode_body",
    "json_body",
    "read_content",
    "too_large",
]

_EXTENSIONS = {"http_version": b"HTTP/1.1", "reason_phrase": b""}
_GZIP_WBITS = 16 + zlib.MAX_WBITS


class ResponseRefusedError(httpx.RemoteProtocolError):
    """The answer broke HTTP/1.1 or one of the client's limits; the message says which."""


class Answer(httpx.Response):
    """A response read whole, its content already decoded (``httpx.Response`` would copy it
    through its decoders first); the headers are the server's, ``Content-Encoding`` included."""

    def __init__(self, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
        super().__init__(
            status, headers=headers, stream=httpx.ByteStream(body), extensions=_EXTENSIONS
        )
        self._content = body  # what content, read() and iter_bytes() give: no decoders


class BodyTooLargeError(ResponseRefusedError):
    """The body, received or inflated, is over the client's limit."""


def too_large(limit: int) -> BodyTooLargeError:
    return BodyTooLargeError(
        f"the response body is larger than the client's limit of {limit} bytes "
        "(ClientConfig.max_response_bytes)"
    )


async def read_content(response: httpx.Response, limit: int) -> bytes:
    """The content of a streamed ``response`` (closed afterwards): its raw bytes, then decoded
    as its ``Content-Encoding`` says (:func:`decode_body`), each at most ``limit`` bytes, else
    :class:`BodyTooLargeError`. A response its transport built in memory, which httpx read
    already (the testing fake's), gives its content as it is."""
    if response.is_stream_consumed and hasattr(response, "_content"):
        if len(response.content) > limit:
            raise too_large(limit)
        return response.content
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


def json_body(response: httpx.Response, *, verb: str = "", resource: str = "") -> Any:
    """The JSON value of ``response``'s body (``{}`` for an empty one); a body that is not
    JSON (truncated, not UTF-8) is a :class:`~kubectrl.errors.MalformedResponseError` quoting
    its first 200 bytes."""
    content = response.content
    if not content:
        return {}
    try:
        return _json.loads(content)
    except (ValueError, RecursionError) as err:
        # JSONDecodeError and UnicodeDecodeError are ValueErrors (orjson's too)
        excerpt = content[:200].decode("utf-8", "replace")
        raise MalformedResponseError(
            f"the {response.status_code} response is not JSON ({type(err).__name__}: {err}); "
            f"it starts {excerpt!r}",
            verb=verb,
            resource=resource,
        ) from None
