"""Manifests as controller-gen writes them (controller-tools pkg/webhook/parser.go) with
kubebuilder's scaffolded names (m<kind>-<version>.kb.io, verbs create;update), and the
WebhookBuilder's paths (controller-runtime pkg/builder/webhook.go: /mutate-<group with dashes>-
<version>-<kind>, /validate-..., /convert)."""

from __future__ import annotations

import base64

import pytest

from kubectrl import crd
from kubectrl.client import ClientConfig
from kubectrl.runtime import Manager, ManagerOptions, WebhookBuilder
from kubectrl.webhook import (
    ConversionHandler,
    conversion_stanza,
    webhook_configurations,
)

from .test_webhook_admission import FooValidator, TypedDefaulter
from .webhook_models import Foo, FooV1beta1

CONFIG = ClientConfig(server="https://127.0.0.1:9")


def new_manager() -> Manager:
    return Manager(CONFIG, options=ManagerOptions(metrics_bind_address="0"))


def test_builder_registers_controller_runtime_paths() -> None:
    manager = new_manager()
    made = (
        WebhookBuilder(manager)
        .for_(Foo)
        .with_defaulter(TypedDefaulter())
        .with_validator(FooValidator())
        .with_conversion(FooV1beta1)
        .complete()
    )
    assert [(r.path, r.type) for r in made] == [
        ("/mutate-samplecontroller-k8s-io-v1alpha1-foo", "mutating"),
        ("/validate-samplecontroller-k8s-io-v1alpha1-foo", "validating"),
        ("/convert", "conversion"),
    ]
    assert manager.webhook_server.registrations == made
    handler = made[2].handler
    assert isinstance(handler, ConversionHandler)
    assert handler.kinds == [
        ("samplecontroller.k8s.io", "Foo", "v1alpha1", ["v1alpha1", "v1beta1"])
    ]


def test_builder_errors() -> None:
    manager = new_manager()
    with pytest.raises(ValueError, match="needs for_"):
        WebhookBuilder(manager).with_defaulter(TypedDefaulter()).complete()
    with pytest.raises(ValueError, match="nothing to register"):
        WebhookBuilder(manager).for_(Foo).complete()
    with pytest.raises(TypeError, match="hub's model class"):
        WebhookBuilder(manager).for_(("samplecontroller.k8s.io/v1alpha1", "Foo")).with_conversion(
            FooV1beta1
        ).complete()
    with pytest.raises(TypeError, match="does not name a Kubernetes kind"):
        WebhookBuilder(manager).for_(dict)


def test_webhook_configurations_for_foo() -> None:
    manager = new_manager()
    WebhookBuilder(manager).for_(Foo).with_defaulter(TypedDefaulter()).with_validator(
        FooValidator()
    ).with_conversion(FooV1beta1).complete()
    mutating, validating = webhook_configurations(
        manager,
        name_prefix="sample-controller",
        service_name="sample-controller-webhook",
        service_namespace="sample-system",
        cert_manager_certificate="serving-cert",
    )
    annotations = {"cert-manager.io/inject-ca-from": "sample-system/serving-cert"}
    assert mutating == {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {
            "name": "sample-controller-mutating-webhook-configuration",
            "annotations": annotations,
        },
        "webhooks": [
            {
                "admissionReviewVersions": ["v1"],
                "clientConfig": {
                    "service": {
                        "name": "sample-controller-webhook",
                        "namespace": "sample-system",
                        "path": "/mutate-samplecontroller-k8s-io-v1alpha1-foo",
                        "port": 443,
                    }
                },
                "failurePolicy": "Fail",
                "name": "mfoo-v1alpha1.kb.io",
                "rules": [
                    {
                        "apiGroups": ["samplecontroller.k8s.io"],
                        "apiVersions": ["v1alpha1"],
                        "operations": ["CREATE", "UPDATE"],
                        "resources": ["foos"],
                    }
                ],
                "sideEffects": "None",
                "timeoutSeconds": 10,
            }
        ],
    }
    assert validating["kind"] == "ValidatingWebhookConfiguration"
    assert validating["metadata"]["name"] == "sample-controller-validating-webhook-configuration"
    [hook] = validating["webhooks"]
    assert hook["name"] == "vfoo-v1alpha1.kb.io"
    assert (
        hook["clientConfig"]["service"]["path"] == "/validate-samplecontroller-k8s-io-v1alpha1-foo"
    )
    assert hook["rules"][0]["operations"] == ["CREATE", "UPDATE"]
    assert (hook["sideEffects"], hook["failurePolicy"]) == ("None", "Fail")


def test_delete_validation_is_listed_when_asked_for() -> None:
    manager = new_manager()
    WebhookBuilder(manager).for_(Foo).with_validator(FooValidator(), delete=True).complete()
    [validating] = webhook_configurations(
        manager.webhook_server, service_name="s", service_namespace="n"
    )
    assert validating["metadata"] == {"name": "validating-webhook-configuration"}
    assert validating["webhooks"][0]["rules"][0]["operations"] == ["CREATE", "UPDATE", "DELETE"]


def test_conversion_stanza_in_the_crd() -> None:
    stanza = conversion_stanza(
        service_name="sample-controller-webhook",
        service_namespace="sample-system",
        ca_bundle=b"-----BEGIN CERTIFICATE-----\n",
    )
    assert stanza == {
        "strategy": "Webhook",
        "webhook": {
            "clientConfig": {
                "service": {
                    "name": "sample-controller-webhook",
                    "namespace": "sample-system",
                    "path": "/convert",
                    "port": 443,
                },
                "caBundle": base64.b64encode(b"-----BEGIN CERTIFICATE-----\n").decode(),
            },
            "conversionReviewVersions": ["v1"],
        },
    }
    generated = crd.generate(Foo, FooV1beta1, storage=Foo, conversion=stanza)
    assert generated["spec"]["conversion"] == stanza
    assert generated["spec"]["conversion"] is not stanza
    assert crd.generate(Foo, FooV1beta1, storage=Foo)["spec"]["conversion"] == {"strategy": "None"}


def test_url_form_for_a_server_outside_the_cluster() -> None:
    manager = new_manager()
    WebhookBuilder(manager).for_(Foo).with_defaulter(TypedDefaulter()).complete()
    [mutating] = webhook_configurations(
        manager, base_url="https://127.0.0.1:9443/", ca_bundle=b"PEM"
    )
    assert mutating["webhooks"][0]["clientConfig"] == {
        "url": "https://127.0.0.1:9443/mutate-samplecontroller-k8s-io-v1alpha1-foo",
        "caBundle": base64.b64encode(b"PEM").decode(),
    }
    stanza = conversion_stanza(url="https://127.0.0.1:9443/convert", ca_bundle=b"PEM")
    assert stanza["webhook"]["clientConfig"] == {
        "url": "https://127.0.0.1:9443/convert",
        "caBundle": base64.b64encode(b"PEM").decode(),
    }
    with pytest.raises(ValueError, match="either service_name and service_namespace"):
        conversion_stanza()
    with pytest.raises(ValueError, match="either service_name and service_namespace"):
        webhook_configurations(
            manager, base_url="https://x", service_name="s", service_namespace="n"
        )
