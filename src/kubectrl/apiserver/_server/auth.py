"""Delegated authentication and authorization, as ``k8s.io/apiserver`` does for an extension
server: kube-apiserver decides who a request is and what it may do.

Who (in this order; the first that knows the request wins, anonymous requests are refused):

1. **Front proxy**: a client certificate issued by the *requestheader* CA with a common name in
   the allowed names (both from the ``kube-system/extension-apiserver-authentication``
   ConfigMap): the user is in the ``X-Remote-User`` header, the groups in ``X-Remote-Group``,
   extra values in ``X-Remote-Extra-<key>`` (the header names are the ConfigMap's). These
   headers are read **only** from such a connection; from anyone else they are ignored.
2. **Client certificate** issued by the cluster's client CA: the user is its CN, the groups its
   O fields.
3. **Bearer token**: a ``TokenReview``.

What: a ``SubjectAccessReview`` for every request but the health checks. TokenReview and
SubjectAccessReview answers are cached for ``cache_ttl`` seconds (10 s, the apiserver's
default for both allowed and denied).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import ssl
import time
import urllib.parse
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    import httpx
    from cryptography.x509 import Certificate

__all__ = ["Attributes", "DelegatingAuth", "UserInfo"]

_AUTHENTICATED = "system:authenticated"
_CONFIGMAP = "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication"


@dataclasses.dataclass(frozen=True)
class UserInfo:
    """Who a request is: user name, uid, groups and extra values."""

    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: Mapping[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class Attributes:
    """What a request does, as a SubjectAccessReview asks it: a resource request (``resource``
    set) or a non-resource one (``path``)."""

    verb: str
    group: str = ""
    version: str = ""
    resource: str = ""
    subresource: str = ""
    namespace: str = ""
    name: str = ""
    path: str = ""

    def review(self) -> dict[str, Any]:
        """The ``resourceAttributes`` or ``nonResourceAttributes`` of a review."""
        if self.resource:
            fields = ("namespace", "verb", "group", "version", "resource", "subresource", "name")
            attrs = {f: getattr(self, f) for f in fields if getattr(self, f)}
            return {"resourceAttributes": attrs}
        return {"nonResourceAttributes": {"path": self.path, "verb": self.verb}}


class ClusterConfig(Protocol):
    """How to reach kube-apiserver: a :class:`kubectrl.client.ClientConfig` is one (the server
    side takes it by what it offers, not by importing the client layer)."""

    @property
    def server(self) -> str:
        """The API server's URL."""

    def async_httpx_client(
        self, *, max_connections: int | None = None, timeout: float | None = None
    ) -> httpx.AsyncClient:
        """An httpx client for the server with its TLS and credentials."""


def _load_pem_list(data: str) -> list[Certificate]:
    from cryptography import x509

    return list(x509.load_pem_x509_certificates(data.encode())) if data.strip() else []


def _json_list(value: str | None) -> list[str]:
    if not value:
        return []
    loaded = json.loads(value)
    if not isinstance(loaded, list):
        raise ValueError(f"expected a JSON list, got {value!r}")
    return [str(v) for v in loaded]


