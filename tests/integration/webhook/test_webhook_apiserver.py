"""The real kube-apiserver calling kubectrl's webhook server: defaulting (JSON patch), validation
(messages and warnings), CRD conversion between two shapes, the probe path, and a serving
certificate replaced on disk being used without a restart.

What the API server expects of a webhook: admission v1 AdmissionReview with the request's uid
echoed and patchType JSONPatch (k8s.io/apiserver pkg/admission/plugin/webhook/mutating/
dispatcher.go, request/admissionreview.go); ConversionReview v1 whose converted objects keep
metadata except labels and annotations (apiextensions-apiserver pkg/apiserver/conversion/
webhook_converter.go).
"""

from __future__ import annotations

import base64
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from kubectrl import crd
from kubectrl.client import ClientConfig
from kubectrl.envtest import ControlPlane
from kubectrl.runtime import Manager, ManagerOptions, WebhookBuilder
from kubectrl.webhook import (
    PROBE_PATH,
    WebhookServerOptions,
    conversion_stanza,
    webhook_configurations,
)
from kubectrl.webhook._server import PROBE_MESSAGE

from .conftest import Pair, ThreadedServer, make_pair, write_pair
from .gizmo import GROUP, Gizmo, GizmoDefaulter, GizmoV1beta1, GizmoValidator

pytestmark = pytest.mark.integration

DEADLINE = 30.0
PREFIX = "kubectrl-webhook-it"
ADMISSION = "/apis/admissionregistration.k8s.io/v1"


@pytest.fixture(scope="module")
def first_pair() -> Pair:
    return make_pair()


@pytest.fixture(scope="module")
def cert_dir(tmp_path_factory: pytest.TempPathFactory, first_pair: Pair) -> Path:
    directory = tmp_path_factory.mktemp("serving-certs")
    write_pair(directory, first_pair)
    return directory


