"""The watch stream: one HTTP watch request, read incrementally, decoded into events.

A thin I/O loop around the pure :class:`~kubectrl.client._watch_decoder.WatchDecoder`. It tracks
the last resourceVersion seen (bookmarks included) so a caller can watch again from there, and it
detects stalls: when no byte arrives for ``stall_timeout`` seconds (the server's bookmark interval,
about a minute, plus margin), the stream ends with :class:`~kubectrl.errors.WatchStalledError`
instead of hanging on a dead connection forever (client-go #374, kubernetes-client/python #1402).
"""

from __future__ import annotations

import collections
from collections.abc import AsyncIterator, Awaitable, Callable
from types import TracebackType

import httpx

from kubectrl.client._fast_transport import RAW_BODY
from kubectrl.client._watch_decoder import WatchDecoder, WatchEvent
from kubectrl.errors import APIConnectionError, KubectrlError, WatchStalledError

__all__ = ["WatchStream"]

#: Bookmarks come about every minute (kube-apiserver's cacher ``bookmarkFrequency``); 90 s of
#: silence on a watch with bookmarks means the connection is dead.
DEFAULT_STALL_TIMEOUT = 90.0

Opener = Callable[[float | None], Awaitable[tuple[httpx.Response, str, str | None]]]


def _chunks_of(response: httpx.Response) -> AsyncIterator[bytes]:
    """The body's chunks: straight from the transport when it offers them undecoded and the
    server did not compress them (a watch never is), else through httpx's decoders."""
    raw = response.extensions.get(RAW_BODY)
    if raw is not None and response.headers.get("content-encoding", "identity") == "identity":
        chunks: AsyncIterator[bytes] = raw.__aiter__()
        return chunks
    return response.aiter_bytes()


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
        self._chunks = _chunks_of(response)

    async def __anext__(self) -> WatchEvent:
        await self._ensure_started()
        while True:
            if self._pending:
                event = self._pending.popleft()
                if event.resource_version:
                    self.resource_version = event.resource_version
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

    async def close(self) -> None:
        """Stop watching and release the connection. Idempotent."""
        self._finished = True
        self._pending.clear()
        await self._release()

    def __repr__(self) -> str:
        state = "closed" if self._finished else ("open" if self._response else "not started")
        return f"<WatchStream {self._label} {state} resource_version={self.resource_version!r}>"
