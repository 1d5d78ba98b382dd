"""The watch stream: one HTTP watch request, read incrementally, decoded into events.

A thin I/O loop around the pure :class:`~kubectrl.client._watch_decoder.WatchDecoder`. It tracks
the last resourceVersion seen (bookmarks included) so a caller can watch again from there, and it
detects stalls: when no byte arrives for ``stall_timeout`` seconds (the server's bookmark interval,
about a minute, plus margin), the stream ends with :class:`~kubectrl.errors.WatchStalledError`
instead of hanging on a dead connection forever (client-go #374, kubernetes-client/python #1402).

A gzip-encoded watch (``Content-Encoding: gzip``: an API server never compresses a watch, but a
proxy or a hostile server may) is inflated here, incrementally, from the body as received, in
pieces of at most :data:`INFLATE_PIECE_BYTES` handed to the decoder one at a time: inflating a
whole network chunk at once (what httpx's decoder does) turned a 1 MiB gzip bomb into a gigabyte
before the decoder's line bound could refuse it. So a watch holds at most about the decoder's
line bound (32 MiB) plus one piece, whatever the compression ratio.
"""

from __future__ import annotations

import collections
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from types import TracebackType

import httpx

from kubectrl.client._fast_transport import RAW_BODY
from kubectrl.client._watch_decoder import WatchDecoder, WatchEvent
from kubectrl.errors import (
    APIConnectionError,
    KubectrlError,
    MalformedStreamError,
    WatchStalledError,
)

__all__ = ["WatchStream"]

#: Bookmarks come about every minute (kube-apiserver's cacher ``bookmarkFrequency``); 90 s of
#: silence on a watch with bookmarks means the connection is dead.
DEFAULT_STALL_TIMEOUT = 90.0

Opener = Callable[[float | None], Awaitable[tuple[httpx.Response, str, str | None]]]


#: Most inflated bytes one step of a gzip watch hands to the decoder.
INFLATE_PIECE_BYTES = 256 * 1024

_GZIP_WBITS = 16 + zlib.MAX_WBITS


def _chunks_of(response: httpx.Response, label: str = "") -> AsyncIterator[bytes]:
    """The body's chunks, undecoded (from the transport's raw body when it offers one, else
    httpx's ``aiter_raw``) and inflated here when the server gzip-encoded them; any other
    encoding (no API server sends one), and a body httpx has already read, come through
    httpx's decoders."""
    codings = [
        part.strip().lower()
        for part in response.headers.get("content-encoding", "").split(",")
        if part.strip().lower() not in ("", "identity")
    ]
    if (codings and codings != ["gzip"] and codings != ["x-gzip"]) or response.is_stream_consumed:
        # Another encoding, or a body already read whole (a test transport's): httpx's bytes.
        return response.aiter_bytes()
    raw = response.extensions.get(RAW_BODY)
    chunks: AsyncIterator[bytes] = (
        raw.__aiter__() if raw is not None else response.aiter_raw().__aiter__()
    )
    return _inflated(chunks, label) if codings else chunks


class _GzipInflater:
    """Inflates a gzip body incrementally: :meth:`feed` yields pieces of at most ``piece``
    bytes, however much a compressed chunk expands. Concatenated gzip members (RFC 1952 2.2)
    are inflated one after the other, as Go's ``gzip.Reader`` does. Corrupt data, or a body
    that ends inside a member, raises :class:`~kubectrl.errors.MalformedStreamError`."""

    def __init__(self, label: str, piece: int = INFLATE_PIECE_BYTES) -> None:
        self._label = label
        self._piece = piece
        self._inflater = zlib.decompressobj(_GZIP_WBITS)
        self._started = False

    def feed(self, data: bytes) -> Iterator[bytes]:
        piece_size = self._piece
        while True:
            if data:
                self._started = True
            try:
                piece = self._inflater.decompress(data, piece_size)
            except zlib.error as err:
                raise self._corrupt(str(err), data) from None
            if piece:
                yield piece
            if self._inflater.eof:
                data = self._inflater.unused_data
                if not data:
                    return
                self._inflater = zlib.decompressobj(_GZIP_WBITS)  # the next member
                continue
            data = self._inflater.unconsumed_tail
            # A full piece may leave output inside zlib even with no input left: ask again.
            if not data and len(piece) < piece_size:
                return

    def close(self) -> None:
        if self._started and not self._inflater.eof:
            raise self._corrupt("the body ended inside a gzip member", b"")

    def _corrupt(self, reason: str, data: bytes) -> MalformedStreamError:
        excerpt = f": {data[:64]!r}{'...' if len(data) > 64 else ''}" if data else ""
        return MalformedStreamError(
            f"watch {self._label}: gzip body is corrupt ({reason}){excerpt}"
        )


async def _inflated(chunks: AsyncIterator[bytes], label: str) -> AsyncIterator[bytes]:
    inflater = _GzipInflater(label)
    async for chunk in chunks:
        for piece in inflater.feed(chunk):
            yield piece
    inflater.close()


