"""The Foo sample's webhooks, as the program registers them, without a network.

``main.build_manager`` with ``--enable-webhooks`` registers the defaulter, the validator and the
conversion on the manager's webhook server; these tests take the registered handlers and feed
them the ``AdmissionReview`` / ``ConversionReview`` requests the API server sends (the
real-apiserver half is tests/integration/sample_webhooks). The committed
``artifacts/webhooks.yaml`` must be what the registrations generate.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubectrl.runtime import Manager
from kubectrl.testing import FakeAPI
from kubectrl.webhook import (
    AdmissionRequest,
    AdmissionResponse,
    ConversionHandler,
    DefaultingHandler,
    ValidatingHandler,
    WebhookRegistration,
)

from .test_sample_controller_crd import EXAMPLE, load

V1ALPHA1 = "samplecontroller.k8s.io/v1alpha1"
V1BETA1 = "samplecontroller.k8s.io/v1beta1"
REGENERATE = "python examples/sample_controller/webhooks.py"


@pytest.fixture(scope="module")
def sample() -> Iterator[dict[str, ModuleType]]:
    """api.py, controller.py, webhooks.py and main.py, importing each other by their plain names.

    The plain names are too common to leave in sys.modules: they are there only while this
    module's tests run (main.py imports ``webhooks`` when it builds a manager).
    """
    names = ("api", "controller", "webhooks")
    saved = {name: sys.modules.get(name) for name in names}
    try:
        # api.py and controller.py under the names the other tests of this directory use: one
        # file imported under two module names confuses pydantic's field docstring lookup.
        modules = {}
        for name in names:
            alias = f"sample_{'webhooks' if name == 'webhooks' else 'controller'}_{name}"
            modules[name] = sys.modules[name] = load(alias, EXAMPLE / f"{name}.py")
        modules["main"] = load("sample_controller_main", EXAMPLE / "main.py")
        yield modules
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


@pytest.fixture(scope="module")
def registrations(sample: dict[str, ModuleType]) -> dict[str, WebhookRegistration]:
    main = sample["main"]
    api = FakeAPI()
    args = main.parse_args(["--enable-webhooks", "--metrics-bind-address", "0"])
    original = main.load_config
    main.load_config = api.config
    try:
        manager: Manager = main.build_manager(args)
    finally:
        main.load_config = original
    return {reg.type: reg for reg in manager.webhook_server.registrations}


def foo(spec: dict[str, Any] | None, name: str = "web", version: str = V1ALPHA1) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": version,
        "kind": "Foo",
        "metadata": {"name": name, "namespace": "ns", "uid": "u-1", "resourceVersion": "7"},
    }
    if spec is not None:
        obj["spec"] = spec
    return obj


def admit(
    registration: WebhookRegistration,
    operation: str,
    obj: dict[str, Any] | None,
    old: dict[str, Any] | None = None,
) -> AdmissionResponse:
    request = AdmissionRequest.from_dict(
        {
            "uid": "req-1",
            "kind": {"group": "samplecontroller.k8s.io", "version": "v1alpha1", "kind": "Foo"},
            "resource": {
                "group": "samplecontroller.k8s.io",
                "version": "v1alpha1",
                "resource": "foos",
            },
            "operation": operation,
            "name": "web",
            "namespace": "ns",
            "object": obj,
            "oldObject": old,
        }
    )
    response: AdmissionResponse = asyncio.run(registration.handler.handle(request))
    return response


def test_the_program_registers_three_webhooks_at_controller_runtimes_paths(
    registrations: dict[str, WebhookRegistration],
) -> None:
    assert {t: r.path for t, r in registrations.items()} == {
        "mutating": "/mutate-samplecontroller-k8s-io-v1alpha1-foo",
        "validating": "/validate-samplecontroller-k8s-io-v1alpha1-foo",
        "conversion": "/convert",
    }
    assert isinstance(registrations["mutating"].handler, DefaultingHandler)
    assert isinstance(registrations["validating"].handler, ValidatingHandler)
    assert isinstance(registrations["conversion"].handler, ConversionHandler)
    # Deletes are not validated: the configuration lists create and update only.
    assert registrations["validating"].operations == ("CREATE", "UPDATE")


def test_without_the_flag_no_webhook_is_registered(sample: dict[str, ModuleType]) -> None:
    main = sample["main"]
    api = FakeAPI()
    original = main.load_config
    main.load_config = api.config
    try:
        manager = main.build_manager(main.parse_args(["--metrics-bind-address", "0"]))
    finally:
        main.load_config = original
    assert manager.webhook_server.registrations == []


def test_webhook_flags(sample: dict[str, ModuleType]) -> None:
    main = sample["main"]
    args = main.parse_args(
        ["--enable-webhooks", "--webhook-port", "10250", "--webhook-cert-dir", "/certs"]
    )
    assert (args.enable_webhooks, args.webhook_port, args.webhook_cert_dir) == (
        True,
        10250,
        "/certs",
    )
    defaults = main.parse_args([])
    assert (defaults.enable_webhooks, defaults.webhook_port, defaults.webhook_cert_dir) == (
        False,
        9443,
        "",
    )
    for wrong in ("-1", "65536"):
        with pytest.raises(SystemExit):
            main.parse_args(["--webhook-port", wrong])


@pytest.mark.parametrize(
    ("spec", "patch"),
    [
        ({"deploymentName": "web"}, [{"op": "add", "path": "/spec/replicas", "value": 1}]),
        (None, [{"op": "add", "path": "/spec", "value": {"replicas": 1}}]),
        ({"deploymentName": "web", "replicas": 3}, None),
    ],
    ids=["replicas-unset", "no-spec", "replicas-set"],
)
def test_the_defaulter_sets_replicas_to_one_only_when_unset(
    registrations: dict[str, WebhookRegistration],
    spec: dict[str, Any] | None,
    patch: list[dict[str, Any]] | None,
) -> None:
    for operation in ("CREATE", "UPDATE"):
        response = admit(registrations["mutating"], operation, foo(spec), foo(spec))
        assert response.is_allowed
        assert (response.patch or None) == patch


INVALID_NAME = (
    'spec.deploymentName: Invalid value: "{}": a lowercase RFC 1123 label must consist of lower '
    "case alphanumeric characters or '-', and must start and end with an alphanumeric character "
    "(e.g. 'my-name', or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"replicas": 1}, "spec.deploymentName: Required value"),
        ({"deploymentName": "", "replicas": 1}, "spec.deploymentName: Required value"),
        (None, "spec.deploymentName: Required value"),
        ({"deploymentName": "Web_1"}, INVALID_NAME.format("Web_1")),
        ({"deploymentName": "-web"}, INVALID_NAME.format("-web")),
        (
            {"deploymentName": "a" * 64},
            f'spec.deploymentName: Invalid value: "{"a" * 64}": must be no more than 63 characters',
        ),
    ],
    ids=["missing", "empty", "no-spec", "not-a-label", "leading-dash", "too-long"],
)
def test_the_validator_refuses_a_bad_deployment_name_with_a_422_naming_the_field(
    registrations: dict[str, WebhookRegistration], spec: dict[str, Any] | None, message: str
) -> None:
    response = admit(registrations["validating"], "CREATE", foo(spec))
    assert not response.is_allowed
    assert response.code == 422
    assert response.message == f'Foo.samplecontroller.k8s.io "web" is invalid: {message}'


def test_the_validator_checks_replicas_between_1_and_10(
    sample: dict[str, ModuleType],
) -> None:
    """The model (and the CRD's schema) already bound replicas; the validator says so too for
    objects built in Python without validation (``model_construct``)."""
    api, webhooks = sample["api"], sample["webhooks"]
    for replicas in (0, 11):
        bad = api.Foo.model_construct(
            metadata=api.Foo.model_fields["metadata"].default_factory(),
            spec=api.FooSpec.model_construct(deployment_name="web", replicas=replicas),
        )
        bad.metadata.name = "web"
        with pytest.raises(webhooks.Denied) as refused:
            webhooks.FooValidator().validate_create(bad)
        assert refused.value.message == (
            f'Foo.samplecontroller.k8s.io "web" is invalid: spec.replicas: Invalid value: '
            f"{replicas}: must be between 1 and 10, inclusive"
        )


def test_every_broken_rule_is_listed(registrations: dict[str, WebhookRegistration]) -> None:
    response = admit(
        registrations["validating"],
        "UPDATE",
        foo({"deploymentName": "Other_Name"}),
        foo({"deploymentName": "web"}),
    )
    assert response.code == 422
    assert response.message == (
        'Foo.samplecontroller.k8s.io "web" is invalid: ['
        + INVALID_NAME.format("Other_Name")
        + ', spec.deploymentName: Invalid value: "Other_Name": field is immutable]'
    )


def test_the_deployment_name_cannot_change_once_set(
    registrations: dict[str, WebhookRegistration],
) -> None:
    validating = registrations["validating"]
    changed = admit(
        validating, "UPDATE", foo({"deploymentName": "other"}), foo({"deploymentName": "web"})
    )
    assert (changed.is_allowed, changed.code) == (False, 422)
    assert changed.message == (
        'Foo.samplecontroller.k8s.io "web" is invalid: spec.deploymentName: Invalid value: '
        '"other": field is immutable'
    )
    # Other fields may change; a Foo created without a name (before the webhooks) may get one.
    same = admit(
        validating,
        "UPDATE",
        foo({"deploymentName": "web", "replicas": 5}),
        foo({"deploymentName": "web", "replicas": 1}),
    )
    assert same.is_allowed
    named = admit(validating, "UPDATE", foo({"deploymentName": "web"}), foo({"replicas": 1}))
    assert named.is_allowed


def test_a_valid_foo_is_allowed_without_warnings(
    registrations: dict[str, WebhookRegistration],
) -> None:
    response = admit(
        registrations["validating"], "CREATE", foo({"deploymentName": "web-1", "replicas": 10})
    )
    assert response.is_allowed
    assert not response.warnings


def review(handler: ConversionHandler, desired: str, *objects: dict[str, Any]) -> dict[str, Any]:
    answer = handler.review(
        {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "ConversionReview",
            "request": {"uid": "c-1", "desiredAPIVersion": desired, "objects": list(objects)},
        }
    )
    response: dict[str, Any] = answer["response"]
    assert response["uid"] == "c-1"
    return response


def test_conversion_of_a_list_both_ways(registrations: dict[str, WebhookRegistration]) -> None:
    handler = registrations["conversion"].handler
    alpha = [
        foo({"deploymentName": "web", "replicas": 2}, name="a"),
        foo({"deploymentName": "api"}, name="b"),
        foo(None, name="c"),
        foo({}, name="d"),
    ]
    alpha[0]["status"] = {"availableReplicas": 2}
    alpha[0]["metadata"]["labels"] = {"app": "web"}
    response = review(handler, V1BETA1, *alpha)
    assert response["result"] == {"status": "Success"}
    beta = response["convertedObjects"]
    assert [o["apiVersion"] for o in beta] == [V1BETA1] * 4
    assert [o.get("spec") for o in beta] == [
        {"deployment": {"name": "web", "replicas": 2}},
        {"deployment": {"name": "api"}},
        None,
        {},
    ]
    assert beta[0]["status"] == {"availableReplicas": 2}
    assert [o["metadata"] for o in beta] == [o["metadata"] for o in alpha]
    back = review(handler, V1ALPHA1, *beta)
    assert back["convertedObjects"] == alpha


spec_values = st.one_of(
    st.none(),
    st.fixed_dictionaries(
        {},
        optional={
            "deploymentName": st.text(alphabet="abc-", min_size=0, max_size=5),
            "replicas": st.integers(min_value=1, max_value=10),
        },
    ),
)


# Each example runs two reviews through the handler; on a loaded CI machine that is slower
# than Hypothesis's default budget, which is not what this test is about.
@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=spec_values)
def test_alpha_to_beta_and_back_is_the_same_object(
    registrations: dict[str, WebhookRegistration], spec: dict[str, Any] | None
) -> None:
    handler = registrations["conversion"].handler
    original = foo(spec)
    (beta,) = review(handler, V1BETA1, original)["convertedObjects"]
    (alpha,) = review(handler, V1ALPHA1, beta)["convertedObjects"]
    assert alpha == original


def test_a_conversion_failure_names_the_object(
    registrations: dict[str, WebhookRegistration],
) -> None:
    handler = registrations["conversion"].handler
    bad = foo({"deployment": {"replicas": "many"}}, name="broken", version=V1BETA1)
    response = review(handler, V1ALPHA1, bad)
    assert response["result"]["status"] == "Failure"
    assert response["result"]["message"].startswith(
        f"converting Foo ns/broken from {V1BETA1} to {V1ALPHA1}"
    )


def test_committed_webhooks_yaml_is_the_generated_one(sample: dict[str, ModuleType]) -> None:
    webhooks = sample["webhooks"]
    committed = webhooks.WEBHOOKS_PATH.read_text(encoding="utf-8")
    assert committed == webhooks.webhooks_yaml(), (
        f"examples/sample_controller/artifacts/webhooks.yaml is not what webhooks.py's "
        f"registrations generate; regenerate it with: {REGENERATE}"
    )


def test_the_webhooks_yaml_as_kubebuilder_scaffolds_it(sample: dict[str, ModuleType]) -> None:
    mutating, validating = yaml.safe_load_all(sample["webhooks"].WEBHOOKS_PATH.read_text())
    for config, letter in ((mutating, "m"), (validating, "v")):
        assert config["metadata"]["annotations"] == {
            "cert-manager.io/inject-ca-from": "sample-controller/sample-controller-serving-cert"
        }
        (hook,) = config["webhooks"]
        assert hook["name"] == f"{letter}foo-v1alpha1.kb.io"
        assert hook["clientConfig"]["service"]["name"] == "sample-controller-webhook-service"
        assert hook["clientConfig"]["service"]["namespace"] == "sample-controller"
        assert (hook["sideEffects"], hook["failurePolicy"]) == ("None", "Fail")
        assert hook["admissionReviewVersions"] == ["v1"]
        assert hook["rules"] == [
            {
                "apiGroups": ["samplecontroller.k8s.io"],
                "apiVersions": ["v1alpha1"],
                "operations": ["CREATE", "UPDATE"],
                "resources": ["foos"],
            }
        ]


def test_the_deployment_serves_the_webhooks_behind_a_service_with_a_cert_manager_cert() -> None:
    documents = list(yaml.safe_load_all((EXAMPLE / "artifacts" / "deployment.yaml").read_text()))
    by_kind = {doc["kind"]: doc for doc in documents}
    assert set(by_kind) == {"Deployment", "Service", "Issuer", "Certificate"}
    pod = by_kind["Deployment"]["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert "--enable-webhooks" in container["args"]
    cert_dir = "/tmp/k8s-webhook-server/serving-certs"
    assert f"--webhook-cert-dir={cert_dir}" in container["args"]
    assert {"name": "webhook-server", "containerPort": 9443} in container["ports"]
    (mount,) = container["volumeMounts"]
    assert mount["mountPath"] == cert_dir
    (volume,) = pod["volumes"]
    assert volume["name"] == mount["name"]
    certificate = by_kind["Certificate"]
    assert volume["secret"]["secretName"] == certificate["spec"]["secretName"]
    service = by_kind["Service"]
    assert service["metadata"]["name"] == "sample-controller-webhook-service"
    assert service["spec"]["selector"] == by_kind["Deployment"]["spec"]["selector"]["matchLabels"]
    assert service["spec"]["ports"] == [
        {"port": 443, "protocol": "TCP", "targetPort": "webhook-server"}
    ]
    assert (
        "sample-controller-webhook-service.sample-controller.svc" in certificate["spec"]["dnsNames"]
    )
    assert certificate["metadata"]["name"] == "sample-controller-serving-cert"
    assert certificate["spec"]["issuerRef"]["name"] == by_kind["Issuer"]["metadata"]["name"]
