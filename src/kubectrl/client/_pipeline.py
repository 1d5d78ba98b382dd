"""The request pipeline: every step an :class:`~kubectrl.client.AsyncClient` request takes
between a verb and the transport, in order, in one place, with what each step needs.

:meth:`Pipeline.send` (every verb's request)::

    retry          the attempt runs once; a failure goes to the config's RetryPolicy
                   (kubectrl.client._retry), which decides whether and when to run it again
      throttle     a token of the TokenBucketRateLimiter (20 QPS, burst 30 by default)
      transmit
        authorize  the credential source's Authorization header (the sources are below)
        send       one exchange through the transport seam
                   (kubectrl.client._transport.Transport): the answer read whole under the
                   body limit; a 401 asks the credentials to refresh and sends once more;
                   a wire failure becomes a typed error
      warnings     the server's Warning headers to the config's WarningHandler
      check_status a status of 400 or more becomes its kubectrl.errors.APIError

The verb then decodes the answer (:func:`json_body`). :meth:`Pipeline.open_stream` (a watch, a
followed log) takes the same steps once, without retries, on a second transport of unbounded
connections, bounded by ``watch_open_timeout`` until the answer's head arrives.

The transport is built from the config once: the client's own
:class:`~kubectrl.client._fast_transport.FastTransport` on a direct connection, or
:class:`~kubectrl.client._transport.HttpxTransport` over the httpx transport the config names
(``ClientConfig.transport``) or over httpx's own behind a proxy.

The credential sources the auth step asks are here (a static token, a token file, basic auth,
the auth-provider loader; an exec plugin's is :class:`kubectrl.client._exec.ExecCredentials`),
and so is :class:`KubeAuth`, which applies one to an httpx client of one's own
(:meth:`ClientConfig.httpx_client <kubectrl.client.ClientConfig.httpx_client>`).

JSON is decoded here too (:func:`loads`, the answers' and the watch lines'): with ``orjson``
when it is installed (``pip install kubectrl[speedups]``: it decodes faster and keeps one copy
of each repeated object key for the whole process, so a cache of thousands of objects takes
less memory), else the standard library. The results are the same for everything an API server
sends (its integers fit in 64 bits); whatever ``orjson`` refuses (``NaN``, invalid bytes) goes
to :func:`json.loads`, which then decodes it or raises its own error. A large document
(:data:`GC_PAUSE_BYTES` or more: a list response, typically an informer's initial list) is
decoded with the cyclic garbage collector paused: decoding allocates one tracked container per
JSON object and array, and the collector's full collections walk the whole heap, the part of the
list decoded so far included, so their cost per decoded object grew with the list (measured:
8 us per ConfigMap of GC at 10,000 ConfigMaps, 19 us at 50,000 and 100,000, against 5 us for the
decoding itself). A decoded document holds no reference cycles, so a collection during the
decode cannot free anything it allocated.
"""

from __future__ import annotations

import asyncio
import base64
import gc
import importlib
import json
import logging
import os
import re
import threading
import time
import urllib.parse
import weakref
from collections.abc import AsyncGenerator, Awaitable, Callable, Generator, Mapping
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

import httpx

from kubectrl._internal.aio import wait_within
from kubectrl._internal.clock import Clock, RealClock
from kubectrl.client._fast_transport import FastTransport, ResponseRefusedError, set_cookie_in
from kubectrl.client._retry import retry_after
from kubectrl.client._transport import HttpxTransport, Transport, read_content
from kubectrl.client._warnings import handle_warnings
from kubectrl.errors import (
    APIConnectionError,
    ConfigError,
    MalformedResponseError,
    RequestTimeoutError,
    TransportError,
    api_error_from_response,
)

if TYPE_CHECKING:
    import ssl

    from kubectrl.client._retry import RetryPolicy
    from kubectrl.client._warnings import WarningHandler

__all__ = [
    "GC_PAUSE_BYTES",
    "BasicAuthCredentials",
    "CredentialSource",
    "KubeAuth",
    "LoaderCredentials",
    "Pipeline",
    "Settings",
    "StaticTokenCredentials",
    "TokenBucketRateLimiter",
    "TokenFileCredentials",
    "json_body",
    "loads",
    "wire_error",
]

