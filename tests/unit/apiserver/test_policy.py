"""FakeAPI's ValidatingAdmissionPolicy plugin: what the differential suite
(``tests/contract/test_admission_policies.py``) cannot show on the real server.

Upstream: k8s.io/apiserver pkg/admission/plugin/policy/validating (dispatcher.go, validator.go),
pkg/admission/plugin/policy/generic (matching), pkg/admission/plugin/cel (compile.go: the
variables an expression sees), pkg/apis/admissionregistration/validation/validation.go (a
policy whose expression does not compile is 422), and ``IsExemptAdmissionConfigurationResource``
(policies never judge the admission configuration kinds themselves).
"""

from __future__ import annotations

from typing import Any

import pytest

from kubectrl.client import AsyncClient, WarningRecorder
from kubectrl.errors import InvalidError, UnsupportedFeatureError
from kubectrl.testing import FakeAPI

GROUP = "admissionregistration.k8s.io"


def policy(name: str, *validations: dict[str, Any], **spec: Any) -> dict[str, Any]:
    rules = [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["*"], "resources": ["*"]}]
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name},
        "spec": {
            "matchConstraints": {"resourceRules": rules},
            "validations": list(validations),
            **spec,
        },
    }


def binding(name: str, actions: list[str]) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": f"{name}-binding"},
        "spec": {"policyName": name, "validationActions": actions},
    }


def cm(name: str, **data: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default"},
        "data": data,
    }


@pytest.fixture
async def client() -> Any:
    api = FakeAPI()
    async with AsyncClient(api.config()) as c:
        yield c


async def test_an_expression_that_does_not_compile_is_refused(client: AsyncClient) -> None:
    with pytest.raises(InvalidError) as caught:
        await client.create(policy("p", {"expression": "object.data <"}))
    causes = caught.value.status["details"]["causes"]
    assert [c["field"] for c in causes] == ["spec.validations[0].expression"]
    assert "compilation failed" in causes[0]["message"]


async def test_a_binding_needs_its_actions(client: AsyncClient) -> None:
    with pytest.raises(InvalidError) as caught:
        await client.create(binding("p", []))
    assert [c["field"] for c in caught.value.status["details"]["causes"]] == [
        "spec.validationActions"
    ]


async def test_defaults(client: AsyncClient) -> None:
    created = await client.create(policy("p", {"expression": "true"}))
    assert created["spec"]["failurePolicy"] == "Fail"
    match = created["spec"]["matchConstraints"]
    assert match["matchPolicy"] == "Equivalent"
    assert match["namespaceSelector"] == {}
    assert match["objectSelector"] == {}
    assert match["resourceRules"][0]["scope"] == "*"


@pytest.mark.parametrize(
    ("expression", "feature"),
    [
        ("authorizer.group('').resource('pods').check('get').allowed()", "authorizer"),
        ("request.userInfo.username == 'admin'", "request.userInfo"),
        ("isURL(object.data.a)", "isURL"),
    ],
)
async def test_what_the_fake_lacks_is_refused_naming_it(
    client: AsyncClient, expression: str, feature: str
) -> None:
    await client.create(policy("p", {"expression": expression}))
    await client.create(binding("p", ["Deny"]))
    with pytest.raises(UnsupportedFeatureError, match=feature):
        await client.create(cm("c", a="1"))


async def test_policies_do_not_judge_admission_configuration(client: AsyncClient) -> None:
    await client.create(policy("p", {"expression": "false"}, matchConstraints={
        "resourceRules": [{"apiGroups": ["*"], "apiVersions": ["*"], "operations": ["*"],
                           "resources": ["*"]}]}))  # fmt: skip
    await client.create(binding("p", ["Deny"]))
    await client.create(policy("q", {"expression": "true"}))  # not refused


async def test_warnings_of_a_refused_write_reach_the_client() -> None:
    api = FakeAPI()
    recorder = WarningRecorder()
    async with AsyncClient(api.config().with_options(warning_handler=recorder)) as client:
        await client.create(policy("a", {"expression": "false", "message": "warned"}))
        await client.create(binding("a", ["Warn"]))
        await client.create(policy("b", {"expression": "false", "message": "denied"}))
        await client.create(binding("b", ["Deny"]))
        with pytest.raises(InvalidError, match="denied"):
            await client.create(cm("c"))
    assert recorder.texts == [
        "Validation failed for ValidatingAdmissionPolicy 'a' with binding 'a-binding': warned"
    ]


