"""A small asyncio HTTP server for health probes and Prometheus metrics.

Built on :func:`asyncio.start_server` and the standard library only: it answers ``GET`` (and
``HEAD``) with ``Connection: close``, which is all kubelet probes and Prometheus scrapes need.

- ``/healthz`` and ``/readyz``: 200 ``ok`` when every named check passes, else 503 with one
  ``[-]name failed: reason`` line per failing check (``[+]name ok`` for passing ones with
  ``?verbose``); ``/healthz/<name>`` runs one check; ``?exclude=<name>`` skips one.
- ``/metrics``: the registry in Prometheus text format (needs ``kubectrl[metrics]``).

Bind addresses are controller-runtime's: ``":8080"`` (all interfaces), ``"127.0.0.1:8081"``,
port ``0`` for a free port, and ``"0"`` (or ``""``) to disable the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import urllib.parse
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

__all__ = ["Checker", "HTTPServer", "parse_bind_address", "ping"]

log = logging.getLogger("kubectrl.runtime.server")

#: A health check: returns (or resolves) when healthy, raises when not; the exception's message
#: is the reason shown. ``def`` or ``async def``.
Checker = Callable[[], "Awaitable[None] | None"]


def ping() -> None:
    """The check that always passes (controller-runtime's ``healthz.Ping``)."""


def parse_bind_address(address: str) -> tuple[str, int] | None:
    """``":8080"`` -> ``("", 8080)``; ``"0"`` or ``""`` -> ``None`` (disabled).

    Example::

        >>> parse_bind_address("127.0.0.1:0"), parse_bind_address("0")
        (('127.0.0.1', 0), None)
    """
    if address in ("", "0"):
        return None
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"bind address must be host:port, :port or '0', got {address!r}")
    return host.strip("[]"), int(port)


_REASONS = {200: "OK", 404: "Not Found", 405: "Method Not Allowed", 500: "Internal Server Error"}
_REASONS[503] = "Service Unavailable"
_REASONS[400] = "Bad Request"


