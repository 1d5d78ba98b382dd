"""The ValidatingAdmissionPolicy admission plugin, as kube-apiserver runs it.

As ``k8s.io/apiserver`` ``pkg/admission/plugin/policy/validating`` (``dispatcher.go``,
``validator.go``) with ``.../policy/generic`` (matching, ``CollectParams``) and
``.../plugin/cel`` (``variables``, the activation): for a write, every stored policy whose
``matchConstraints`` match it, with every binding of the policy whose ``matchResources`` match
it, is evaluated once per param (``paramKind`` with the binding's ``paramRef``):
``matchConditions`` first (all true, or the policy does not apply), then ``validations``
(``messageExpression``, ``message`` or the expression as the message; ``reason``, Invalid by
default, gives the code) and ``auditAnnotations`` (their errors only: FakeAPI keeps no audit
log). A failed validation is enforced by the binding's ``validationActions``: ``Deny`` refuses
the write (the first denial, ``<resource> "<name>" is forbidden: ValidatingAdmissionPolicy
'<policy>' with binding '<binding>' denied request: <message>``), ``Warn`` adds a ``Warning``
header, ``Audit`` goes to the audit log FakeAPI does not keep. An error (an expression that
fails, params not found with ``parameterNotFoundAction: Deny``) denies under ``failurePolicy:
Fail`` and is ignored under ``Ignore``.

The expressions see ``object``, ``oldObject``, ``request``, ``params``, ``namespaceObject``
and ``variables``. Not done, refused by
:class:`~kubectrl.apiserver._status.FeatureNotImplementedError` naming it when the expression
runs: ``authorizer``, ``request.userInfo`` and ``request.options`` (FakeAPI has no
authentication or authorizer to answer them), and the CEL functions
:mod:`kubectrl.apiserver._schema.cel` lacks. Policies run on each write as the informer of the
real apiserver would see them once synced: at once.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from kubectrl.apiserver._admission.admission import Attributes
from kubectrl.apiserver._resources.registry import Registry
from kubectrl.apiserver._schema import cel
from kubectrl.apiserver._schema.cel_policy import compile_expression
from kubectrl.apiserver._status import FeatureNotImplementedError, StatusError, qualified
from kubectrl.apiserver._storage.memory import Storage
from kubectrl.apiserver._strategies import NAMESPACES
from kubectrl.apiserver._validation.objects import selector_matches

__all__ = [
    "EXEMPT",
    "FailureError",
    "PolicyPlugin",
    "ValidatingPolicies",
    "check_policy_expression",
    "check_supported",
    "compile_expression",
    "evaluate_variables",
    "make_activation",
    "run",
]

_GROUP = "admissionregistration.k8s.io"
_POLICIES = (_GROUP, "validatingadmissionpolicies")
_BINDINGS = (_GROUP, "validatingadmissionpolicybindings")
#: What policies and webhooks never judge (``IsExemptAdmissionConfigurationResource``).
EXEMPT = frozenset(
    (_GROUP, plural)
    for plural in (
        "validatingadmissionpolicies",
        "validatingadmissionpolicybindings",
        "mutatingadmissionpolicies",
        "mutatingadmissionpolicybindings",
        "validatingwebhookconfigurations",
        "mutatingwebhookconfigurations",
    )
)
#: HTTP codes of the ``reason`` a validation may give (``reasonToCode``).
_CODES = {"Unauthorized": 401, "Forbidden": 403, "Invalid": 422, "RequestEntityTooLarge": 413}
_UNSUPPORTED = (
    (re.compile(r"\bauthorizer\b"), "the authorizer variable"),
    (re.compile(r"\brequest\s*\.\s*userInfo\b"), "request.userInfo"),
    (re.compile(r"\brequest\s*\.\s*options\b"), "request.options"),
)
_NO_KEY = re.compile(r"no such member in mapping: '([^']*)'")

Warn = Callable[[str], None]


def check_policy_expression(expression: str, *returns: str) -> str | None:
    """Why kube-apiserver would refuse an admission policy's CEL ``expression`` (its syntax, an
    unknown function, or a result type known without the objects that is not one of
    ``returns``: ``bool``, ``string``, ``null_type``, ...), or ``None``.

    Needs the CEL engine of the ``kubectrl[testing]`` extra (else
    :class:`~kubectrl.apiserver._status.FeatureNotImplementedError`, a ``NotImplementedError``).

    Example::

        >>> check_policy_expression("object.spec.replicas <= 10", "bool")
        >>> check_policy_expression("size(object.data)", "bool")
        'must evaluate to bool but got int'
    """
    return compile_expression(expression, returns)


class FailureError(Exception):
    """An error of a policy's evaluation: enforced as its ``failurePolicy`` says."""