class WatchStream:
    """Events of one watch request, as an async iterator and an async context manager.

    Guarantees:

    - Events come in the server's order; ``BOOKMARK`` events are yielded too, and every event
      (bookmarks included) advances :attr:`resource_version`.
    - The stream ends by ``StopAsyncIteration`` when the server closes it cleanly (for example
      after ``timeout_seconds``); watch again from :attr:`resource_version`.
    - It ends by raising: an :class:`~kubectrl.errors.APIError` for an ``ERROR`` event or a
      failed request (410 -> :class:`~kubectrl.errors.ExpiredError`: relist),
      :class:`~kubectrl.errors.WatchStalledError` after ``stall_timeout`` seconds without a byte,
      :class:`~kubectrl.errors.MalformedStreamError` for a line that is not an event,
      :class:`~kubectrl.errors.APIConnectionError` when the connection breaks.

    Caveats: use ``async with`` (or call :meth:`close`) so the connection is released when you
    stop early. Each watch holds one HTTP/1.1 connection from the client's separate watch pool,
    never from the pool ordinary requests use.

    Example::

        async with client.watch(("v1", "ConfigMap"), namespace="ns",
                                resource_version=rv) as stream:
            async for event in stream:
                print(event.type, event.object["metadata"]["name"])
    """

    def __init__(
        self,
        opener: Opener,
        *,
        resource_version: str = "",
        stall_timeout: float | None = DEFAULT_STALL_TIMEOUT,
    ) -> None:
        self._opener = opener
        self._stall_timeout = stall_timeout
        self._response: httpx.Response | None = None
        self._chunks: AsyncIterator[bytes] | None = None
        self._decoder: WatchDecoder | None = None
        self._pending: collections.deque[WatchEvent] = collections.deque()
        self._error: BaseException | None = None
        self._finished = False
        self._label = "watch"
        self.resource_version = resource_version
        #: Events yielded so far (bookmarks included).
        self.events = 0

    async def __aenter__(self) -> WatchStream:
        await self._ensure_started()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    def __aiter__(self) -> WatchStream:
        return self

    async def _ensure_started(self) -> None:
        if self._response is not None or self._finished:
            return
        response, label, namespace = await self._opener(self._stall_timeout)
        self._response = response
        self._label = label
        self._decoder = WatchDecoder(resource=label, namespace=namespace)
        self._chunks = _chunks_of(response, label)

    async def __anext__(self) -> WatchEvent:
        await self._ensure_started()
        while True:
            if self._pending:
                event = self._pending.popleft()
                resource_version = event.resource_version  # a property: read once
                if resource_version:
                    self.resource_version = resource_version
                self.events += 1
                return event
            if self._error is not None:
                err, self._error = self._error, None
                self._finished = True
                raise err
            chunks, decoder = self._chunks, self._decoder
            if self._finished or chunks is None or decoder is None:
                raise StopAsyncIteration
            await self._read_more(chunks, decoder)

    async def _read_more(self, chunks: AsyncIterator[bytes], decoder: WatchDecoder) -> None:
        try:
            chunk = await chunks.__anext__()
        except StopAsyncIteration:
            try:
                self._pending.extend(decoder.close())
            except KubectrlError as err:
                self._error = err
            self._finished = True
            await self._release()
            return
        except httpx.ReadTimeout:
            await self._release()
            self._error = WatchStalledError(
                f"watch {self._label}: no data for {self._stall_timeout} s; the connection is "
                f"presumed dead (last resourceVersion {self.resource_version or '<none>'})"
            )
            return
        except httpx.TransportError as err:
            await self._release()
            self._error = APIConnectionError(
                f"watch connection lost: {type(err).__name__}", verb="watch", resource=self._label
            )
            return
        except httpx.DecodingError as err:  # an encoding httpx decodes (not gzip: see above)
            response = self._response
            encoding = response.headers.get("content-encoding") if response is not None else None
            await self._release()
            self._error = MalformedStreamError(
                f"watch {self._label}: body could not be decoded (Content-Encoding "
                f"{encoding!r}): {str(err)[:200]}"
            )
            return
        except KubectrlError as err:  # a corrupt gzip body
            await self._release()
            self._error = err
            return
        try:
            for event in decoder.feed(chunk):
                self._pending.append(event)
        except KubectrlError as err:
            self._error = err
            await self._release()

    async def _release(self) -> None:
        response, self._response = self._response, None
        if response is not None:
            await response.aclose()

    def _client_closed(self) -> None:
        """The client was closed: no event is delivered any more, those already read included;
        the next read raises :class:`~kubectrl.errors.APIConnectionError` (called by the client)."""
        self._pending.clear()
        if not self._finished and self._error is None:
            self._error = APIConnectionError(
                "watch ended: the client was closed", verb="watch", resource=self._label
            )

    async def close(self) -> None:
        """Stop watching and release the connection. Idempotent."""
        self._finished = True
        self._pending.clear()
        await self._release()

    def __repr__(self) -> str:
        state = "closed" if self._finished else ("open" if self._response else "not started")
        return f"<WatchStream {self._label} {state} resource_version={self.resource_version!r}>"