class HTTPServer:
    """Serves ``/healthz``, ``/readyz`` (named checks) and ``/metrics`` on one address.

    Guarantees: a check that raises or hangs past ``check_timeout`` fails only its probe; the
    server never crashes on a bad request. Caveats: HTTP/1.0-style (one request per connection),
    no TLS; meant for probes and scrapes on a trusted network.

    Example::

        server = HTTPServer(":8081", registry=registry)
        server.add_readyz_check("informers", lambda: None if synced() else fail())
        await server.start()
        ...
        await server.stop()
    """

    def __init__(
        self,
        bind_address: str,
        *,
        registry: CollectorRegistry | None = None,
        serve_probes: bool = True,
        check_timeout: float = 10.0,
    ) -> None:
        self._address = parse_bind_address(bind_address)
        self._registry = registry
        self._serve_probes = serve_probes
        self._check_timeout = check_timeout
        self._checks: dict[str, dict[str, Checker]] = {"healthz": {}, "readyz": {}}
        self._server: asyncio.base_events.Server | None = None

    @property
    def enabled(self) -> bool:
        """``False`` when the bind address was ``"0"``."""
        return self._address is not None

    @property
    def port(self) -> int | None:
        """The bound port (useful with port 0), once started."""
        if self._server is None or not self._server.sockets:
            return None
        return int(self._server.sockets[0].getsockname()[1])

    def add_healthz_check(self, name: str, check: Checker) -> None:
        """Add a liveness check named ``name`` (names are unique per endpoint)."""
        self._add("healthz", name, check)

    def add_readyz_check(self, name: str, check: Checker) -> None:
        """Add a readiness check named ``name``."""
        self._add("readyz", name, check)

    def _add(self, endpoint: str, name: str, check: Checker) -> None:
        if not name or "/" in name:
            raise ValueError(f"check name must be non-empty without '/', got {name!r}")
        if name in self._checks[endpoint]:
            raise ValueError(f"{endpoint} check {name!r} is already registered")
        self._checks[endpoint][name] = check

    async def start(self) -> None:
        """Bind and start serving (no-op when disabled); returns once listening."""
        if self._address is None or self._server is not None:
            return
        host, port = self._address
        self._server = await asyncio.start_server(self._handle, host or None, port)
        log.info("serving", extra={"address": f"{host}:{self.port}"})

    async def stop(self) -> None:
        """Stop listening and close the server."""
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            status, body, content_type, head = await self._respond(reader)
        except Exception:
            log.exception("error answering request")
            status, body, content_type, head = 500, b"internal error\n", "text/plain", False
        try:
            reason = _REASONS.get(status, "")
            header = (
                f"HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\n"
                f"Content-Length: {len(body)}\r\nX-Content-Type-Options: nosniff\r\n"
                "Connection: close\r\n\r\n"
            )
            writer.write(header.encode("ascii") + (b"" if head else body))
            await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError, OSError):
                await writer.wait_closed()

    async def _respond(self, reader: asyncio.StreamReader) -> tuple[int, bytes, str, bool]:
        text = "text/plain; charset=utf-8"
        try:
            request_line = await asyncio.wait_for(reader.readline(), 10)
            if not request_line.strip():
                return 400, b"bad request\n", text, False
            while True:  # skip the headers
                line = await asyncio.wait_for(reader.readline(), 10)
                if line in (b"\r\n", b"\n", b""):
                    break
        except (asyncio.TimeoutError, ValueError, ConnectionError):
            return 400, b"bad request\n", text, False
        parts = request_line.decode("latin-1").split()
        if len(parts) < 2:
            return 400, b"bad request\n", text, False
        method, target = parts[0], parts[1]
        if method not in ("GET", "HEAD"):
            return 405, b"method not allowed\n", text, False
        head = method == "HEAD"
        url = urllib.parse.urlsplit(target)
        query = urllib.parse.parse_qs(url.query, keep_blank_values=True)
        path = url.path.rstrip("/") or "/"
        if path == "/metrics" and self._registry is not None:
            from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

            return 200, generate_latest(self._registry), CONTENT_TYPE_LATEST, head
        endpoint, _, single = path.lstrip("/").partition("/")
        if self._serve_probes and endpoint in self._checks:
            status, body = await self._run_checks(endpoint, single, query)
            return status, body, text, head
        return 404, b"404 page not found\n", text, head

    async def _run_checks(
        self, endpoint: str, single: str, query: dict[str, list[str]]
    ) -> tuple[int, bytes]:
        checks = self._checks[endpoint]
        if single:
            if single not in checks:
                return 404, f"no such {endpoint} check: {single}\n".encode()
            selected = {single: checks[single]}
        else:
            excluded = set(query.get("exclude", []))
            selected = {n: c for n, c in sorted(checks.items()) if n not in excluded}
        results = await asyncio.gather(*(self._check(c) for c in selected.values()))
        failed = False
        lines = []
        for name, error in zip(selected, results, strict=True):
            if error is None:
                lines.append(f"[+]{name} ok")
            else:
                failed = True
                lines.append(f"[-]{name} failed: {error}")
        verbose = "verbose" in query
        if failed:
            lines.append(f"{endpoint} check failed")
            return 503, ("\n".join(lines) + "\n").encode()
        if verbose:
            lines.append(f"{endpoint} check passed")
            return 200, ("\n".join(lines) + "\n").encode()
        return 200, b"ok"

    async def _check(self, check: Checker) -> str | None:
        try:
            result = check()
            if inspect.isawaitable(result):
                await asyncio.wait_for(result, self._check_timeout)
        except asyncio.TimeoutError:
            return f"timed out after {self._check_timeout} s"
        except Exception as err:
            return str(err) or type(err).__name__
        return None

    def __repr__(self) -> str:
        return f"HTTPServer({self._address!r}, port={self.port})"