log = logging.getLogger("kubectrl.client")

T = TypeVar("T")

#: What a transport raises for what went wrong on the wire (a limit refused is a
#: ``RemoteProtocolError``, a transport error); the total timeout of an httpx transport's answer
#: is an ``asyncio.TimeoutError``.
_WIRE_ERRORS = (httpx.TransportError, httpx.DecodingError, asyncio.TimeoutError)

# A path that URL parsing leaves as it is: unreserved characters, sub-delimiters, ":", "@" and
# "/" (RFC 3986 pchar, without "%": an escape is left to httpx to check). Anything else is
# quoted as httpx.URL quotes it.
_PLAIN_PATH = re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=:@/]*\Z")


# ------------------------------------------------------------------------------ throttle


class TokenBucketRateLimiter:
    """A token bucket: ``qps`` tokens per second, at most ``burst`` saved up: the throttle of
    every request, watches included (controller-runtime's default client allows 20 queries per
    second with bursts of 30; client-go's own default is 5/10).

    Guarantees: over any interval ``t`` at most ``burst + qps * t`` requests pass; waiters are
    served in the order they asked (each reserves its slot at once, like
    ``golang.org/x/time/rate``). Starts full, as client-go's does. Time comes from ``clock``, so
    tests drive it with :class:`~kubectrl.FakeClock`.

    Caveats: not thread-safe; each client uses it from its own event loop.

    Example::

        >>> from kubectrl import FakeClock
        >>> limiter = TokenBucketRateLimiter(qps=1, burst=2, clock=FakeClock())
        >>> [limiter.reserve() for _ in range(3)]
        [0.0, 0.0, 1.0]
    """

    def __init__(self, qps: float = 20.0, burst: int = 30, *, clock: Clock | None = None) -> None:
        if qps <= 0:
            raise ValueError(f"qps must be > 0 (use rate_limit=None to disable), got {qps}")
        if burst < 1:
            raise ValueError(f"burst must be >= 1, got {burst}")
        self.qps = float(qps)
        self.burst = int(burst)
        self._clock = clock or RealClock()
        # The machine's clock is read directly (RealClock.now is time.monotonic), once a request.
        self._now: Callable[[], float] = (
            time.monotonic if type(self._clock) is RealClock else self._clock.now
        )
        self._tokens = float(burst)
        self._last = self._now()

    def _refill(self) -> float:
        now = self._now()
        elapsed = max(0.0, now - self._last)
        self._last = now
        self._tokens = min(float(self.burst), self._tokens + elapsed * self.qps)
        return now

    def reserve(self) -> float:
        """Take one token now; return how many seconds the caller must wait before using it."""
        self._refill()
        self._tokens -= 1.0
        return 0.0 if self._tokens >= 0 else -self._tokens / self.qps

    def try_acquire(self) -> bool:
        """Take a token if one is available now, without waiting. ``*_nowait`` in spirit."""
        self._refill()
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return True
        return False

    async def acquire(self) -> None:
        """Wait (on the clock) until a token is available, then take it."""
        delay = self.reserve()
        if delay > 0:
            await self._clock.sleep(delay)

    @property
    def tokens(self) -> float:
        """Tokens available now (negative while callers are queued)."""
        self._refill()
        return self._tokens

    def __repr__(self) -> str:
        return f"TokenBucketRateLimiter(qps={self.qps}, burst={self.burst})"


# ------------------------------------------------------------------------------ authorize
#
# A credential source produces the ``Authorization`` header value for each request and knows how
# to refresh itself: a static token, a token file re-read when it changes (in-cluster
# service-account token rotation, kubeconfig ``tokenFile``), basic auth, an exec credential
# plugin (:class:`~kubectrl.client._exec.ExecCredentials`), or the ``kubernetes`` package's
# kubeconfig loader for the deprecated auth providers. None of these objects reveal a secret in
# ``repr``/``str``; the header value only ever goes into the outgoing request.


