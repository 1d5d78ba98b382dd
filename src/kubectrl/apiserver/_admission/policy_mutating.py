"""The MutatingAdmissionPolicy admission plugin, as kube-apiserver runs it.

As ``k8s.io/apiserver`` ``pkg/admission/plugin/policy/mutating`` (``dispatcher.go``, with
``patch/smd.go`` for ``ApplyConfiguration`` and ``patch/json_patch.go`` for ``JSONPatch``): for
a write, every stored policy whose ``matchConstraints`` match it, with every binding whose
``matchResources`` match it, once per param: ``matchConditions`` (one false and the policy does
not apply), then each of its ``mutations`` in order on the object as the ones before left it
(the kind's defaults applied after each). An ``ApplyConfiguration`` expression builds an
``Object{...}`` (``Object.spec{...}`` for a nested field) merged into the object as server-side
apply merges (maps field by field, keyed lists by key, the rest replaced); a ``JSONPatch``
expression gives a list of ``JSONPatch{op, path, value, from}`` applied in order. A policy with
``reinvocationPolicy: IfNeeded`` runs once more when a later policy changed the object. An error
refuses the write under ``failurePolicy: Fail`` (403, reason Invalid, ``policy '<policy>' with
binding '<binding>' denied request: <error>``) and is ignored under ``Ignore``.

The expressions see what a validating policy's see (:mod:`.policy`), with the same refusals.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Callable, Mapping
from typing import Any

from kubectrl.apiserver._admission.admission import Attributes
from kubectrl.apiserver._admission.policy import (
    EXEMPT,
    FailureError,
    PolicyPlugin,
    check_supported,
    evaluate_variables,
    go_error,
    make_activation,
    match_conditions,
)
from kubectrl.apiserver._patch.apply import merge_applied
from kubectrl.apiserver._patch.patches import json_patch
from kubectrl.apiserver._schema import cel
from kubectrl.apiserver._status import FeatureNotImplementedError, StatusError

__all__ = ["MutatingPolicies", "constructed"]

_GROUP = "admissionregistration.k8s.io"
_POLICIES = (_GROUP, "mutatingadmissionpolicies")
_BINDINGS = (_GROUP, "mutatingadmissionpolicybindings")
_TYPES = ("Object", "JSONPatch")

Default = Callable[[dict[str, Any]], None]


def _type_name(member: Any) -> str | None:
    """``Object``, ``Object.spec.template``, ``JSONPatch``: the dotted name of an object
    construction's type, or ``None`` for another member."""
    parts: list[str] = []
    node = member
    while True:
        data = getattr(node, "data", None)
        kids = list(getattr(node, "children", ()))
        if data == "member" and len(kids) == 1:
            node = kids[0]
        elif data == "member_dot" and len(kids) == 2:
            parts.insert(0, str(getattr(kids[1], "value", kids[1])))
            node = kids[0]
        elif data == "primary" and len(kids) == 1:
            node = kids[0]
        elif data == "ident" and kids:
            parts.insert(0, str(getattr(kids[0], "value", kids[0])))
            return ".".join(parts)
        else:
            return None


def constructed(text: str) -> Any:
    """The parse tree of ``text`` with every ``Object{...}`` / ``JSONPatch{...}`` construction
    made a map of its fields (cel-python has no such types)."""
    import lark

    celpy = cel._celpy()
    env = celpy.Environment()
    tree = env.compile(text)
    template = env.compile('"k"')
    for node in list(tree.iter_subtrees()):
        if node.data != "member_object":
            continue
        name = _type_name(node.children[0])
        if name is None or name.split(".")[0] not in _TYPES:
            raise FeatureNotImplementedError(
                f"the object construction {name or '?'}{{...}} in a mutating admission "
                "policy's expression (only Object and JSONPatch are known)"
            )
        inits = node.children[1] if len(node.children) > 1 else None
        pairs: list[Any] = []
        kids = list(getattr(inits, "children", ()))
        for field, value in zip(kids[::2], kids[1::2], strict=True):
            key = copy.deepcopy(template)
            literal = next(key.find_data("literal"))
            literal.children = [lark.Token("STRING_LIT", json.dumps(str(field)))]
            pairs += [key, value]
        node.data = "primary"
        node.children = [lark.Tree("map_lit", [lark.Tree("mapinits", pairs)] if pairs else [])]
    return env, tree


@functools.lru_cache(maxsize=256)
def _program(text: str) -> Any:
    check_supported(text)
    env, tree = constructed(text)
    return env.program(tree, functions=cel._library())


def _evaluate(text: str, activation: Mapping[str, Any]) -> Any:
    """A mutation's expression: its value as JSON; :class:`FailureError` when it errs."""
    celpy = cel._celpy()
    try:
        result = _program(text).evaluate(dict(activation))
    except celpy.CELEvalError as err:
        raise FailureError(f"expression '{text}' resulted in error: {go_error(err)}") from None
    return _json(result, text)


def _json(value: Any, text: str) -> Any:
    celpy = cel._celpy()
    types = celpy.celtypes
    if isinstance(value, celpy.CELEvalError):
        raise FailureError(f"expression '{text}' resulted in error: {go_error(value)}")
    if isinstance(value, types.MapType | dict):
        return {str(k): _json(v, text) for k, v in value.items()}
    if isinstance(value, types.ListType | list):
        return [_json(v, text) for v in value]
    if isinstance(value, types.BoolType):
        return bool(value)
    if isinstance(value, types.IntType | types.UintType):
        return int(value)
    if isinstance(value, types.DoubleType):
        return float(value)
    if isinstance(value, types.StringType | str):
        return str(value)
    if value is None or isinstance(value, types.NullType):
        return None
    raise FeatureNotImplementedError(
        f"a {type(value).__name__} value in a mutating admission policy's patch"
    )


