"""ValidatingAdmissionPolicies on both servers: the same policies, bindings and requests.

Upstream: k8s.io/apiserver pkg/admission/plugin/policy/validating (dispatcher.go: the denial
``<resource> "<name>" is forbidden: ValidatingAdmissionPolicy '<p>' with binding '<b>' denied
request: <message>``, its reason and code, the ``Warn`` header text, ``failurePolicy``;
validator.go: ``matchConditions``, ``messageExpression`` then ``message`` then ``failed
expression: ...``, ``auditAnnotations``' return type), .../policy/generic (matching: resource
rules, exclusions, namespace and object selectors; ``CollectParams``: ``paramRef`` and
``parameterNotFoundAction``), .../plugin/cel (``variables``, the ``expression '...' resulted in
error: ...`` of a failing expression).

The policies are created once per module (on the real server: cluster-scoped, each bound only
to ConfigMaps carrying this module's ``suite`` label and its own ``case`` label, so they judge
nothing else); the real server enforces them once its policy informer has them, so each case
first waits (``eventually``) until a dry-run probe is refused (or warned) there.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable, Mapping
from typing import Any

import pytest
from contract_helpers import Target, configmap, kubernetes_at_least, unique

from kubectrl.client import AsyncClient, WarningRecorder
from kubectrl.errors import APIError, InvalidError, ResourceNotFoundError
from kubectrl.testing import eventually

SUITE = f"vap-{secrets.token_hex(3)}"
LABEL = "vap.contract.kubectrl.test/case"
SUITE_LABEL = "vap.contract.kubectrl.test/suite"
GROUP = "admissionregistration.k8s.io"
PROBE = "!has(object.data) || !('probe' in object.data)"
CONFIGMAPS = [
    {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"],
     "resources": ["configmaps"]}
]  # fmt: skip


def _policy(case: str, spec: Mapping[str, Any]) -> dict[str, Any]:
    body = {"matchConstraints": {"resourceRules": CONFIGMAPS}, **spec}
    validations = [{"expression": PROBE, "message": "probe"}, *spec.get("validations", [])]
    body["validations"] = validations
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": f"{SUITE}-{case}"},
        "spec": body,
    }


def _binding(case: str, actions: list[str], **spec: Any) -> dict[str, Any]:
    match = spec.pop("matchResources", {})
    match.setdefault("objectSelector", {"matchLabels": {SUITE_LABEL: SUITE, LABEL: case}})
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": f"{SUITE}-{case}-binding"},
        "spec": {
            "policyName": f"{SUITE}-{case}",
            "validationActions": actions,
            "matchResources": match,
            **spec,
        },
    }


def _policies(namespace: str) -> list[dict[str, Any]]:
    """Every case's policy and binding (``namespace``: the params' and the selector's)."""
    ns_in = {"matchExpressions": [
        {"key": "kubernetes.io/metadata.name", "operator": "In", "values": [namespace]}
    ]}  # fmt: skip
    ns_out = {"matchExpressions": [
        {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": [namespace]}
    ]}  # fmt: skip
    return [
        _policy("message", {"validations": [{"expression": "!('bad' in object.data)",
                                             "message": "no key named bad"}]}),
        _binding("message", ["Deny"]),
        _policy("default-message", {"validations": [{"expression": "!('bad' in object.data)"}]}),
        _binding("default-message", ["Deny"]),
        _policy("message-expression", {"validations": [{
            "expression": "size(object.data) <= 2",
            "messageExpression": "'has ' + string(size(object.data)) + ' keys'",
            "message": "unused"}]}),
        _binding("message-expression", ["Deny"]),
        _policy("reason", {"validations": [{"expression": "!('bad' in object.data)",
                                            "reason": "Forbidden", "message": "forbidden key"}]}),
        _binding("reason", ["Deny"]),
        _policy("variables", {
            "variables": [{"name": "keys", "expression": "object.data.size()"},
                          {"name": "many", "expression": "variables.keys > 1"}],
            "validations": [{"expression": "!variables.many",
                             "messageExpression": "'keys: ' + string(variables.keys)"}]}),
        _binding("variables", ["Deny"]),
        _policy("match-conditions", {
            "matchConditions": [{"name": "checked", "expression": "'check' in object.data"}],
            "validations": [{"expression": "object.data.check == 'yes'", "message": "check!"}]}),
        _binding("match-conditions", ["Deny"]),
        _policy("condition-errors", {
            "matchConditions": [
                {"name": "errs", "expression": "object.data.missing == 'x'"},
                {"name": "skip", "expression": "'skip' in object.data"}],
            "validations": [{"expression": "false", "message": "applied"}]}),
        _binding("condition-errors", ["Deny"]),
        _policy("warn", {"validations": [{"expression": "!('bad' in object.data)",
                                          "message": "bad is deprecated"}]}),
        _binding("warn", ["Warn", "Audit"]),
        _policy("fail", {"validations": [{"expression": "object.data.missing == 'x'"}]}),
        _binding("fail", ["Deny"]),
        _policy("ignore", {"failurePolicy": "Ignore", "validations": [
            {"expression": "object.data.missing == 'x'"},
            {"expression": "!('deny' in object.data)", "message": "deny key"}]}),
        _binding("ignore", ["Deny"]),
        _policy("params", {
            "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
            "validations": [{"expression": "size(object.data) <= int(params.data.max)",
                             "messageExpression": "'at most ' + params.data.max + ' keys'"}]}),
        _binding("params", ["Deny"], paramRef={"name": f"{SUITE}-limits", "namespace": namespace,
                                               "parameterNotFoundAction": "Deny"}),
        _policy("params-selector", {
            "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
            "validations": [{"expression": "size(object.data) <= int(params.data.max)",
                             "messageExpression": "'selected: at most ' + params.data.max"}]}),
        _binding("params-selector", ["Deny"], paramRef={
            "selector": {"matchLabels": {SUITE_LABEL: SUITE, "limit": "selected"}},
            "parameterNotFoundAction": "Deny"}),
        _policy("no-params", {
            "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
            "validations": [{"expression": "true"}]}),
        _binding("no-params", ["Deny"], paramRef={"name": f"{SUITE}-absent",
                                                  "parameterNotFoundAction": "Deny"}),
        _policy("namespaces", {"validations": [{"expression": "!('bad' in object.data)",
                                                "message": "in this namespace"}]}),
        _binding("namespaces", ["Deny"], matchResources={"namespaceSelector": ns_in}),
        _policy("other-namespaces", {"validations": [{"expression": "false"}]}),
        _binding("other-namespaces", ["Deny"], matchResources={"namespaceSelector": ns_out}),
        _policy("exclude", {
            "matchConstraints": {"resourceRules": CONFIGMAPS, "excludeResourceRules": [
                {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["*"],
                 "resources": ["configmaps"], "resourceNames": ["exempt"]}]},
            "validations": [{"expression": "!('bad' in object.data)", "message": "not exempt"}]}),
        _binding("exclude", ["Deny"]),
        _policy("create-only", {
            "matchConstraints": {"resourceRules": [dict(CONFIGMAPS[0], operations=["CREATE"])]},
            "validations": [{"expression": "!('bad' in object.data)", "message": "on create"}]}),
        _binding("create-only", ["Deny"]),
        _policy("old-object", {"validations": [{
            "expression": "oldObject == null || !has(oldObject.data.frozen) || "
                          "object.data.frozen == oldObject.data.frozen",
            "message": "frozen is immutable", "reason": "Invalid"}]}),
        _binding("old-object", ["Deny"]),
        _policy("request", {"validations": [{
            "expression": "request.operation != 'UPDATE' || request.name != 'locked'",
            "messageExpression": "request.resource.resource + '/' + request.name + ' in ' + "
                                 "request.namespace + ' is locked'"}]}),
        _binding("request", ["Deny"]),
        _policy("audit-annotations", {"auditAnnotations": [
            {"key": "size", "valueExpression": "string(size(object.data))"},
            {"key": "none", "valueExpression": "'probe' in object.data ? 'probe' : ''"}]}),
        _binding("audit-annotations", ["Deny"]),
    ]  # fmt: skip


PLURALS = {
    "ValidatingAdmissionPolicy": "validatingadmissionpolicies",
    "ValidatingAdmissionPolicyBinding": "validatingadmissionpolicybindings",
}
_READY: dict[str, str] = {}  # real server: the namespace the policies were created for


def _labels(case: str) -> dict[str, str]:
    return {SUITE_LABEL: SUITE, LABEL: case}


def _cm(target: Target, case: str, data: Mapping[str, str], name: str = "") -> dict[str, Any]:
    return configmap(name or unique(case[:40]), target.namespace, data, labels=_labels(case))


async def _install(target: Target, request: pytest.FixtureRequest) -> None:
    """The policies and bindings, once per module on the real server (removed at its end)."""
    objects = _policies(target.namespace)
    if target.is_real:
        if _READY.get("namespace") == target.namespace:
            return
        _READY["namespace"] = target.namespace  # once, even if a create below fails
        control_plane = target.control_plane
        assert control_plane is not None

        def remove() -> None:
            with control_plane.http_client() as http:
                for obj in objects:
                    plural = PLURALS[obj["kind"]]
                    http.delete(f"/apis/{GROUP}/v1/{plural}/{obj['metadata']['name']}")

        request.node.getparent(pytest.Module).addfinalizer(remove)
    await target.client.create(configmap(f"{SUITE}-limits", target.namespace, {"max": "2"}))
    selected = {SUITE_LABEL: SUITE, "limit": "selected"}
    await target.client.create(
        configmap(f"{SUITE}-selected", target.namespace, {"max": "1"}, labels=selected)
    )
    for obj in objects:
        await target.client.create(obj)


async def _enforced(
    target: Target,
    case: str,
    probe: Callable[[], Any] | None = None,
    data: Mapping[str, str] | None = None,
) -> None:
    """On the real server, wait until the case's policy is enforced (a dry-run probe refused)."""
    if not target.is_real:
        return

    async def refused() -> bool:
        try:
            if probe is not None:
                return bool(await probe())
            await target.client.create(_cm(target, case, data or {"probe": "1"}), dry_run=True)
        except APIError:
            return True
        return False

    await eventually(refused, 60, describe=f"policy {case} enforced")


@pytest.fixture
async def policies(target: Target, request: pytest.FixtureRequest) -> Target:
    await _install(target, request)
    return target


async def _refusal(client: AsyncClient, obj: Mapping[str, Any], update: bool = False) -> Any:
    write = client.update if update else client.create
    with pytest.raises(APIError) as caught:
        await write(dict(obj))
    body = caught.value.status or {}
    return (
        caught.value.code,
        body.get("reason"),
        body.get("message"),
        body.get("details"),
    )


def _denied(target: Target, case: str, name: str, message: str, code: int = 422) -> Any:
    text = (
        f"ValidatingAdmissionPolicy '{SUITE}-{case}' with binding '{SUITE}-{case}-binding' "
        f"denied request: {message}"
    )
    reason = {422: "Invalid", 403: "Forbidden"}[code]
    details = {"name": name, "kind": "configmaps", "causes": [{"message": text}]}
    return (code, reason, f'configmaps "{name}" is forbidden: {text}', details)


async def _check_denial(
    target: Target, case: str, data: Mapping[str, str], message: str, code: int = 422
) -> None:
    await _enforced(target, case, data=data)  # the request itself, dry run
    obj = _cm(target, case, data)
    name = obj["metadata"]["name"]
    assert await _refusal(target.client, obj) == _denied(target, case, name, message, code)


async def test_validation_message(policies: Target) -> None:
    await _check_denial(policies, "message", {"bad": "1"}, "no key named bad")
    await policies.client.create(_cm(policies, "message", {"good": "1"}))


async def test_validation_without_message_names_the_expression(policies: Target) -> None:
    await _check_denial(
        policies, "default-message", {"bad": "1"}, "failed expression: !('bad' in object.data)"
    )


async def test_message_expression(policies: Target) -> None:
    await _check_denial(
        policies, "message-expression", {"a": "1", "b": "2", "c": "3"}, "has 3 keys"
    )


async def test_reason_gives_the_code(policies: Target) -> None:
    await _check_denial(policies, "reason", {"bad": "1"}, "forbidden key", code=403)


async def test_variables(policies: Target) -> None:
    await _check_denial(policies, "variables", {"a": "1", "b": "2"}, "keys: 2")
    await policies.client.create(_cm(policies, "variables", {"a": "1"}))


async def test_match_conditions(policies: Target) -> None:
    await _check_denial(policies, "match-conditions", {"check": "no"}, "check!")
    # no 'check' key: the condition is false, the policy does not apply
    await policies.client.create(_cm(policies, "match-conditions", {"other": "no"}))


async def test_match_condition_errors_yield_to_a_false_one(policies: Target) -> None:
    await _check_denial(
        policies,
        "condition-errors",
        {"skip": "1"},
        "expression 'object.data.missing == 'x'' resulted in error: no such key: missing",
    )
    await policies.client.create(_cm(policies, "condition-errors", {"other": "1"}))


async def test_warn_and_audit_admit_with_a_warning(policies: Target) -> None:
    recorder = WarningRecorder()
    async with AsyncClient(policies.config.with_options(warning_handler=recorder)) as client:

        async def warned() -> bool:
            recorder.texts.clear()
            await client.create(_cm(policies, "warn", {"bad": "1"}), dry_run=True)
            return bool(recorder.texts)

        await _enforced(policies, "warn", warned)
        recorder.texts.clear()
        created = await client.create(_cm(policies, "warn", {"bad": "1"}))
    assert created["data"] == {"bad": "1"}
    assert recorder.texts == [
        f"Validation failed for ValidatingAdmissionPolicy '{SUITE}-warn' with binding "
        f"'{SUITE}-warn-binding': bad is deprecated"
    ]


async def test_failure_policy_fail_denies_an_error(policies: Target) -> None:
    await _check_denial(
        policies,
        "fail",
        {"other": "1"},
        "expression 'object.data.missing == 'x'' resulted in error: no such key: missing",
    )


async def test_failure_policy_ignore_admits_an_error(policies: Target) -> None:
    await _check_denial(policies, "ignore", {"deny": "1"}, "deny key")
    await policies.client.create(_cm(policies, "ignore", {"other": "1"}))


async def test_params(policies: Target) -> None:
    await _check_denial(policies, "params", {"a": "1", "b": "2", "c": "3"}, "at most 2 keys")
    await policies.client.create(_cm(policies, "params", {"a": "1"}))


async def test_params_by_selector(policies: Target) -> None:
    await _check_denial(policies, "params-selector", {"a": "1", "b": "2"}, "selected: at most 1")
    await policies.client.create(_cm(policies, "params-selector", {"a": "1"}))


async def test_params_not_found_deny(policies: Target) -> None:
    await _check_denial(
        policies,
        "no-params",
        {"a": "1"},
        "failed to configure binding: no params found for policy binding with `Deny` "
        "parameterNotFoundAction",
    )


async def test_namespace_selector(policies: Target) -> None:
    await _check_denial(policies, "namespaces", {"bad": "1"}, "in this namespace")
    # the binding selecting the other namespaces does not judge this one
    await policies.client.create(_cm(policies, "other-namespaces", {"a": "1"}))


async def test_exclude_resource_rules(policies: Target) -> None:
    await _check_denial(policies, "exclude", {"bad": "1"}, "not exempt")
    await policies.client.create(_cm(policies, "exclude", {"bad": "1"}, name="exempt"))


async def test_match_constraints_operations(policies: Target) -> None:
    await _check_denial(policies, "create-only", {"bad": "1"}, "on create")
    created = await policies.client.create(_cm(policies, "create-only", {"a": "1"}))
    created["data"] = {"bad": "1"}
    updated = await policies.client.update(created)  # UPDATE is not matched
    assert updated["data"] == {"bad": "1"}


async def test_old_object_on_update(policies: Target) -> None:
    await _enforced(policies, "old-object")
    created = await policies.client.create(_cm(policies, "old-object", {"frozen": "a"}))
    created["data"] = {"frozen": "b"}
    name = created["metadata"]["name"]
    expected = _denied(policies, "old-object", name, "frozen is immutable")
    assert await _refusal(policies.client, created, update=True) == expected


async def test_request_variable(policies: Target) -> None:
    await _enforced(policies, "request")
    created = await policies.client.create(_cm(policies, "request", {"a": "1"}, name="locked"))
    created["data"] = {"a": "2"}
    message = f"configmaps/locked in {policies.namespace} is locked"
    expected = _denied(policies, "request", "locked", message)
    assert await _refusal(policies.client, created, update=True) == expected


async def test_audit_annotations_admit(policies: Target) -> None:
    # FakeAPI keeps no audit log: what shows is that they are evaluated and admit the write
    await _enforced(policies, "audit-annotations")
    await policies.client.create(_cm(policies, "audit-annotations", {"a": "1"}))


@pytest.mark.parametrize(
    ("field", "expression", "message"),
    [
        ("validations", "size(object.data)", "must evaluate to bool but got int"),
        ("auditAnnotations", "size(object.data)",
         "must evaluate to one of [string null_type] but got int"),
        ("validations", "object.data.x ==", None),
    ],
)  # fmt: skip
async def test_an_expression_the_apiserver_cannot_compile_is_refused(
    target: Target, field: str, expression: str, message: str | None
) -> None:
    entry = {"expression": expression}
    if field == "auditAnnotations":
        entry = {"key": "k", "valueExpression": expression}
    obj = _policy(unique("bad"), {})
    obj["spec"]["validations"] = []  # not the probe
    obj["spec"][field] = [entry]
    key = "valueExpression" if field == "auditAnnotations" else "expression"
    with pytest.raises(InvalidError) as caught:
        await target.client.create(obj)
    causes = caught.value.status["details"]["causes"]
    assert [c["field"] for c in causes] == [f"spec.{field}[0].{key}"]
    if message is None:  # cel-go's and cel-python's syntax error texts differ
        assert causes[0]["message"].startswith(
            f"Invalid value: {json.dumps(expression)}: compilation failed: ERROR: "
        )
    else:
        assert causes[0]["message"] == f"Invalid value: {json.dumps(expression)}: {message}"


#: MutatingAdmissionPolicy v1 is GA in 1.36; on 1.35 both targets refuse it
#: (test_mutating_policies_are_not_served_before_1_36).
_MUTATING_SERVED = pytest.mark.skipif(
    not kubernetes_at_least("1.36"),
    reason="MutatingAdmissionPolicy v1 is served from 1.36 on; checked as a 404 on 1.35",
)


async def _mutating(
    target: Target,
    request: pytest.FixtureRequest,
    case: str,
    mutations: list[dict[str, Any]],
    **spec: Any,
) -> None:
    """A MutatingAdmissionPolicy of this case's ConfigMaps and its binding (removed after the
    case on the real server)."""
    name = f"{SUITE}-{case}"
    selector = {"matchLabels": {SUITE_LABEL: SUITE, LABEL: case.split(".")[0]}}
    policy = {
        "apiVersion": f"{GROUP}/v1",
        "kind": "MutatingAdmissionPolicy",
        "metadata": {"name": name},
        "spec": {
            "matchConstraints": {"resourceRules": CONFIGMAPS},
            "failurePolicy": "Fail",
            "reinvocationPolicy": "Never",
            "mutations": mutations,
            **spec,
        },
    }
    binding = {
        "apiVersion": f"{GROUP}/v1",
        "kind": "MutatingAdmissionPolicyBinding",
        "metadata": {"name": name},
        "spec": {"policyName": name, "matchResources": {"objectSelector": selector}},
    }
    if target.is_real:
        control_plane = target.control_plane
        assert control_plane is not None

        def remove() -> None:
            with control_plane.http_client() as http:
                for plural in ("mutatingadmissionpolicies", "mutatingadmissionpolicybindings"):
                    http.delete(f"/apis/{GROUP}/v1/{plural}/{name}")

        request.addfinalizer(remove)
    await target.client.create(policy)
    await target.client.create(binding)


def _apply(expression: str) -> dict[str, Any]:
    return {"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": expression}}