@pytest.fixture(scope="module")
def served(
    control_plane: ControlPlane, cert_dir: Path, first_pair: Pair
) -> Iterator[ThreadedServer]:
    """Gizmo's webhooks registered through a Manager, served from a thread; the CRD and the
    webhook configurations installed with url + caBundle; everything removed afterwards."""
    manager = Manager(
        ClientConfig(server="https://127.0.0.1:9"),  # never contacted: only the webhook server runs
        options=ManagerOptions(
            metrics_bind_address="0",
            webhook_server=WebhookServerOptions(host="127.0.0.1", port=0, cert_dir=str(cert_dir)),
        ),
    )
    WebhookBuilder(manager).for_(Gizmo).with_defaulter(GizmoDefaulter()).with_validator(
        GizmoValidator()
    ).with_conversion(GizmoV1beta1).complete()
    threaded = ThreadedServer(manager.webhook_server)
    threaded.start()
    base = f"https://127.0.0.1:{manager.webhook_server.port}"
    definition = crd.generate(
        Gizmo,
        GizmoV1beta1,
        conversion=conversion_stanza(url=f"{base}/convert", ca_bundle=first_pair.cert_pem),
    )
    configs = webhook_configurations(
        manager, name_prefix=PREFIX, base_url=base, ca_bundle=first_pair.cert_pem
    )
    probe = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": f"{PREFIX}-probe"},
        "webhooks": [
            {
                "name": "probe.webhooks.kubectrl.dev",
                "admissionReviewVersions": ["v1"],
                "clientConfig": {
                    "url": base + PROBE_PATH,
                    "caBundle": configs[0]["webhooks"][0]["clientConfig"]["caBundle"],
                },
                "rules": [
                    {
                        "apiGroups": [""],
                        "apiVersions": ["v1"],
                        "operations": ["CREATE"],
                        "resources": ["configmaps"],
                    }
                ],
                "objectSelector": {"matchLabels": {"kubectrl.dev/webhook-probe": "yes"}},
                "sideEffects": "None",
                "failurePolicy": "Fail",
                "timeoutSeconds": 10,
            }
        ],
    }
    crd_path = cert_dir.parent / "gizmos.yaml"
    crd_path.write_text(crd.to_yaml(definition), encoding="utf-8")
    control_plane.install_crds([crd_path])
    with control_plane.http_client() as http:
        for config in [*configs, probe]:
            plural = config["kind"].lower() + "s"
            created = http.post(f"{ADMISSION}/{plural}", json=config)
            assert created.status_code == 201, created.text
    try:
        yield threaded
    finally:
        with control_plane.http_client() as http:
            for config in [*configs, probe]:
                plural = config["kind"].lower() + "s"
                http.delete(f"{ADMISSION}/{plural}/{config['metadata']['name']}")
            http.delete(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gizmos.{GROUP}")
        threaded.stop()


@pytest.fixture
def http(control_plane: ControlPlane, served: ThreadedServer) -> Iterator[httpx.Client]:
    with control_plane.http_client() as client:
        yield client


def gizmos(namespace: str, version: str = "v1alpha1", name: str = "") -> str:
    path = f"/apis/{GROUP}/{version}/namespaces/{namespace}/gizmos"
    return f"{path}/{name}" if name else path


def gizmo(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/v1alpha1",
        "kind": "Gizmo",
        "metadata": {"name": name},
        "spec": spec,
    }


def until(call: Any, ok: Any, what: str) -> Any:
    """Retry ``call`` until ``ok(result)``: webhook configurations reach the apiserver's
    admission plugin shortly after they are created (an informer)."""
    deadline = time.monotonic() + DEADLINE
    while True:
        result = call()
        if ok(result):
            return result
        assert time.monotonic() < deadline, (
            f"{what}: last answer {result.status_code} {result.text}"
        )
        time.sleep(0.2)


def test_defaulting_sets_replicas(http: httpx.Client, namespace: str) -> None:
    """The CRD's schema has no default: replicas 1 can only come from the mutating webhook."""
    created = until(
        lambda: http.post(
            gizmos(namespace), json=gizmo(f"d-{time.monotonic_ns()}", deploymentName="web")
        ),
        lambda r: r.status_code == 201 and r.json()["spec"].get("replicas") == 1,
        "a Gizmo defaulted by the webhook",
    )
    stored = http.get(gizmos(namespace, name=created.json()["metadata"]["name"])).json()
    assert stored["spec"] == {"deploymentName": "web", "replicas": 1}
    kept = http.post(gizmos(namespace), json=gizmo("kept", deploymentName="web", replicas=4))
    assert kept.status_code == 201
    assert kept.json()["spec"]["replicas"] == 4


def test_validation_refuses_with_the_validators_message(http: httpx.Client, namespace: str) -> None:
    refused = until(
        lambda: http.post(gizmos(namespace), json=gizmo("no-deployment", replicas=2)),
        lambda r: r.status_code != 201 and "deploymentName is required" in r.text,
        "the validator refusing a Gizmo without deploymentName",
    )
    assert refused.status_code == 403
    message = refused.json()["message"]
    assert 'admission webhook "vgizmo-v1alpha1.kb.io" denied the request: ' in message
    assert message.endswith("spec.deploymentName is required")
    too_many = http.post(gizmos(namespace), json=gizmo("too-many", deploymentName="w", replicas=11))
    assert too_many.status_code == 403
    assert "spec.replicas must be between 1 and 10, got 11" in too_many.text
    warned = http.post(gizmos(namespace), json=gizmo("warned", deploymentName="w", replicas=6))
    assert warned.status_code == 201
    assert "more than 5 replicas" in warned.headers.get("warning", "")
    renamed = dict(warned.json())
    renamed["spec"] = {**renamed["spec"], "deploymentName": "other"}
    immutable = http.put(gizmos(namespace, name="warned"), json=renamed)
    assert immutable.status_code == 422
    assert immutable.json()["reason"] == "Invalid"
    assert "spec.deploymentName is immutable" in immutable.json()["message"]


def test_conversion_both_ways_and_lists(http: httpx.Client, namespace: str) -> None:
    beta = {
        "apiVersion": f"{GROUP}/v1beta1",
        "kind": "Gizmo",
        "metadata": {"name": "from-beta", "labels": {"shape": "beta"}},
        "spec": {"deployment": {"name": "web", "replicas": 3}},
    }
    created = until(
        lambda: http.post(gizmos(namespace, "v1beta1"), json=beta),
        lambda r: r.status_code in (201, 409),
        "a v1beta1 Gizmo created through the conversion webhook",
    )
    assert created.status_code == 201, created.text
    assert created.json()["spec"] == {"deployment": {"name": "web", "replicas": 3}}
    as_alpha = http.get(gizmos(namespace, name="from-beta")).json()
    assert as_alpha["apiVersion"] == f"{GROUP}/v1alpha1"
    assert as_alpha["spec"] == {"deploymentName": "web", "replicas": 3}
    assert as_alpha["metadata"]["labels"] == {"shape": "beta"}
    assert as_alpha["metadata"]["uid"] == created.json()["metadata"]["uid"]

    alpha = http.post(gizmos(namespace), json=gizmo("from-alpha", deploymentName="db"))
    assert alpha.status_code == 201
    as_beta = http.get(gizmos(namespace, "v1beta1", "from-alpha")).json()
    assert as_beta["spec"] == {"deployment": {"name": "db", "replicas": 1}}

    listed = http.get(gizmos(namespace, "v1beta1")).json()
    by_name = {item["metadata"]["name"]: item for item in listed["items"]}
    assert {"from-beta", "from-alpha"} <= set(by_name)
    assert all(item["apiVersion"] == f"{GROUP}/v1beta1" for item in listed["items"])
    assert by_name["from-beta"]["spec"] == {"deployment": {"name": "web", "replicas": 3}}
    listed_alpha = http.get(gizmos(namespace)).json()
    assert {i["metadata"]["name"]: i["spec"] for i in listed_alpha["items"]}["from-beta"] == {
        "deploymentName": "web",
        "replicas": 3,
    }


def test_probe_path_is_called_by_the_apiserver(http: httpx.Client, namespace: str) -> None:
    config_map = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "probe", "labels": {"kubectrl.dev/webhook-probe": "yes"}},
    }
    refused = until(
        lambda: http.post(f"/api/v1/namespaces/{namespace}/configmaps", json=config_map),
        lambda r: PROBE_MESSAGE in r.text,
        "the probe webhook refusing a labelled ConfigMap",
    )
    assert refused.status_code == 403
    other = http.post(
        f"/api/v1/namespaces/{namespace}/configmaps",
        json={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "not-probed"}},
    )
    assert other.status_code == 201


