"""WebSocket connections to the API server: the transport of exec, attach and port-forward.

kube-apiserver serves ``pods/exec``, ``pods/attach`` and ``pods/portforward`` as an HTTP/1.1
upgrade; kubectrl speaks WebSocket there (kubectl's SPDY is deprecated upstream), through
aiohttp's client, already a dependency for the webhook server. aiohttp does the handshake,
subprotocol negotiation, masking, fragmentation, ping/pong and the close handshake, and it
reaches the server through the same :class:`~kubectrl.client.ClientConfig` as the REST client:
the same ``ssl.SSLContext`` (kubeconfig CA, client certificate, ``insecure-skip-tls-verify``),
SNI override (``tls-server-name``), proxy and ``Authorization`` header from the same credential
source (a 401 invalidates it and the handshake is tried once more, as the REST client does for
exec plugin tokens). Nothing is parsed twice.

Every connection is bounded (:class:`WebSocketLimits`, as client-go's
tools/remotecommand/websocket.go): the upgrade must be answered within the config's
``connect_timeout`` + ``timeout``; kubectrl pings every 5 s and gives the connection up after
61 s without any frame from the server; a message larger than 1 MiB closes the connection
(code 1009) before its payload is read. Whatever ends a connection abnormally is raised as
:class:`~kubectrl.errors.APIConnectionError` (or :class:`~kubectrl.errors.RequestTimeoutError`
for the upgrade) naming the subresource, the pod and the container, and saying why.

A :class:`~kubectrl.testing.FakeAPI` serves WebSockets in memory: when the config's transport
has an ``open_websocket`` method, the connection is its answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import re
import urllib.parse
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from kubectrl._internal.websocket import WebSocketRefusedError
from kubectrl.client._config import ClientConfig
from kubectrl.errors import APIConnectionError, RequestTimeoutError, UnauthorizedError

__all__ = ["LIMITS", "WebSocket", "WebSocketLimits", "WebSocketRefusedError", "open_websocket"]


@dataclasses.dataclass(frozen=True)
class WebSocketLimits:
    """The bounds of every WebSocket kubectrl opens (exec, attach, port-forward).

    ``heartbeat_period``: seconds between the pings kubectrl sends. ``heartbeat_timeout``:
    seconds without any frame from the server (a pong, data, a close) after which the
    connection is given up and closed; client-go's ``pingPeriod`` (5 s) and ``pingReadDeadline``
    (12 periods + 1 s), tools/remotecommand/websocket.go. ``max_message_size``: the largest
    message accepted, channel byte included; a larger one closes the connection with code 1009
    before its payload is buffered. ``close_timeout``: how long closing waits for the server's
    close frame. The upgrade's bounds come from the :class:`~kubectrl.client.ClientConfig`:
    ``connect_timeout`` to connect, ``timeout`` for each read, and their sum for the whole
    upgrade.
    """

    heartbeat_period: float = 5.0
    heartbeat_timeout: float = 61.0
    #: 1 MiB: 32 times the largest message an API server or kubelet writes (they copy each
    #: stream with io.Copy's 32 KiB buffer, one message per write; client-go reads with the same
    #: 32 KiB, transport/websocket's DataBufferSize).
    max_message_size: int = 1 << 20
    close_timeout: float = 10.0

    def __post_init__(self) -> None:
        if not 0 < self.heartbeat_period < self.heartbeat_timeout:
            raise ValueError(
                "WebSocketLimits: need 0 < heartbeat_period < heartbeat_timeout, got "
                f"{self.heartbeat_period:g} and {self.heartbeat_timeout:g}"
            )
        if self.max_message_size < 2:
            raise ValueError(f"WebSocketLimits: max_message_size {self.max_message_size} < 2")
        if self.close_timeout <= 0:
            raise ValueError(f"WebSocketLimits: close_timeout {self.close_timeout:g} <= 0")


#: The limits :func:`open_websocket` uses when it is given none (tests replace it).
LIMITS = WebSocketLimits()

_CLOSE_NAMES = {
    1000: "normal closure",
    1001: "going away",
    1002: "protocol error",
    1003: "unsupported data",
    1005: "no status",
    1006: "abnormal closure",
    1007: "invalid payload",
    1008: "policy violation",
    1009: "message too big",
    1010: "mandatory extension",
    1011: "internal error",
    1012: "service restart",
    1013: "try again later",
}


def _close_text(code: int, reason: str) -> str:
    if not code:
        code = 1005  # a close frame without a status code (RFC 6455 7.1.5)
    text = f"code {code} ({_CLOSE_NAMES.get(code, 'unknown code')})"
    return f"{text}: {reason[:200]}" if reason else text


@runtime_checkable
class WebSocket(Protocol):
    """One open WebSocket: binary messages in and out.

    ``subprotocol`` is what the server chose (``""`` if it chose none).
    """

    subprotocol: str

    async def send(self, data: bytes) -> None:
        """Send one binary message."""

    async def receive(self) -> bytes | None:
        """The next message, or ``None`` once the connection is closed."""

    async def close(self) -> None:
        """Close (idempotent)."""


class _AiohttpWebSocket:
    """aiohttp's client WebSocket, bounded: a heartbeat, and errors that say what happened.

    ``receive`` returns ``None`` for a clean end (a close frame with code 1000, or a close
    of ours) and raises :class:`~kubectrl.errors.APIConnectionError` for every other end: no
    frame within ``heartbeat_timeout``, a close with another code (1005 "no status"
    included, as client-go's readDemuxLoop, which ends quietly only on 1000), the connection
    dropped without a close frame, a message above ``max_message_size``, a text message.
    """

    def __init__(self, session: Any, ws: Any, *, what: str, limits: WebSocketLimits) -> None:
        self._session = session
        self._ws = ws
        self._what = what
        self._limits = limits
        self.subprotocol: str = ws.protocol or ""
        self._closing = False  # close() was called
        self._ended = False  # the server's end was seen (a close frame, an error)
        self._failure: APIConnectionError | None = None
        self._pinger = asyncio.get_running_loop().create_task(self._heartbeat())

    def __repr__(self) -> str:
        return f"WebSocket({self._what}, protocol={self.subprotocol!r})"

    async def _heartbeat(self) -> None:
        # Pings every period; the pongs (any frame) are what receive() waits for.
        while True:
            await asyncio.sleep(self._limits.heartbeat_period)
            try:
                await self._ws.ping()
            except Exception:  # closing: receive() reports why
                return

    async def send(self, data: bytes) -> None:
        if self._failure is not None:
            raise self._failure
        await self._ws.send_bytes(data)

    async def _fail(self, reason: str) -> APIConnectionError:
        self._ended = True
        self._failure = APIConnectionError(reason, resource=self._what)
        self._pinger.cancel()
        # Drop the connection (the server is broken or gone: no close handshake to wait for).
        with contextlib.suppress(Exception):
            await self._session.close()
        return self._failure

    async def receive(self) -> bytes | None:
        import aiohttp

        if self._failure is not None:
            raise self._failure
        limits = self._limits
        try:
            msg = await self._ws.receive(timeout=limits.heartbeat_timeout)
        except asyncio.TimeoutError:
            if self._closing:
                return None
            raise await self._fail(
                f"no frame from the server for {limits.heartbeat_timeout:g} s (not even a pong "
                f"to the pings sent every {limits.heartbeat_period:g} s): connection given up"
            ) from None
        kind = msg.type
        if kind == aiohttp.WSMsgType.BINARY:
            return bytes(msg.data)
        if self._closing or self._ended:
            return None
        if kind == aiohttp.WSMsgType.CLOSE:
            self._ended = True
            self._pinger.cancel()
            code = int(msg.data or 0)
            if code == 1000:
                # Our close frame answers it; aiohttp then drops the connection at once.
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(self._ws.close(), self._limits.close_timeout)
                return None
            raise await self._fail(
                f"the server closed the WebSocket with {_close_text(code, str(msg.extra or ''))}"
            )
        if kind == aiohttp.WSMsgType.TEXT:
            raise await self._fail(
                "the server sent a text message; the channel protocols are binary only"
            )
        if kind == aiohttp.WSMsgType.ERROR:
            err = msg.data
            if getattr(err, "code", None) == aiohttp.WSCloseCode.MESSAGE_TOO_BIG:
                found = re.search(r"size (\d+)", str(err))
                size = f"of {found.group(1)} bytes " if found else ""
                raise await self._fail(
                    f"the server sent a message {size}above the limit of "
                    f"{limits.max_message_size} bytes (WebSocketLimits.max_message_size); "
                    "the connection is closed (code 1009, message too big)"
                )
            raise await self._fail(f"WebSocket protocol error: {type(err).__name__}: {err}")
        # CLOSED (or CLOSING) without a close frame: the TCP connection ended under us.
        raise await self._fail(
            "the connection ended without a WebSocket close frame (code 1006, abnormal closure)"
        )

    async def close(self) -> None:
        if self._closing:
            return
        self._closing = True
        self._pinger.cancel()
        try:
            if self._failure is None:
                with contextlib.suppress(Exception):
                    # aiohttp bounds the wait for the server's close frame (close_timeout);
                    # this bounds sending ours to a server that reads nothing.
                    await asyncio.wait_for(self._ws.close(), self._limits.close_timeout * 2)
        finally:
            await self._session.close()


def _url(config: ClientConfig, path: str, query: Sequence[tuple[str, str]]) -> str:
    base = config.server.rstrip("/")
    scheme, _, rest = base.partition("://")
    ws_scheme = {"https": "wss", "http": "ws"}.get(scheme, scheme)
    text = f"{ws_scheme}://{rest}{path}"
    if query:
        text += "?" + urllib.parse.urlencode(list(query), quote_via=urllib.parse.quote)
    return text


async def _authorization(config: ClientConfig, *, refresh: bool) -> str | None:
    source = config.credentials
    if source is None:
        return None
    blocking = bool(getattr(source, "blocking", False))
    if refresh:
        renewed = await asyncio.to_thread(source.invalidate) if blocking else source.invalidate()
        if not renewed:
            return None
    if blocking:
        return await asyncio.to_thread(source.authorization)
    return source.authorization()


async def open_websocket(
    config: ClientConfig,
    path: str,
    query: Sequence[tuple[str, str]],
    protocols: Sequence[str],
    *,
    what: str,
    limits: WebSocketLimits | None = None,
) -> WebSocket:
    """Open a WebSocket to ``path?query`` offering ``protocols`` (in order of preference).

    ``what`` names the target in errors (``"pods/exec ns/web"``); ``limits`` defaults to
    :data:`LIMITS`. The upgrade may take ``config.connect_timeout`` to connect,
    ``config.timeout`` for each read and their sum in all. Raises :class:`WebSocketRefusedError`
    when the server answers the upgrade with an HTTP error (the caller turns it into the typed
    API error), :class:`~kubectrl.errors.RequestTimeoutError` when the upgrade is not answered
    in time, :class:`~kubectrl.errors.APIConnectionError` when the server cannot be reached.
    """
    opener = getattr(config.transport, "open_websocket", None)
    if opener is not None:
        socket: WebSocket = await opener(path, list(query), list(protocols))
        return socket
    import aiohttp

    limits = limits or LIMITS
    url = _url(config, path, query)
    ssl_context = config.ssl_context() if url.startswith("wss://") else False
    header = await _authorization(config, refresh=False)
    total = config.connect_timeout + config.timeout
    attempt = 0
    while True:
        attempt += 1
        headers = {"User-Agent": config.user_agent}
        if header:
            headers["Authorization"] = header
        session = aiohttp.ClientSession(
            # Bounds the upgrade only: once it is answered, reads wait for the heartbeat.
            timeout=aiohttp.ClientTimeout(
                total=total,
                connect=config.connect_timeout,
                sock_connect=config.connect_timeout,
                sock_read=config.timeout,
            ),
            trust_env=False,
        )
        try:
            ws = await session.ws_connect(
                url,
                protocols=tuple(protocols),
                headers=headers,
                ssl=ssl_context,
                proxy=config.proxy,
                server_hostname=config.tls_server_name,
                autoping=True,
                # The server's close is answered by receive(): aiohttp's own answer would wait
                # for yet another close frame after one without a status code.
                autoclose=False,
                # aiohttp refuses a message whose size reaches its limit: one more byte.
                max_msg_size=limits.max_message_size + 1,
                timeout=aiohttp.ClientWSTimeout(ws_receive=None, ws_close=limits.close_timeout),
            )
        except aiohttp.WSServerHandshakeError as err:
            await session.close()
            if err.status == 401 and attempt == 1:
                header = await _authorization(config, refresh=True)
                if header:
                    continue
                raise UnauthorizedError(
                    "the server refused the credentials", code=401, verb="connect", resource=what
                ) from err
            raise WebSocketRefusedError(err.status, err.message) from err
        except asyncio.TimeoutError as err:  # aiohttp's connect and read timeouts included
            await session.close()
            raise RequestTimeoutError(
                f"the WebSocket upgrade at {config.server} was not answered in time "
                f"({type(err).__name__}; bounds: connect {config.connect_timeout:g} s, each read "
                f"{config.timeout:g} s, {total:g} s in all: ClientConfig connect_timeout and "
                "timeout)",
                verb="connect",
                resource=what,
            ) from err
        except (aiohttp.ClientError, OSError) as err:
            await session.close()
            raise APIConnectionError(
                f"cannot open a WebSocket to {config.server} for {what}: "
                f"{type(err).__name__}: {err}",
                verb="connect",
                resource=what,
                connect_failed=True,
            ) from err
        except BaseException:
            await session.close()
            raise
        return _AiohttpWebSocket(session, ws, what=what, limits=limits)