def _json_patch(expression: str) -> dict[str, Any]:
    return {"patchType": "JSONPatch", "jsonPatch": {"expression": expression}}


async def _mutated_when_enforced(
    target: Target, case: str, data: Mapping[str, str], ready: Callable[[Any], bool]
) -> Any:
    """Create the case's ConfigMap once the real server applies the policy to a dry run."""

    async def applied() -> bool:
        probe = await target.client.create(_cm(target, case, data), dry_run=True)
        return ready(probe)

    if target.is_real:
        await eventually(applied, 60, describe=f"mutating policy {case} in force")
    return await target.client.create(_cm(target, case, data))


@_MUTATING_SERVED
async def test_mutating_apply_configuration(target: Target, request: pytest.FixtureRequest) -> None:
    """pkg/admission/plugin/policy/mutating/patch/smd.go: the Object merged into the object."""
    await _mutating(
        target,
        request,
        "apply",
        [_apply('Object{metadata: Object.metadata{labels: {"mutated": "yes"}}, '
                'data: {"size": string(size(object.data))}}')],
    )  # fmt: skip
    created = await _mutated_when_enforced(
        target, "apply", {"a": "1"}, lambda o: "size" in o["data"]
    )
    assert created["data"] == {"a": "1", "size": "1"}
    assert created["metadata"]["labels"] == {**_labels("apply"), "mutated": "yes"}


