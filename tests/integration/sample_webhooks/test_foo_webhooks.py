"""Acceptance: the real kube-apiserver calls the Foo sample's real webhook server.

Defaulting (a CRD schema without defaults stores ``replicas: 1``), validation (each rule's
message, as the API server relays a denial: ``admission webhook "<name>" denied the request:
<message>`` with the webhook's code; k8s.io/apiserver pkg/admission/plugin/webhook/errors/
statuserror.go ``ToStatusErr``), conversion between v1alpha1 and v1beta1 (single objects and
lists; apiextensions-apiserver pkg/apiserver/conversion/webhook_converter.go), and a serving
certificate replaced on disk being used from the next handshake with no restart
(controller-runtime pkg/certwatcher/certwatcher.go's role).
"""

from __future__ import annotations

import socket
import ssl
from typing import Any

import pytest
from cryptography import x509

from .conftest import GROUP, FooWebhooks, wait_for

pytestmark = pytest.mark.integration

V1ALPHA1 = f"{GROUP}/v1alpha1"
V1BETA1 = f"{GROUP}/v1beta1"
CRD = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/foos.samplecontroller.k8s.io"


def foos(namespace: str, version: str = "v1alpha1") -> str:
    return f"/apis/{GROUP}/{version}/namespaces/{namespace}/foos"


def alpha(name: str, spec: dict[str, Any] | None) -> dict[str, Any]:
    obj: dict[str, Any] = {"apiVersion": V1ALPHA1, "kind": "Foo", "metadata": {"name": name}}
    if spec is not None:
        obj["spec"] = spec
    return obj


def beta(name: str, deployment: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": V1BETA1,
        "kind": "Foo",
        "metadata": {"name": name},
        "spec": {"deployment": deployment},
    }


def keys_of(node: object, path: str = "") -> list[str]:
    if isinstance(node, dict):
        return [f"{path}.{k}" for k in node] + [
            p for k, v in node.items() for p in keys_of(v, f"{path}.{k}")
        ]
    if isinstance(node, list):
        return [p for i, v in enumerate(node) for p in keys_of(v, f"{path}[{i}]")]
    return []


def test_a_foo_without_replicas_is_stored_with_replicas_1_by_the_webhook(
    foo_webhooks: FooWebhooks, namespace: str
) -> None:
    with foo_webhooks.http() as http:
        installed = http.get(CRD).json()
        # Nothing in the installed schema defaults anything: the 1 can only come from the webhook.
        assert not [p for p in keys_of(installed["spec"]["versions"]) if p.endswith(".default")]
        assert installed["spec"]["conversion"]["strategy"] == "Webhook"
        created = http.post(foos(namespace), json=alpha("web", {"deploymentName": "web"}))
        assert created.status_code == 201, created.text
        assert created.json()["spec"] == {"deploymentName": "web", "replicas": 1}
        stored = http.get(f"{foos(namespace)}/web").json()
        assert stored["spec"] == {"deploymentName": "web", "replicas": 1}
        # Through v1beta1 too: the webhook defaults the v1alpha1 form it is sent.
        created = http.post(foos(namespace, "v1beta1"), json=beta("api", {"name": "api"}))
        assert created.status_code == 201, created.text
        assert created.json()["spec"] == {"deployment": {"name": "api", "replicas": 1}}
        stored = http.get(f"{foos(namespace)}/api").json()
        assert stored["spec"] == {"deploymentName": "api", "replicas": 1}


INVALID_LABEL = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character"
)


@pytest.mark.parametrize(
    ("spec", "detail"),
    [
        ({"replicas": 2}, "spec.deploymentName: Required value"),
        (None, "spec.deploymentName: Required value"),
        (
            {"deploymentName": "Web_1"},
            f'spec.deploymentName: Invalid value: "Web_1": {INVALID_LABEL}',
        ),
        (
            {"deploymentName": "x" * 64},
            f'spec.deploymentName: Invalid value: "{"x" * 64}": must be no more than 63 characters',
        ),
    ],
    ids=["no-deployment-name", "no-spec", "not-a-dns-1123-label", "longer-than-63"],
)
def test_an_invalid_foo_is_refused_with_the_validators_message(
    foo_webhooks: FooWebhooks, namespace: str, spec: dict[str, Any] | None, detail: str
) -> None:
    with foo_webhooks.http() as http:
        for version, body in (("v1alpha1", alpha("bad", spec)), ("v1beta1", None)):
            if body is None:  # the same Foo sent as v1beta1: converted, then validated
                deployment = {}
                if spec and "deploymentName" in spec:
                    deployment["name"] = spec["deploymentName"]
                if spec and "replicas" in spec:
                    deployment["replicas"] = spec["replicas"]
                body = beta("bad", deployment)
            refused = http.post(foos(namespace, version), json=body)
            assert refused.status_code == 422, refused.text
            message = refused.json()["message"]
            assert message.startswith(
                'admission webhook "vfoo-v1alpha1.kb.io" denied the request: '
                'Foo.samplecontroller.k8s.io "bad" is invalid: '
            ), message
            assert detail in message
        assert http.get(f"{foos(namespace)}/bad").status_code == 404


