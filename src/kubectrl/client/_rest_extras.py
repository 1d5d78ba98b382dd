"""The REST surface beyond CRUD: service account tokens, the proxy subresources, ephemeral
containers.

* ``serviceaccounts/token`` (``authentication.k8s.io/v1`` TokenRequest, client-go's
  ``CoreV1().ServiceAccounts(ns).CreateToken``): a bound token for audiences, expiring;
* ``services/proxy`` and ``pods/proxy``: an HTTP request relayed by the apiserver to a pod or a
  service's endpoints (``/api/v1/namespaces/NS/services/[scheme:]NAME[:port]/proxy/PATH``);
* ``pods/ephemeralcontainers``: add a debug container to a running pod (``kubectl debug``).
"""

from __future__ import annotations

import dataclasses
import datetime
import urllib.parse
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import httpx

from kubectrl.client._body import json_body
from kubectrl.client._models import to_dict
from kubectrl.client._paths import check_proxy_path, check_segment, namespaced_path
from kubectrl.client._pods import PodRef, pod_target
from kubectrl.client._types import PatchType

if TYPE_CHECKING:
    from kubectrl.client._config import ClientConfig

__all__ = ["RestExtras", "ServiceAccountToken", "proxy_path"]


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


class RestExtras:
    """``create_token``, ``proxy_pod``, ``proxy_service`` and ``add_ephemeral_container`` of
    :class:`~kubectrl.client.AsyncClient` (a base class of it)."""

    if TYPE_CHECKING:
        config: ClientConfig
        _http: httpx.AsyncClient
        _extensions: dict[str, Any]

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
            idempotent: bool | None = None,
            accept: str | None = None,
            raw_content: bytes | None = None,
            extra_headers: Mapping[str, str] | None = None,
            retry: bool = True,
            check_status: bool = True,
        ) -> httpx.Response: ...

        async def _throttle(self) -> None: ...

        def _url(self, path: str, query: dict[str, str]) -> httpx.URL: ...

    async def create_token(
        self,
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

    async def _proxy(
        self,
        kind: str,
        name: str,
        path: str,
        *,
        namespace: str | None,
        port: int | str | None,
        scheme: str | None,
        method: str,
        params: Mapping[str, str] | None,
        content: bytes | None,
        headers: Mapping[str, str] | None,
    ) -> httpx.Response:
        ns = namespace or self.config.namespace
        url_path = proxy_path(kind, ns, name, path, port=port, scheme=scheme)
        # one attempt, any status: the answer may be the proxied service's own
        return await self._send(
            method,
            url_path,
            verb=method.lower(),
            label=f"{kind}/proxy",
            namespace=ns,
            name=name,
            params=params,
            raw_content=content,
            extra_headers=headers,
            retry=False,
            check_status=False,
        )

    async def proxy_service(
        self,
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
        """
        return await self._proxy(
            "services",
            name,
            path,
            namespace=namespace,
            port=port,
            scheme=scheme,
            method=method,
            params=params,
            content=content,
            headers=headers,
        )

    async def proxy_pod(
        self,
        pod: PodRef,
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
        """Send an HTTP request to a pod's port through the apiserver (``pods/proxy``); the
        response comes back as it came (see :meth:`proxy_service`).

        Example::

            response = await client.proxy_pod("web-0", "/metrics", namespace="ns", port=8080)
        """
        ns, name = pod_target(pod, namespace, self.config.namespace)
        return await self._proxy(
            "pods",
            name,
            path,
            namespace=ns,
            port=port,
            scheme=scheme,
            method=method,
            params=params,
            content=content,
            headers=headers,
        )

    async def add_ephemeral_container(
        self,
        pod: PodRef,
        container: Mapping[str, Any] | Any,
        *,
        namespace: str | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """Add an ephemeral container to a running pod (the ``pods/ephemeralcontainers``
        subresource, a strategic merge patch as ``kubectl debug`` sends); returns the pod.

        ``container`` is an ``EphemeralContainer`` (a dict or a model): at least ``name`` and
        ``image``; ``targetContainerName`` shares that container's process namespace. Its name
        must be new in the pod (an existing ephemeral container cannot be changed or removed).

        Example::

            pod = await client.add_ephemeral_container(
                "web-0", {"name": "debug", "image": "busybox", "stdin": True, "tty": True,
                          "targetContainerName": "app"}, namespace="ns")
        """
        ns, name = pod_target(pod, namespace, self.config.namespace)
        path = namespaced_path("pods", ns, name, "ephemeralcontainers", verb="patch")
        body = to_dict(container)
        if not body.get("name"):
            raise ValueError(f"the ephemeral container for pod {ns}/{name} needs a name")
        response = await self._send(
            "PATCH",
            path,
            verb="patch",
            label="pods/ephemeralcontainers",
            namespace=ns,
            name=name,
            params={"dryRun": "All" if dry_run else None},
            body={"spec": {"ephemeralContainers": [body]}},
            content_type=PatchType.STRATEGIC.value,
        )
        result = json_body(response, verb="patch", resource="pods/ephemeralcontainers")
        return result if isinstance(result, dict) else {}


for _verb in ("create_token", "proxy_service", "proxy_pod", "add_ephemeral_container"):
    getattr(RestExtras, _verb).__qualname__ = f"AsyncClient.{_verb}"
