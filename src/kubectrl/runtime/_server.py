"""A small asyncio HTTP server for health probes and Prometheus metrics.

Built on :func:`asyncio.start_server` and the standard library only: it answers ``GET`` (and
``HEAD``) with ``Connection: close``, which is all kubelet probes and Prometheus scrapes need.

- ``/healthz`` and ``/readyz``: 200 ``ok`` when every named check passes, else 503 with one
  ``[-]name failed: reason`` line per failing check (``[+]name ok`` for passing ones with
  ``?verbose``); ``/healthz/<name>`` runs one check; ``?exclude=<name>`` skips one.
- ``/metrics``: the registry in Prometheus text format (needs ``kubectrl[metrics]``).

Bind addresses are controller-runtime's: ``":8080"`` (all interfaces), ``"127.0.0.1:8081"``,
port ``0`` for a free port, and ``"0"`` (or ``""``) to disable the server.

Secure serving (controller-runtime's ``metricsserver.Options{SecureServing: true}`` with
``filters.WithAuthenticationAndAuthorization``): the server speaks TLS (``tls=``, see
:func:`metrics_tls_context`) and every request passes a ``request_filter`` first;
:class:`KubernetesAuthFilter` is the one the Manager uses: a bearer token is authenticated with a
``TokenReview`` and the user authorized with a ``SubjectAccessReview`` for the non-resource URL
and verb of the request (401 without a valid token, 403 when not allowed).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import hashlib
import inspect
import ipaddress
import logging
import os
import socket
import ssl
import tempfile
import urllib.parse
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kubectrl._internal.aio import wait_within
from kubectrl._internal.clock import Clock, RealClock
from kubectrl.errors import ConfigError, KubectrlError

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

    from kubectrl.client import AsyncClient

__all__ = [
    "Checker",
    "HTTPServer",
    "KubernetesAuthFilter",
    "RequestFilter",
    "metrics_tls_context",
    "parse_bind_address",
    "ping",
]

log = logging.getLogger("kubectrl.runtime.server")

#: A health check: returns (or resolves) when healthy, raises when not; the exception's message
#: is the reason shown. ``def`` or ``async def``.
Checker = Callable[[], "Awaitable[None] | None"]

#: Decides on a request before it is served: ``(method, path, headers)`` (header names lower
#: case) -> ``None`` to serve it, or ``(status, body)`` to answer that instead.
RequestFilter = Callable[[str, str, Mapping[str, str]], Awaitable["tuple[int, bytes] | None"]]


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
_REASONS[401] = "Unauthorized"
_REASONS[403] = "Forbidden"

#: At most this many request headers (and bytes per line) are read; more is a bad request.
_MAX_HEADERS = 100


class HTTPServer:
    """Serves ``/healthz``, ``/readyz`` (named checks) and ``/metrics`` on one address.

    Guarantees: a check that raises or hangs past ``check_timeout`` fails only its probe; the
    server never crashes on a bad request. With ``tls`` it serves HTTPS only; with
    ``request_filter`` every request is first passed to it (authentication and authorization,
    see :class:`KubernetesAuthFilter`). Caveats: HTTP/1.0-style (one request per connection).
    Without ``tls`` and a filter, anyone who can reach the address can read it: bind such a
    server to loopback unless the network is trusted.

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
        tls: ssl.SSLContext | None = None,
        request_filter: RequestFilter | None = None,
    ) -> None:
        self._address = parse_bind_address(bind_address)
        self._registry = registry
        self._serve_probes = serve_probes
        self._check_timeout = check_timeout
        self._tls = tls
        self._filter = request_filter
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
        if self._tls is not None:
            self._server = await asyncio.start_server(
                self._handle, host or None, port, ssl=self._tls, ssl_handshake_timeout=10
            )
        else:
            self._server = await asyncio.start_server(self._handle, host or None, port)
        scheme = "https" if self._tls is not None else "http"
        log.info(
            "serving %s on %s:%s",
            scheme,
            host or "*",
            self.port,
            extra={"address": f"{host}:{self.port}", "scheme": scheme},
        )

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
        except (ConnectionError, OSError, ssl.SSLError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError, OSError):
                await writer.wait_closed()

    async def _respond(self, reader: asyncio.StreamReader) -> tuple[int, bytes, str, bool]:
        text = "text/plain; charset=utf-8"
        try:
            request_line = await wait_within(reader.readline(), 10)
            if not request_line.strip():
                return 400, b"bad request\n", text, False
            headers: dict[str, str] = {}
            for _ in range(_MAX_HEADERS + 1):
                line = await wait_within(reader.readline(), 10)
                if line in (b"\r\n", b"\n", b""):
                    break
                name, sep, value = line.decode("latin-1").partition(":")
                if sep:
                    headers[name.strip().lower()] = value.strip()
            else:
                return 400, b"too many headers\n", text, False
        except (asyncio.TimeoutError, ValueError, ConnectionError, ssl.SSLError):
            return 400, b"bad request\n", text, False
        parts = request_line.decode("latin-1").split()
        if len(parts) < 2:
            return 400, b"bad request\n", text, False
        method, target = parts[0], parts[1]
        if method not in ("GET", "HEAD"):
            return 405, b"method not allowed\n", text, False
        head = method == "HEAD"
        url = urllib.parse.urlsplit(target)
        if self._filter is not None:
            verdict = await self._filter(method, url.path, headers)
            if verdict is not None:
                return verdict[0], verdict[1], text, head
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
                await wait_within(result, self._check_timeout)
        except asyncio.TimeoutError:
            return f"timed out after {self._check_timeout} s"
        except Exception as err:
            return str(err) or type(err).__name__
        return None

    def __repr__(self) -> str:
        return f"HTTPServer({self._address!r}, port={self.port})"


