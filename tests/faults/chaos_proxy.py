"""A TLS-terminating loopback proxy that can cut, stall and corrupt connections on command.

Clients speak TLS to the proxy (a throw-away CA of its own, see :meth:`ChaosProxy.kubeconfig`);
the proxy speaks TLS to kube-apiserver as one kubeconfig user. Because it sees plain HTTP/1.1 in
between (ALPN offers only ``http/1.1``), it knows which responses are watch streams and where
their chunks begin, so it can damage a watch the way a broken middlebox or a dying server does:

* :meth:`cut` aborts every live connection (both sides);
* :meth:`stall` stops forwarding bytes in both directions (connections stay open, new ones are
  accepted but get nothing) until :meth:`resume`;
* :meth:`stall_watches` holds back the events of the watches of one resource only, so a
  client's cache of it goes stale while its other requests flow;
* :meth:`corrupt_watches` makes each live watch stream, at its next chunk boundary, either
  receive a line that is not JSON (``"garbage"``) or half a chunk and then a cut (``"truncate"``);
* :meth:`partition` refuses new connections (and cuts the live ones) until turned off.

The proxy runs its own event loop in a daemon thread, so it can be driven from blocking tests and
from ``async`` tests alike. Test tooling only: it trusts its peers and parses just enough HTTP.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import copy
import dataclasses
import json
import ssl
import tempfile
import threading
import time
from collections import deque
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, Literal, TypeVar
from urllib.parse import urlparse

from kubectrl.envtest import Kubeconfig
from kubectrl.envtest._certs import CertificateAuthority

T = TypeVar("T")
Corruption = Literal["garbage", "truncate"]

#: What a "garbage" corruption injects: one line of a watch stream that no decoder accepts.
GARBAGE = b'{"type":"ADDED","object":{not json at all\n'


@dataclasses.dataclass
class ProxyStats:
    """Counters of what the proxy did (read them after the fact; they only grow)."""

    connections: int = 0
    watches: int = 0
    cut: int = 0
    garbage: int = 0
    truncated: int = 0
    #: Requests by verb and resource, e.g. ``"PATCH foos/status"``, ``"WATCH deployments"``.
    requests: collections.Counter[str] = dataclasses.field(default_factory=collections.Counter)
    #: ``(time.monotonic(), what)`` of every request, in order, for timelines.
    timeline: list[tuple[float, str]] = dataclasses.field(default_factory=list, repr=False)


class _Conn:
    """One proxied connection: both writers, and what the response side must do next."""

    def __init__(self, client: asyncio.StreamWriter, upstream: asyncio.StreamWriter) -> None:
        self.client = client
        self.upstream = upstream
        # (method, what the request is, is_watch) in request order
        self.requests: deque[tuple[str, str, bool]] = deque()
        self.request_seen = asyncio.Event()
        self.in_watch = False
        self.watching = ""  # the resource of the watch being streamed, e.g. "deployments"
        self.pending: Corruption | None = None

    def abort(self) -> None:
        for writer in (self.client, self.upstream):
            writer.transport.abort()


class ChaosProxy:
    """Loopback HTTPS proxy to kube-apiserver with faults on command.

    Example::

        with ChaosProxy(control_plane.kubeconfig) as proxy:
            path = proxy.kubeconfig(tmp_path / "kubeconfig")
            ...  # run a client or controller with KUBECONFIG=path
            proxy.corrupt_watches("garbage")
            proxy.stall()
            proxy.resume()
            proxy.cut()
    """

    def __init__(self, upstream: Kubeconfig) -> None:
        self._upstream = upstream
        target = urlparse(upstream.server)
        self._host = target.hostname or "127.0.0.1"
        self._port = target.port or 443
        self._ca = CertificateAuthority("kubectrl-chaos-proxy-ca")
        self._dir = Path(tempfile.mkdtemp(prefix="kubectrl-chaos-"))
        self.stats = ProxyStats()
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.base_events.Server | None = None
        self._conns: set[_Conn] = set()
        self._flowing: asyncio.Event | None = None
        self._partitioned = False

    # -- lifecycle ------------------------------------------------------------------------------

    def __enter__(self) -> ChaosProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> ChaosProxy:
        self._thread.start()
        self._run(self._start())
        return self

    def close(self) -> None:
        if self._loop.is_closed():
            return
        self._run(self._close())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()
        for path in self._dir.iterdir():
            path.unlink()
        self._dir.rmdir()

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    def kubeconfig(self, path: Path) -> Path:
        """Write a copy of the upstream kubeconfig that points at the proxy and trusts its CA."""
        import base64

        data: dict[str, Any] = copy.deepcopy(dict(self._upstream.data))
        for cluster in data["clusters"]:
            cluster["cluster"]["server"] = self.url
            cluster["cluster"]["certificate-authority-data"] = base64.b64encode(
                self._ca.cert_pem
            ).decode()
        path.write_text(json.dumps(data, indent=2))
        path.chmod(0o600)
        return path

    # -- faults (callable from any thread) -------------------------------------------------------

    def cut(self) -> int:
        """Abort every live connection; return how many were cut."""
        return self._run(self._cut())

    def stall(self) -> None:
        """Stop forwarding bytes on every connection, live or new, until :meth:`resume`."""
        self._run(self._set_flowing(False))

    def resume(self) -> None:
        """Forward bytes again after :meth:`stall` (what was held back goes through)."""
        self._run(self._set_flowing(True))

    def stall_watches(self, resource: str) -> None:
        """Hold back the events of every watch of ``resource`` (plural, e.g. ``"deployments"``)
        until :meth:`resume_watches`: the client's cache of it freezes while the rest flows."""
        self._run(self._stall_watches(resource, True))

    def resume_watches(self, resource: str) -> None:
        """Let the watches of ``resource`` flow again (held-back events go through)."""
        self._run(self._stall_watches(resource, False))

    def partition(self, on: bool) -> None:
        """Refuse new connections while on; turning it on cuts the live ones."""
        self._run(self._partition(on))

    def corrupt_watches(self, how: Corruption) -> int:
        """Damage each live watch stream at its next chunk; return how many were marked.

        The damage happens when the next event arrives on that watch; :attr:`stats` counts it.
        """
        return self._run(self._corrupt(how))

    def live_watches(self) -> int:
        return self._run(self._live_watches())

    # -- internals (on the proxy's loop) ---------------------------------------------------------

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout=30)

    async def _start(self) -> None:
        self._flowing = asyncio.Event()
        self._flowing.set()
        self._stalled_watches: set[str] = set()
        self._watches_resumed = asyncio.Event()
        pair = self._ca.issue("chaos-proxy", ip_addresses=("127.0.0.1",), server=True)
        cert, key = self._dir / "proxy.crt", self._dir / "proxy.key"
        cert.write_bytes(pair.cert_pem)
        key.touch(0o600)
        key.write_bytes(pair.key_pem)
        server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        server_ctx.load_cert_chain(str(cert), str(key))
        server_ctx.set_alpn_protocols(["http/1.1"])
        self._upstream_ctx = self._upstream.ssl_context()
        self._upstream_ctx.set_alpn_protocols(["http/1.1"])
        self._server = await asyncio.start_server(
            self._handle, "127.0.0.1", 0, ssl=server_ctx, ssl_handshake_timeout=10
        )
        self.port = self._server.sockets[0].getsockname()[1]

    async def _close(self) -> None:
        await self._set_flowing(True)
        for resource in list(self._stalled_watches):
            await self._stall_watches(resource, False)
        await self._cut()
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 5)

    async def _cut(self) -> int:
        live = list(self._conns)
        for conn in live:
            conn.abort()
        self.stats.cut += len(live)
        return len(live)

    async def _set_flowing(self, on: bool) -> None:
        assert self._flowing is not None
        if on:
            self._flowing.set()
        else:
            self._flowing.clear()

    async def _stall_watches(self, resource: str, on: bool) -> None:
        if on:
            self._stalled_watches.add(resource)
        else:
            self._stalled_watches.discard(resource)
            self._watches_resumed.set()
            self._watches_resumed = asyncio.Event()

    async def _partition(self, on: bool) -> None:
        self._partitioned = on
        if on:
            await self._cut()

    async def _corrupt(self, how: Corruption) -> int:
        marked = 0
        for conn in self._conns:
            if conn.in_watch:
                conn.pending = how
                marked += 1
        return marked

    async def _live_watches(self) -> int:
        return sum(1 for conn in self._conns if conn.in_watch)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self._partitioned:
            writer.transport.abort()
            return
        try:
            up_reader, up_writer = await asyncio.open_connection(
                self._host, self._port, ssl=self._upstream_ctx, server_hostname=self._host
            )
        except OSError:
            writer.transport.abort()
            return
        conn = _Conn(writer, up_writer)
        self.stats.connections += 1
        self._conns.add(conn)
        try:
            await asyncio.gather(self._requests(conn, reader), self._responses(conn, up_reader))
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            pass
        finally:
            self._conns.discard(conn)
            conn.abort()

    async def _send(self, writer: asyncio.StreamWriter, data: bytes) -> None:
        assert self._flowing is not None
        await self._flowing.wait()
        if writer.transport.is_closing():
            raise ConnectionResetError("peer gone")
        writer.write(data)
        await writer.drain()

    async def _requests(self, conn: _Conn, reader: asyncio.StreamReader) -> None:
        """Client -> apiserver: forward each request, noting its method and whether it watches."""
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            method, target = head.split(b" ", 2)[:2]
            query = target.partition(b"?")[2].split(b"&")
            watch = b"watch=true" in query or b"watch=1" in query
            what = _describe(method.decode(), target.decode(), watch)
            conn.requests.append((method.decode(), what, watch))
            self.stats.requests[what] += 1
            self.stats.timeline.append((time.monotonic(), what))
            conn.request_seen.set()
            await self._send(conn.upstream, head)
            await self._body(head, reader, conn.upstream, conn=None)

    async def _responses(self, conn: _Conn, reader: asyncio.StreamReader) -> None:
        """Apiserver -> client: forward each response; damage watch streams when told to."""
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            status = int(head.split(b" ", 2)[1])
            if 100 <= status < 200:
                await self._send(conn.client, head)
                continue
            while not conn.requests:
                conn.request_seen.clear()
                await conn.request_seen.wait()
            method, what, watch = conn.requests.popleft()
            await self._send(conn.client, head)
            if method == "HEAD" or status in (204, 304):
                continue
            if watch and status == 200:
                conn.in_watch = True
                conn.watching = what.partition(" ")[2]
                self.stats.watches += 1
            try:
                await self._body(head, reader, conn.client, conn=conn if watch else None)
            finally:
                conn.in_watch = False
                conn.watching = ""

    async def _body(
        self,
        head: bytes,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        conn: _Conn | None,
    ) -> None:
        headers = _headers(head)
        if "chunked" in headers.get("transfer-encoding", ""):
            await self._chunks(reader, writer, conn)
        elif "content-length" in headers:
            left = int(headers["content-length"])
            while left:
                data = await reader.read(min(left, 65536))
                if not data:
                    raise asyncio.IncompleteReadError(b"", left)
                left -= len(data)
                await self._send(writer, data)
        elif head.startswith(b"HTTP/"):
            # A response without framing runs until the server closes the connection.
            while data := await reader.read(65536):
                await self._send(writer, data)
            raise ConnectionResetError("response ended the connection")

    async def _chunks(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, conn: _Conn | None
    ) -> None:
        while True:
            size_line = await reader.readuntil(b"\r\n")
            size = int(size_line.split(b";")[0], 16)
            if size == 0:
                trailer = size_line
                while True:
                    line = await reader.readuntil(b"\r\n")
                    trailer += line
                    if line == b"\r\n":
                        break
                await self._send(writer, trailer)
                return
            chunk = await reader.readexactly(size + 2)
            while conn is not None and conn.watching in self._stalled_watches:
                await self._watches_resumed.wait()
            how = conn.pending if conn is not None else None
            if conn is not None and how is not None:
                conn.pending = None
                if how == "garbage":
                    self.stats.garbage += 1
                    await self._send(writer, b"%x\r\n%s\r\n" % (len(GARBAGE), GARBAGE))
                else:
                    self.stats.truncated += 1
                    await self._send(writer, size_line + chunk[: max(1, size // 2)])
                    raise ConnectionResetError("truncated on purpose")
            await self._send(writer, size_line + chunk)


def _describe(method: str, target: str, watch: bool) -> str:
    """``"PATCH foos/status"`` for ``PATCH /apis/.../namespaces/ns/foos/foo-1/status``."""
    parts = target.partition("?")[0].strip("/").split("/")
    if "namespaces" in parts[:-1] and parts.index("namespaces") + 2 < len(parts):
        parts = parts[parts.index("namespaces") + 2 :]
    else:
        parts = parts[3:] if parts[:1] == ["apis"] else parts[2:]
    resource = "/".join(parts[:1] + parts[2:3])
    return f"{'WATCH' if watch else method} {resource}"


def _headers(head: bytes) -> dict[str, str]:
    found: dict[str, str] = {}
    for line in head.split(b"\r\n")[1:]:
        name, sep, value = line.partition(b":")
        if sep:
            found[name.strip().lower().decode()] = value.strip().lower().decode()
    return found