def test_replaced_certificate_is_used_without_restart(
    http: httpx.Client, namespace: str, served: ThreadedServer, cert_dir: Path
) -> None:
    """Only the new CA is trusted after the swap: a call succeeds only if the server presents
    the new certificate, from the same server (same port, never restarted)."""
    port = served.server.port
    until(
        lambda: http.post(gizmos(namespace), json=gizmo("before", deploymentName="w")),
        lambda r: r.status_code == 201,
        "a Gizmo admitted with the first certificate",
    )
    second = make_pair()
    write_pair(cert_dir, second)
    bundle = base64.b64encode(second.cert_pem).decode()
    for plural in ("mutatingwebhookconfigurations", "validatingwebhookconfigurations"):
        name = f"{PREFIX}-{plural.removesuffix('webhookconfigurations')}-webhook-configuration"
        current = http.get(f"{ADMISSION}/{plural}/{name}").json()
        for hook in current["webhooks"]:
            hook["clientConfig"]["caBundle"] = bundle
        assert http.put(f"{ADMISSION}/{plural}/{name}", json=current).status_code == 200
    created = until(
        lambda: http.post(
            gizmos(namespace), json=gizmo(f"after-{time.monotonic_ns()}", deploymentName="w")
        ),
        lambda r: r.status_code == 201 and r.json()["spec"].get("replicas") == 1,
        "a Gizmo defaulted and validated over the new certificate",
    )
    assert created.json()["spec"]["replicas"] == 1
    assert served.server.port == port
    assert served.server.serving
