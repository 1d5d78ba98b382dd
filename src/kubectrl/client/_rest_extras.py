"""The REST surface beyond CRUD that is not a pod's: service account tokens and the services'
proxy (the pods' verbs, their proxy included, are :mod:`kubectrl.client._pods`).

* ``serviceaccounts/token`` (``authentication.k8s.io/v1`` TokenRequest, client-go's
  ``CoreV1().ServiceAccounts(ns).CreateToken``): a bound token for audiences, expiring;
* ``services/proxy`` (and ``pods/proxy``, through :func:`send_proxy`): an HTTP request relayed
  by the apiserver to a service's endpoints or a pod
  (``/api/v1/namespaces/NS/services/[scheme:]NAME[:port]/proxy/PATH``).

:class:`RestExtras` is a base class of :class:`~kubectrl.client.AsyncClient` holding
``create_token`` and ``proxy_service``; its methods reach the client through
:class:`ClientCore` (their ``self`` type), as the pod verbs do.
"""

from __future__ import annotations

import dataclasses
import datetime
import urllib.parse
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import httpx

from kubectrl.client._body import json_body
from kubectrl.client._config import ClientConfig
from kubectrl.client._paths import check_proxy_path, check_segment, namespaced_path

__all__ = ["ClientCore", "RestExtras", "ServiceAccountToken", "proxy_path", "send_proxy"]


class ClientCore(Protocol):
    """What the pod verbs (and the client's other REST extras) use of their client: its
    ``config`` and two request methods. :class:`~kubectrl.client.AsyncClient` fits it.

    ``_send`` sends one request under the client's rate limit, bounds, retries and typed
    errors (``retry=False``: one attempt; ``check_status=False``: any status is returned);
    ``_open_stream`` opens a long-lived GET on the watch pool (no read timeout with
    ``read_timeout=None``), raising the typed error for a status of 400 or more.
    """

    @property
    def config(self) -> ClientConfig: ...

    async def _send(
        self,
        method: str,
        path: str,
        *,
        verb: str,
        label: str = "",
        namespace: str | None = None,
        name: str | None = None,
        params: Mapping[str, Any] | None = None,
        body: Any = ...,
        content_type: str = "application/json",
        accept: str | None = None,
        raw_content: bytes | None = None,
        extra_headers: Mapping[str, str] | None = None,
        retry: bool = True,
        check_status: bool = True,
    ) -> httpx.Response: ...

    async def _open_stream(
        self,
        path: str,
        params: Mapping[str, str],
        *,
        verb: str,
        label: str,
        namespace: str | None,
        name: str | None = None,
        read_timeout: float | None,
        accept: str | None = None,
    ) -> httpx.Response: ...


@dataclasses.dataclass(frozen=True)
class ServiceAccountToken:
    """A token the apiserver issued for a service account (a TokenRequest's status).

    ``token`` is the JWT (a secret: it is not in the ``repr``), ``expiration`` when it
    expires (aware, UTC), ``audiences`` those it is valid for and ``raw`` the whole
    TokenRequest the server answered.

    Example::

        token = await client.create_token("builder", namespace="ci", audiences=["vault"])
        headers = {"Authorization": f"Bearer {token.token}"}
    """

    token: str = dataclasses.field(repr=False)
    expiration: datetime.datetime
    audiences: tuple[str, ...]
    raw: dict[str, Any] = dataclasses.field(repr=False, compare=False)


def _parse_time(text: str) -> datetime.datetime:
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(
        tzinfo=datetime.timezone.utc
    )


def proxy_path(
    kind: str,
    namespace: str,
    name: str,
    path: str = "",
    *,
    port: int | str | None = None,
    scheme: str | None = None,
) -> str:
    """The URL path of ``kind`` (``pods`` or ``services``) ``name``'s ``proxy`` subresource.

    ``namespace``, ``name`` and a named ``port`` must each fit in one path segment, and
    ``path`` may not have ``.`` or ``..`` segments (which would climb out of the proxy):
    :class:`~kubectrl.errors.InvalidPathSegmentError` otherwise (nothing is sent).

    Example::

        >>> proxy_path("services", "ns", "web", "/healthz", port="http", scheme="https")
        '/api/v1/namespaces/ns/services/https:web:http/proxy/healthz'
    """
    if kind not in ("pods", "services"):
        raise ValueError(f"the proxy subresource is of pods or services, not {kind!r}")
    if scheme not in (None, "http", "https"):
        raise ValueError(f"scheme is 'http' or 'https', not {scheme!r}")
    resource = f"{kind}/proxy"
    target = check_segment(name, argument="name", verb="proxy", resource=resource)
    if scheme:
        target = f"{scheme}:{target}"
    if port is not None:
        if isinstance(port, bool) or not isinstance(port, (int, str)):
            raise TypeError(f"port is a number or a port name, not {port!r}")
        named = check_segment(str(port), argument="port", verb="proxy", resource=resource)
        target = f"{target}:{named}"
    path = check_proxy_path(path, verb="proxy", resource=resource)
    quoted = urllib.parse.quote(path.lstrip("/"), safe="/:@!$&'()*+,;=-._~")
    ns = check_segment(namespace, argument="namespace", verb="proxy", resource=resource)
    return f"/api/v1/namespaces/{ns}/{kind}/{target}/proxy/{quoted}"