def check_supported(text: str) -> None:
    """Refuse (:class:`FeatureNotImplementedError`) an expression reading what FakeAPI cannot
    answer."""
    for pattern, feature in _UNSUPPORTED:
        if pattern.search(text):
            raise FeatureNotImplementedError(
                f"{feature} in an admission policy's expression ({text!r}): FakeAPI has no "
                "authentication or authorizer to answer it"
            )
    compiled = cel.compile_rule(text)
    if compiled.lacking:
        raise FeatureNotImplementedError(
            f"the CEL function {compiled.lacking[0]}() in an admission policy's expression"
        )


def run(text: str, activation: Mapping[str, Any]) -> Any:
    """Evaluate ``text``; :class:`FailureError` with the apiserver's message when it errs."""
    celpy = cel._celpy()
    check_supported(text)
    compiled = cel.compile_rule(text)
    if compiled.lacking:
        raise FeatureNotImplementedError(
            f"the CEL function {compiled.lacking[0]}() in an admission policy's expression"
        )
    try:
        result = compiled.program.evaluate(dict(activation))
    except celpy.CELEvalError as err:
        raise FailureError(f"expression '{text}' resulted in error: {go_error(err)}") from None
    if isinstance(result, celpy.CELEvalError):
        raise FailureError(f"expression '{text}' resulted in error: {go_error(result)}")
    return result


def go_error(err: Exception) -> str:
    detail = str(err.args[0]) if err.args else str(err)
    found = _NO_KEY.search(detail)
    return f"no such key: {found.group(1)}" if found else detail


def _rule_matches(rule: Mapping[str, Any], attrs: Attributes, version: str) -> bool:
    operations = rule.get("operations") or []
    if "*" not in operations and attrs.operation not in operations:
        return False
    groups = rule.get("apiGroups") or []
    if "*" not in groups and attrs.info.group not in groups:
        return False
    versions = rule.get("apiVersions") or []
    if "*" not in versions and version not in versions:
        return False
    scope = rule.get("scope") or "*"
    if scope == "Cluster" and attrs.info.namespaced:
        return False
    if scope == "Namespaced" and not attrs.info.namespaced:
        return False
    names = rule.get("resourceNames") or []
    if names and attrs.name not in names:
        return False
    plural, sub = attrs.info.plural, attrs.subresource
    for entry in rule.get("resources") or ():
        res, _, res_sub = str(entry).partition("/")
        if res not in ("*", plural):
            continue
        if (res_sub == "" and sub == "") or res_sub == "*" or (res_sub and res_sub == sub):
            return True
    return False


def _rules_match(match: Mapping[str, Any], attrs: Attributes, binding: bool) -> bool:
    """Whether the resource rules of ``match`` take the write, and none excludes it; under
    ``matchPolicy: Equivalent`` another version of the resource matches too."""
    versions = [attrs.version] + [v for v in attrs.info.versions if v != attrs.version]
    if match.get("matchPolicy") == "Exact":
        versions = versions[:1]
    for rule in match.get("excludeResourceRules") or ():
        if any(_rule_matches(rule, attrs, v) for v in versions):
            return False
    rules = match.get("resourceRules") or ()
    if not rules and binding:
        return True  # a binding without rules narrows nothing of its policy's match
    return any(_rule_matches(rule, attrs, v) for rule in rules for v in versions)


