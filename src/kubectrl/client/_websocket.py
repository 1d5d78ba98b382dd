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

A :class:`~kubectrl.testing.FakeAPI` serves WebSockets in memory: when the config's transport
has an ``open_websocket`` method, the connection is its answer.
"""

from __future__ import annotations

import asyncio
import urllib.parse
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from kubectrl.client._config import ClientConfig
from kubectrl.errors import APIConnectionError, UnauthorizedError

__all__ = ["WebSocket", "WebSocketRefusedError", "open_websocket"]


class WebSocketRefusedError(Exception):
    """The server refused the upgrade with an HTTP status (carried in ``status``)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


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
    def __init__(self, session: Any, ws: Any) -> None:
        self._session = session
        self._ws = ws
        self.subprotocol: str = ws.protocol or ""

    async def send(self, data: bytes) -> None:
        await self._ws.send_bytes(data)

    async def receive(self) -> bytes | None:
        import aiohttp

        while True:
            msg = await self._ws.receive()
            if msg.type == aiohttp.WSMsgType.BINARY:
                return bytes(msg.data)
            if msg.type == aiohttp.WSMsgType.TEXT:
                return str(msg.data).encode()
            if msg.type in (
                aiohttp.WSMsgType.CLOSE,
                aiohttp.WSMsgType.CLOSING,
                aiohttp.WSMsgType.CLOSED,
            ):
                return None
            if msg.type == aiohttp.WSMsgType.ERROR:
                raise ConnectionError(f"WebSocket error: {self._ws.exception()!r}")

    async def close(self) -> None:
        try:
            await self._ws.close()
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
) -> WebSocket:
    """Open a WebSocket to ``path?query`` offering ``protocols`` (in order of preference).

    ``what`` names the target in errors (``"pods/exec ns/web"``). Raises
    :class:`WebSocketRefusedError` when the server answers the upgrade with an HTTP error
    (the caller turns it into the typed API error), :class:`~kubectrl.errors.APIConnectionError`
    when the server cannot be reached.
    """
    opener = getattr(config.transport, "open_websocket", None)
    if opener is not None:
        socket: WebSocket = await opener(path, list(query), list(protocols))
        return socket
    import aiohttp

    url = _url(config, path, query)
    ssl_context = config.ssl_context() if url.startswith("wss://") else False
    header = await _authorization(config, refresh=False)
    attempt = 0
    while True:
        attempt += 1
        headers = {"User-Agent": config.user_agent}
        if header:
            headers["Authorization"] = header
        session = aiohttp.ClientSession(
            timeout=aiohttp.ClientTimeout(total=None, connect=config.connect_timeout),
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
                max_msg_size=0,
                timeout=aiohttp.ClientWSTimeout(ws_close=10.0),
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
        except (aiohttp.ClientError, OSError, asyncio.TimeoutError) as err:
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
        return _AiohttpWebSocket(session, ws)