@runtime_checkable
class CredentialSource(Protocol):
    """Where the ``Authorization`` header comes from: what ``ClientConfig(credentials=...)``
    takes.

    The kubeconfig loaders make one from a ``token``, a ``tokenFile``, an exec plugin, an auth
    provider or basic auth; give your own for credentials they do not know (a vault, a cloud
    SDK). :meth:`authorization` is asked before every request (cache the value and refresh it
    when it is due); :meth:`invalidate` is asked after a 401, and when it returns True the
    request is sent once more with a fresh :meth:`authorization`. ``blocking`` is True when
    :meth:`authorization` may run a subprocess or network call, so the async transport calls it
    in a worker thread. Keep the secret out of ``repr``.

    Example::

        >>> from kubectrl.client import ClientConfig
        >>> class VaultToken:
        ...     blocking = True                      # reads the vault over the network
        ...     def authorization(self) -> str | None:
        ...         return "Bearer " + "token-from-the-vault"
        ...     def invalidate(self) -> bool:
        ...         return True                      # a 401: read the vault again
        ...     def __repr__(self) -> str:
        ...         return "VaultToken(<redacted>)"
        >>> config = ClientConfig(server="https://127.0.0.1:6443", credentials=VaultToken())
        >>> isinstance(config.credentials, CredentialSource)
        True
    """

    blocking: bool

    def authorization(self) -> str | None:
        """The header value to send now (refreshing first if due), or ``None``."""
        ...

    def invalidate(self) -> bool:
        """Forget cached material after a 401; True if a retry could use new credentials."""
        ...


