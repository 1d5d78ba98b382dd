"""Admission policies as code: a ValidatingAdmissionPolicy or MutatingAdmissionPolicy and its
binding, declared next to a model and rendered to the manifests the apiserver takes.

Kubernetes admits or refuses writes by CEL policies (``admissionregistration.k8s.io/v1``
ValidatingAdmissionPolicy, GA since 1.30) instead of webhooks. Declare the policy here, with the
kinds it judges (model classes or ``(apiVersion, kind)``), and bind it; the scaffolded
``manifests`` command writes ``api.POLICIES`` with the CRDs and RBAC, and FakeAPI enforces the
same manifests in unit tests (``client.create(policy.manifest())``).

Checked at declaration: every expression's CEL syntax and, where it is known without the
objects, its type (a validation must be a bool, a message expression a string, an audit value a
string or null), as the apiserver's compilation refuses them; and the fields an expression reads
of ``object`` / ``oldObject`` against a custom resource model's schema (the apiserver only warns
of those, in the policy's ``status.typeChecking``, once the policy is stored). Syntax and types
need the CEL engine of the ``kubectrl[testing]`` extra: without it they are checked when the
manifest is rendered, which then raises naming the extra.

Example::

    >>> from kubectrl.admission import ValidatingPolicy, Validation
    >>> policy = ValidatingPolicy(
    ...     "replicas.example.com",
    ...     kinds=[("apps/v1", "Deployment")],
    ...     validations=[Validation("object.spec.replicas <= 10", message="at most 10")],
    ... )
    >>> binding = policy.bind(actions=["Deny"])
    >>> [m["kind"] for m in manifests(policy, binding)]
    ['ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding']
    >>> policy.manifest()["spec"]["matchConstraints"]["resourceRules"][0]["resources"]
    ['deployments']
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from kubectrl import _builtin_kinds
from kubectrl.errors import KubectrlError
from kubectrl.kinds import is_model_class, kind_info

__all__ = [
    "AuditAnnotation",
    "MatchCondition",
    "MutatingPolicy",
    "MutatingPolicyBinding",
    "Mutation",
    "ParamRef",
    "PolicyBinding",
    "PolicyError",
    "ValidatingPolicy",
    "Validation",
    "Variable",
    "manifests",
]

_GROUP_VERSION = "admissionregistration.k8s.io/v1"
Operation = Literal["CREATE", "UPDATE", "DELETE", "CONNECT", "*"]
Action = Literal["Deny", "Warn", "Audit"]
KindRef = type[Any] | tuple[str, str]


class PolicyError(KubectrlError, ValueError):
    """A policy or binding the apiserver would refuse (or whose expression reads a field its
    kind does not have); the message names the policy, the field and the expression."""


@dataclasses.dataclass(frozen=True)
class Validation:
    """One ``validations`` entry: ``expression`` must be true; else the write is refused (or
    warned, as the binding's actions say) with ``message_expression``'s result, ``message``,
    or ``failed expression: <expression>``; ``reason`` (``Invalid`` by default: 422;
    ``Forbidden``: 403) gives the code."""

    expression: str
    message: str | None = None
    message_expression: str | None = None
    reason: Literal["Invalid", "Forbidden", "Unauthorized", "RequestEntityTooLarge"] | None = None


@dataclasses.dataclass(frozen=True)
class Variable:
    """A named expression the others read as ``variables.<name>``."""

    name: str
    expression: str


@dataclasses.dataclass(frozen=True)
class MatchCondition:
    """A condition that must hold for the policy to apply at all."""

    name: str
    expression: str


@dataclasses.dataclass(frozen=True)
class AuditAnnotation:
    """An audit annotation ``<policy>/<key>``: ``value_expression`` gives a string (or null:
    none)."""

    key: str
    value_expression: str


@dataclasses.dataclass(frozen=True)
class ParamRef:
    """Where a binding's params are: one object by ``name``, or those a label ``selector``
    selects; ``namespace`` for a namespaced param kind (the request's by default);
    ``not_found``: ``Deny`` refuses every write while no param exists, ``Allow`` admits."""

    name: str | None = None
    namespace: str | None = None
    selector: Mapping[str, Any] | None = None
    not_found: Literal["Allow", "Deny"] = "Deny"

    def manifest(self) -> dict[str, Any]:
        """The binding's ``paramRef``."""
        out: dict[str, Any] = {}
        if self.name:
            out["name"] = self.name
        if self.namespace:
            out["namespace"] = self.namespace
        if self.selector is not None:
            out["selector"] = dict(self.selector)
        out["parameterNotFoundAction"] = self.not_found
        return out


def _kind(ref: KindRef) -> tuple[str, str, str, str, type[Any] | None]:
    """``(group, version, kind, plural, model)`` of a kind reference."""
    if isinstance(ref, tuple):
        api_version, kind = ref
        group, _, version = api_version.rpartition("/")
        for g, v, k, plural, _namespaced in _builtin_kinds.BUILTIN_KINDS.values():
            if (g, v, k) == (group, version, kind):
                return group, version, kind, plural, None
        raise PolicyError(
            f"the kind {kind} of {api_version} is not a built-in kind: name a custom resource "
            "by its model class"
        )
    if not is_model_class(ref):
        raise PolicyError(f"{ref!r} is neither a model class nor an (apiVersion, kind) pair")
    info = kind_info(ref)
    if not info.plural:
        raise PolicyError(f"the plural of {info.kind} ({info.api_version}) is not known")
    return info.group, info.version, info.kind, info.plural, ref


def _schema_of(model: type[Any]) -> Mapping[str, Any] | None:
    from kubectrl import crd  # the CRD generator, for a custom resource's schema

    try:
        manifest = crd.generate(model)
    except Exception:
        return None
    for version in manifest["spec"]["versions"]:
        if version["name"] == kind_info(model).version:
            return dict(version["schema"]["openAPIV3Schema"])
    return None


_STRINGS = re.compile(r"'(?:\\.|[^'\\])*'|\"(?:\\.|[^\"\\])*\"")
_PATHS = re.compile(r"\b(object|oldObject)((?:\s*\.\s*[A-Za-z_][A-Za-z0-9_]*)+)(\s*\()?")


def _undefined_field(expression: str, schema: Mapping[str, Any]) -> str | None:
    """The first field of ``object`` / ``oldObject`` the expression reads that ``schema`` does
    not have, as ``object.spec.replicaz``; ``None``."""
    text = _STRINGS.sub("''", expression)
    for match in _PATHS.finditer(text):
        parts = [p.strip() for p in match.group(2).split(".") if p.strip()]
        if match.group(3):  # the last one is a method: object.spec.name.startsWith(...)
            parts = parts[:-1]
        node: Mapping[str, Any] = schema
        for i, part in enumerate(parts):
            if part in ("apiVersion", "kind", "metadata") and i == 0:
                break  # the object's envelope: every kind has it
            props = node.get("properties")
            if not isinstance(props, Mapping) or node.get("x-kubernetes-preserve-unknown-fields"):
                break  # a map or free-form: any key
            if part not in props:
                return f"{match.group(1)}.{'.'.join(parts[: i + 1])}"
            node = props[part]
    return None


def _problem(expression: str, returns: tuple[str, ...]) -> str | None:
    from kubectrl.apiserver import check_policy_expression

    problem: str | None = check_policy_expression(expression, *returns)
    return problem


@dataclasses.dataclass(frozen=True)
class PolicyBinding:
    """A ValidatingAdmissionPolicyBinding: which writes of its policy's match are judged
    (``namespace_selector``, ``object_selector``), with which params, and how a failed
    validation is enforced (``actions``: ``Deny``, ``Warn``, ``Audit``; not Deny and Warn
    together)."""

    name: str
    policy: ValidatingPolicy
    actions: tuple[Action, ...] = ("Deny",)
    namespace_selector: Mapping[str, Any] | None = None
    object_selector: Mapping[str, Any] | None = None
    param_ref: ParamRef | None = None

    def __post_init__(self) -> None:
        where = f"binding {self.name!r} of policy {self.policy.name!r}"
        if not self.actions:
            raise PolicyError(f"{where}: actions must name at least one of Deny, Warn, Audit")
        if len(set(self.actions)) != len(self.actions):
            raise PolicyError(f"{where}: actions {list(self.actions)} repeat one")
        if "Deny" in self.actions and "Warn" in self.actions:
            raise PolicyError(f"{where}: actions must not contain both Deny and Warn")
        _check_param_ref(where, self.policy.param_kind, self.param_ref)

    def manifest(self) -> dict[str, Any]:
        """The ValidatingAdmissionPolicyBinding."""
        return _binding_manifest(
            "ValidatingAdmissionPolicyBinding",
            self,
            {"policyName": self.policy.name, "validationActions": list(self.actions)},
        )


def _check_param_ref(where: str, param_kind: object, ref: ParamRef | None) -> None:
    """A binding's ``param_ref``: only for a policy with a ``param_kind``, by name or selector."""
    if ref is None:
        return
    if param_kind is None:
        raise PolicyError(f"{where}: a param_ref, but the policy has no param_kind")
    if bool(ref.name) == (ref.selector is not None):
        raise PolicyError(f"{where}: param_ref needs one of name or selector")


def _binding_manifest(
    kind: str, binding: PolicyBinding | MutatingPolicyBinding, spec: dict[str, Any]
) -> dict[str, Any]:
    """A binding of either kind: ``spec`` plus its params and the writes it selects."""
    if binding.param_ref is not None:
        spec["paramRef"] = binding.param_ref.manifest()
    match: dict[str, Any] = {}
    if binding.namespace_selector is not None:
        match["namespaceSelector"] = dict(binding.namespace_selector)
    if binding.object_selector is not None:
        match["objectSelector"] = dict(binding.object_selector)
    if match:
        spec["matchResources"] = match
    return {
        "apiVersion": _GROUP_VERSION,
        "kind": kind,
        "metadata": {"name": binding.name},
        "spec": spec,
    }


class _Checked:
    """What the policies of both kinds check at declaration and render alike."""

    name: str
    kinds: Sequence[KindRef]
    operations: Sequence[Operation]

    def _expressions(self) -> list[tuple[str, str]]:
        raise NotImplementedError

    @staticmethod
    def _returns(path: str) -> tuple[str, ...]:
        if path.startswith(("match_conditions", "validations")) and path.endswith(
            ("]", ".expression")
        ):
            return ("bool",)
        if path.endswith("message_expression"):
            return ("string",)
        if path.startswith("audit_annotations"):
            return ("string", "null_type")
        return ()

    def _check_syntax(self, missing_engine_ok: bool) -> None:
        from kubectrl.errors import UnsupportedFeatureError

        for path, expression in self._expressions():
            try:
                problem = _problem(expression, self._returns(path))
            except (NotImplementedError, UnsupportedFeatureError) as err:
                if missing_engine_ok:
                    return
                raise PolicyError(
                    f"policy {self.name!r}: its CEL expressions are checked before they are "
                    f"rendered, which needs the CEL engine: {err}"
                ) from None
            if problem:
                raise PolicyError(f"policy {self.name!r}: {path} {expression!r}: {problem}")

    def _check_fields(self, path: str, expression: str) -> None:
        for ref in self.kinds:
            model = _kind(ref)[4]
            if model is None:
                continue
            schema = _schema_of(model)
            if schema is None:
                continue
            field = _undefined_field(expression, schema)
            if field:
                raise PolicyError(
                    f"policy {self.name!r}: {path} {expression!r} reads {field}, which "
                    f"{kind_info(model).kind} does not have (undefined field "
                    f"{field.rsplit('.', 1)[-1]!r})"
                )

    def _resource_rules(self) -> list[dict[str, Any]]:
        rules: dict[tuple[str, str], list[str]] = {}
        for ref in self.kinds:
            group, version, _kind_name, plural, _model = _kind(ref)
            rules.setdefault((group, version), [])
            if plural not in rules[(group, version)]:
                rules[(group, version)].append(plural)
        return [
            {
                "apiGroups": [group],
                "apiVersions": [version],
                "operations": list(self.operations),
                "resources": plurals,
            }
            for (group, version), plurals in rules.items()
        ]


@dataclasses.dataclass(frozen=True)
class ValidatingPolicy(_Checked):
    """A ValidatingAdmissionPolicy of the writes of ``kinds`` (``operations``): its
    ``validations``, ``variables``, ``match_conditions`` and ``audit_annotations`` (CEL; they
    read ``object``, ``oldObject``, ``request``, ``params``, ``namespaceObject``,
    ``variables``), ``failure_policy`` (``Fail``: an error refuses the write; ``Ignore``) and
    ``param_kind`` (``(apiVersion, kind)`` of the params a binding names).

    Raises :class:`PolicyError` for what the apiserver would refuse (see the module)."""

    name: str
    kinds: Sequence[KindRef]
    validations: Sequence[Validation] = ()
    operations: Sequence[Operation] = ("CREATE", "UPDATE")
    variables: Sequence[Variable] = ()
    match_conditions: Sequence[MatchCondition] = ()
    audit_annotations: Sequence[AuditAnnotation] = ()
    failure_policy: Literal["Fail", "Ignore"] = "Fail"
    param_kind: tuple[str, str] | None = None

    def __post_init__(self) -> None:
        if not self.kinds:
            raise PolicyError(f"policy {self.name!r}: kinds must name at least one kind")
        if not self.validations and not self.audit_annotations:
            raise PolicyError(
                f"policy {self.name!r}: validations or audit_annotations must contain at least "
                "one item"
            )
        for ref in self.kinds:
            _kind(ref)
        for path, expression in self._expressions():
            self._check_fields(path, expression)
        self._check_syntax(missing_engine_ok=True)

    def _expressions(self) -> list[tuple[str, str]]:
        out = [(f"variables[{i}]", v.expression) for i, v in enumerate(self.variables)]
        out += [
            (f"match_conditions[{i}]", c.expression) for i, c in enumerate(self.match_conditions)
        ]
        for i, v in enumerate(self.validations):
            out.append((f"validations[{i}].expression", v.expression))
            if v.message_expression:
                out.append((f"validations[{i}].message_expression", v.message_expression))
        out += [
            (f"audit_annotations[{i}]", a.value_expression)
            for i, a in enumerate(self.audit_annotations)
        ]
        return out

    def bind(
        self,
        name: str | None = None,
        *,
        actions: Sequence[Action] = ("Deny",),
        namespace_selector: Mapping[str, Any] | None = None,
        object_selector: Mapping[str, Any] | None = None,
        param_ref: ParamRef | None = None,
    ) -> PolicyBinding:
        """A binding of this policy (named ``<policy>-binding`` by default)."""
        return PolicyBinding(
            name or f"{self.name}-binding",
            self,
            tuple(actions),
            namespace_selector,
            object_selector,
            param_ref,
        )

    def manifest(self) -> dict[str, Any]:
        """The ValidatingAdmissionPolicy (its expressions checked: see the module)."""
        self._check_syntax(missing_engine_ok=False)
        spec: dict[str, Any] = {
            "failurePolicy": self.failure_policy,
            "matchConstraints": {"resourceRules": self._resource_rules()},
        }
        if self.param_kind is not None:
            spec["paramKind"] = {"apiVersion": self.param_kind[0], "kind": self.param_kind[1]}
        if self.match_conditions:
            spec["matchConditions"] = [
                {"name": c.name, "expression": c.expression} for c in self.match_conditions
            ]
        if self.variables:
            spec["variables"] = [
                {"name": v.name, "expression": v.expression} for v in self.variables
            ]
        if self.validations:
            spec["validations"] = [_validation(v) for v in self.validations]
        if self.audit_annotations:
            spec["auditAnnotations"] = [
                {"key": a.key, "valueExpression": a.value_expression}
                for a in self.audit_annotations
            ]
        return {
            "apiVersion": _GROUP_VERSION,
            "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": self.name},
            "spec": spec,
        }


@dataclasses.dataclass(frozen=True)
class Mutation:
    """One ``mutations`` entry: an ``ApplyConfiguration`` expression building an
    ``Object{...}`` merged into the object, or a ``JSONPatch`` one giving a list of
    ``JSONPatch{op, path, value}``."""

    expression: str
    patch_type: Literal["ApplyConfiguration", "JSONPatch"] = "ApplyConfiguration"

    def manifest(self) -> dict[str, Any]:
        """The ``mutations`` entry."""
        field = "applyConfiguration" if self.patch_type == "ApplyConfiguration" else "jsonPatch"
        return {"patchType": self.patch_type, field: {"expression": self.expression}}


@dataclasses.dataclass(frozen=True)
class MutatingPolicyBinding:
    """A MutatingAdmissionPolicyBinding: which writes of its policy's match are changed
    (``namespace_selector``, ``object_selector``), with which params."""

    name: str
    policy: MutatingPolicy
    namespace_selector: Mapping[str, Any] | None = None
    object_selector: Mapping[str, Any] | None = None
    param_ref: ParamRef | None = None

    def __post_init__(self) -> None:
        where = f"binding {self.name!r} of policy {self.policy.name!r}"
        _check_param_ref(where, self.policy.param_kind, self.param_ref)

    def manifest(self) -> dict[str, Any]:
        """The MutatingAdmissionPolicyBinding."""
        return _binding_manifest(
            "MutatingAdmissionPolicyBinding", self, {"policyName": self.policy.name}
        )


@dataclasses.dataclass(frozen=True)
class MutatingPolicy(_Checked):
    """A MutatingAdmissionPolicy of the writes of ``kinds`` (``operations``): its
    ``mutations``, applied in order before the object is validated, with ``variables`` and
    ``match_conditions`` as a validating policy's; ``reinvocation`` ``IfNeeded`` runs it again
    when a later policy changed the object.

    Example::

        >>> stamp = MutatingPolicy(
        ...     "stamp.example.com",
        ...     kinds=[("v1", "ConfigMap")],
        ...     mutations=[Mutation('Object{data: {"stamped": "yes"}}')],
        ... )
        >>> [m["kind"] for m in manifests(stamp, stamp.bind())]
        ['MutatingAdmissionPolicy', 'MutatingAdmissionPolicyBinding']
    """

    name: str
    kinds: Sequence[KindRef]
    mutations: Sequence[Mutation] = ()
    operations: Sequence[Operation] = ("CREATE", "UPDATE")
    variables: Sequence[Variable] = ()
    match_conditions: Sequence[MatchCondition] = ()
    failure_policy: Literal["Fail", "Ignore"] = "Fail"
    param_kind: tuple[str, str] | None = None
    reinvocation: Literal["Never", "IfNeeded"] = "Never"

    def __post_init__(self) -> None:
        if not self.kinds:
            raise PolicyError(f"policy {self.name!r}: kinds must name at least one kind")
        if not self.mutations:
            raise PolicyError(f"policy {self.name!r}: mutations must contain at least one item")
        for ref in self.kinds:
            _kind(ref)
        for path, expression in self._expressions():
            self._check_fields(path, expression)
        self._check_syntax(missing_engine_ok=True)

    def _expressions(self) -> list[tuple[str, str]]:
        out = [(f"variables[{i}]", v.expression) for i, v in enumerate(self.variables)]
        out += [
            (f"match_conditions[{i}]", c.expression) for i, c in enumerate(self.match_conditions)
        ]
        out += [(f"mutations[{i}]", m.expression) for i, m in enumerate(self.mutations)]
        return out

    def bind(
        self,
        name: str | None = None,
        *,
        namespace_selector: Mapping[str, Any] | None = None,
        object_selector: Mapping[str, Any] | None = None,
        param_ref: ParamRef | None = None,
    ) -> MutatingPolicyBinding:
        """A binding of this policy (named ``<policy>-binding`` by default)."""
        return MutatingPolicyBinding(
            name or f"{self.name}-binding", self, namespace_selector, object_selector, param_ref
        )

    def manifest(self) -> dict[str, Any]:
        """The MutatingAdmissionPolicy (its expressions checked: see the module)."""
        self._check_syntax(missing_engine_ok=False)
        spec: dict[str, Any] = {
            "failurePolicy": self.failure_policy,
            "reinvocationPolicy": self.reinvocation,
            "matchConstraints": {"resourceRules": self._resource_rules()},
        }
        if self.param_kind is not None:
            spec["paramKind"] = {"apiVersion": self.param_kind[0], "kind": self.param_kind[1]}
        if self.match_conditions:
            spec["matchConditions"] = [
                {"name": c.name, "expression": c.expression} for c in self.match_conditions
            ]
        if self.variables:
            spec["variables"] = [
                {"name": v.name, "expression": v.expression} for v in self.variables
            ]
        spec["mutations"] = [m.manifest() for m in self.mutations]
        return {
            "apiVersion": _GROUP_VERSION,
            "kind": "MutatingAdmissionPolicy",
            "metadata": {"name": self.name},
            "spec": spec,
        }


def _validation(v: Validation) -> dict[str, Any]:
    out: dict[str, Any] = {"expression": v.expression}
    if v.message is not None:
        out["message"] = v.message
    if v.message_expression is not None:
        out["messageExpression"] = v.message_expression
    if v.reason is not None:
        out["reason"] = v.reason
    return out


def manifests(
    *items: ValidatingPolicy | PolicyBinding | MutatingPolicy | MutatingPolicyBinding,
) -> list[dict[str, Any]]:
    """The manifests of policies and bindings, in order (what ``kubectl apply`` takes)."""
    return [item.manifest() for item in items]
