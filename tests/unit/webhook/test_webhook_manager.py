"""The Manager runs the webhook server iff something is registered (controller-runtime's
manager adds the webhook server as a runnable of its own group, started before the caches on
every replica), shows it in /readyz as "webhook" and stops it on shutdown."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from kubectrl.runtime import Manager, ManagerOptions, WebhookBuilder
from kubectrl.testing import FakeAPI, run_manager
from kubectrl.webhook import WebhookServerOptions

from .test_webhook_admission import TypedDefaulter
from .webhook_models import Foo, admission_review, foo


def new_manager(cert_dir: Path, **options: object) -> Manager:
    api = FakeAPI()
    return Manager(
        api.config(),
        options=ManagerOptions(
            metrics_bind_address="0",
            health_probe_bind_address="127.0.0.1:0",
            webhook_server=WebhookServerOptions(host="127.0.0.1", port=0, cert_dir=str(cert_dir)),
            **options,  # type: ignore[arg-type]
        ),
    )


async def test_manager_serves_registered_webhooks(
    cert_dir: Path, client: httpx.AsyncClient
) -> None:
    manager = new_manager(cert_dir, leader_election=False)
    WebhookBuilder(manager).for_(Foo).with_defaulter(TypedDefaulter()).complete()
    server = manager.webhook_server
    async with run_manager(manager):
        assert server.serving
        port = server.port
        assert port != 0
        url = f"https://127.0.0.1:{port}/mutate-samplecontroller-k8s-io-v1alpha1-foo"
        answer = (
            await client.post(url, json=admission_review("CREATE", foo(deploymentName="w")))
        ).json()
        assert answer["response"]["allowed"] is True
        assert "patch" in answer["response"]
        async with httpx.AsyncClient() as plain:
            readyz = await plain.get(f"http://127.0.0.1:{manager.probe_port}/readyz?verbose")
        assert readyz.status_code == 200
        assert "[+]webhook ok" in readyz.text
    assert not server.serving
    async with httpx.AsyncClient(verify=False) as probe:
        try:
            await probe.post(url, json={})
            refused = False
        except httpx.ConnectError:
            refused = True
    assert refused


async def test_nothing_registered_opens_no_port(cert_dir: Path) -> None:
    manager = new_manager(cert_dir)
    server = manager.webhook_server  # created, but nothing registered
    async with run_manager(manager):
        assert not server.serving
        async with httpx.AsyncClient() as plain:
            readyz = await plain.get(f"http://127.0.0.1:{manager.probe_port}/readyz?verbose")
        assert "webhook" not in readyz.text
    assert not server.serving


async def test_manager_without_certificates_fails_to_start(tmp_path: Path) -> None:
    manager = new_manager(tmp_path)
    WebhookBuilder(manager).for_(Foo).with_defaulter(TypedDefaulter()).complete()
    with pytest.raises(FileNotFoundError, match=r"no tls\.crt in .*cert_dir") as info:
        async with run_manager(manager):
            pass
    assert str(tmp_path) in str(info.value)
    assert not manager.webhook_server.serving


async def test_webhook_requests_are_in_the_managers_metrics(
    cert_dir: Path, client: httpx.AsyncClient
) -> None:
    """controller-runtime pkg/webhook/internal/metrics/metrics.go: requests_total and
    latency_seconds by webhook (path) and HTTP code, requests_in_flight by webhook."""
    api = FakeAPI()
    manager = Manager(
        api.config(),
        options=ManagerOptions(
            metrics_bind_address="127.0.0.1:0",
            webhook_server=WebhookServerOptions(host="127.0.0.1", port=0, cert_dir=str(cert_dir)),
        ),
    )
    WebhookBuilder(manager).for_(Foo).with_defaulter(TypedDefaulter()).complete()
    path = "/mutate-samplecontroller-k8s-io-v1alpha1-foo"
    async with run_manager(manager):
        url = f"https://127.0.0.1:{manager.webhook_server.port}{path}"
        for _ in range(2):
            review = admission_review("CREATE", foo(deploymentName="w"))
            assert (await client.post(url, json=review)).status_code == 200
        async with httpx.AsyncClient() as plain:
            text = (await plain.get(f"http://127.0.0.1:{manager.metrics_port}/metrics")).text
    labels = f'code="200",webhook="{path}"'
    assert f"controller_runtime_webhook_requests_total{{{labels}}} 2.0" in text
    assert f"controller_runtime_webhook_latency_seconds_count{{{labels}}} 2.0" in text
    assert f'controller_runtime_webhook_requests_in_flight{{webhook="{path}"}} 0.0' in text