@_MUTATING_SERVED
async def test_mutating_json_patch(target: Target, request: pytest.FixtureRequest) -> None:
    """pkg/admission/plugin/policy/mutating/patch/json_patch.go: the operations in order."""
    await _mutating(
        target,
        request,
        "jsonpatch",
        [_json_patch('[JSONPatch{op: "add", path: "/data/b", value: "2"}, '
                     'JSONPatch{op: "replace", path: "/data/a", value: object.data.a + "!"}, '
                     'JSONPatch{op: "remove", path: "/data/gone"}]')],
    )  # fmt: skip
    created = await _mutated_when_enforced(
        target, "jsonpatch", {"a": "1", "gone": "x"}, lambda o: "b" in o["data"]
    )
    assert created["data"] == {"a": "1!", "b": "2"}


@_MUTATING_SERVED
async def test_mutating_reinvocation_if_needed(
    target: Target, request: pytest.FixtureRequest
) -> None:
    """pkg/admission/plugin/policy/mutating/dispatcher.go: an IfNeeded policy runs again when
    another changed the object after it (whatever order the two run in, ``copy`` ends ``set``)."""
    await _mutating(
        target,
        request,
        "reinvoke.copy",
        [_apply('Object{data: {"copy": has(object.data.b) ? object.data.b : "none"}}')],
        reinvocationPolicy="IfNeeded",
    )
    await _mutating(target, request, "reinvoke.set", [_apply('Object{data: {"b": "set"}}')])
    created = await _mutated_when_enforced(
        target, "reinvoke", {"a": "1"}, lambda o: {"b", "copy"} <= set(o["data"])
    )
    assert created["data"] == {"a": "1", "b": "set", "copy": "set"}


