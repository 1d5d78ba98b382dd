"""Extension API servers registered with the local control plane's aggregation layer.

kube-apiserver reaches an extension server through an ``APIService`` that names a Service,
never a URL. The control plane runs with ``--enable-aggregator-routing=true`` (there is no
kube-proxy), so the aggregator dials the Service's endpoint addresses itself: this module
writes, for a server listening on ``address:port``, a selector-less Service, its EndpointSlice
(and the legacy Endpoints) with that address, and the ``APIService`` with the CA bundle that
verifies the server's certificate; then it waits until the APIService is ``Available``.

kube-apiserver refuses loopback endpoint addresses, so ``address`` must be another address of
this host's (or this network namespace's) interfaces, e.g. a documentation address added to
``lo`` inside a network namespace of the test's own (see the extension API server docs).
"""

from __future__ import annotations

import base64
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kubectrl.envtest._errors import ControlPlaneError

if TYPE_CHECKING:
    import httpx

__all__ = ["api_service_condition", "register_api_service", "unregister_api_service"]

_APISERVICES = "/apis/apiregistration.k8s.io/v1/apiservices"


def _ok(response: httpx.Response, what: str) -> dict[str, Any]:
    if response.status_code >= 300:
        raise ControlPlaneError(f"{what}: {response.status_code} {response.text[:500]}")
    body: dict[str, Any] = response.json()
    return body


def _put(http: httpx.Client, collection: str, obj: Mapping[str, Any]) -> dict[str, Any]:
    """Create ``obj`` in ``collection``, or replace the one of its name."""
    name = obj["metadata"]["name"]
    created = http.post(collection, json=dict(obj))
    if created.status_code != 409:
        return _ok(created, f"create {collection}/{name}")
    current = _ok(http.get(f"{collection}/{name}"), f"read {collection}/{name}")
    body = {
        **obj,
        "metadata": {**obj["metadata"], "resourceVersion": current["metadata"]["resourceVersion"]},
    }
    return _ok(http.put(f"{collection}/{name}", json=body), f"replace {collection}/{name}")


def api_service_condition(http: httpx.Client, name: str) -> dict[str, Any] | None:
    """The ``Available`` condition of the APIService ``name`` (``None`` while it has none)."""
    found = _ok(http.get(f"{_APISERVICES}/{name}"), f"read APIService {name}")
    for condition in (found.get("status") or {}).get("conditions") or ():
        if condition.get("type") == "Available":
            return dict(condition)
    return None


def wait_api_service(
    http: httpx.Client, name: str, *, available: bool = True, timeout: float = 60.0
) -> dict[str, Any]:
    """Wait until the APIService's ``Available`` condition is ``available``; returns it."""
    want = "True" if available else "False"
    deadline = time.monotonic() + timeout
    condition: dict[str, Any] | None = None
    while time.monotonic() < deadline:
        condition = api_service_condition(http, name)
        if condition is not None and condition.get("status") == want:
            return condition
        time.sleep(0.2)
    raise ControlPlaneError(
        f"APIService {name} did not become Available={want} within {timeout:g}s; "
        f"last condition: {condition}"
    )


