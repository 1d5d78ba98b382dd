"""The client's requests sent straight through :class:`FastTransport`, without httpx's objects.

httpx stays the client's API: configs, transports of one's own, proxies, auth objects, and the
``httpx.Response`` every request returns. But for an ordinary request on a direct connection
(kubectrl's own :class:`~kubectrl.client._fast_transport.FastTransport` under the client),
httpx's ``AsyncClient.request`` spent more CPU than the transport itself: a ``Request`` and its
``Headers`` merged with the client's, an auth-flow generator, a wrapped response stream read
through its decoders, and a cookie-jar adapter built for every response, even though an API
server sets no cookies. Here the head is written once per request from bytes prepared once per
client, the credential source is asked for the ``Authorization`` value as
:class:`~kubectrl.client._auth.KubeAuth` asks it (a 401 refreshes it and sends once more), and
the whole answer becomes one ``httpx.Response``.

What the client's httpx ``AsyncClient`` would do differently is left to it: a request goes the
httpx way when the cookie jar holds a cookie (httpx sends it) or the method is HEAD; a response
that sets a cookie is handed to the jar. A gzip body (the apiserver compresses large answers: an
informer's initial list) is inflated in one piece into a buffer of the size its gzip trailer
gives, where httpx's decoder grew one block by block and then copied them together (twice the
document in transient memory: measured on a list of 110,000 ConfigMaps, half the page faults
and a quarter of the CPU of decompressing); any other encoding, and a gzip body zlib refuses
whole, is decoded by ``httpx.Response`` as before, with its answer or its ``DecodingError``.
httpx's own ``HTTP Request: ...`` INFO log line is not written for these requests (the client
logs each request at DEBUG on ``kubectrl.client``).
"""

from __future__ import annotations

import re
import urllib.parse
from http.cookiejar import CookieJar

import httpx

from kubectrl.client._auth import KubeAuth
from kubectrl.client._body import Answer, decode_body
from kubectrl.client._fast_transport import FastTransport

__all__ = ["DirectRequests"]

_SET_COOKIE = (b"set-cookie", b"set-cookie2")
_DEFAULT_PORTS = {b"http": 80, b"https": 443}

# A path that URL parsing leaves as it is: unreserved characters, sub-delimiters, ":", "@" and
# "/" (RFC 3986 pchar, without "%": an escape is left to httpx to check). Anything else is
# quoted by httpx.URL, so such a request takes the httpx way.
_PLAIN_PATH = re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=:@/]*\Z")


