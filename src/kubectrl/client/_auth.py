"""Credentials and the httpx ``Auth`` that applies them.

A credential source produces the ``Authorization`` header value for each request and knows how to
refresh itself: a static token, a token file re-read when it changes (in-cluster service-account
token rotation, kubeconfig ``tokenFile``), basic auth, an exec credential plugin
(:class:`~kubectrl.client._exec.ExecCredentials`), or the ``kubernetes`` package's kubeconfig
loader for the deprecated auth providers.

None of these objects reveal a secret in ``repr``/``str``; the header value only ever goes into
the outgoing request.
"""

from __future__ import annotations

import asyncio
import base64
import os
import threading
from collections.abc import AsyncGenerator, Generator
from typing import Any, Protocol

import httpx

from kubectrl.errors import ConfigError

__all__ = [
    "BasicAuthCredentials",
    "CredentialSource",
    "KubeAuth",
    "LoaderCredentials",
    "StaticTokenCredentials",
    "TokenFileCredentials",
]


class CredentialSource(Protocol):
    """Where the ``Authorization`` header comes from.

    ``blocking`` is True when :meth:`authorization` may run a subprocess or network call, so the
    async transport calls it in a worker thread.
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