class DelegatingAuth:
    """Authentication and authorization delegated to kube-apiserver (see the module).

    ``config``: how to reach kube-apiserver (:func:`kubectrl.client.load_config`: in a Pod, its
    service account, which needs the ``system:auth-delegator`` ClusterRole and the
    ``extension-apiserver-authentication-reader`` Role in ``kube-system``). Call :meth:`load`
    (the server does at start) before serving.

    ``always_allow_groups``: users in one of these groups are allowed everything without a
    SubjectAccessReview, as ``k8s.io/apiserver``'s ``--authorization-always-allow-groups``
    (default ``system:masters``, which kube-apiserver allows everything anyway); ``()`` reviews
    every request.

    Example::

        >>> from kubectrl.client import ClientConfig
        >>> cluster = ClientConfig(server="https://kube-apiserver:6443")
        >>> DelegatingAuth(cluster).always_allow_groups
        ('system:masters',)
        >>> DelegatingAuth(cluster, always_allow_groups=()).always_allow_groups
        ()
    """

    def __init__(
        self,
        config: ClusterConfig,
        *,
        cache_ttl: float = 10.0,
        always_allow_groups: Sequence[str] = ("system:masters",),
    ) -> None:
        self.config = config
        self.cache_ttl = cache_ttl
        self.always_allow_groups = tuple(always_allow_groups)
        self.client_cas: list[Certificate] = []
        self.requestheader_cas: list[Certificate] = []
        self.allowed_names: list[str] = []
        self.username_headers: list[str] = []
        self.uid_headers: list[str] = []
        self.group_headers: list[str] = []
        self.extra_prefixes: list[str] = []
        self._ca_pem = ""
        self._tokens: dict[str, tuple[float, UserInfo | None]] = {}
        self._decisions: dict[str, tuple[float, tuple[bool, str]]] = {}
        #: Client certificates (DER) verified against the CAs loaded: (from an allowed front
        #: proxy, the certificate's own user if the client CA issued it).
        self._certificates: dict[bytes, tuple[bool, UserInfo | None]] = {}

    def __repr__(self) -> str:
        return f"DelegatingAuth(server={self.config.server!r}, allowed_names={self.allowed_names})"

    async def _post(self, path: str, body: Mapping[str, Any]) -> dict[str, Any]:
        async with self.config.async_httpx_client(timeout=10) as http:
            answer = await http.post(path, json=dict(body))
        if answer.status_code >= 300:
            raise PermissionError(
                f"kube-apiserver refused {path} ({answer.status_code}): {answer.text[:300]}"
            )
        result: dict[str, Any] = answer.json()
        return result

    async def load(self) -> None:
        """Read the ``extension-apiserver-authentication`` ConfigMap (CAs, names, headers)."""
        async with self.config.async_httpx_client(timeout=10) as http:
            answer = await http.get(_CONFIGMAP)
        if answer.status_code != 200:
            raise PermissionError(
                f"cannot read kube-system/extension-apiserver-authentication "
                f"({answer.status_code}): {answer.text[:300]}"
            )
        data: dict[str, str] = answer.json().get("data") or {}
        client_ca = data.get("client-ca-file", "")
        front_ca = data.get("requestheader-client-ca-file", "")
        self.client_cas = _load_pem_list(client_ca)
        self.requestheader_cas = _load_pem_list(front_ca)
        self.allowed_names = _json_list(data.get("requestheader-allowed-names"))
        self.username_headers = _json_list(data.get("requestheader-username-headers"))
        self.uid_headers = _json_list(data.get("requestheader-uid-headers"))
        self.group_headers = _json_list(data.get("requestheader-group-headers"))
        self.extra_prefixes = _json_list(data.get("requestheader-extra-headers-prefix"))
        self._ca_pem = "\n".join(p for p in (client_ca, front_ca) if p.strip())
        self._certificates.clear()

    def server_ssl_context(self, cert_file: str, key_file: str) -> ssl.SSLContext:
        """A serving TLS context that asks for (but does not require) a client certificate
        from the client or requestheader CA."""
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.load_cert_chain(cert_file, key_file)
        if self._ca_pem:
            context.load_verify_locations(cadata=self._ca_pem)
            context.verify_mode = ssl.CERT_OPTIONAL
        return context

    # ------------------------------------------------------------------ authentication

    async def authenticate(
        self, peer_cert_der: bytes | None, headers: Mapping[str, str], all_headers: Any = None
    ) -> UserInfo | None:
        """Who sends a request (``None``: nobody; the server answers 401).

        ``peer_cert_der``: the client certificate the TLS handshake verified (DER);
        ``headers``: lower-cased names; ``all_headers``: a multi-dict (``getall``) for
        repeated group headers. Every user found is also in ``system:authenticated``, as
        the apiserver's authenticator chain adds it.
        """
        user = await self._authenticate(peer_cert_der, headers, all_headers)
        if user is None or _AUTHENTICATED in user.groups:
            return user
        return dataclasses.replace(user, groups=(*user.groups, _AUTHENTICATED))

    async def _authenticate(
        self, peer_cert_der: bytes | None, headers: Mapping[str, str], all_headers: Any
    ) -> UserInfo | None:
        if peer_cert_der:
            from_proxy, cert_user = self._verified(peer_cert_der)
            if from_proxy:
                user = self._from_headers(headers, all_headers)
                if user is not None:
                    return user
            if cert_user is not None:
                return cert_user
        auth = headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            return await self._token_user(auth[7:].strip())
        return None

    def _verified(self, der: bytes) -> tuple[bool, UserInfo | None]:
        """(issued by the requestheader CA to an allowed name, its user if the client CA issued
        it), remembered per certificate until :meth:`load` reads the CAs again: every request on
        a connection brings the same certificate, which the TLS handshake has already checked
        (chain and validity); the signature checks here cost hundreds of µs."""
        known = self._certificates.get(der)
        if known is not None:
            return known
        from cryptography import x509

        cert = x509.load_der_x509_certificate(der)
        from_proxy = self._issued(cert, self.requestheader_cas) and self._allowed(cert)
        verdict = (from_proxy, _cert_user(cert) if self._issued(cert, self.client_cas) else None)
        if len(self._certificates) >= _CACHE_SWEEP:
            self._certificates.clear()
        self._certificates[der] = verdict
        return verdict

    @staticmethod
    def _issued(cert: Certificate, cas: Sequence[Certificate]) -> bool:
        from cryptography.exceptions import InvalidSignature

        for ca in cas:
            try:
                cert.verify_directly_issued_by(ca)
            except (ValueError, TypeError, InvalidSignature):  # not issued by this CA
                continue
            return True
        return False

    def _allowed(self, cert: Certificate) -> bool:
        if not self.allowed_names:
            return True
        return _common_name(cert) in self.allowed_names

    def _from_headers(self, headers: Mapping[str, str], all_headers: Any) -> UserInfo | None:
        def values(name: str) -> list[str]:
            if all_headers is not None:
                return [str(v) for v in all_headers.getall(name, [])]
            value = headers.get(name.lower())
            return [value] if value else []

        name = next((v for h in self.username_headers for v in values(h) if v), "")
        if not name:
            return None
        uid = next((v for h in self.uid_headers for v in values(h) if v), "")
        groups = tuple(v for h in self.group_headers for v in values(h))
        extra: dict[str, list[str]] = {}
        for header in headers:
            for prefix in self.extra_prefixes:
                if header.lower().startswith(prefix.lower()):
                    key = urllib.parse.unquote(header[len(prefix) :]).lower()
                    extra.setdefault(key, []).extend(values(header))
        return UserInfo(name, uid, groups, {k: tuple(v) for k, v in extra.items()})

    async def _token_user(self, token: str) -> UserInfo | None:
        key = hashlib.sha256(token.encode()).hexdigest()
        return await _cached(self._tokens, key, self.cache_ttl, lambda: self._review_token(token))

    async def _review_token(self, token: str) -> UserInfo | None:
        review = await self._post(
            "/apis/authentication.k8s.io/v1/tokenreviews",
            {
                "apiVersion": "authentication.k8s.io/v1",
                "kind": "TokenReview",
                "spec": {"token": token},
            },
        )
        status = review.get("status") or {}
        user = None
        if status.get("authenticated"):
            found = status.get("user") or {}
            user = UserInfo(
                str(found.get("username", "")),
                str(found.get("uid", "")),
                tuple(found.get("groups") or ()),
                {k: tuple(v) for k, v in (found.get("extra") or {}).items()},
            )
        return user

    # ------------------------------------------------------------------ authorization

    async def authorize(self, user: UserInfo, attributes: Attributes) -> tuple[bool, str]:
        """``(allowed, reason)`` from a SubjectAccessReview (cached ``cache_ttl`` seconds), or
        ``(True, "")`` for a user in one of :attr:`always_allow_groups`."""
        if not set(user.groups).isdisjoint(self.always_allow_groups):
            return (True, "")
        spec: dict[str, Any] = {
            "user": user.name,
            "groups": list(user.groups),
            **attributes.review(),
        }
        if user.uid:
            spec["uid"] = user.uid
        if user.extra:
            spec["extra"] = {k: list(v) for k, v in user.extra.items()}
        key = json.dumps(spec, sort_keys=True)
        return await _cached(self._decisions, key, self.cache_ttl, lambda: self._review(spec))

    async def _review(self, spec: Mapping[str, Any]) -> tuple[bool, str]:
        review = await self._post(
            "/apis/authorization.k8s.io/v1/subjectaccessreviews",
            {
                "apiVersion": "authorization.k8s.io/v1",
                "kind": "SubjectAccessReview",
                "spec": dict(spec),
            },
        )
        status = review.get("status") or {}
        return (bool(status.get("allowed")), str(status.get("reason", "")))


_T = TypeVar("_T")
#: Entries kept per cache before expired ones are dropped.
_CACHE_SWEEP = 4096


async def _cached(
    cache: dict[str, tuple[float, _T]],
    key: str,
    ttl: float,
    fetch: Callable[[], Awaitable[_T]],
) -> _T:
    """``cache[key]`` while younger than ``ttl`` seconds, else what ``fetch`` answers now."""
    now = time.monotonic()
    hit = cache.get(key)
    if hit is not None and hit[0] > now:
        return hit[1]
    value = await fetch()
    if len(cache) >= _CACHE_SWEEP:
        for old in [k for k, (expires, _) in cache.items() if expires <= now]:
            del cache[old]
    cache[key] = (now + ttl, value)
    return value


def _common_name(cert: Certificate) -> str:
    from cryptography.x509.oid import NameOID

    names = cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    return str(names[0].value) if names else ""


def _cert_user(cert: Certificate) -> UserInfo:
    from cryptography.x509.oid import NameOID

    groups = tuple(
        str(a.value) for a in cert.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)
    )
    return UserInfo(_common_name(cert), groups=groups)