async def send_proxy(
    client: ClientCore,
    kind: str,
    name: str,
    path: str,
    *,
    namespace: str,
    port: int | str | None,
    scheme: str | None,
    method: str,
    params: Mapping[str, str] | None,
    content: bytes | None,
    headers: Mapping[str, str] | None,
) -> httpx.Response:
    """Send one request through ``kind``'s (``pods`` or ``services``) ``proxy`` subresource and
    return the response whatever its status (it may be the proxied application's own): one
    attempt, no retry. The path is checked by :func:`proxy_path` before anything is sent."""
    url_path = proxy_path(kind, namespace, name, path, port=port, scheme=scheme)
    return await client._send(
        method,
        url_path,
        verb=method.lower(),
        label=f"{kind}/proxy",
        namespace=namespace,
        name=name,
        params=params,
        raw_content=content,
        extra_headers=headers,
        retry=False,
        check_status=False,
    )


class RestExtras:
    """``create_token`` and ``proxy_service`` of :class:`~kubectrl.client.AsyncClient` (a base
    class of it). Their ``self`` is typed :class:`ClientCore`: what they
    use of the client, checked by mypy where a client calls them."""

    async def create_token(
        self: ClientCore,
        service_account: str,
        *,
        namespace: str | None = None,
        audiences: Sequence[str] | None = None,
        expiration_seconds: int | None = None,
        bound_object: Mapping[str, Any] | None = None,
        dry_run: bool = False,
    ) -> ServiceAccountToken:
        """Request a token for a service account (``serviceaccounts/token``, a TokenRequest).

        ``audiences`` default to the apiserver's; ``expiration_seconds`` (at least 600, the
        server's minimum) to its default (an hour). ``bound_object`` (``{"kind": "Pod", "name":
        ..., "uid": ...}``, a Pod or Secret) ends the token's validity with that object. A
        service account that does not exist is a :class:`~kubectrl.errors.NotFoundError`; an
        expiration the server refuses an :class:`~kubectrl.errors.InvalidError`.

        Example::

            token = await client.create_token("builder", namespace="ci",
                                              audiences=["vault"], expiration_seconds=3600)
        """
        if isinstance(audiences, str):
            raise TypeError(f"audiences is a list of names, not the string {audiences!r}")
        ns = namespace or self.config.namespace
        spec: dict[str, Any] = {}
        if audiences is not None:
            spec["audiences"] = list(audiences)
        if expiration_seconds is not None:
            spec["expirationSeconds"] = expiration_seconds
        if bound_object is not None:
            spec["boundObjectRef"] = dict(bound_object)
        response = await self._send(
            "POST",
            namespaced_path("serviceaccounts", ns, service_account, "token", verb="create"),
            verb="create",
            label="serviceaccounts/token",
            namespace=ns,
            name=service_account,
            params={"dryRun": "All" if dry_run else None},
            body={
                "apiVersion": "authentication.k8s.io/v1",
                "kind": "TokenRequest",
                "metadata": {"name": service_account, "namespace": ns},
                "spec": spec,
            },
        )
        raw = json_body(response, verb="create", resource="serviceaccounts/token")
        if not isinstance(raw, dict):
            raw = {}
        status = raw.get("status") or {}
        return ServiceAccountToken(
            token=str(status.get("token", "")),
            expiration=_parse_time(str(status["expirationTimestamp"])),
            audiences=tuple((raw.get("spec") or {}).get("audiences") or ()),
            raw=raw,
        )

    async def proxy_service(
        self: ClientCore,
        name: str,
        path: str = "",
        *,
        namespace: str | None = None,
        port: int | str | None = None,
        scheme: str | None = None,
        method: str = "GET",
        params: Mapping[str, str] | None = None,
        content: bytes | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> httpx.Response:
        """Send an HTTP request to a service through the apiserver (``services/proxy``) and
        return the response as it came: whatever its status, since it may be the service's own
        answer (a 404 of the service's) or the apiserver's (a ``Status``: no endpoints, the
        service does not exist). ``port`` is the service port's number or name, ``scheme``
        ``"http"`` (default) or ``"https"``. Raises
        :class:`~kubectrl.errors.APIConnectionError` when the apiserver cannot be reached.

        Example::

            response = await client.proxy_service("prometheus", "/api/v1/query",
                                                  namespace="monitoring", port=9090,
                                                  params={"query": "up"})
            response.raise_for_status()

        A pod's twin is ``client.pods.proxy``.
        """
        return await send_proxy(
            self,
            "services",
            name,
            path,
            namespace=namespace or self.config.namespace,
            port=port,
            scheme=scheme,
            method=method,
            params=params,
            content=content,
            headers=headers,
        )


# The verbs are AsyncClient's (this base class only holds them): so they are named in its
# documentation and in the docstrings of their blocking twins. Their ``self: ClientCore`` is for
# mypy; at run time the signature shows a plain ``self`` (the blocking twins copy it).
for _verb in ("create_token", "proxy_service"):
    getattr(RestExtras, _verb).__qualname__ = f"AsyncClient.{_verb}"
    getattr(RestExtras, _verb).__annotations__.pop("self", None)
