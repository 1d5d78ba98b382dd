"""kubectrl.admission: policies declared in Python, checked as the apiserver checks them, and
rendered to the manifests FakeAPI and the apiserver take.

Upstream: k8s.io/api admissionregistration/v1 types.go (the manifests' fields),
pkg/apis/admissionregistration/validation/validation.go (what the apiserver refuses: no
validations nor audit annotations, Deny with Warn, a repeated action, a paramRef with both or
neither of name and selector), k8s.io/apiserver pkg/admission/plugin/cel/compile.go (an
expression's syntax and result type: ``must evaluate to bool but got int``), and
.../policy/validating/typechecking.go (a field the kind's schema lacks: ``undefined field``).
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, Field

from kubectrl import crd
from kubectrl.admission import (
    AuditAnnotation,
    MatchCondition,
    MutatingPolicy,
    Mutation,
    ParamRef,
    PolicyError,
    ValidatingPolicy,
    Validation,
    Variable,
    manifests,
)
from kubectrl.client import AsyncClient
from kubectrl.errors import InvalidError
from kubectrl.resources import CustomResource
from kubectrl.testing import FakeAPI


class BarSpec(BaseModel):
    replicas: int = 1
    image: str = ""


class Bar(CustomResource, group="admission.kubectrl.test", version="v1", kind="Bar"):
    spec: BarSpec = Field(default_factory=BarSpec)


def test_a_policy_renders_its_manifest() -> None:
    policy = ValidatingPolicy(
        "bars.admission.kubectrl.test",
        kinds=[Bar],
        operations=["CREATE"],
        variables=[Variable("limit", "10")],
        match_conditions=[MatchCondition("has-spec", "has(object.spec)")],
        validations=[
            Validation(
                "object.spec.replicas <= variables.limit",
                message_expression="'replicas: ' + string(object.spec.replicas)",
                reason="Forbidden",
            )
        ],
        audit_annotations=[AuditAnnotation("image", "object.spec.image")],
        failure_policy="Ignore",
    )
    assert policy.manifest() == {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "bars.admission.kubectrl.test"},
        "spec": {
            "failurePolicy": "Ignore",
            "matchConstraints": {
                "resourceRules": [
                    {
                        "apiGroups": ["admission.kubectrl.test"],
                        "apiVersions": ["v1"],
                        "operations": ["CREATE"],
                        "resources": ["bars"],
                    }
                ]
            },
            "matchConditions": [{"name": "has-spec", "expression": "has(object.spec)"}],
            "variables": [{"name": "limit", "expression": "10"}],
            "validations": [
                {
                    "expression": "object.spec.replicas <= variables.limit",
                    "messageExpression": "'replicas: ' + string(object.spec.replicas)",
                    "reason": "Forbidden",
                }
            ],
            "auditAnnotations": [{"key": "image", "valueExpression": "object.spec.image"}],
        },
    }


def test_a_binding_renders_its_manifest() -> None:
    policy = ValidatingPolicy(
        "p",
        kinds=[("v1", "ConfigMap")],
        validations=[Validation("size(object.data) <= int(params.data.max)")],
        param_kind=("v1", "ConfigMap"),
    )
    binding = policy.bind(
        actions=["Warn", "Audit"],
        object_selector={"matchLabels": {"checked": "yes"}},
        param_ref=ParamRef(name="limits", namespace="config", not_found="Allow"),
    )
    assert manifests(binding) == [
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": "p-binding"},
            "spec": {
                "policyName": "p",
                "validationActions": ["Warn", "Audit"],
                "paramRef": {
                    "name": "limits",
                    "namespace": "config",
                    "parameterNotFoundAction": "Allow",
                },
                "matchResources": {"objectSelector": {"matchLabels": {"checked": "yes"}}},
            },
        }
    ]


@pytest.mark.parametrize(
    ("validation", "problem"),
    [
        (Validation("object.spec.replicas <"), "compilation failed"),
        (Validation("size(object.spec.image)"), "must evaluate to bool but got int"),
        (Validation("true", message_expression="1"), "must evaluate to string but got int"),
        (Validation("object.spec.replicaz > 1"), "undefined field 'replicaz'"),
        (Validation("has(object.spec.images)"), "undefined field 'images'"),
    ],
)
def test_what_the_apiserver_refuses_is_refused_at_declaration(
    validation: Validation, problem: str
) -> None:
    with pytest.raises(PolicyError, match=problem) as caught:
        ValidatingPolicy("p", kinds=[Bar], validations=[validation])
    assert "policy 'p'" in str(caught.value)


def test_fields_the_schema_has_and_the_envelope_pass() -> None:
    ValidatingPolicy(
        "p",
        kinds=[Bar],
        validations=[
            Validation("object.spec.image.startsWith('registry/')"),
            Validation("'app' in object.metadata.labels && object.kind == 'Bar'"),
            Validation("oldObject == null || object.spec.replicas >= oldObject.spec.replicas"),
            Validation("object.spec.image != 'object.spec.nothing'"),
        ],
    )


@pytest.mark.parametrize(
    ("make", "problem"),
    [
        (lambda: ValidatingPolicy("p", kinds=[Bar]), "validations or audit_annotations"),
        (lambda: ValidatingPolicy("p", kinds=[], validations=[Validation("true")]), "kinds"),
        (
            lambda: ValidatingPolicy(
                "p", kinds=[("v9", "Nothing")], validations=[Validation("true")]
            ),
            "not a built-in kind",
        ),
        (
            lambda: ValidatingPolicy("p", kinds=[Bar], validations=[Validation("true")]).bind(
                actions=["Deny", "Warn"]
            ),
            "both Deny and Warn",
        ),
        (
            lambda: ValidatingPolicy("p", kinds=[Bar], validations=[Validation("true")]).bind(
                param_ref=ParamRef(name="x")
            ),
            "no param_kind",
        ),
    ],
)
def test_a_declaration_the_apiserver_refuses_is_refused(make: Any, problem: str) -> None:
    with pytest.raises(PolicyError, match=problem):
        make()


async def test_the_manifests_are_what_fakeapi_enforces() -> None:
    policy = ValidatingPolicy(
        "bars", kinds=[Bar], validations=[Validation("object.spec.replicas <= 3", message="few")]
    )
    api = FakeAPI()
    api.install_crd(crd.generate(Bar))
    async with AsyncClient(api.config()) as client:
        for manifest in manifests(policy, policy.bind()):
            await client.create(manifest)
        bar = Bar(metadata={"name": "b", "namespace": "default"}, spec=BarSpec(replicas=4))
        with pytest.raises(InvalidError, match="ValidatingAdmissionPolicy 'bars' with binding"):
            await client.create(bar)


async def test_a_mutating_policy_renders_what_fakeapi_applies() -> None:
    """mutating/patch/smd.go: the Object an ApplyConfiguration builds is merged into the
    object; the manifest is the MutatingAdmissionPolicy the apiserver takes."""
    stamp = MutatingPolicy(
        "stamp",
        kinds=[Bar],
        operations=["CREATE"],
        mutations=[Mutation('Object{spec: Object.spec{image: "registry/" + object.spec.image}}')],
        reinvocation="IfNeeded",
    )
    manifest = stamp.manifest()
    assert manifest["spec"]["reinvocationPolicy"] == "IfNeeded"
    assert manifest["spec"]["mutations"] == [
        {
            "patchType": "ApplyConfiguration",
            "applyConfiguration": {
                "expression": 'Object{spec: Object.spec{image: "registry/" + object.spec.image}}'
            },
        }
    ]
    api = FakeAPI()
    api.install_crd(crd.generate(Bar))
    async with AsyncClient(api.config()) as client:
        for item in manifests(stamp, stamp.bind()):
            await client.create(item)
        bar = Bar(metadata={"name": "b", "namespace": "default"}, spec=BarSpec(image="app"))
        created = await client.create(bar)
    assert created.spec.image == "registry/app"


def test_a_mutation_reading_a_field_the_model_lacks_is_refused() -> None:
    with pytest.raises(PolicyError, match="undefined field 'imag'"):
        MutatingPolicy(
            "p",
            kinds=[Bar],
            mutations=[Mutation("Object{spec: Object.spec{image: object.spec.imag}}")],
        )
