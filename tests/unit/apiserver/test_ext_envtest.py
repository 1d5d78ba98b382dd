"""envtest's APIService registration, against a mocked kube-apiserver."""

from __future__ import annotations

import base64
import json
from typing import Any

import httpx
import pytest

from kubectrl.envtest._aggregation import register_api_service, unregister_api_service
from kubectrl.envtest._errors import ControlPlaneError


class Cluster:
    def __init__(self, available: str = "True") -> None:
        self.objects: dict[str, dict[str, Any]] = {}
        self.available = available

    def handle(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if request.method == "POST":
            body = json.loads(request.content)
            self.objects[f"{path}/{body['metadata']['name']}"] = body
            return httpx.Response(201, json=body)
        if request.method == "DELETE":
            return httpx.Response(200 if self.objects.pop(path, None) else 404, json={})
        if path == "/openapi/v3":
            return httpx.Response(200, json={"paths": {"apis/wardle.example.com/v1alpha1": {}}})
        found = self.objects.get(path)
        if found is None:
            return httpx.Response(404, json={})
        status = {
            "conditions": [
                {
                    "type": "Available",
                    "status": self.available,
                    "message": "failing or missing response",
                }
            ]
        }
        return httpx.Response(200, json={**found, "status": status})


def client(cluster: Cluster) -> httpx.Client:
    return httpx.Client(base_url="https://api", transport=httpx.MockTransport(cluster.handle))


def test_registers_service_endpoints_and_apiservice() -> None:
    cluster = Cluster()
    with client(cluster) as http:
        stored = register_api_service(
            http,
            "wardle.example.com",
            "v1alpha1",
            ca_bundle=b"PEM",
            address="192.0.2.10",
            port=8443,
        )
        assert stored["spec"]["service"] == {
            "namespace": "default",
            "name": "wardle-apiserver",
            "port": 443,
        }
        assert base64.b64decode(stored["spec"]["caBundle"]) == b"PEM"
        slice_ = cluster.objects[
            "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/wardle-apiserver"
        ]
        assert slice_["endpoints"][0]["addresses"] == ["192.0.2.10"]
        assert slice_["ports"] == [{"name": "https", "port": 8443, "protocol": "TCP"}]
        unregister_api_service(http, "wardle.example.com", "v1alpha1")
        assert cluster.objects == {}


def test_refuses_loopback_and_reports_an_unavailable_apiservice() -> None:
    with client(Cluster()) as http, pytest.raises(ValueError, match="loopback"):
        register_api_service(
            http, "wardle.example.com", "v1alpha1", ca_bundle=b"", address="127.0.0.1", port=1
        )
    with (
        client(Cluster(available="False")) as http,
        pytest.raises(ControlPlaneError, match="failing or missing response"),
    ):
        register_api_service(
            http,
            "wardle.example.com",
            "v1alpha1",
            ca_bundle=b"",
            address="192.0.2.10",
            port=1,
            timeout=0.5,
        )
