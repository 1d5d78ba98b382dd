"""Delegated authentication and authorization on a loopback server, kube-apiserver played by an
httpx mock (the ConfigMap, TokenReview and SubjectAccessReview it would answer)."""

from __future__ import annotations

import json
import ssl
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from kubectrl.apiserver import APIServer, DelegatingAuth, UserInfo
from kubectrl.envtest._certs import CertificateAuthority, KeyPair

sys.path.insert(0, str(Path(__file__).parents[3] / "examples" / "sample_apiserver"))
from wardle import wardle_server

FLUNDERS = "/apis/wardle.example.com/v1alpha1/namespaces/default/flunders"


class FakeCluster:
    """kube-apiserver as the extension server sees it; records the reviews it is asked."""

    def __init__(self) -> None:
        self.client_ca = CertificateAuthority("client-ca")
        self.front_ca = CertificateAuthority("front-proxy-ca")
        self.reviews: list[dict[str, Any]] = []
        self.tokens = {"good-token": {"username": "tina", "groups": ["devs"]}}
        self.allowed_users = {"alice", "tina"}

    def handle(self, request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/configmaps/extension-apiserver-authentication"):
            data = {
                "client-ca-file": self.client_ca.cert_pem.decode(),
                "requestheader-client-ca-file": self.front_ca.cert_pem.decode(),
                "requestheader-allowed-names": '["front-proxy-client"]',
                "requestheader-username-headers": '["X-Remote-User"]',
                "requestheader-group-headers": '["X-Remote-Group"]',
                "requestheader-extra-headers-prefix": '["X-Remote-Extra-"]',
            }
            return httpx.Response(200, json={"data": data})
        body = json.loads(request.content)
        self.reviews.append(body)
        if body["kind"] == "TokenReview":
            user = self.tokens.get(body["spec"]["token"])
            status = {"authenticated": True, "user": user} if user else {"authenticated": False}
            return httpx.Response(201, json={**body, "status": status})
        allowed = body["spec"]["user"] in self.allowed_users
        return httpx.Response(201, json={**body, "status": {"allowed": allowed}})


class MockConfig:
    def __init__(self, cluster: FakeCluster) -> None:
        self.server = "https://kube-apiserver"
        self.cluster = cluster

    def async_httpx_client(
        self, *, max_connections: int | None = None, timeout: float | None = None
    ) -> httpx.AsyncClient:
        return httpx.AsyncClient(
            base_url=self.server, transport=httpx.MockTransport(self.cluster.handle)
        )


class Running:
    def __init__(self, server: APIServer, serving_ca: CertificateAuthority, tmp: Path) -> None:
        self.server = server
        self.serving_ca = serving_ca
        self.tmp = tmp

    def client(self, pair: KeyPair | None = None) -> httpx.AsyncClient:
        context = ssl.create_default_context(cadata=self.serving_ca.cert_pem.decode())
        if pair is not None:
            cert, key = self.tmp / f"c{id(pair)}.crt", self.tmp / f"c{id(pair)}.key"
            cert.write_bytes(pair.cert_pem)
            key.write_bytes(pair.key_pem)
            context.load_cert_chain(str(cert), str(key))
        return httpx.AsyncClient(base_url=f"https://127.0.0.1:{self.server.port}", verify=context)


@pytest.fixture
def cluster() -> FakeCluster:
    return FakeCluster()


@pytest.fixture
async def running(cluster: FakeCluster, tmp_path: Path) -> AsyncIterator[Running]:
    serving_ca = CertificateAuthority()
    pair = serving_ca.issue("wardle", ip_addresses=("127.0.0.1",), server=True)
    (tmp_path / "tls.crt").write_bytes(pair.cert_pem)
    (tmp_path / "tls.key").write_bytes(pair.key_pem)
    server = wardle_server(auth=DelegatingAuth(MockConfig(cluster)))
    await server.start(
        host="127.0.0.1",
        port=0,
        cert_file=str(tmp_path / "tls.crt"),
        key_file=str(tmp_path / "tls.key"),
    )
    yield Running(server, serving_ca, tmp_path)
    await server.stop()


async def test_front_proxy_headers_are_trusted_only_from_the_front_proxy(
    running: Running, cluster: FakeCluster
) -> None:
    proxy = cluster.front_ca.issue("front-proxy-client")
    headers = {"X-Remote-User": "alice", "X-Remote-Group": "devs", "X-Remote-Extra-Scopes": "a"}
    async with running.client(proxy) as http:
        assert (await http.get(FLUNDERS, headers=headers)).status_code == 200
    review = cluster.reviews[-1]["spec"]
    assert review["user"] == "alice"
    assert review["groups"] == ["devs", "system:authenticated"]
    assert review["extra"] == {"scopes": ["a"]}
    assert review["resourceAttributes"] == {
        "namespace": "default",
        "verb": "list",
        "group": "wardle.example.com",
        "version": "v1alpha1",
        "resource": "flunders",
    }
    # The same headers without a certificate, or with one of the front-proxy CA whose name is
    # not allowed: nobody (anonymous is refused).
    async with running.client() as http:
        assert (await http.get(FLUNDERS, headers=headers)).status_code == 401
    impostor = cluster.front_ca.issue("someone-else")
    async with running.client(impostor) as http:
        answer = await http.get(FLUNDERS, headers=headers)
    assert answer.status_code == 401
    assert answer.json()["reason"] == "Unauthorized"
    # Health checks need nobody.
    async with running.client() as http:
        assert (await http.get("/readyz")).text == "ok"


async def test_client_certificates_and_tokens_then_rbac(
    running: Running, cluster: FakeCluster
) -> None:
    alice = cluster.client_ca.issue("alice", organizations=["devs"])
    bob = cluster.client_ca.issue("bob")
    async with running.client(alice) as http:
        created = await http.post(
            FLUNDERS, json={"metadata": {"name": "a"}, "spec": {"reference": "x"}}
        )
        assert created.status_code == 201
    async with running.client(bob) as http:
        denied = await http.get(f"{FLUNDERS}/a", headers={"X-Remote-User": "alice"})
    assert denied.status_code == 403
    assert denied.json()["message"].startswith(
        'flunders.wardle.example.com "a" is forbidden: User "bob" cannot get resource'
    )
    async with running.client() as http:
        token = {"Authorization": "Bearer good-token"}
        assert (await http.get(f"{FLUNDERS}/a", headers=token)).status_code == 200
        asked = len(cluster.reviews)
        assert (await http.get(f"{FLUNDERS}/a", headers=token)).status_code == 200
        assert len(cluster.reviews) == asked  # both reviews came from the cache
        bad = {"Authorization": "Bearer wrong"}
        assert (await http.get(f"{FLUNDERS}/a", headers=bad)).status_code == 401


async def test_user_info_from_a_front_proxy_certificate_directly(cluster: FakeCluster) -> None:
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    auth = DelegatingAuth(MockConfig(cluster))
    await auth.load()
    assert auth.allowed_names == ["front-proxy-client"]
    der = x509.load_pem_x509_certificate(
        cluster.front_ca.issue("front-proxy-client").cert_pem
    ).public_bytes(serialization.Encoding.DER)
    user = await auth.authenticate(der, {"x-remote-user": "u", "x-remote-group": "g"})
    assert user == UserInfo("u", groups=("g", "system:authenticated"))
    # A front-proxy connection without a user header is nobody (no other authenticator knows it).
    assert await auth.authenticate(der, {}) is None


async def test_a_certificate_is_verified_once_until_the_cas_are_reloaded(
    cluster: FakeCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each request on a connection brings the same client certificate; its verification
    against the CAs (hundreds of µs of signature checks) is done once and remembered, the
    front proxy's headers still read on every request, and the verdicts forgotten when
    :meth:`DelegatingAuth.load` reads the CAs again (a certificate of a CA no longer trusted is
    then nobody)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    def der(pem: bytes) -> bytes:
        return x509.load_pem_x509_certificate(pem).public_bytes(serialization.Encoding.DER)

    auth = DelegatingAuth(MockConfig(cluster))
    await auth.load()
    checks: list[object] = []
    issued = DelegatingAuth._issued

    def counted(cert: Any, cas: Any) -> bool:
        checks.append(cert)
        return issued(cert, cas)

    monkeypatch.setattr(DelegatingAuth, "_issued", staticmethod(counted))
    alice = der(cluster.client_ca.issue("alice", organizations=["devs"]).cert_pem)
    first = await auth.authenticate(alice, {})
    verified = len(checks)
    assert first == UserInfo("alice", groups=("devs", "system:authenticated"))
    assert await auth.authenticate(alice, {}) == first
    assert len(checks) == verified  # the second request did not verify again

    proxy = der(cluster.front_ca.issue("front-proxy-client").cert_pem)
    assert await auth.authenticate(proxy, {"x-remote-user": "u1"}) == UserInfo(
        "u1", groups=("system:authenticated",)
    )
    assert await auth.authenticate(proxy, {"x-remote-user": "u2"}) == UserInfo(
        "u2", groups=("system:authenticated",)
    )

    cluster.client_ca = CertificateAuthority("rotated-client-ca")
    await auth.load()
    assert await auth.authenticate(alice, {}) is None


async def test_system_masters_is_allowed_without_asking_kube_apiserver(
    cluster: FakeCluster,
) -> None:
    """``k8s.io/apiserver``'s delegated authorization allows ``system:masters`` in a
    hard-coded authorizer before the SubjectAccessReview one (``AlwaysAllowGroups``, default
    ``["system:masters"]``: staging/src/k8s.io/apiserver/pkg/server/options/authorization.go,
    ``privilegedGroupAuthorizer`` in pkg/authorization/authorizerfactory/builtin.go); other
    users are still reviewed, and ``always_allow_groups=()`` reviews everyone."""
    from kubectrl.apiserver._server.auth import Attributes

    get = Attributes(verb="get", group="wardle.example.com", version="v1alpha1",
                     resource="flunders", namespace="default", name="a")  # fmt: skip
    auth = DelegatingAuth(MockConfig(cluster))
    admin = UserInfo("admin", groups=("system:masters", "system:authenticated"))
    assert await auth.authorize(admin, get) == (True, "")
    assert cluster.reviews == []
    assert (await auth.authorize(UserInfo("bob"), get))[0] is False
    assert [r["spec"]["user"] for r in cluster.reviews] == ["bob"]

    strict = DelegatingAuth(MockConfig(cluster), always_allow_groups=())
    assert (await strict.authorize(admin, get))[0] is False  # the mock allows alice and tina
    assert [r["spec"]["user"] for r in cluster.reviews] == ["bob", "admin"]