def test_replicas_outside_1_to_10_are_refused_naming_the_field(
    foo_webhooks: FooWebhooks, namespace: str
) -> None:
    """The model bounds replicas and so does the CRD's schema generated from it. Mutating
    webhooks run before the schema: the defaulter cannot read such a Foo as the model, admits it
    unchanged with a warning, and the schema refuses it with the API's own 422 naming the field
    (validating webhooks, run after the schema, never see it; the validator's replicas rule
    covers Foos built in Python, tests/unit/examples)."""
    with foo_webhooks.http() as http:
        for replicas, bound in (
            (0, "greater than or equal to 1"),
            (11, "less than or equal to 10"),
        ):
            refused = http.post(
                foos(namespace), json=alpha("big", {"deploymentName": "big", "replicas": replicas})
            )
            assert refused.status_code == 422, refused.text
            message = refused.json()["message"]
            assert message.startswith('Foo.samplecontroller.k8s.io "big" is invalid: '), message
            assert f"spec.replicas in body should be {bound}" in message
            warning = refused.headers.get("Warning", "")
            assert "not defaulted" in warning, refused.headers


def test_changing_the_deployment_name_is_refused(foo_webhooks: FooWebhooks, namespace: str) -> None:
    with foo_webhooks.http() as http:
        created = http.post(foos(namespace), json=alpha("web", {"deploymentName": "web"}))
        assert created.status_code == 201, created.text
        renamed = http.patch(
            f"{foos(namespace)}/web",
            json={"spec": {"deploymentName": "other"}},
            headers={"Content-Type": "application/merge-patch+json"},
        )
        assert renamed.status_code == 422, renamed.text
        assert renamed.json()["message"] == (
            'admission webhook "vfoo-v1alpha1.kb.io" denied the request: '
            'Foo.samplecontroller.k8s.io "web" is invalid: spec.deploymentName: Invalid value: '
            '"other": field is immutable'
        )
        # The same change through v1beta1 is the same change.
        renamed = http.patch(
            f"{foos(namespace, 'v1beta1')}/web",
            json={"spec": {"deployment": {"name": "other"}}},
            headers={"Content-Type": "application/merge-patch+json"},
        )
        assert renamed.status_code == 422, renamed.text
        assert "field is immutable" in renamed.json()["message"]
        # Other changes pass.
        scaled = http.patch(
            f"{foos(namespace)}/web",
            json={"spec": {"replicas": 4}},
            headers={"Content-Type": "application/merge-patch+json"},
        )
        assert scaled.status_code == 200, scaled.text
        assert http.get(f"{foos(namespace)}/web").json()["spec"] == {
            "deploymentName": "web",
            "replicas": 4,
        }


def content(obj: dict[str, Any]) -> dict[str, Any]:
    """What two versions of one object share: metadata but the server's, and status."""
    meta = {k: v for k, v in obj["metadata"].items() if k != "managedFields"}
    return {"metadata": meta, "status": obj.get("status")}


