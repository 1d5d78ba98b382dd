"""TokenRequest, the proxy subresources and ephemeral containers: the requests sent (an httpx
MockTransport answers as the apiserver does) and the FakeAPI's refusal of what it cannot serve."""

from __future__ import annotations

import datetime
import json
from typing import Any

import httpx
import pytest

from kubectrl.client import AsyncClient, BlockingClient, ClientConfig, ServiceAccountToken
from kubectrl.client._rest_extras import proxy_path
from kubectrl.errors import UnsupportedFeatureError
from kubectrl.testing import FakeAPI

SEEN: list[httpx.Request] = []


def _answer(request: httpx.Request) -> httpx.Response:
    SEEN.append(request)
    path = request.url.path
    if path.endswith("/token"):
        body = json.loads(request.content)
        return httpx.Response(
            201,
            json={
                **body,
                "status": {"token": "a.b.c", "expirationTimestamp": "2030-01-02T03:04:05Z"},
            },
        )
    if "/proxy/" in path:
        return httpx.Response(418, text="from the pod", headers={"Warning": '299 - "proxied"'})
    if path.endswith("/ephemeralcontainers"):
        patch = json.loads(request.content)
        return httpx.Response(200, json={"kind": "Pod", "spec": patch["spec"]})
    return httpx.Response(404, json={"kind": "Status", "code": 404, "message": "no"})


def _client() -> AsyncClient:
    SEEN.clear()
    config = ClientConfig(
        server="https://api.test", transport=httpx.MockTransport(_answer), rate_limit=None
    )
    return AsyncClient(config)


def test_proxy_paths() -> None:
    assert proxy_path("pods", "ns", "web", "metrics", port=8080) == (
        "/api/v1/namespaces/ns/pods/web:8080/proxy/metrics"
    )
    assert proxy_path("services", "ns", "db", "/a b", scheme="https") == (
        "/api/v1/namespaces/ns/services/https:db/proxy/a%20b"
    )
    with pytest.raises(ValueError, match="pods or services"):
        proxy_path("nodes", "ns", "n")
    with pytest.raises(ValueError, match="scheme is 'http' or 'https'"):
        proxy_path("pods", "ns", "n", scheme="ftp")


async def test_create_token_sends_a_token_request_and_types_the_answer() -> None:
    async with _client() as client:
        token = await client.create_token(
            "builder", namespace="ci", audiences=["vault"], expiration_seconds=600, dry_run=True
        )
    assert isinstance(token, ServiceAccountToken)
    assert token.token == "a.b.c"
    assert "a.b.c" not in repr(token)
    assert token.expiration == datetime.datetime(2030, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)
    assert token.audiences == ("vault",)
    sent = SEEN[0]
    assert sent.url.path == "/api/v1/namespaces/ci/serviceaccounts/builder/token"
    assert sent.url.params["dryRun"] == "All"
    body: dict[str, Any] = json.loads(sent.content)
    assert body["kind"] == "TokenRequest"
    assert body["spec"] == {"audiences": ["vault"], "expirationSeconds": 600}
    with pytest.raises(TypeError, match="audiences is a list"):
        await _client().create_token("b", audiences="vault")  # type: ignore[arg-type]


async def test_proxy_returns_the_response_whatever_its_status() -> None:
    from kubectrl.client import WarningRecorder

    recorder = WarningRecorder()
    config = ClientConfig(
        server="https://api.test",
        transport=httpx.MockTransport(_answer),
        rate_limit=None,
        warning_handler=recorder,
    )
    async with AsyncClient(config) as client:
        response = await client.pods.proxy(
            "web", "/hello", namespace="ns", port=80, params={"q": "1"}
        )
        assert (response.status_code, response.text) == (418, "from the pod")
        posted = await client.proxy_service(
            "db", "x", namespace="ns", method="POST", content=b"payload"
        )
        assert posted.status_code == 418
    assert str(SEEN[-2].url) == "https://api.test/api/v1/namespaces/ns/pods/web:80/proxy/hello?q=1"
    assert (SEEN[-1].method, SEEN[-1].content) == ("POST", b"payload")
    assert recorder.texts == ["proxied", "proxied"]


async def test_add_ephemeral_container_is_a_strategic_patch_of_the_subresource() -> None:
    async with _client() as client:
        pod = await client.pods.add_ephemeral_container(
            "web", {"name": "debug", "image": "busybox"}, namespace="ns"
        )
        with pytest.raises(ValueError, match="needs a name"):
            await client.pods.add_ephemeral_container("web", {"image": "busybox"}, namespace="ns")
    assert pod["spec"]["ephemeralContainers"] == [{"name": "debug", "image": "busybox"}]
    assert SEEN[0].method == "PATCH"
    assert SEEN[0].url.path == "/api/v1/namespaces/ns/pods/web/ephemeralcontainers"
    assert SEEN[0].headers["content-type"] == "application/strategic-merge-patch+json"


def test_the_fake_issues_tokens() -> None:
    api = FakeAPI()
    api.seed({"apiVersion": "v1", "kind": "ServiceAccount",
              "metadata": {"name": "builder", "namespace": "default"}})  # fmt: skip
    with BlockingClient(api.config()) as client:
        token = client.create_token("builder", audiences=["vault"], expiration_seconds=600)
    assert token.audiences == ("vault",)
    assert token.token.count(".") == 2  # a JWT


def test_the_fake_refuses_what_it_cannot_serve_and_stores_ephemeral_containers() -> None:
    api = FakeAPI()
    api.seed(
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
         "spec": {"containers": [{"name": "c", "image": "x"}]}}
    )  # fmt: skip
    with BlockingClient(api.config()) as client:
        with pytest.raises(UnsupportedFeatureError, match="pods/proxy"):
            client.pods.proxy("p", "/")
        with pytest.raises(UnsupportedFeatureError, match="services/proxy"):
            client.proxy_service("s", "/", port=80)
        pod = client.pods.add_ephemeral_container("p", {"name": "d", "image": "b"})
        assert [c["name"] for c in pod["spec"]["ephemeralContainers"]] == ["d"]