class KubernetesAuthFilter:
    """A :data:`RequestFilter` that lets in only users the cluster authorizes for the URL.

    controller-runtime's ``filters.WithAuthenticationAndAuthorization``: the bearer token of the
    ``Authorization`` header is checked with a ``TokenReview`` (no token or an invalid one: 401);
    the user it names (with groups, uid and extra) is checked with a ``SubjectAccessReview`` for
    the request's non-resource URL (the path, e.g. ``/metrics``) and verb (the method, lower
    case: ``get``): denied is 403. An API error is 500 and logged. Answers are cached as
    upstream: token reviews ``token_ttl`` (60 s), allowed ``allow_ttl`` (300 s), denied
    ``deny_ttl`` (30 s), keyed by a SHA-256 of the token, never the token itself.

    The manager's own identity needs ``create`` on ``tokenreviews.authentication.k8s.io`` and
    ``subjectaccessreviews.authorization.k8s.io``; a scraper needs a ClusterRole with
    ``nonResourceURLs: ["/metrics"]``, ``verbs: ["get"]``.

    Example::

        server = HTTPServer(":8443", registry=registry, serve_probes=False,
                            tls=metrics_tls_context(), request_filter=KubernetesAuthFilter(client))
    """

    def __init__(
        self,
        client: AsyncClient,
        *,
        token_ttl: float = 60.0,
        allow_ttl: float = 300.0,
        deny_ttl: float = 30.0,
        clock: Clock | None = None,
    ) -> None:
        self._client = client
        self._token_ttl = token_ttl
        self._allow_ttl = allow_ttl
        self._deny_ttl = deny_ttl
        self._clock: Clock = clock if clock is not None else RealClock()
        self._users: dict[str, tuple[float, dict[str, Any] | None]] = {}
        self._decisions: dict[tuple[str, str, str], tuple[float, bool]] = {}

    async def __call__(
        self, method: str, path: str, headers: Mapping[str, str]
    ) -> tuple[int, bytes] | None:
        scheme, _, token = headers.get("authorization", "").partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            return 401, b"Unauthorized\n"
        try:
            user = await self._authenticate(token)
            if user is None:
                return 401, b"Unauthorized\n"
            name = str(user.get("username", ""))
            verb = method.lower()
            if not await self._authorize(user, path, verb):
                log.debug(
                    "metrics request denied: user %s may not %s %s",
                    name,
                    verb,
                    path,
                    extra={"user": name, "verb": verb, "path": path},
                )
                return 403, f"Authorization denied for user {name}\n".encode()
        except KubectrlError as err:
            log.error(
                "metrics request: authentication or authorization failed: %s: %s",
                type(err).__name__,
                err,
                extra={"path": path, "error": f"{type(err).__name__}: {err}"},
            )
            return 500, b"Authentication or authorization failed\n"
        return None

    def _prune(self, now: float) -> None:
        if len(self._users) > 1024:
            self._users = {k: v for k, v in self._users.items() if v[0] > now}
        if len(self._decisions) > 1024:
            self._decisions = {k: v for k, v in self._decisions.items() if v[0] > now}

    async def _authenticate(self, token: str) -> dict[str, Any] | None:
        key = hashlib.sha256(token.encode()).hexdigest()
        now = self._clock.now()
        cached = self._users.get(key)
        if cached is not None and cached[0] > now:
            return cached[1]
        review = await self._client.create(
            {
                "apiVersion": "authentication.k8s.io/v1",
                "kind": "TokenReview",
                "spec": {"token": token},
            }
        )
        status = review.get("status") or {}
        user = dict(status.get("user") or {}) if status.get("authenticated") else None
        self._prune(now)
        self._users[key] = (now + self._token_ttl, user)
        return user

    async def _authorize(self, user: Mapping[str, Any], path: str, verb: str) -> bool:
        name = str(user.get("username", ""))
        key = (f"{name}\x00{user.get('uid', '')}\x00{sorted(user.get('groups') or [])}", path, verb)
        now = self._clock.now()
        cached = self._decisions.get(key)
        if cached is not None and cached[0] > now:
            return cached[1]
        spec: dict[str, Any] = {
            "user": name,
            "groups": list(user.get("groups") or []),
            "nonResourceAttributes": {"path": path, "verb": verb},
        }
        if user.get("uid"):
            spec["uid"] = user["uid"]
        if user.get("extra"):
            spec["extra"] = user["extra"]
        review = await self._client.create(
            {
                "apiVersion": "authorization.k8s.io/v1",
                "kind": "SubjectAccessReview",
                "spec": spec,
            }
        )
        allowed = bool((review.get("status") or {}).get("allowed"))
        self._prune(now)
        self._decisions[key] = (now + (self._allow_ttl if allowed else self._deny_ttl), allowed)
        return allowed

    def __repr__(self) -> str:
        return f"KubernetesAuthFilter(cached_users={len(self._users)})"