def test_a_v1beta1_foo_reads_back_as_v1alpha1_and_the_other_way(
    foo_webhooks: FooWebhooks, namespace: str
) -> None:
    with foo_webhooks.http() as http:
        labels = {"app": "web"}
        sent = beta("from-beta", {"name": "web", "replicas": 3})
        sent["metadata"]["labels"] = labels
        created = http.post(foos(namespace, "v1beta1"), json=sent)
        assert created.status_code == 201, created.text
        as_alpha = http.get(f"{foos(namespace)}/from-beta").json()
        assert as_alpha["apiVersion"] == V1ALPHA1
        assert as_alpha["spec"] == {"deploymentName": "web", "replicas": 3}
        as_beta = http.get(f"{foos(namespace, 'v1beta1')}/from-beta").json()
        assert as_beta["apiVersion"] == V1BETA1
        assert as_beta["spec"] == {"deployment": {"name": "web", "replicas": 3}}
        assert content(as_alpha) == content(as_beta) == content(created.json())
        assert as_alpha["metadata"]["labels"] == labels

        created = http.post(
            foos(namespace), json=alpha("from-alpha", {"deploymentName": "api", "replicas": 2})
        )
        assert created.status_code == 201, created.text
        as_beta = http.get(f"{foos(namespace, 'v1beta1')}/from-alpha").json()
        assert as_beta["spec"] == {"deployment": {"name": "api", "replicas": 2}}
        as_alpha = http.get(f"{foos(namespace)}/from-alpha").json()
        assert as_alpha["spec"] == {"deploymentName": "api", "replicas": 2}
        assert content(as_alpha) == content(as_beta)

        # The status subresource, written at one version, reads the same at the other.
        status = http.patch(
            f"{foos(namespace, 'v1beta1')}/from-alpha/status",
            json={"status": {"availableReplicas": 2}},
            headers={"Content-Type": "application/merge-patch+json"},
        )
        assert status.status_code == 200, status.text
        assert http.get(f"{foos(namespace)}/from-alpha").json()["status"] == {
            "availableReplicas": 2
        }


def test_a_list_at_either_version_converts_every_item(
    foo_webhooks: FooWebhooks, namespace: str
) -> None:
    with foo_webhooks.http() as http:
        for index in range(3):
            body = alpha(f"a{index}", {"deploymentName": f"a{index}", "replicas": index + 1})
            assert http.post(foos(namespace), json=body).status_code == 201
            body = beta(f"b{index}", {"name": f"b{index}", "replicas": index + 1})
            assert http.post(foos(namespace, "v1beta1"), json=body).status_code == 201
        alphas = http.get(foos(namespace)).json()["items"]
        betas = http.get(foos(namespace, "v1beta1")).json()["items"]
    names = [f"a{i}" for i in range(3)] + [f"b{i}" for i in range(3)]
    assert sorted(o["metadata"]["name"] for o in alphas) == names
    assert sorted(o["metadata"]["name"] for o in betas) == names
    by_name = {o["metadata"]["name"]: o for o in betas}
    for item in alphas:
        name = item["metadata"]["name"]
        replicas = int(name[1]) + 1
        assert item["apiVersion"] == V1ALPHA1
        assert item["spec"] == {"deploymentName": name, "replicas": replicas}
        other = by_name[name]
        assert other["apiVersion"] == V1BETA1
        assert other["spec"] == {"deployment": {"name": name, "replicas": replicas}}
        assert content(item) == content(other)


def presented_serial(port: int, ca: bytes) -> int:
    """The serial of the certificate the server presents in a fresh TLS handshake."""
    context = ssl.create_default_context(cadata=ca.decode())
    with (
        socket.create_connection(("127.0.0.1", port), timeout=10) as raw,
        context.wrap_socket(raw, server_hostname="127.0.0.1") as tls,
    ):
        der = tls.getpeercert(binary_form=True)
    assert der is not None
    serial: int = x509.load_der_x509_certificate(der).serial_number
    return serial


def test_a_serving_certificate_replaced_on_disk_is_used_without_a_restart(
    foo_webhooks: FooWebhooks, namespace: str
) -> None:
    install = foo_webhooks.install
    port, ca = install.local_serving_port, install.local_serving_ca_data
    before = presented_serial(port, ca)
    new_serial = install.renew_serving_cert()
    assert new_serial != before
    wait_for(
        "the new certificate presented in a handshake",
        lambda: presented_serial(port, ca) == new_serial,
    )
    assert foo_webhooks.server.serving
    # The next call the API server makes (a new connection or a kept-alive one) succeeds.
    with foo_webhooks.http() as http:
        created = http.post(foos(namespace), json=alpha("after-renewal", {"deploymentName": "x"}))
        assert created.status_code == 201, created.text
        assert created.json()["spec"]["replicas"] == 1
        as_beta = http.get(f"{foos(namespace, 'v1beta1')}/after-renewal")
        assert as_beta.status_code == 200, as_beta.text
