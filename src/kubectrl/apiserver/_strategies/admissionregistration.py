"""The strategies of ``admissionregistration.k8s.io``'s admission policies.

ValidatingAdmissionPolicies and their bindings (``pkg/registry/admissionregistration/
validatingadmissionpolicy``, ``...binding``): defaulted as ``pkg/apis/admissionregistration/v1/
defaults.go`` (``failurePolicy`` Fail, ``matchPolicy`` Equivalent, empty selectors, a rule's
``scope`` ``*``) and validated as ``pkg/apis/admissionregistration/validation/validation.go``
checks what a test's policy most often gets wrong: the required fields, the enumerations, and
every CEL expression compiled (one that does not parse, calls an unknown function, or whose type
is known and wrong is 422, as the apiserver's compilation refuses it). The policies run as an
admission plugin (:mod:`kubectrl.apiserver._admission.policy`).

Not checked: type checking against the matched kinds (the apiserver reports it in the
policy's ``status.typeChecking``, asynchronously, and admits the policy).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from kubectrl.apiserver._schema.cel_policy import compile_expression
from kubectrl.apiserver._strategies.base import Cause, Strategy

__all__ = [
    "MutatingAdmissionPolicies",
    "MutatingAdmissionPolicyBindings",
    "ValidatingAdmissionPolicies",
    "ValidatingAdmissionPolicyBindings",
]

_OPERATIONS = ("*", "CREATE", "UPDATE", "DELETE", "CONNECT")
_ACTIONS = ("Deny", "Warn", "Audit")


def _default_match(match: Any) -> None:
    if not isinstance(match, dict):
        return
    match.setdefault("namespaceSelector", {})
    match.setdefault("objectSelector", {})
    match.setdefault("matchPolicy", "Equivalent")
    for key in ("resourceRules", "excludeResourceRules"):
        for rule in match.get(key) or ():
            if isinstance(rule, dict):
                rule.setdefault("scope", "*")


def _compile(expression: Any, path: str, causes: list[Cause], *returns: str) -> None:
    if not isinstance(expression, str) or not expression.strip():
        causes.append(("FieldValueRequired", path, "Required value: expression is not specified"))
        return
    problem = compile_expression(expression, returns)
    if problem:
        causes.append(
            ("FieldValueInvalid", path, f"Invalid value: {json.dumps(expression)}: {problem}")
        )


def _match_causes(match: Any, path: str, required: bool) -> list[Cause]:
    causes: list[Cause] = []
    if not isinstance(match, Mapping):
        if required:
            causes.append(("FieldValueRequired", path, "Required value"))
        return causes
    rules = match.get("resourceRules") or []
    if required and not rules:
        causes.append(("FieldValueRequired", f"{path}.resourceRules", "Required value"))
    for key in ("resourceRules", "excludeResourceRules"):
        for i, rule in enumerate(match.get(key) or ()):
            where = f"{path}.{key}[{i}]"
            for op in rule.get("operations") or ():
                if op not in _OPERATIONS:
                    supported = ", ".join(f'"{o}"' for o in _OPERATIONS)
                    causes.append(
                        (
                            "FieldValueNotSupported",
                            f"{where}.operations",
                            f'Unsupported value: "{op}": supported values: {supported}',
                        )
                    )
    policy = match.get("matchPolicy")
    if policy not in (None, "Exact", "Equivalent"):
        causes.append(
            (
                "FieldValueNotSupported",
                f"{path}.matchPolicy",
                f'Unsupported value: "{policy}": supported values: "Equivalent", "Exact"',
            )
        )
    return causes


class ValidatingAdmissionPolicies(Strategy):
    """ValidatingAdmissionPolicies: cluster-scoped, a status subresource, a generation."""

    resource = ("admissionregistration.k8s.io", "validatingadmissionpolicies")
    status = True
    generation = True
    kube_finalizers = False

    def default(self, obj: dict[str, Any]) -> None:
        spec = obj.setdefault("spec", {})
        spec.setdefault("failurePolicy", "Fail")
        _default_match(spec.get("matchConstraints"))

    def validate(self, obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> list[Cause]:
        del old
        spec = obj.get("spec") or {}
        causes = _match_causes(spec.get("matchConstraints"), "spec.matchConstraints", True)
        failure = spec.get("failurePolicy")
        if failure not in ("Fail", "Ignore"):
            causes.append(
                (
                    "FieldValueNotSupported",
                    "spec.failurePolicy",
                    f'Unsupported value: "{failure}": supported values: "Fail", "Ignore"',
                )
            )
        validations = spec.get("validations") or []
        audits = spec.get("auditAnnotations") or []
        if not validations and not audits:
            causes.append(
                (
                    "FieldValueRequired",
                    "spec.validations",
                    "Required value: validations or auditAnnotations must contain at least one "
                    "item",
                )
            )
        for i, variable in enumerate(spec.get("variables") or ()):
            _compile(variable.get("expression"), f"spec.variables[{i}].expression", causes)
        for i, condition in enumerate(spec.get("matchConditions") or ()):
            _compile(
                condition.get("expression"), f"spec.matchConditions[{i}].expression", causes, "bool"
            )
        for i, validation in enumerate(validations):
            _compile(
                validation.get("expression"), f"spec.validations[{i}].expression", causes, "bool"
            )
            if validation.get("messageExpression"):
                _compile(
                    validation["messageExpression"],
                    f"spec.validations[{i}].messageExpression",
                    causes,
                    "string",
                )
        for i, audit in enumerate(audits):
            _compile(
                audit.get("valueExpression"),
                f"spec.auditAnnotations[{i}].valueExpression",
                causes,
                "string",
                "null_type",
            )
        return causes


class ValidatingAdmissionPolicyBindings(Strategy):
    """ValidatingAdmissionPolicyBindings: cluster-scoped, a generation."""

    resource = ("admissionregistration.k8s.io", "validatingadmissionpolicybindings")
    generation = True
    kube_finalizers = False

    def default(self, obj: dict[str, Any]) -> None:
        _default_match((obj.setdefault("spec", {})).get("matchResources"))

    def validate(self, obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> list[Cause]:
        del old
        spec = obj.get("spec") or {}
        causes: list[Cause] = []
        if not spec.get("policyName"):
            causes.append(("FieldValueRequired", "spec.policyName", "Required value"))
        actions = spec.get("validationActions") or []
        if not actions:
            causes.append(("FieldValueRequired", "spec.validationActions", "Required value"))
        for i, action in enumerate(actions):
            if action not in _ACTIONS:
                causes.append(
                    (
                        "FieldValueNotSupported",
                        f"spec.validationActions[{i}]",
                        f'Unsupported value: "{action}": supported values: "Audit", "Deny", "Warn"',
                    )
                )
            elif action in actions[:i]:
                causes.append(
                    (
                        "FieldValueDuplicate",
                        f"spec.validationActions[{i}]",
                        f'Duplicate value: "{action}"',
                    )
                )
        if "Deny" in actions and "Warn" in actions:
            causes.append(
                (
                    "FieldValueInvalid",
                    "spec.validationActions",
                    'Invalid value: ["Deny","Warn"]: must not contain both Deny and Warn '
                    "(repeating the same validation failure information in the API response "
                    "and headers serves no purpose)",
                )
            )
        ref = spec.get("paramRef")
        if isinstance(ref, Mapping):
            if ref.get("parameterNotFoundAction") not in ("Allow", "Deny"):
                causes.append(
                    (
                        "FieldValueRequired",
                        "spec.paramRef.parameterNotFoundAction",
                        "Required value",
                    )
                )
            if bool(ref.get("name")) == (ref.get("selector") is not None):
                causes.append(
                    (
                        "FieldValueRequired" if not ref.get("name") else "FieldValueForbidden",
                        "spec.paramRef",
                        "Required value: one of name or selector must be specified"
                        if not ref.get("name")
                        else "Forbidden: name and selector are mutually exclusive",
                    )
                )
        causes.extend(_match_causes(spec.get("matchResources"), "spec.matchResources", False))
        return causes


class MutatingAdmissionPolicies(Strategy):
    """MutatingAdmissionPolicies: cluster-scoped, a generation, no status."""

    resource = ("admissionregistration.k8s.io", "mutatingadmissionpolicies")
    generation = True
    kube_finalizers = False

    def default(self, obj: dict[str, Any]) -> None:
        spec = obj.setdefault("spec", {})
        spec.setdefault("failurePolicy", "Fail")
        _default_match(spec.get("matchConstraints"))

    def validate(self, obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> list[Cause]:
        del old
        spec = obj.get("spec") or {}
        causes = _match_causes(spec.get("matchConstraints"), "spec.matchConstraints", True)
        mutations = spec.get("mutations") or []
        if not mutations:
            causes.append(("FieldValueRequired", "spec.mutations", "Required value"))
        if spec.get("reinvocationPolicy") not in ("Never", "IfNeeded"):
            causes.append(
                (
                    "FieldValueNotSupported",
                    "spec.reinvocationPolicy",
                    f'Unsupported value: "{spec.get("reinvocationPolicy") or ""}": supported '
                    'values: "IfNeeded", "Never"',
                )
            )
        for i, variable in enumerate(spec.get("variables") or ()):
            _compile(variable.get("expression"), f"spec.variables[{i}].expression", causes)
        for i, condition in enumerate(spec.get("matchConditions") or ()):
            _compile(
                condition.get("expression"), f"spec.matchConditions[{i}].expression", causes, "bool"
            )
        for i, mutation in enumerate(mutations):
            kind = mutation.get("patchType")
            field = {"ApplyConfiguration": "applyConfiguration", "JSONPatch": "jsonPatch"}.get(
                str(kind)
            )
            if field is None:
                causes.append(
                    (
                        "FieldValueNotSupported",
                        f"spec.mutations[{i}].patchType",
                        f'Unsupported value: "{kind or ""}": supported values: '
                        '"ApplyConfiguration", "JSONPatch"',
                    )
                )
                continue
            _compile(
                (mutation.get(field) or {}).get("expression"),
                f"spec.mutations[{i}].{field}.expression",
                causes,
            )
        return causes


class MutatingAdmissionPolicyBindings(Strategy):
    """MutatingAdmissionPolicyBindings: cluster-scoped, a generation."""

    resource = ("admissionregistration.k8s.io", "mutatingadmissionpolicybindings")
    generation = True
    kube_finalizers = False

    def default(self, obj: dict[str, Any]) -> None:
        _default_match((obj.setdefault("spec", {})).get("matchResources"))

    def validate(self, obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> list[Cause]:
        del old
        spec = obj.get("spec") or {}
        causes: list[Cause] = []
        if not spec.get("policyName"):
            causes.append(("FieldValueRequired", "spec.policyName", "Required value"))
        causes.extend(_match_causes(spec.get("matchResources"), "spec.matchResources", False))
        return causes