async def test_a_status_write_is_not_matched_by_the_resource_alone() -> None:
    api = FakeAPI()
    async with AsyncClient(api.config()) as client:
        rules = [{"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["UPDATE"],
                  "resources": ["deployments"]}]  # fmt: skip
        deploy = {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "d", "namespace": "default"},
            "spec": {
                "selector": {"matchLabels": {"a": "b"}},
                "template": {
                    "metadata": {"labels": {"a": "b"}},
                    "spec": {"containers": [{"name": "c", "image": "i"}]},
                },
            },
        }
        created = await client.create(deploy)
        await client.create(
            policy("p", {"expression": "false"}, matchConstraints={"resourceRules": rules})
        )
        await client.create(binding("p", ["Deny"]))
        created["status"] = {"observedGeneration": 1}
        created = await client.status().update(created)
        with pytest.raises(InvalidError):
            await client.update(created)


async def test_a_false_match_condition_wins_over_one_that_errs(client: AsyncClient) -> None:
    """matchconditions/matcher.go: any condition false and the policy does not apply, though
    another failed; with none false, the errors go to the failure policy."""
    conditions = [
        {"name": "errs", "expression": "object.data.missing == 'x'"},
        {"name": "false", "expression": "'skip' in object.data"},
    ]
    await client.create(policy("p", {"expression": "false"}, matchConditions=conditions))
    await client.create(binding("p", ["Deny"]))
    with pytest.raises(InvalidError, match="resulted in error: no such key: missing"):
        await client.create(cm("c", skip="1"))
    await client.create(cm("d", other="1"))


async def test_a_mutation_building_an_unknown_type_is_refused_naming_it(
    client: AsyncClient,
) -> None:
    """mutating/patch/smd.go builds ``Object`` (and ``Object.<field>...``) values; JSONPatch
    builds ``JSONPatch``: any other construction is one FakeAPI cannot type."""
    rules = [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"],
              "resources": ["configmaps"]}]  # fmt: skip
    await client.create(
        {
            "apiVersion": f"{GROUP}/v1",
            "kind": "MutatingAdmissionPolicy",
            "metadata": {"name": "m"},
            "spec": {
                "matchConstraints": {"resourceRules": rules},
                "reinvocationPolicy": "Never",
                "mutations": [
                    {
                        "patchType": "ApplyConfiguration",
                        "applyConfiguration": {"expression": "Other{data: {}}"},
                    }
                ],
            },
        }
    )
    await client.create(
        {
            "apiVersion": f"{GROUP}/v1",
            "kind": "MutatingAdmissionPolicyBinding",
            "metadata": {"name": "m"},
            "spec": {"policyName": "m"},
        }
    )
    with pytest.raises(UnsupportedFeatureError, match=r"Other\{\.\.\.\}"):
        await client.create(cm("c", a="1"))


async def test_mutations_run_before_validation(client: AsyncClient) -> None:
    """The apiserver's order: mutating admission, then the kind's validation and validating
    admission, which see the mutated object."""
    rules = [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"],
              "resources": ["configmaps"]}]  # fmt: skip
    await client.create(
        {
            "apiVersion": f"{GROUP}/v1",
            "kind": "MutatingAdmissionPolicy",
            "metadata": {"name": "m"},
            "spec": {
                "matchConstraints": {"resourceRules": rules},
                "reinvocationPolicy": "Never",
                "mutations": [
                    {
                        "patchType": "JSONPatch",
                        "jsonPatch": {
                            "expression": '[JSONPatch{op: "add", path: "/data/added", '
                            'value: "yes"}]'
                        },
                    }
                ],
            },
        }
    )
    await client.create(
        {
            "apiVersion": f"{GROUP}/v1",
            "kind": "MutatingAdmissionPolicyBinding",
            "metadata": {"name": "m"},
            "spec": {"policyName": "m"},
        }
    )
    await client.create(policy("v", {"expression": "'added' in object.data", "message": "no"}))
    await client.create(binding("v", ["Deny"]))
    created = await client.create(cm("c", a="1"))
    assert created["data"] == {"a": "1", "added": "yes"}