class PolicyPlugin:
    """What the policy plugins share (``.../policy/generic``): the policies and bindings, params
    and namespaces in ``storage``, and how a write is matched."""

    def __init__(self, storage: Storage, registry: Registry) -> None:
        self.storage = storage
        self.registry = registry

    def bindings(self, resource: tuple[str, str]) -> dict[str, list[dict[str, Any]]]:
        """The stored bindings by the name of their policy, each policy's by name."""
        out: dict[str, list[dict[str, Any]]] = {}
        for _, binding in sorted(self.storage.range(resource).items()):
            name = str((binding.get("spec") or {}).get("policyName") or "")
            out.setdefault(name, []).append(binding)
        return out

    # ------------------------------------------------------------------ matching

    def _namespace(self, attrs: Attributes) -> dict[str, Any] | None:
        if not attrs.info.namespaced or not attrs.namespace:
            return None
        return self.storage.get(NAMESPACES.resource, ("", attrs.namespace))

    def _matches(
        self,
        match: Mapping[str, Any],
        attrs: Attributes,
        namespace: Mapping[str, Any] | None,
        binding: bool = False,
    ) -> bool:
        if not _rules_match(match, attrs, binding):
            return False
        selector = match.get("namespaceSelector")
        if selector:
            if attrs.info.key == NAMESPACES.resource:  # a Namespace: its own labels
                labels = _labels(attrs.object or attrs.old_object)
            elif attrs.info.namespaced:
                labels = _labels(namespace)
            else:
                labels = None  # a cluster-scoped kind: the selector does not apply
            if labels is not None and not selector_matches(selector, labels):
                return False
        selector = match.get("objectSelector")
        if selector:
            candidates = [o for o in (attrs.object, attrs.old_object) if o is not None]
            if not any(selector_matches(selector, _labels(o)) for o in candidates):
                return False
        return True

    def _params(self, kind: Any, ref: Any, attrs: Attributes) -> list[Mapping[str, Any] | None]:
        """The params a binding evaluates its policy with (``CollectParams``)."""
        if not isinstance(kind, Mapping) or not isinstance(ref, Mapping):
            return [None]
        group, _, version = str(kind.get("apiVersion") or "").rpartition("/")
        info = self.registry.by_kind(group, version, str(kind.get("kind") or ""))
        if info is None:
            raise FailureError(
                f"paramKind kind `{kind.get('apiVersion')}, Kind={kind.get('kind')}` not known"
            )
        ns = ""
        if info.namespaced:
            ns = str(ref.get("namespace") or attrs.namespace or "")
            if not ns:
                raise FailureError(
                    "cannot use namespaced paramRef in policy binding that matches "
                    "cluster-scoped resources"
                )
        elif ref.get("namespace"):
            raise FailureError(
                "paramRef.namespace must not be provided for a cluster-scoped `paramKind`"
            )
        found: list[Mapping[str, Any] | None]
        if ref.get("name"):
            obj = self.storage.get(info.key, (ns, str(ref["name"])))
            found = [obj] if obj is not None else []
        else:
            selector = ref.get("selector") or {}
            found = [
                obj
                for key, obj in sorted(self.storage.range(info.key).items())
                if key[0] == ns and selector_matches(selector, _labels(obj))
            ]
        if not found and ref.get("parameterNotFoundAction") == "Deny":
            raise FailureError(
                "no params found for policy binding with `Deny` parameterNotFoundAction"
            )
        return found