def register_api_service(
    http: httpx.Client,
    group: str,
    version: str,
    *,
    ca_bundle: bytes,
    address: str,
    port: int,
    namespace: str = "default",
    service_name: str = "",
    group_priority_minimum: int = 1000,
    version_priority: int = 15,
    wait: bool = True,
    timeout: float = 60.0,
) -> dict[str, Any]:
    """Register a server on ``address:port`` for ``group/version``; returns the APIService.

    ``ca_bundle``: the PEM CA that signed the server's certificate (which must name
    ``<service>.<namespace>.svc``, the name the aggregator verifies). ``wait``: return only
    once the APIService is ``Available=True`` and kube-apiserver's OpenAPI lists the
    group/version (else :class:`ControlPlaneError` after ``timeout`` seconds, with the
    condition's message).
    """
    if address.startswith("127.") or address in ("::1", "localhost"):
        raise ValueError(
            f"address {address!r} is a loopback address, which kube-apiserver refuses as an "
            "endpoint: serve on another address of this host or network namespace"
        )
    service = service_name or f"{group.split('.')[0]}-apiserver"
    labels = {"app.kubernetes.io/managed-by": "kubectrl-envtest"}
    _put(
        http,
        f"/api/v1/namespaces/{namespace}/services",
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": service, "namespace": namespace, "labels": labels},
            "spec": {
                "ports": [{"name": "https", "port": 443, "targetPort": port, "protocol": "TCP"}]
            },
        },
    )
    _put(
        http,
        f"/apis/discovery.k8s.io/v1/namespaces/{namespace}/endpointslices",
        {
            "apiVersion": "discovery.k8s.io/v1",
            "kind": "EndpointSlice",
            "metadata": {
                "name": service,
                "namespace": namespace,
                "labels": {**labels, "kubernetes.io/service-name": service},
            },
            "addressType": "IPv4",
            "endpoints": [{"addresses": [address], "conditions": {"ready": True}}],
            "ports": [{"name": "https", "port": port, "protocol": "TCP"}],
        },
    )
    _put(
        http,
        f"/api/v1/namespaces/{namespace}/endpoints",
        {
            "apiVersion": "v1",
            "kind": "Endpoints",
            "metadata": {"name": service, "namespace": namespace, "labels": labels},
            "subsets": [
                {
                    "addresses": [{"ip": address}],
                    "ports": [{"name": "https", "port": port, "protocol": "TCP"}],
                }
            ],
        },
    )
    name = f"{version}.{group}"
    stored = _put(
        http,
        _APISERVICES,
        {
            "apiVersion": "apiregistration.k8s.io/v1",
            "kind": "APIService",
            "metadata": {"name": name, "labels": labels},
            "spec": {
                "group": group,
                "version": version,
                "groupPriorityMinimum": group_priority_minimum,
                "versionPriority": version_priority,
                "caBundle": base64.b64encode(ca_bundle).decode(),
                "service": {"namespace": namespace, "name": service, "port": 443},
            },
        },
    )
    if wait:
        deadline = time.monotonic() + timeout
        wait_api_service(http, name, available=True, timeout=timeout)
        _wait_openapi(http, group, version, max(deadline - time.monotonic(), 1.0))
    return stored


def _wait_openapi(http: httpx.Client, group: str, version: str, timeout: float) -> None:
    """Wait until kube-apiserver's OpenAPI v3 index lists the group/version (the aggregator
    fetches it after the APIService is Available; ``kubectl explain`` and kubectl's field
    validation read it)."""
    path = f"apis/{group}/{version}"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        index = http.get("/openapi/v3")
        if index.status_code == 200 and path in (index.json().get("paths") or {}):
            return
        time.sleep(0.2)
    raise ControlPlaneError(
        f"kube-apiserver's /openapi/v3 does not list {path} after {timeout:g}s: the extension "
        "server's /openapi/v3 may fail (see its log)"
    )


def unregister_api_service(
    http: httpx.Client,
    group: str,
    version: str,
    *,
    namespace: str = "default",
    service_name: str = "",
) -> None:
    """Delete the APIService, Service, EndpointSlice and Endpoints :func:`register_api_service`
    wrote (what is already gone is skipped)."""
    service = service_name or f"{group.split('.')[0]}-apiserver"
    for path in (
        f"{_APISERVICES}/{version}.{group}",
        f"/api/v1/namespaces/{namespace}/services/{service}",
        f"/apis/discovery.k8s.io/v1/namespaces/{namespace}/endpointslices/{service}",
        f"/api/v1/namespaces/{namespace}/endpoints/{service}",
    ):
        response = http.delete(path)
        if response.status_code not in (200, 202, 404):
            raise ControlPlaneError(f"delete {path}: {response.status_code} {response.text[:300]}")
