"""Webhooks on every version of a kind, and the conversion registration naming its kind.

controller-runtime serves a defaulter and a validator per Go type, that is per version, at
``/mutate-<group with dashes>-<version>-<kind>`` (pkg/builder/webhook.go); kubebuilder's
multi-version tutorial has one for its v2 spoke. The conversion registration must name the kinds
it converts: the generated CRD manifests take ``strategy: Webhook`` from it.
"""

from __future__ import annotations

import asyncio

from kubectrl.client import ClientConfig
from kubectrl.runtime import Manager, ManagerOptions, WebhookBuilder
from kubectrl.webhook import (
    AdmissionRequest,
    ConversionHandler,
    DefaultingHandler,
    ValidatingHandler,
    WebhookServer,
    webhook_configurations,
)

from .test_webhook_admission import FooValidator, TypedDefaulter
from .webhook_models import Foo, FooV1beta1, admission_review, foo

CONFIG = ClientConfig(server="https://127.0.0.1:9")


def new_manager() -> Manager:
    return Manager(CONFIG, options=ManagerOptions(metrics_bind_address="0"))


class BetaDefaulter:
    def default(self, obj: FooV1beta1) -> None:
        if obj.spec.deployment.replicas is None:
            obj.spec.deployment.replicas = 2


class BetaValidator:
    def validate_create(self, obj: FooV1beta1) -> None:
        return None

    def validate_update(self, old: FooV1beta1, new: FooV1beta1) -> None:
        return None

    def validate_delete(self, obj: FooV1beta1) -> None:
        return None


def test_the_conversion_registration_names_the_hubs_group_kind_version_and_plural() -> None:
    manager = new_manager()
    [made] = WebhookBuilder(manager).for_(Foo).with_conversion(FooV1beta1).complete()
    assert (made.path, made.type) == ("/convert", "conversion")
    assert (made.group, made.version, made.kind, made.plural) == (
        "samplecontroller.k8s.io",
        "v1alpha1",
        "Foo",
        "foos",
    )
    assert manager.webhook_server.registrations == [made]


def test_one_conversion_path_lists_one_registration_per_kind() -> None:
    from kubectrl.resources import CustomResource

    class Bar(CustomResource, group="example.com", version="v2", kind="Bar"):
        pass

    manager = new_manager()
    [foo_reg] = WebhookBuilder(manager).for_(Foo).with_conversion(FooV1beta1).complete()
    [bar_reg] = WebhookBuilder(manager).for_(Bar).with_conversion().complete()
    regs = manager.webhook_server.registrations
    assert [(r.path, r.group, r.kind, r.version) for r in regs] == [
        ("/convert", "samplecontroller.k8s.io", "Foo", "v1alpha1"),
        ("/convert", "example.com", "Bar", "v2"),
    ]
    assert regs == [foo_reg, bar_reg]
    assert regs[0].handler is regs[1].handler


def test_a_conversion_handler_registered_by_hand_without_kinds_is_listed_once() -> None:
    server = WebhookServer()
    handler = ConversionHandler()
    server.register("/convert", handler)
    [bare] = server.registrations
    assert (bare.path, bare.type, bare.kind) == ("/convert", "conversion", "")
    handler.add(Foo, FooV1beta1)
    [named] = server.registrations
    assert (named.group, named.kind, named.version) == (
        "samplecontroller.k8s.io",
        "Foo",
        "v1alpha1",
    )


def test_a_spoke_version_gets_its_own_defaulter_and_validator() -> None:
    manager = new_manager()
    WebhookBuilder(manager).for_(Foo).with_defaulter(TypedDefaulter()).with_validator(
        FooValidator()
    ).with_conversion(FooV1beta1).complete()
    spoke = (
        WebhookBuilder(manager)
        .for_(FooV1beta1)
        .with_defaulter(BetaDefaulter())
        .with_validator(BetaValidator())
        .complete()
    )
    assert [(r.path, r.type, r.version) for r in spoke] == [
        ("/mutate-samplecontroller-k8s-io-v1beta1-foo", "mutating", "v1beta1"),
        ("/validate-samplecontroller-k8s-io-v1beta1-foo", "validating", "v1beta1"),
    ]
    mutating, validating = webhook_configurations(manager, service_name="s", service_namespace="n")
    for config, letter, prefix in ((mutating, "m", "mutate"), (validating, "v", "validate")):
        hooks = {h["name"]: h for h in config["webhooks"]}
        assert set(hooks) == {f"{letter}foo-v1alpha1.kb.io", f"{letter}foo-v1beta1.kb.io"}
        for version in ("v1alpha1", "v1beta1"):
            hook = hooks[f"{letter}foo-{version}.kb.io"]
            assert hook["rules"][0]["apiVersions"] == [version]
            path = f"/{prefix}-samplecontroller-k8s-io-{version}-foo"
            assert hook["clientConfig"]["service"]["path"] == path


def _beta(**deployment: object) -> dict:
    obj = foo()
    obj["apiVersion"] = "samplecontroller.k8s.io/v1beta1"
    obj["spec"] = {"deployment": dict(deployment)}
    return obj


def test_the_spoke_defaulter_reads_the_spokes_shape() -> None:
    handler: DefaultingHandler[FooV1beta1] = DefaultingHandler(FooV1beta1, BetaDefaulter())
    review = admission_review(
        "CREATE", _beta(name="web"), kind=("samplecontroller.k8s.io", "v1beta1", "Foo")
    )
    response = asyncio.run(handler.handle(AdmissionRequest.from_dict(review["request"])))
    assert response.is_allowed
    assert response.patch == [{"op": "add", "path": "/spec/deployment/replicas", "value": 2}]


def test_a_handler_sent_another_version_refuses_instead_of_misreading_it() -> None:
    defaulting: DefaultingHandler[FooV1beta1] = DefaultingHandler(FooV1beta1, BetaDefaulter())
    validating: ValidatingHandler[FooV1beta1] = ValidatingHandler(FooV1beta1, BetaValidator())
    review = admission_review("CREATE", foo(replicas=3))  # a v1alpha1 object and kind
    request = AdmissionRequest.from_dict(review["request"])
    for handler in (defaulting, validating):
        response = asyncio.run(handler.handle(request))
        assert not response.is_allowed
        assert response.code == 400
        assert response.message is not None
        assert "samplecontroller.k8s.io/v1beta1" in response.message
        assert "v1alpha1" in response.message