class ValidatingPolicies(PolicyPlugin):
    """The ValidatingAdmissionPolicy plugin over the policies, bindings, params and namespaces
    in ``storage``; ``warn`` gets each ``Warn`` action's text."""

    def __init__(self, storage: Storage, registry: Registry, warn: Warn) -> None:
        super().__init__(storage, registry)
        self.warn = warn

    def __repr__(self) -> str:
        return "ValidatingPolicies()"

    def __call__(self, attrs: Attributes) -> None:
        if (attrs.info.group, attrs.info.plural) in EXEMPT:
            return
        policies = self.storage.range(_POLICIES)
        if not policies:
            return
        bindings = self.bindings(_BINDINGS)
        namespace = self._namespace(attrs)
        denied: list[tuple[str, str, str, str]] = []  # policy, binding, message, reason
        for (_, policy_name), policy in sorted(policies.items()):
            spec = policy.get("spec") or {}
            if not self._matches(spec.get("matchConstraints") or {}, attrs, namespace):
                continue
            fail = spec.get("failurePolicy", "Fail") != "Ignore"
            for binding in bindings.get(policy_name, ()):
                bspec = binding.get("spec") or {}
                binding_name = binding["metadata"]["name"]
                match = bspec.get("matchResources")
                if match and not self._matches(match, attrs, namespace, binding=True):
                    continue
                actions = list(bspec.get("validationActions") or ())
                try:
                    params = self._params(spec.get("paramKind"), bspec.get("paramRef"), attrs)
                except FailureError as err:
                    if fail:
                        message = f"failed to configure binding: {err}"
                        denied.append((policy_name, binding_name, message, "Invalid"))
                    continue
                for param in params:
                    for message, reason in self._evaluate(spec, attrs, param, namespace, fail):
                        if reason == "":  # an error under Fail: denied whatever the actions
                            denied.append((policy_name, binding_name, message, "Invalid"))
                            continue
                        if "Deny" in actions:
                            denied.append((policy_name, binding_name, message, reason))
                        if "Warn" in actions:
                            self.warn(
                                f"Validation failed for ValidatingAdmissionPolicy "
                                f"'{policy_name}' with binding '{binding_name}': {message}"
                            )
        if denied:
            policy_name, binding_name, message, reason = denied[0]
            text = (
                f"ValidatingAdmissionPolicy '{policy_name}' with binding '{binding_name}' "
                f"denied request: {message}"
            )
            raise StatusError.make(
                _CODES.get(reason, 500),
                f'{qualified(attrs.info.plural, attrs.info.group)} "{attrs.name}" is '
                f"forbidden: {text}",
                reason=reason,
                details={
                    "name": attrs.name,
                    "group": attrs.info.group,
                    "kind": attrs.info.plural,
                    "causes": [{"message": text}],
                },
            )

    # ------------------------------------------------------------------ evaluation

    def _evaluate(
        self,
        spec: Mapping[str, Any],
        attrs: Attributes,
        param: Mapping[str, Any] | None,
        namespace: Mapping[str, Any] | None,
        fail: bool,
    ) -> Iterator[tuple[str, str]]:
        """The failed validations of one evaluation, ``(message, reason)``; an error under
        ``failurePolicy: Fail`` as ``(message, "")``."""
        celpy = cel._celpy()
        activation = make_activation(attrs, param, namespace)
        activation["variables"] = evaluate_variables(spec.get("variables") or (), activation)
        applies, error = match_conditions(spec, activation)
        if not applies:
            return
        if error is not None:
            if fail:
                yield error, ""
            return
        for validation in spec.get("validations") or ():
            expression = str(validation.get("expression"))
            try:
                result = run(expression, activation)
            except FailureError as err:
                if fail:
                    yield str(err), ""
                continue
            if isinstance(result, celpy.celtypes.BoolType) and bool(result):
                continue
            message = ""
            if validation.get("messageExpression"):
                try:
                    produced = run(str(validation["messageExpression"]), activation)
                except FailureError:
                    produced = None
                if isinstance(produced, str):
                    message = str(produced).strip()
                    if "\n" in message or len(message) > 5 * 1024:
                        message = ""
            if not message and validation.get("message"):
                message = str(validation["message"]).strip()
            if not message:
                message = f"failed expression: {expression.strip()}"
            yield message, str(validation.get("reason") or "Invalid")
        for audit in spec.get("auditAnnotations") or ():
            text = str(audit.get("valueExpression"))
            try:
                value = run(text, activation)
            except FailureError as err:
                if fail:
                    yield str(err), ""
                continue
            if not isinstance(value, (str, type(None), celpy.celtypes.NullType)) and fail:
                yield (
                    (
                        f"valueExpression '{text}' resulted in unsupported return type: "
                        f"{_type_name(value)}. Return type must be either string or null."
                    ),
                    "",
                )