@_MUTATING_SERVED
async def test_mutating_failure_policy_fail(target: Target, request: pytest.FixtureRequest) -> None:
    await _mutating(
        target, request, "mutating-fail", [_apply('Object{data: {"x": object.data.missing}}')]
    )
    obj = _cm(target, "mutating-fail", {"a": "1"})

    async def refused() -> bool:
        try:
            await target.client.create(obj, dry_run=True)
        except APIError:
            return True
        return False

    if target.is_real:
        await eventually(refused, 60, describe="mutating policy mutating-fail in force")
    name = obj["metadata"]["name"]
    text = (
        f"policy '{SUITE}-mutating-fail' with binding '{SUITE}-mutating-fail' denied request: "
        """expression 'Object{data: {"x": object.data.missing}}' resulted in error: """
        "no such key: missing"
    )
    details = {"name": name, "kind": "configmaps", "causes": [{"message": text}]}
    assert await _refusal(target.client, obj) == (403, "Invalid", text, details)


@_MUTATING_SERVED
async def test_mutating_policy_sees_the_custom_resources_defaults(
    target: Target, request: pytest.FixtureRequest
) -> None:
    """The body of a write is decoded with its CRD's schema, pruned and defaulted, before
    admission runs (apiextensions-apiserver pkg/apiserver/customresource_handler.go: the
    request scope's decoder and its unstructuredDefaulter; k8s.io/apiserver
    pkg/endpoints/handlers/create.go decodes, then admits): a policy reads ``spec.size``,
    which only its default sets."""
    kind = await target.widget()
    group = kind[0].split("/")[0]
    rules = [{"apiGroups": [group], "apiVersions": ["v1"], "operations": ["CREATE"],
              "resources": ["widgets"]}]  # fmt: skip
    await _mutating(
        target,
        request,
        "crdefaults",
        [_apply('Object{metadata: Object.metadata{labels: {"size": object.spec.size}}}')],
        matchConstraints={"resourceRules": rules},
    )
    meta = {"namespace": target.namespace, "labels": _labels("crdefaults")}
    widget = {"apiVersion": kind[0], "kind": "Widget", "spec": {"color": "red"}}

    async def applied() -> bool:
        probe = {**widget, "metadata": {**meta, "name": unique("crdefaults")}}
        made = await target.client.create(probe, dry_run=True)
        return "size" in made["metadata"]["labels"]

    if target.is_real:
        await eventually(applied, 60, describe="mutating policy crdefaults in force")
    made = await target.client.create({**widget, "metadata": {**meta, "name": unique("crd")}})
    assert made["metadata"]["labels"]["size"] == made["spec"]["size"] == "M"


@pytest.mark.skipif(
    kubernetes_at_least("1.36"), reason="MutatingAdmissionPolicy v1 is served from 1.36 on"
)
async def test_mutating_policies_are_not_served_before_1_36(target: Target) -> None:
    """MutatingAdmissionPolicy reached admissionregistration.k8s.io/v1 in 1.36
    (pkg/apis/admissionregistration/v1 in kubernetes/kubernetes v1.36.0): a 1.35 apiserver does
    not serve it, and FakeAPI imitating 1.35 answers as it does."""
    with pytest.raises(ResourceNotFoundError, match="MutatingAdmissionPolicy"):
        await target.client.list((f"{GROUP}/v1", "MutatingAdmissionPolicy"))