class DirectRequests:
    """Sends an :class:`~kubectrl.client.AsyncClient`'s requests through its FastTransport.

    Built from the client's own ``httpx.AsyncClient`` (its base URL, default headers, timeouts,
    auth and cookie jar), so a request carries what httpx would have sent. :meth:`send` returns
    ``None`` for a request that must go through httpx after all.

    Example::

        direct = DirectRequests.of(http)  # None unless http's transport is a FastTransport
    """

    def __init__(
        self,
        http: httpx.AsyncClient,
        transport: FastTransport,
        sni_hostname: str | None,
        *,
        total_timeout: float | None = None,
        max_body: int = 1 << 30,
    ) -> None:
        base = http.base_url
        scheme = base.raw_scheme
        if scheme not in _DEFAULT_PORTS:
            raise ValueError(f"DirectRequests needs an http(s) base URL, not {base}")
        self._transport = transport
        self._key = (scheme, base.raw_host, base.port or _DEFAULT_PORTS[scheme], sni_hostname)
        self._origin = f"{base.scheme}://{base.netloc.decode('ascii')}"
        self._prefix = base.raw_path.decode("ascii").rstrip("/")
        defaults = [(b"Host", base.netloc)]
        defaults += [(n, v) for n, v in http.headers.raw if n.lower() != b"accept"]
        if any(b"\r" in name + value or b"\n" in name + value for name, value in defaults):
            raise ValueError("a default header of the client contains CR or LF")
        self._fixed = b"".join(b"%s: %s\r\n" % pair for pair in defaults)
        self._accept = http.headers.get("Accept", "*/*")
        timeout = http.timeout
        self._timeouts: dict[str, float | None] = {
            "connect": timeout.connect,
            "read": timeout.read,
            "write": timeout.write,
            "pool": timeout.pool,
        }
        auth = http.auth
        self._auth = auth if isinstance(auth, KubeAuth) else None
        self._cookies: CookieJar = http.cookies.jar
        self._http = http
        # an answer's bounds (ClientConfig.request_timeout, max_response_bytes)
        self._total_timeout = total_timeout
        self._max_body = max_body

    @classmethod
    def of(
        cls,
        http: httpx.AsyncClient,
        sni_hostname: str | None = None,
        *,
        total_timeout: float | None = None,
        max_body: int = 1 << 30,
    ) -> DirectRequests | None:
        """For ``http`` when its transport is a :class:`FastTransport` over http(s) and its auth
        is kubectrl's (or none); otherwise ``None`` (every request goes through httpx). Each
        answer takes at most ``total_timeout`` seconds and ``max_body`` bytes."""
        # httpx keeps the transport it was given as ``_transport``; should that ever change,
        # this finds none and every request goes through httpx, as it would without httptools.
        transport = getattr(http, "_transport", None)
        if not isinstance(transport, FastTransport):
            return None
        if http.base_url.raw_scheme not in _DEFAULT_PORTS:
            return None
        if http.event_hooks["request"] or http.event_hooks["response"]:
            return None  # hooks see httpx's request and response objects
        if http.auth is not None and not isinstance(http.auth, KubeAuth):
            return None  # an auth flow of someone else's
        return cls(http, transport, sni_hostname, total_timeout=total_timeout, max_body=max_body)

    def target(self, path: str, query: dict[str, str]) -> bytes | None:
        """The request target of ``path`` (below the base URL) and ``query``, as httpx would
        write it; ``None`` when the path needs httpx's quoting (the request then goes through
        httpx). A controller's URLs mostly name one object each, so httpx's parse of every new
        URL is not worth caching."""
        if not _PLAIN_PATH.match(path):
            return None
        text = self._prefix + path
        if query:
            text += "?" + urllib.parse.urlencode(query, quote_via=urllib.parse.quote)
        return text.encode("ascii")

    async def send(
        self,
        method: str,
        target: bytes,
        content: bytes | None,
        headers: dict[str, str],
    ) -> httpx.Response | None:
        """Send one request for ``target`` (from :meth:`target`) and read its whole answer;
        ``None`` when httpx must send it instead (module docstring)."""
        if method == "HEAD" or len(self._cookies):
            return None
        auth = self._auth
        authorization = await auth.authorization() if auth is not None else None
        exchange = self._transport.exchange
        total, limit = self._total_timeout, self._max_body
        data = self._encode(method, target, content, headers, authorization)
        status, raw, body = await exchange(
            self._key, data, self._timeouts, total=total, limit=limit
        )
        if status == 401 and auth is not None and await auth.invalidate():
            authorization = await auth.authorization()
            data = self._encode(method, target, content, headers, authorization)
            status, raw, body = await exchange(
                self._key, data, self._timeouts, total=total, limit=limit
            )
        response: httpx.Response = Answer(status, raw, decode_body(raw, body, limit))
        if any(name.lower() in _SET_COOKIE for name, _ in raw):
            url = httpx.URL(self._origin + target.decode("ascii"))
            response.request = httpx.Request(method, url, headers=headers)
            self._http.cookies.extract_cookies(response)
        return response

    def _encode(
        self,
        method: str,
        target: bytes,
        content: bytes | None,
        headers: dict[str, str],
        authorization: str | None,
    ) -> bytes:
        lines = [
            b"%s %s HTTP/1.1" % (method.encode("ascii"), target),
            b"Accept: " + headers.get("Accept", self._accept).encode("ascii"),
        ]
        if authorization:
            lines.append(b"Authorization: " + authorization.encode("ascii"))
        for name, value in headers.items():
            if name != "Accept":
                lines.append(b"%s: %s" % (name.encode("ascii"), value.encode("ascii")))
        if content is not None:
            lines.append(b"Content-Length: %d" % len(content))
        elif method in ("POST", "PUT", "PATCH"):
            lines.append(b"Content-Length: 0")
        joined = b"".join(lines)
        if b"\n" in joined or b"\r" in joined:
            raise httpx.LocalProtocolError(
                f"{method} {target.decode('ascii')}: a header contains CR or LF"
            )
        return b"\r\n".join(lines) + b"\r\n" + self._fixed + b"\r\n" + (content or b"")