class MutatingPolicies(PolicyPlugin):
    """The MutatingAdmissionPolicy plugin over the policies, bindings, params and namespaces
    in ``storage``."""

    def __repr__(self) -> str:
        return "MutatingPolicies()"

    def __call__(self, attrs: Attributes, default: Default) -> dict[str, Any] | None:
        """The object as the policies leave it (``default``: the kind's defaulting, run after
        each mutation), or ``None`` when none applies; raises the refusal of a failure."""
        if attrs.object is None or (attrs.info.group, attrs.info.plural) in EXEMPT:
            return None
        policies = self.storage.range(_POLICIES)
        if not policies:
            return None
        bindings = self.bindings(_BINDINGS)
        namespace = self._namespace(attrs)
        obj: dict[str, Any] = copy.deepcopy(dict(attrs.object))
        invoked: list[tuple[Any, ...]] = []  # the IfNeeded invocations, in order
        changed_after: set[int] = set()  # those a later invocation changed the object after
        for (_, policy_name), policy in sorted(policies.items()):
            spec = policy.get("spec") or {}
            if not self._matches(spec.get("matchConstraints") or {}, attrs, namespace):
                continue
            for binding in bindings.get(policy_name, ()):
                bspec = binding.get("spec") or {}
                match = bspec.get("matchResources")
                if match and not self._matches(match, attrs, namespace, binding=True):
                    continue
                try:
                    params = self._params(spec.get("paramKind"), bspec.get("paramRef"), attrs)
                except FailureError as err:
                    self._fail(
                        spec, attrs, policy_name, binding, f"failed to configure binding: {err}"
                    )
                    continue
                for param in params:
                    before = copy.deepcopy(obj)
                    obj = self._invoke(
                        spec, attrs, obj, param, namespace, policy_name, binding, default
                    )
                    if obj != before:
                        changed_after.update(range(len(invoked)))
                    if spec.get("reinvocationPolicy") == "IfNeeded":
                        invoked.append((spec, policy_name, binding, param))
        for index in sorted(changed_after):
            spec, policy_name, binding, param = invoked[index]
            obj = self._invoke(spec, attrs, obj, param, namespace, policy_name, binding, default)
        return obj if obj != attrs.object else None

    def _invoke(
        self,
        spec: Mapping[str, Any],
        attrs: Attributes,
        obj: dict[str, Any],
        param: Mapping[str, Any] | None,
        namespace: Mapping[str, Any] | None,
        policy_name: str,
        binding: Mapping[str, Any],
        default: Default,
    ) -> dict[str, Any]:
        cel._celpy()  # the CEL engine first: without it, the error naming the extra
        current = Attributes(
            attrs.operation, attrs.info, attrs.version, attrs.namespace, attrs.name, obj,
            attrs.old_object, attrs.dry_run, attrs.subresource,
        )  # fmt: skip
        activation = make_activation(current, param, namespace)
        activation["variables"] = evaluate_variables(spec.get("variables") or (), activation)
        applies, error = match_conditions(spec, activation)
        if not applies:
            return obj
        if error is not None:
            self._fail(spec, attrs, policy_name, binding, error)
            return obj
        for mutation in spec.get("mutations") or ():
            kind = mutation.get("patchType")
            field = "applyConfiguration" if kind == "ApplyConfiguration" else "jsonPatch"
            text = str((mutation.get(field) or {}).get("expression"))
            try:
                value = _evaluate(text, activation)
                if kind == "ApplyConfiguration":
                    if not isinstance(value, dict):
                        raise FailureError(f"expression '{text}' must evaluate to an Object")
                    patched = merge_applied(obj, value)
                else:
                    patched = json_patch(obj, value)
            except FailureError as err:
                self._fail(spec, attrs, policy_name, binding, str(err))
                continue
            except StatusError as err:
                self._fail(spec, attrs, policy_name, binding, str(err.body.get("message")))
                continue
            default(patched)
            obj = patched
            current = Attributes(
                attrs.operation, attrs.info, attrs.version, attrs.namespace, attrs.name, obj,
                attrs.old_object, attrs.dry_run, attrs.subresource,
            )  # fmt: skip
            activation.update(make_activation(current, param, namespace))
        return obj

    @staticmethod
    def _fail(
        spec: Mapping[str, Any],
        attrs: Attributes,
        policy_name: str,
        binding: Mapping[str, Any],
        message: str,
    ) -> None:
        if spec.get("failurePolicy", "Fail") == "Ignore":
            return
        text = (
            f"policy '{policy_name}' with binding '{binding['metadata']['name']}' denied "
            f"request: {message}"
        )
        # a policy error is a Forbidden status with reason Invalid, its message the policy's
        # own (no "<resource> is forbidden" prefix), as kube-apiserver answers
        raise StatusError.make(
            403,
            text,
            reason="Invalid",
            details={
                "name": attrs.name,
                "group": attrs.info.group,
                "kind": attrs.info.plural,
                "causes": [{"message": text}],
            },
        )