def _type_name(value: Any) -> str:
    names = {"BoolType": "bool", "IntType": "int", "UintType": "uint", "DoubleType": "double"}
    name = type(value).__name__
    return names.get(name, name.removesuffix("Type").lower())


def _labels(obj: Mapping[str, Any] | None) -> dict[str, Any]:
    return dict(((obj or {}).get("metadata") or {}).get("labels") or {})


def make_activation(
    attrs: Attributes, param: Mapping[str, Any] | None, namespace: Mapping[str, Any] | None
) -> dict[str, Any]:
    to_cel = cel._celpy().json_to_cel
    info = attrs.info
    resource = {"group": info.group, "version": attrs.version, "resource": info.plural}
    kind = {"group": info.group, "version": attrs.version, "kind": info.kind}
    request: dict[str, Any] = {
        "kind": kind,
        "resource": resource,
        "requestKind": kind,
        "requestResource": resource,
        "name": attrs.name,
        "namespace": attrs.namespace or "",
        "operation": attrs.operation,
        "dryRun": attrs.dry_run,
    }
    if attrs.subresource:
        request["subResource"] = request["requestSubResource"] = attrs.subresource
    ns_object = None
    if namespace is not None:
        meta = namespace.get("metadata") or {}
        kept = ("name", "generateName", "namespace", "uid", "resourceVersion", "generation",
                "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds",
                "labels", "annotations")  # fmt: skip
        ns_object = {
            "metadata": {k: meta[k] for k in kept if k in meta},
            **{k: namespace[k] for k in ("spec", "status") if k in namespace},
        }
    return {
        "object": to_cel(_plain(attrs.object)),
        "oldObject": to_cel(_plain(attrs.old_object)),
        "request": to_cel(request),
        "params": to_cel(_plain(param)),
        "namespaceObject": to_cel(ns_object),
    }


def _plain(obj: Mapping[str, Any] | None) -> Any:
    return None if obj is None else json.loads(json.dumps(obj))


def match_conditions(
    spec: Mapping[str, Any], activation: dict[str, Any]
) -> tuple[bool, str | None]:
    """Whether a policy applies by its ``matchConditions``, and the error for its failure policy.

    matchconditions/matcher.go: one false condition and the policy does not apply, even when
    another erred; else the errors (aggregated as the apiserver writes them) are the failure
    policy's to judge.
    """
    celpy = cel._celpy()
    errors: list[str] = []
    for condition in spec.get("matchConditions") or ():
        try:
            result = run(str(condition.get("expression")), activation)
        except FailureError as err:
            errors.append(str(err))
            continue
        if isinstance(result, celpy.celtypes.BoolType) and not bool(result):
            return False, None
    if not errors:
        return True, None
    return True, errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"


def evaluate_variables(declared: Any, activation: dict[str, Any]) -> Any:
    """``variables``, each evaluated in order with the ones before it (an error is the
    error of the expression that uses it)."""
    celpy = cel._celpy()
    values: dict[Any, Any] = {}
    for variable in declared:
        activation["variables"] = celpy.celtypes.MapType(values)
        name = celpy.celtypes.StringType(str(variable.get("name")))
        try:
            values[name] = run(str(variable.get("expression")), activation)
        except FailureError as err:
            values[name] = celpy.CELEvalError(str(err).split("resulted in error: ", 1)[-1])
    return celpy.celtypes.MapType(values)
