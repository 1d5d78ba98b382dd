"""client-go's REST client metrics (k8s.io/client-go tools/metrics, rest/request.go
``updateURLMetrics``: one ``RequestResult`` per exchange, code ``"<error>"`` when none came;
one ``RequestLatency`` per request) with controller-runtime's names and labels
(pkg/metrics/client_go_adapter.go: ``rest_client_requests_total{code, method, host}``,
``rest_client_request_duration_seconds{verb, host}``)."""

from __future__ import annotations

import socket

import pytest
from prometheus_client import CollectorRegistry

from kubectrl.client import AsyncClient, ClientConfig, RetryPolicy
from kubectrl.client.metrics import RestClientMetrics
from kubectrl.errors import APIConnectionError, NotFoundError
from kubectrl.runtime import Manager
from kubectrl.testing import FakeAPI

CM = ("v1", "ConfigMap")


def requests(registry: CollectorRegistry, code: str, method: str, host: str) -> float:
    value = registry.get_sample_value(
        "rest_client_requests_total", {"code": code, "method": method, "host": host}
    )
    return value or 0.0


def durations(registry: CollectorRegistry, verb: str, host: str) -> float:
    value = registry.get_sample_value(
        "rest_client_request_duration_seconds_count", {"verb": verb, "host": host}
    )
    return value or 0.0


async def test_each_request_is_counted_by_code_method_and_host() -> None:
    registry = CollectorRegistry()
    metrics = RestClientMetrics(registry)
    api = FakeAPI()
    host = "fake-apiserver"
    async with AsyncClient(api.config()) as client:
        await client.list(CM, namespace="default")  # discovery on the first use: GETs
        gets, get_durations = (
            requests(registry, "200", "GET", host),
            durations(registry, "GET", host),
        )
        await client.list(CM, namespace="default")
        await client.create(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "a", "namespace": "default"},
            }
        )
        with pytest.raises(NotFoundError):
            await client.get(CM, "missing", namespace="default")
    assert requests(registry, "200", "GET", host) == gets + 1
    assert requests(registry, "201", "POST", host) == 1
    assert requests(registry, "404", "GET", host) == 1
    assert durations(registry, "GET", host) == get_durations + 2
    assert durations(registry, "POST", host) == 1
    metrics.close()
    async with AsyncClient(api.config()) as client:
        await client.list(CM, namespace="default")
    assert requests(registry, "200", "GET", host) == gets + 1  # closed: no longer reported


async def test_no_answer_is_code_error() -> None:
    with socket.socket() as sock:  # a loopback port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    registry = CollectorRegistry()
    metrics = RestClientMetrics(registry)
    config = ClientConfig(server=f"http://127.0.0.1:{port}", retry=RetryPolicy(max_attempts=1))
    async with AsyncClient(config) as client:
        with pytest.raises(APIConnectionError):
            await client.list(CM, namespace="default")
    assert requests(registry, "<error>", "GET", f"127.0.0.1:{port}") == 1
    assert durations(registry, "GET", f"127.0.0.1:{port}") == 1
    metrics.close()


async def test_a_manager_reports_them_on_its_registry() -> None:
    api = FakeAPI()
    registry = CollectorRegistry()
    manager = Manager(api.config(), registry=registry)
    await manager.api_reader.list(CM, namespace="default")
    before = requests(registry, "200", "GET", "fake-apiserver")
    assert before >= 1
    await manager.api_reader.list(CM, namespace="default")
    assert requests(registry, "200", "GET", "fake-apiserver") == before + 1
    # What its shutdown does (a manager observes every client of the process until then).
    assert manager._rest_metrics is not None
    manager._rest_metrics.close()
