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
import re
import ssl
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from kubectrl.envtest import ControlPlane, ControlPlaneError, WebhookInstallOptions
from kubectrl.envtest._webhooks import PROBE_MESSAGE, PROBE_PATH

pytestmark = pytest.mark.integration

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


def _two_version_crd() -> dict[str, Any]:
    def version(name: str, storage: bool) -> dict[str, Any]:
        return {
            "name": name,
            "served": True,
            "storage": storage,
            "schema": {
                "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
            },
        }

    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.envtest-webhooks.kubectrl.io"},
        "spec": {
            "group": "envtest-webhooks.kubectrl.io",
            "names": {"kind": "Widget", "listKind": "WidgetList", "plural": "widgets"},
            "scope": "Namespaced",
            "versions": [version("v1", True), version("v2", False)],
        },
    }


async def test_conversion_is_pointed_at_the_server_and_put_back_on_uninstall(
    served: tuple[WebhookInstallOptions, list[str]], control_plane: ControlPlane, tmp_path: Path
) -> None:
    options, _calls = served
    path = tmp_path / "widgets.json"
    path.write_text(json.dumps(_two_version_crd()))
    control_plane.install_crds([path])
    crd_path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/" + (
        "widgets.envtest-webhooks.kubectrl.io"
    )
    with control_plane.http_client() as http:
        before = http.get(crd_path).json()["spec"]["conversion"]
    assert before["strategy"] == "None"
    options.conversion_crds = ["widgets.envtest-webhooks.kubectrl.io"]
    await options.install_async(control_plane)
    with control_plane.http_client() as http:
        conversion = http.get(crd_path).json()["spec"]["conversion"]
    assert conversion == {
        "strategy": "Webhook",
        "webhook": {
            "clientConfig": {
                "url": f"https://127.0.0.1:{options.local_serving_port}/convert",
                "caBundle": base64.b64encode(options.local_serving_ca_data).decode(),
            },
            "conversionReviewVersions": ["v1"],
        },
    }
    await options.uninstall_async(control_plane)
    with control_plane.http_client() as http:
        assert http.get(crd_path).json()["spec"]["conversion"] == before


def test_a_missing_crd_for_conversion_is_an_error_naming_it(
    control_plane: ControlPlane, tmp_path: Path
) -> None:
    options = WebhookInstallOptions(
        local_serving_cert_dir=str(tmp_path), conversion_crds=["nothings.example.com"]
    )
    with pytest.raises(
        ControlPlaneError, match=re.escape("CRD 'nothings.example.com' for conversion: HTTP 404")
    ):
        options.install(control_plane)


def test_renewing_the_serving_cert_replaces_both_files_from_the_same_ca(tmp_path: Path) -> None:
    from cryptography import x509

    options = WebhookInstallOptions(local_serving_cert_dir=str(tmp_path)).prepare()
    first = (tmp_path / "tls.crt").read_bytes(), (tmp_path / "tls.key").read_bytes()
    ca = options.local_serving_ca_data
    serial = options.renew_serving_cert()
    cert = x509.load_pem_x509_certificate((tmp_path / "tls.crt").read_bytes())
    assert cert.serial_number == serial
    assert (tmp_path / "tls.key").read_bytes() != first[1]
    assert options.local_serving_ca_data == ca  # the apiserver's caBundle stays valid
    issuer = x509.load_pem_x509_certificate(ca).subject
    assert cert.issuer == issuer
    sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert [str(ip) for ip in sans.get_values_for_type(x509.IPAddress)] == ["127.0.0.1"]
    assert sans.get_values_for_type(x509.DNSName) == ["localhost"]
    # prepare() again changes nothing: same port, same CA.
    port = options.local_serving_port
    assert options.prepare().local_serving_port == port
    assert options.local_serving_ca_data == ca


def test_rewrite_keeps_a_url_path_and_refuses_a_webhook_without_client_config() -> None:
    options = WebhookInstallOptions(local_serving_port=8443, local_serving_ca_data=b"CA")
    config = _validating("x", "/ignored")
    config["metadata"]["resourceVersion"] = "12"
    config["webhooks"][0]["clientConfig"] = {"url": "https://elsewhere:9443/validate-x?q=1"}
    rewritten = options.rewrite(config)
    assert rewritten["webhooks"][0]["clientConfig"] == {
        "url": "https://127.0.0.1:8443/validate-x",
        "caBundle": "Q0E=",
    }
    assert "resourceVersion" not in rewritten["metadata"]
    assert config["metadata"]["resourceVersion"] == "12"  # the input is not changed
    config["webhooks"][0]["clientConfig"] = {}
    with pytest.raises(ControlPlaneError, match=re.escape("webhook 'vcm.kubectrl.io' has neither")):
        options.rewrite(config)


def test_a_file_without_webhook_configurations_installs_nothing_from_it(tmp_path: Path) -> None:
    from kubectrl.envtest._webhooks import _documents

    (tmp_path / "a.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    (tmp_path / "b.yaml").write_text(json.dumps(_validating("y", "/p")))
    assert [doc["metadata"]["name"] for _path, doc in _documents([tmp_path])] == ["y"]
    with pytest.raises(ControlPlaneError, match="does not exist"):
        list(_documents([tmp_path / "missing.yaml"]))


def test_envtest_probes_the_path_and_message_the_webhook_server_answers() -> None:
    """envtest cannot import kubectrl.webhook (layering): its copy of the probe's path and
    message must stay the server's."""
    from kubectrl.webhook import _server

    assert (PROBE_PATH, PROBE_MESSAGE) == (_server.PROBE_PATH, _server.PROBE_MESSAGE)