def metrics_tls_context(
    cert_dir: str | os.PathLike[str] | None = None,
    *,
    cert_name: str = "tls.crt",
    key_name: str = "tls.key",
) -> ssl.SSLContext:
    """A server TLS context: the certificate in ``cert_dir``, or a fresh self-signed one.

    controller-runtime's metrics server: ``CertDir`` with ``tls.crt``/``tls.key`` (e.g. a
    cert-manager Secret mounted there); without one, a self-signed certificate for
    ``localhost``, ``127.0.0.1`` and this host's name, made in memory at start (the key is
    written to a private temporary directory only for :mod:`ssl` to load it, then deleted).
    TLS 1.2 at least. Raises :class:`~kubectrl.errors.ConfigError` naming the file when the
    pair cannot be loaded, or when the self-signed mode lacks the ``cryptography`` package.

    Example::

        context = metrics_tls_context("/tmp/k8s-metrics-server/serving-certs")
    """
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    if cert_dir:
        cert, key = Path(cert_dir) / cert_name, Path(cert_dir) / key_name
        try:
            context.load_cert_chain(cert, key)
        except (OSError, ssl.SSLError) as err:
            raise ConfigError(
                f"metrics TLS: cannot load certificate {cert} with key {key}: {err}"
            ) from err
        return context
    cert_pem, key_pem = _self_signed()
    with tempfile.TemporaryDirectory(prefix="kubectrl-metrics-") as tmp:
        cert_file, key_file = Path(tmp) / "tls.crt", Path(tmp) / "tls.key"
        cert_file.write_bytes(cert_pem)
        fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(key_pem)
        context.load_cert_chain(cert_file, key_file)
    return context


def _self_signed() -> tuple[bytes, bytes]:
    try:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
    except ImportError as err:
        raise ConfigError(
            "metrics TLS: a self-signed certificate needs the 'cryptography' package "
            "(pip install cryptography), or give a cert_dir with tls.crt and tls.key"
        ) from err
    key = ec.generate_private_key(ec.SECP256R1())
    host = socket.gethostname()
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{host}-metrics")])
    now = datetime.datetime.now(datetime.timezone.utc)
    alt_names: list[x509.GeneralName] = [
        x509.DNSName("localhost"),
        x509.DNSName(host),
        x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
        x509.IPAddress(ipaddress.ip_address("::1")),
    ]
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=365))
        .add_extension(x509.SubjectAlternativeName(alt_names), critical=False)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    return cert.public_bytes(serialization.Encoding.PEM), key_pem
