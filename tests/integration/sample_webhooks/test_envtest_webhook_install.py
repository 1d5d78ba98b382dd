"""``kubectrl.envtest.WebhookInstallOptions`` against the real apiserver, with a bare server.

The server here is a few lines of aiohttp answering the probe path (no ``kubectrl.webhook``), so
these tests pin envtest's part alone: certificates the apiserver trusts, configurations rewritten
to ``url:`` + ``caBundle`` as controller-runtime's pkg/envtest/webhook.go
(``ModifyWebhookDefinitions``/``updateClientConfig``) does, an install that returns only once the
apiserver calls the server, a clear error naming the URL when it never does, and an uninstall
that leaves nothing behind.
"""

from __future__ import annotations

import asyncio
import base64
import json
import ssl
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from kubectrl.envtest import ControlPlane, ControlPlaneError, WebhookInstallOptions
from kubectrl.envtest._webhooks import PROBE_MESSAGE, PROBE_PATH

ADMISSION = "/apis/admissionregistration.k8s.io/v1"
CALLS = web.AppKey("calls", list[str])


async def _review(request: web.Request) -> web.Response:
    """The probe path's answer, plus a validating webhook refusing ConfigMaps named 'no'."""
    review = await request.json()
    uid = review["request"]["uid"]
    request.app[CALLS].append(request.path)
    if request.path == PROBE_PATH:
        response: dict[str, Any] = {
            "uid": uid,
            "allowed": False,
            "status": {"code": 403, "message": PROBE_MESSAGE},
        }
    elif review["request"]["object"]["metadata"].get("name") == "no":
        response = {"uid": uid, "allowed": False, "status": {"code": 403, "message": "not 'no'"}}
    else:
        response = {"uid": uid, "allowed": True}
    return web.json_response(
        {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response}
    )


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[tuple[WebhookInstallOptions, list[str]]]:
    options = WebhookInstallOptions(local_serving_cert_dir=str(tmp_path / "certs")).prepare()
    app = web.Application()
    app[CALLS] = []
    app.router.add_post("/{tail:.*}", _review)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    cert_dir = Path(options.local_serving_cert_dir)
    context.load_cert_chain(cert_dir / "tls.crt", cert_dir / "tls.key")
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", options.local_serving_port, ssl_context=context)
    await site.start()
    try:
        yield options, app[CALLS]
    finally:
        await runner.cleanup()


def _validating(name: str, path: str) -> dict[str, Any]:
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": name},
        "webhooks": [
            {
                "name": "vcm.kubectrl.io",
                "clientConfig": {
                    "service": {"name": "svc", "namespace": "ns", "path": path, "port": 443}
                },
                "rules": [
                    {
                        "apiGroups": [""],
                        "apiVersions": ["v1"],
                        "operations": ["CREATE"],
                        "resources": ["configmaps"],
                    }
                ],
                "objectSelector": {"matchLabels": {"envtest-webhook-test": name}},
                "admissionReviewVersions": ["v1"],
                "sideEffects": "None",
                "failurePolicy": "Fail",
            }
        ],
    }


async def test_install_waits_until_the_apiserver_calls_and_uninstall_removes_it(
    served: tuple[WebhookInstallOptions, list[str]],
    control_plane: ControlPlane,
    namespace: str,
) -> None:
    options, calls = served
    options.configurations = [_validating("envtest-install-test", "/validate-cm")]
    await options.install_async(control_plane)
    # Returned only after the apiserver called the probe path.
    assert PROBE_PATH in calls
    with control_plane.http_client() as http:
        stored = http.get(f"{ADMISSION}/validatingwebhookconfigurations/envtest-install-test")
        assert stored.status_code == 200
        client_config = stored.json()["webhooks"][0]["clientConfig"]
        assert client_config["url"] == (
            f"https://127.0.0.1:{options.local_serving_port}/validate-cm"
        )
        assert base64.b64decode(client_config["caBundle"]) == options.local_serving_ca_data
        probes = http.get(f"{ADMISSION}/validatingwebhookconfigurations").json()["items"]
        assert not [p for p in probes if p["metadata"]["name"].startswith("kubectrl-webhook-")]
        labels = {"envtest-webhook-test": "envtest-install-test"}
        # The blocking client runs in a thread: the server answers on this test's loop.
        refused = await asyncio.to_thread(
            http.post,
            f"/api/v1/namespaces/{namespace}/configmaps",
            json={"metadata": {"name": "no", "labels": labels}},
        )
        assert refused.status_code == 403, refused.text
        assert "not 'no'" in refused.json()["message"]
        accepted = await asyncio.to_thread(
            http.post,
            f"/api/v1/namespaces/{namespace}/configmaps",
            json={"metadata": {"name": "yes", "labels": labels}},
        )
        assert accepted.status_code == 201, accepted.text

    await options.uninstall_async(control_plane)
    with control_plane.http_client() as http:
        gone = http.get(f"{ADMISSION}/validatingwebhookconfigurations/envtest-install-test")
        assert gone.status_code == 404


async def test_install_reads_configurations_from_files_and_takes_a_kubeconfig(
    served: tuple[WebhookInstallOptions, list[str]], control_plane: ControlPlane, tmp_path: Path
) -> None:
    options, calls = served
    path = tmp_path / "hooks.json"
    path.write_text(json.dumps(_validating("envtest-file-test", "/validate-file")))
    options.paths = [path]
    # The API server named by a kubeconfig path (as `python -m kubectrl.envtest start` prints).
    await options.install_async(str(control_plane.kubeconfig.path))
    assert PROBE_PATH in calls
    try:
        with control_plane.http_client() as http:
            stored = http.get(f"{ADMISSION}/validatingwebhookconfigurations/envtest-file-test")
            assert stored.json()["webhooks"][0]["clientConfig"]["url"].endswith("/validate-file")
    finally:
        await options.uninstall_async(control_plane)


def test_an_unreachable_server_is_an_error_naming_its_url(
    control_plane: ControlPlane, tmp_path: Path
) -> None:
    # Nothing listens on the port: the apiserver's calls fail and install gives up in time.
    options = WebhookInstallOptions(local_serving_cert_dir=str(tmp_path), max_time=2.0)
    with pytest.raises(ControlPlaneError) as raised:
        options.install(control_plane)
    message = str(raised.value)
    assert f"https://127.0.0.1:{options.local_serving_port}{PROBE_PATH}" in message
    assert "last dry-run probe: HTTP 500" in message
    with control_plane.http_client() as http:
        probes = http.get(f"{ADMISSION}/validatingwebhookconfigurations").json()["items"]
        assert not [p for p in probes if p["metadata"]["name"].startswith("kubectrl-webhook-")]