class StaticTokenCredentials:
    """A bearer token that never changes (kubeconfig ``token``)."""

    blocking = False

    def __init__(self, token: str) -> None:
        self._header = f"Bearer {token.strip()}"

    def authorization(self) -> str | None:
        return self._header

    def invalidate(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "StaticTokenCredentials(token=<redacted>)"


class BasicAuthCredentials:
    """Username and password (kubeconfig ``username``/``password``; deprecated upstream)."""

    blocking = False

    def __init__(self, username: str, password: str) -> None:
        raw = f"{username}:{password}".encode()
        self._header = "Basic " + base64.b64encode(raw).decode("ascii")
        self._username = username

    def authorization(self) -> str | None:
        return self._header

    def invalidate(self) -> bool:
        return False

    def __repr__(self) -> str:
        return f"BasicAuthCredentials(username={self._username!r}, password=<redacted>)"


class TokenFileCredentials:
    """A bearer token read from a file and re-read whenever the file changes.

    Projected service-account tokens are rotated by the kubelet (hourly by default), which
    replaces the file through a symlink swap; the file's inode, size and mtime are compared on
    every request (one ``stat``), so a rotated token is used from the next request on. A 401 also
    forces a re-read.
    """

    blocking = False

    def __init__(self, path: str) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._stamp: tuple[int, int, int] | None = None
        self._header: str | None = None

    def authorization(self) -> str | None:
        try:
            st = os.stat(self.path)
        except OSError as err:
            if self._header is not None:
                return self._header  # keep the last good token through a rotation's gap
            raise ConfigError(f"cannot read token file: {err.strerror}", path=self.path) from None
        stamp = (st.st_ino, st.st_size, st.st_mtime_ns)
        with self._lock:
            if stamp != self._stamp or self._header is None:
                with open(self.path, encoding="utf-8") as f:
                    token = f.read().strip()
                if not token:
                    raise ConfigError("token file is empty", path=self.path)
                self._header = f"Bearer {token}"
                self._stamp = stamp
            return self._header

    def invalidate(self) -> bool:
        with self._lock:
            self._stamp = None
        return True

    def __repr__(self) -> str:
        return f"TokenFileCredentials(path={self.path!r})"


class LoaderCredentials:
    """Credentials kept by the ``kubernetes`` package's kubeconfig loader (auth-provider only).

    Before each request the loader's refresh hook runs (it refreshes an expiring OIDC token).
    After a 401 the whole authentication is loaded again.
    """

    blocking = True

    def __init__(self, loader: Any, configuration: Any, describe: str) -> None:
        self._loader = loader
        self._configuration = configuration
        self._describe = describe
        self._lock = threading.Lock()

    def authorization(self) -> str | None:
        with self._lock:
            hook = getattr(self._configuration, "refresh_api_key_hook", None)
            if hook is not None:
                hook(self._configuration)
            return _header_from(self._configuration)

    def invalidate(self) -> bool:
        with self._lock:
            self._loader.load_and_set(self._configuration)
        return True

    def __repr__(self) -> str:
        return f"LoaderCredentials({self._describe})"


def _header_from(configuration: Any) -> str | None:
    api_key = getattr(configuration, "api_key", None) or {}
    value = api_key.get("BearerToken") or api_key.get("authorization")
    if not value:
        return None
    value = str(value)
    # The kubernetes in-cluster loader writes "bearer <token>"; normalise the scheme.
    if value[:7].lower() == "bearer ":
        return "Bearer " + value[7:].strip()
    return value


class KubeAuth(httpx.Auth):
    """httpx ``Auth`` that sets ``Authorization`` from a :class:`CredentialSource`.

    On a 401 it asks the source to refresh and, if it can, sends the request once more.
    Blocking sources are called from a worker thread on the async path.
    """

    def __init__(self, source: CredentialSource) -> None:
        self._source = source

    def __repr__(self) -> str:
        return f"KubeAuth({self._source!r})"

    def sync_auth_flow(
        self, request: httpx.Request
    ) -> Generator[httpx.Request, httpx.Response, None]:
        _apply(request, self._source.authorization())
        response = yield request
        if response.status_code == 401 and self._source.invalidate():
            _apply(request, self._source.authorization())
            yield request

    async def async_auth_flow(
        self, request: httpx.Request
    ) -> AsyncGenerator[httpx.Request, httpx.Response]:
        _apply(request, await self.authorization())
        response = yield request
        if response.status_code == 401 and await self.invalidate():
            _apply(request, await self.authorization())
            yield request

    async def authorization(self) -> str | None:
        """The header value to send now (a blocking source asked from a worker thread)."""
        if self._source.blocking:
            return await asyncio.to_thread(self._source.authorization)
        return self._source.authorization()

    async def invalidate(self) -> bool:
        """After a 401: whether sending the request once more could use new credentials."""
        if self._source.blocking:
            return await asyncio.to_thread(self._source.invalidate)
        return self._source.invalidate()


def _apply(request: httpx.Request, header: str | None) -> None:
    if header:
        request.headers["Authorization"] = header


# ------------------------------------------------------------------------------ errors


def _reason(err: BaseException) -> str:
    """An exception as a message states it: its type and its text (the reason a transport gives,
    "Invalid character in chunk size", is in the text)."""
    text = str(err)
    return f"{type(err).__name__}: {text}" if text else type(err).__name__


def wire_error(
    err: Exception, *, server: str, verb: str, resource: str, waited: str
) -> TransportError:
    """The client's error for what went wrong on the wire, its reason in the message:
    :class:`MalformedResponseError` for an answer that broke HTTP or a limit,
    :class:`APIConnectionError` for a connection that failed (``connect_failed`` when nothing
    was sent), :class:`RequestTimeoutError` (saying ``waited``) for a timeout."""
    if isinstance(err, ResponseRefusedError):
        return MalformedResponseError(str(err), verb=verb, resource=resource)
    if isinstance(err, httpx.DecodingError):
        return MalformedResponseError(
            f"the response body does not decode: {_reason(err)}", verb=verb, resource=resource
        )
    if isinstance(err, httpx.ConnectError):
        return APIConnectionError(
            f"cannot connect to {server}: {_reason(err)}",
            verb=verb,
            resource=resource,
            connect_failed=True,
        )
    if isinstance(err, (httpx.TimeoutException, asyncio.TimeoutError)):
        reason = _reason(err) if isinstance(err, httpx.TimeoutException) else ""
        reason = reason or "TimeoutError: no whole answer within the total timeout"
        return RequestTimeoutError(f"{reason}, {waited}", verb=verb, resource=resource)
    return APIConnectionError(
        f"connection to {server} failed: {_reason(err)}", verb=verb, resource=resource
    )


async def _close_response(response: httpx.Response) -> None:
    await response.aclose()


# ------------------------------------------------------------------------------ the pipeline


class _Rate(Protocol):
    @property
    def qps(self) -> float: ...

    @property
    def burst(self) -> int: ...


class Settings(Protocol):
    """What the pipeline reads of its :class:`~kubectrl.client.ClientConfig` (described here,
    so the config's module, which imports the credential sources from this one, is not
    imported back)."""

    @property
    def server(self) -> str: ...

    @property
    def proxy(self) -> str | None: ...

    @property
    def tls_server_name(self) -> str | None: ...

    @property
    def transport(self) -> httpx.AsyncBaseTransport | None: ...

    @property
    def credentials(self) -> CredentialSource | None: ...

    @property
    def rate_limit(self) -> _Rate | None: ...

    @property
    def retry(self) -> RetryPolicy: ...

    @property
    def timeout(self) -> float: ...

    @property
    def connect_timeout(self) -> float: ...

    @property
    def request_timeout(self) -> float | None: ...

    @property
    def max_response_bytes(self) -> int: ...

    @property
    def watch_open_timeout(self) -> float: ...

    @property
    def max_connections(self) -> int: ...

    @property
    def user_agent(self) -> str: ...

    @property
    def warning_handler(self) -> WarningHandler | None: ...

    def ssl_context(self) -> ssl.SSLContext: ...


class Pipeline:
    """The steps of every request of one client, and the transports under them (module
    docstring). Built from the client's config; one per client (and event loop).

    Example::

        pipeline = Pipeline(config, clock=RealClock())
        answer = await pipeline.send("GET", "/version", {}, headers={}, content=None,
                                     verb="get", label="version")
    """

    def __init__(self, config: Settings, *, clock: Clock) -> None:
        self.config = config
        self._clock = clock
        rate = config.rate_limit
        self.limiter = (
            TokenBucketRateLimiter(rate.qps, rate.burst, clock=clock) if rate is not None else None
        )
        self._credentials = config.credentials
        self._base = config.server.rstrip("/")
        self._prefix = httpx.URL(self._base).raw_path.rstrip(b"/")
        # The "host" label of the request metrics: host[:port], as client-go's URL.Host.
        self.host = httpx.URL(self._base).netloc.decode("ascii")
        self._headers = {
            "User-Agent": config.user_agent,
            "Accept": "application/json",
            # gzip only: what the apiserver compresses with, and what the transports inflate
            # under the body limit
            "Accept-Encoding": "gzip",
        }
        # A transport of one's own replaces the network: no TLS context to build.
        self._ssl = config.ssl_context() if config.transport is None else None
        self.cookies = httpx.Cookies()
        self._cookies_kept = False  # whether the jar holds a cookie a server set
        self.transport: Transport = self._new_transport(config.max_connections)
        self._streams: Transport | None = None
        #: The open streams to end when the client is closed (each has ``_client_closed()``).
        self.open_streams: weakref.WeakSet[Any] = weakref.WeakSet()

    def _new_transport(self, max_connections: int | None) -> Transport:
        config = self.config
        bounds: dict[str, Any] = {
            "headers": self._headers,
            "timeout": httpx.Timeout(config.timeout, connect=config.connect_timeout),
            "sni_hostname": config.tls_server_name,
            "max_body": config.max_response_bytes,
            "total_timeout": config.request_timeout,
        }
        if config.transport is not None:
            return HttpxTransport(
                config.transport,
                base_url=self._base,
                reuse_connections=not isinstance(config.transport, httpx.AsyncHTTPTransport),
                **bounds,
            )
        keepalive = min(20, max_connections or 20)
        if config.proxy or httpx.URL(self._base).raw_scheme not in (b"http", b"https"):
            # httpx's own transport speaks the proxy protocols (and refuses other schemes)
            proxied = httpx.AsyncHTTPTransport(
                verify=self._ssl if self._ssl is not None else True,
                trust_env=False,
                proxy=config.proxy,
                limits=httpx.Limits(
                    max_connections=max_connections, max_keepalive_connections=keepalive
                ),
            )
            return HttpxTransport(proxied, base_url=self._base, reuse_connections=False, **bounds)
        return FastTransport(
            ssl_context=self._ssl,
            max_connections=max_connections,
            max_keepalive_connections=keepalive,
            base_url=self._base,
            **bounds,
        )

    def streams(self) -> Transport:
        """The transport of watches and followed logs: unbounded connections (any number of
        long-lived streams never starve ordinary requests of connections), made on first use;
        a transport of one's own carries both."""
        if self._streams is None:
            own = self.config.transport is not None
            self._streams = self.transport if own else self._new_transport(None)
        return self._streams

    async def aclose(self) -> None:
        """Close both transports (an open watch ends with an error, even between the events
        of one chunk it has already read)."""
        for stream in list(self.open_streams):
            stream._client_closed()  # the client ends its own streams
        await self.transport.aclose()
        if self._streams is not None and self._streams is not self.transport:
            await self._streams.aclose()

    def target(self, path: str, query: Mapping[str, str]) -> str:
        """The request target of ``path`` (below the base URL) and ``query``, as httpx writes
        it: a plain path as it is, anything else quoted by ``httpx.URL``."""
        if _PLAIN_PATH.match(path):
            if query:
                return path + "?" + urllib.parse.urlencode(query, quote_via=urllib.parse.quote)
            return path
        text = self._base + path
        if query:
            text += "?" + urllib.parse.urlencode(query, quote_via=urllib.parse.quote)
        return httpx.URL(text).raw_path[len(self._prefix) :].decode("ascii")

    # -------------------------------------------------------------------------- the steps

    async def send(
        self,
        method: str,
        path: str,
        query: Mapping[str, str],
        *,
        headers: dict[str, str],
        content: bytes | None,
        verb: str,
        label: str,
        namespace: str | None = None,
        name: str | None = None,
        idempotent: bool = False,
        retry: bool = True,
        check_status: bool = True,
    ) -> httpx.Response:
        """One request through every step (module docstring); ``retry=False`` makes one
        attempt, ``check_status=False`` returns an error status as an answer."""
        target = self.target(path, query)

        async def attempt() -> httpx.Response:
            await self.throttle()
            response = await self.transmit(method, path, target, headers, content, verb, label)
            self.warnings(response)
            if check_status:
                self.check_status(response, verb, label, namespace, name)
            return response

        started = time.monotonic()
        try:
            if not retry:
                return await attempt()
            return await self.retry(attempt, idempotent=idempotent)
        finally:
            observe_request(method, self.host, time.monotonic() - started)

    async def retry(self, attempt: Callable[[], Awaitable[T]], *, idempotent: bool) -> T:
        """Run ``attempt``; when it fails, the config's :class:`RetryPolicy` decides whether and
        when to run it again (tenacity on the client's clock)."""
        try:
            return await attempt()
        except Exception as err:
            failed = err
        return await retry_after(
            self.config.retry, failed, attempt, idempotent=idempotent, clock=self._clock
        )

    async def throttle(self) -> None:
        """Take a token of the rate limiter (waiting for one when the bucket is empty)."""
        if self.limiter is not None:
            await self.limiter.acquire()

    async def authorize(self, headers: dict[str, str], target: str) -> None:
        """Set ``Authorization`` from the credential source (a blocking source, such as the
        auth-provider loader, is asked from a worker thread), and the cookies a server set for
        ``target``."""
        source = self._credentials
        if source is not None:
            if source.blocking:
                value = await asyncio.to_thread(source.authorization)
            else:
                value = source.authorization()
            if value:
                headers["Authorization"] = value
        if self._cookies_kept:
            self._send_cookies(headers, target)

    async def credentials_refreshed(self) -> bool:
        """After a 401: whether the credential source refreshed, so that sending once more
        could succeed (as client-go's exec and token-file sources do)."""
        source = self._credentials
        if source is None:
            return False
        if source.blocking:
            return await asyncio.to_thread(source.invalidate)
        return source.invalidate()

    async def transmit(
        self,
        method: str,
        path: str,
        target: str,
        headers: dict[str, str],
        content: bytes | None,
        verb: str,
        label: str,
    ) -> httpx.Response:
        """Authorize, then one exchange through the transport seam (once more after a 401 the
        credentials could refresh); what fails on the wire is raised as a typed error."""
        started = time.monotonic()
        try:
            await self.authorize(headers, target)
            response = await self.transport.send(method, target, headers, content)
            if response.status_code == 401 and await self.credentials_refreshed():
                observe_result("401", method, self.host)
                await self.authorize(headers, target)
                response = await self.transport.send(method, target, headers, content)
        except _WIRE_ERRORS as err:
            observe_result("<error>", method, self.host)
            config = self.config
            waited = (
                f"after {time.monotonic() - started:.1f} s (read idle {config.timeout:g} s, "
                f"total {config.request_timeout} s)"
            )
            raise wire_error(
                err, server=config.server, verb=verb, resource=label, waited=waited
            ) from err
        observe_result(str(response.status_code), method, self.host)
        log.debug(
            "request",
            extra={
                "verb": verb,
                "method": method,
                "path": path,
                "status": response.status_code,
                "duration": time.monotonic() - started,
            },
        )
        if response.sets_cookie:
            self._keep_cookies(response, method, target)
        return response

    def warnings(self, response: httpx.Response) -> None:
        """Hand the answer's ``Warning`` headers to the config's handler."""
        if "warning" in response.headers:
            handle_warnings(self.config.warning_handler, response.headers.get_list("warning"))

    @staticmethod
    def check_status(
        response: httpx.Response,
        verb: str,
        label: str,
        namespace: str | None,
        name: str | None,
    ) -> None:
        """A status of 400 or more as its :class:`~kubectrl.errors.APIError` (the ``Status``
        body's reason, message and details; ``Retry-After`` kept for the retry step)."""
        if response.status_code >= 400:
            raise api_error_from_response(
                response.status_code,
                response.content,
                retry_after=response.headers.get("Retry-After"),
                verb=verb,
                resource=label,
                namespace=namespace,
                name=name,
            )

    # -------------------------------------------------------------------------- streams

    async def open_stream(
        self,
        path: str,
        query: Mapping[str, str],
        *,
        verb: str,
        label: str,
        namespace: str | None,
        name: str | None = None,
        read_timeout: float | None,
        accept: str | None = None,
    ) -> httpx.Response:
        """A watch or a followed log: throttle, authorize, open on the stream transport within
        ``watch_open_timeout``, warnings, and an error status raised with its body (read whole
        under the body limit). One attempt: the caller (a reflector) backs off and decides."""
        transport = self.streams()
        target = self.target(path, query)
        open_timeout = self.config.watch_open_timeout
        headers = {"Accept": accept} if accept else {}
        await self.throttle()
        try:
            response = await wait_within(
                self._open(transport, target, headers, read_timeout),
                open_timeout,
                discard=_close_response,
            )
        except asyncio.TimeoutError:
            raise RequestTimeoutError(
                f"no response headers within {open_timeout:g} s (watch_open_timeout) from "
                f"{self.config.server}" + (f" (namespace {namespace})" if namespace else ""),
                verb=verb,
                resource=label,
            ) from None
        except httpx.TransportError as err:
            raise wire_error(
                err, server=self.config.server, verb=verb, resource=label, waited="opening it"
            ) from err
        self.warnings(response)
        if response.status_code >= 400:
            # an error's body is read whole, under the body limit like any other answer
            try:
                body = await read_content(response, self.config.max_response_bytes)
            except httpx.TransportError as err:
                raise wire_error(
                    err,
                    server=self.config.server,
                    verb=verb,
                    resource=label,
                    waited=f"reading its {response.status_code} answer",
                ) from err
            raise api_error_from_response(
                response.status_code,
                body,
                retry_after=response.headers.get("Retry-After"),
                verb=verb,
                resource=label,
                namespace=namespace,
                name=name,
            )
        return response

    async def _open(
        self,
        transport: Transport,
        target: str,
        headers: dict[str, str],
        read_timeout: float | None,
    ) -> httpx.Response:
        await self.authorize(headers, target)
        try:
            response = await transport.open_stream(
                "GET", target, headers, read_timeout=read_timeout
            )
        except _WIRE_ERRORS:
            observe_result("<error>", "GET", self.host)
            raise
        observe_result(str(response.status_code), "GET", self.host)
        if response.status_code == 401 and await self.credentials_refreshed():
            # The second try is not counted (a rare refresh, on a stream).
            await response.aclose()
            await self.authorize(headers, target)
            response = await transport.open_stream(
                "GET", target, headers, read_timeout=read_timeout
            )
        if set_cookie_in(response.headers.raw):
            self._keep_cookies(response, "GET", target)
        return response

    # -------------------------------------------------------------------------- cookies

    def _send_cookies(self, headers: dict[str, str], target: str) -> None:
        # An API server sets no cookie; a gateway in front of one may (rare: asked only then).
        request = httpx.Request("GET", self._base + target)
        self.cookies.set_cookie_header(request)
        cookie = request.headers.get("Cookie")
        if cookie:
            headers["Cookie"] = cookie

    def _keep_cookies(self, response: httpx.Response, method: str, target: str) -> None:
        response.request = httpx.Request(method, self._base + target)
        self.cookies.extract_cookies(response)
        self._cookies_kept = len(self.cookies) > 0


# ------------------------------------------------------------------------------ metrics


class RequestObserver(Protocol):
    """What receives every request's metrics
    (:class:`kubectrl.client.metrics.RestClientMetrics` is one)."""

    def result(self, code: str, method: str, host: str) -> None:
        """One exchange with the server: its status code (``"<error>"``: none came)."""
        ...

    def latency(self, verb: str, host: str, seconds: float) -> None:
        """One request's duration, retries and rate-limiter waits included."""
        ...


# Process-wide, as client-go's tools/metrics: every client reports to every live observer.
_observers: weakref.WeakSet[RequestObserver] = weakref.WeakSet()
_observers_lock = threading.Lock()


def add_request_observer(observer: RequestObserver) -> None:
    """Report every request of every client to ``observer`` while it is referenced."""
    with _observers_lock:
        _observers.add(observer)


def remove_request_observer(observer: RequestObserver) -> None:
    """Stop reporting to ``observer``."""
    with _observers_lock:
        _observers.discard(observer)


def _live_observers() -> list[RequestObserver]:
    if not _observers:  # the common case without metrics: no lock, no copy
        return []
    with _observers_lock:
        return list(_observers)


def observe_result(code: str, method: str, host: str) -> None:
    """Count one exchange with the server on every live observer."""
    for observer in _live_observers():
        observer.result(code, method, host)


def observe_request(verb: str, host: str, seconds: float) -> None:
    """Observe one request's duration on every live observer."""
    for observer in _live_observers():
        observer.latency(verb, host, seconds)


# ------------------------------------------------------------------------------ decode


#: Documents of at least this many bytes are decoded with the cyclic garbage collector paused.
GC_PAUSE_BYTES = 256 * 1024

_orjson: Any
try:
    _orjson = importlib.import_module("orjson")
except ImportError:  # the optional speedup is not installed
    _orjson = None


def loads(data: bytes | bytearray | memoryview | str) -> Any:
    """Decode one JSON document (``orjson`` first when installed, else ``json``).

    Documents of :data:`GC_PAUSE_BYTES` or more are decoded with the cyclic garbage collector
    paused (and left as it was found: a caller that disabled it keeps it disabled).

    Example::

        >>> loads(b'{"kind": "Pod", "spec": {"replicas": 2}}')["spec"]["replicas"]
        2
        >>> loads(b'{"ratio": NaN}')["ratio"]  # orjson refuses NaN; json decodes it
        nan
    """
    if len(data) < GC_PAUSE_BYTES or not gc.isenabled():
        return _decode(data)
    gc.disable()
    try:
        return _decode(data)
    finally:
        gc.enable()


def _decode(data: bytes | bytearray | memoryview | str) -> Any:
    if _orjson is not None:
        try:
            return _orjson.loads(data)
        except _orjson.JSONDecodeError:
            pass  # json.loads decodes what orjson refuses, or raises its own error
    if isinstance(data, memoryview):
        data = data.tobytes()
    return json.loads(data)


def json_body(response: httpx.Response, *, verb: str = "", resource: str = "") -> Any:
    """The JSON value of ``response``'s body (``{}`` for an empty one); a body that is not
    JSON (truncated, not UTF-8) is a :class:`~kubectrl.errors.MalformedResponseError` quoting
    its first 200 bytes."""
    content = response.content
    if not content:
        return {}
    try:
        return loads(content)
    except (ValueError, RecursionError) as err:
        # JSONDecodeError and UnicodeDecodeError are ValueErrors (orjson's too)
        excerpt = content[:200].decode("utf-8", "replace")
        raise MalformedResponseError(
            f"the {response.status_code} response is not JSON ({type(err).__name__}: {err}); "
            f"it starts {excerpt!r}",
            verb=verb,
            resource=resource,
        ) from None
