"""Secure metrics: TLS, TokenReview and SubjectAccessReview on the real apiserver (issue 16, #18).

controller-runtime (pkg/metrics/filters/filters.go, ``WithAuthenticationAndAuthorization``)
authenticates the bearer token with a TokenReview (no or bad token: 401) and authorizes the user
with a SubjectAccessReview on the non-resource URL and the lower-cased method (denied: 403).
"""

from __future__ import annotations

import ssl
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from kubectrl.client import AsyncClient
from kubectrl.runtime._manager import Manager

from .conftest import eventually, start_in_background

pytestmark = pytest.mark.integration


def service_account_token(control_plane: Any, namespace: str, name: str) -> str:
    """A bound token of a new ServiceAccount, from the TokenRequest API."""
    with control_plane.http_client() as http:
        created = http.post(
            f"/api/v1/namespaces/{namespace}/serviceaccounts",
            json={"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}},
        )
        assert created.status_code == 201, created.text
        response = http.post(
            f"/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token",
            json={
                "apiVersion": "authentication.k8s.io/v1",
                "kind": "TokenRequest",
                "spec": {"expirationSeconds": 600},
            },
        )
        assert response.status_code == 201, response.text
        return str(response.json()["status"]["token"])


async def allow_metrics(api: AsyncClient, namespace: str, account: str) -> None:
    name = f"{namespace}-metrics-reader"
    await api.create(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": name},
            "rules": [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}],
        }
    )
    await api.create(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": name},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": name,
            },
            "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": namespace}],
        }
    )


async def scrape(port: int | None, verify: ssl.SSLContext | bool, token: str = "") -> int:
    assert port is not None
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx.AsyncClient(verify=verify) as http:
        response = await http.get(f"https://127.0.0.1:{port}/metrics", headers=headers, timeout=30)
        if response.status_code == 200:  # the Prometheus exposition, not an error page
            assert response.headers["content-type"].startswith("text/plain; version=")
        return response.status_code


async def test_secure_metrics_401_without_token_403_without_rbac_200_with_rbac(
    managers: Callable[..., Manager],
    api: AsyncClient,
    namespace: str,
    control_plane: Any,
) -> None:
    manager = managers(metrics_secure=True)  # self-signed certificate
    task = start_in_background(manager)
    await eventually(lambda: manager.metrics_port is not None, what="metrics server listening")
    denied = service_account_token(control_plane, namespace, "no-rbac")
    allowed = service_account_token(control_plane, namespace, "scraper")
    await allow_metrics(api, namespace, "scraper")

    # Plain HTTP is not served at all.
    with pytest.raises(httpx.HTTPError):
        async with httpx.AsyncClient() as http:
            await http.get(f"http://127.0.0.1:{manager.metrics_port}/metrics", timeout=10)
    assert await scrape(manager.metrics_port, False) == 401
    assert await scrape(manager.metrics_port, False, "not-a-token") == 401
    assert await scrape(manager.metrics_port, False, denied) == 403
    assert await scrape(manager.metrics_port, False, allowed) == 200
    assert not task.done()


async def test_secure_metrics_serve_the_certificate_from_cert_dir(
    managers: Callable[..., Manager],
    api: AsyncClient,
    namespace: str,
    control_plane: Any,
    tmp_path: Path,
) -> None:
    from kubectrl.envtest._certs import CertificateAuthority

    ca = CertificateAuthority("metrics-test-ca")
    pair = ca.issue("metrics", dns_names=["localhost"], ip_addresses=["127.0.0.1"], server=True)
    (tmp_path / "tls.crt").write_bytes(pair.cert_pem)
    (tmp_path / "tls.key").write_bytes(pair.key_pem)
    manager = managers(metrics_secure=True, metrics_cert_dir=str(tmp_path))
    start_in_background(manager)
    await eventually(lambda: manager.metrics_port is not None, what="metrics server listening")
    token = service_account_token(control_plane, namespace, "scraper")
    await allow_metrics(api, namespace, "scraper")
    trust = ssl.create_default_context(cadata=ca.cert_pem.decode())
    assert await scrape(manager.metrics_port, trust, token) == 200  # verified against the CA
