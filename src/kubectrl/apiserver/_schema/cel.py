"""CEL validation rules of CRD schemas (``x-kubernetes-validations``), as the apiserver runs them.

The expressions run on ``cel-python`` (``celpy``, the ``testing`` extra: a maintained, pure
Python CEL implementation that installs on every Python kubectrl supports) with the Kubernetes
CEL libraries rules use most (``k8s.io/apiserver/pkg/cel/library``: lists, regex, quantities, the
strings extension) and ``matches()`` on RE2. What each rule gets is as in apiextensions-apiserver
``pkg/apiserver/schema/cel/validation.go``: ``self``, ``oldSelf`` for transition rules (skipped
when there is no old value, unless ``optionalOldSelf``: then an optional), ``message``,
``messageExpression``, ``reason`` and ``fieldPath``.

Not done as the server does: type checking against the schema (a rule that does not parse or
calls an unknown function is refused; one that names an undefined field fails when it runs) and
cost limits. A function of the Kubernetes libraries this module lacks (``url``, ``ip``,
``cidr``, ``semver``, ``format``, ...) raises
:class:`~kubectrl.apiserver._status.FeatureNotImplementedError` naming it when its rule runs.
"""

from __future__ import annotations

import functools
import importlib
import itertools
import json
from collections.abc import Callable, Iterator, Mapping
from fractions import Fraction
from typing import Any

from kubectrl.apiserver._schema import re2
from kubectrl.apiserver._schema.quantity import int64_amount, parse_quantity
from kubectrl.apiserver._schema.values import show
from kubectrl.apiserver._status import FeatureNotImplementedError

__all__ = ["CompileError", "check_rules", "compile_rule"]

Cause = tuple[str, str, str]
_EXTRA = "kubectrl[testing]"
_MACROS = frozenset(["all", "exists", "exists_one", "map", "filter", "has", "dyn"])
#: Functions of the Kubernetes CEL environment this module does not implement.
_LACKING = frozenset(
    [
        "url", "isURL", "getScheme", "getHost", "getHostname", "getPort", "getEscapedPath",
        "getQuery", "sign", "ip",
        "isIP", "cidr", "isCIDR", "family", "isUnspecified", "isLoopback",
        "isLinkLocalMulticast", "isLinkLocalUnicast", "isGlobalUnicast", "containsIP",
        "containsCIDR", "masked", "prefixLength", "semver", "isSemver", "major", "minor",
        "patch", "format", "quote", "reverse", "greatest", "least", "ceil", "floor", "round",
        "trunc", "abs", "bitAnd", "bitOr", "bitXor", "bitNot", "bitShiftLeft",
        "bitShiftRight", "isInf", "isNaN", "isFinite", "encode", "decode", "equivalent",
        "intersects", "of", "none", "ofNonZeroValue", "optMap", "optFlatMap", "or",
        "transformList", "transformMap", "transformMapEntry", "lowerAscii_", "check",
        "allowed", "reason", "errored", "error", "namespace", "name", "resource",
        "subresource", "group", "path", "serviceAccount", "principal",
    ]
)  # fmt: skip


class CompileError(ValueError):
    """A rule the apiserver refuses to compile (a CRD carrying it is 422)."""


@functools.lru_cache(maxsize=1)
def _celpy() -> Any:
    try:
        return importlib.import_module("celpy")
    except ImportError:
        raise FeatureNotImplementedError(
            f"CEL validation rules (x-kubernetes-validations) without a CEL engine (install "
            f"{_EXTRA}, which brings cel-python)"
        ) from None


class _Optional:
    """``oldSelf`` of an ``optionalOldSelf`` rule: a CEL optional."""

    def __init__(self, value: Any, present: bool) -> None:
        self.value = value
        self.present = present


def _library() -> dict[str, Callable[..., Any]]:
    celpy = _celpy()
    types = celpy.celtypes
    err = celpy.CELEvalError

    def is_sorted(items: Any) -> Any:
        values = list(items)
        return types.BoolType(all(a <= b for a, b in itertools.pairwise(values)))

    def total(items: Any) -> Any:
        values = list(items)
        return sum(values[1:], values[0]) if values else types.IntType(0)

    def pick(chooser: Callable[..., Any]) -> Callable[[Any], Any]:
        def apply(items: Any) -> Any:
            values = list(items)
            return chooser(values) if values else err("min/max of an empty list")

        return apply

    def index_of(target: Any, item: Any, *start: Any) -> Any:
        if isinstance(target, str):
            offset = int(start[0]) if start else 0
            return types.IntType(str(target).find(str(item), offset))
        values = list(target)
        return types.IntType(values.index(item) if item in values else -1)

    def last_index_of(target: Any, item: Any, *end: Any) -> Any:
        if isinstance(target, str):
            return types.IntType(
                str(target).rfind(str(item), 0, None if not end else int(end[0]) + len(item))
            )
        values = list(target)
        return types.IntType(len(values) - 1 - values[::-1].index(item) if item in values else -1)

    def find(text: Any, pattern: Any) -> Any:
        found = re2.compile_pattern(str(pattern)).search(str(text))
        return types.StringType(found.group(0) if found else "")

    def find_all(text: Any, pattern: Any, *limit: Any) -> Any:
        hits = [m.group(0) for m in re2.compile_pattern(str(pattern)).finditer(str(text))]
        if limit and int(limit[0]) >= 0:
            hits = hits[: int(limit[0])]
        return types.ListType([types.StringType(h) for h in hits])

    def split(text: Any, sep: Any, *limit: Any) -> Any:
        n = int(limit[0]) if limit else -1
        if n == 0:
            return types.ListType([])
        parts = str(text).split(str(sep), n - 1) if n > 0 else str(text).split(str(sep))
        return types.ListType([types.StringType(p) for p in parts])

    def has_value(opt: Any) -> Any:
        return types.BoolType(isinstance(opt, _Optional) and opt.present)

    def value(opt: Any) -> Any:
        if isinstance(opt, _Optional) and opt.present:
            return opt.value
        return err("optional.none() dereference")

    def or_value(opt: Any, other: Any) -> Any:
        return opt.value if isinstance(opt, _Optional) and opt.present else other

    return {
        **_quantity_library(types, err),
        "matches": lambda text, pattern: types.BoolType(re2.search(str(pattern), str(text))),
        "isSorted": is_sorted,
        "sum": total,
        "min": pick(min),
        "max": pick(max),
        "indexOf": index_of,
        "lastIndexOf": last_index_of,
        "find": find,
        "findAll": find_all,
        "charAt": lambda s, i: types.StringType(str(s)[int(i)] if int(i) < len(s) else ""),
        "lowerAscii": lambda s: types.StringType(
            "".join(c.lower() if c.isascii() else c for c in str(s))
        ),
        "upperAscii": lambda s: types.StringType(
            "".join(c.upper() if c.isascii() else c for c in str(s))
        ),
        "replace": lambda s, a, b, *n: types.StringType(
            str(s).replace(str(a), str(b), int(n[0]) if n else -1)
        ),
        "split": split,
        "substring": lambda s, a, *b: types.StringType(
            str(s)[int(a) : int(b[0])] if b else str(s)[int(a) :]
        ),
        "trim": lambda s: types.StringType(str(s).strip()),
        "join": lambda items, *sep: types.StringType(
            (str(sep[0]) if sep else "").join(str(i) for i in items)
        ),
        "hasValue": has_value,
        "value": value,
        "orValue": or_value,
    }


class _Quantity:
    """A ``resource.Quantity`` in a CEL rule (``k8s.io/apiserver/pkg/cel/library/quantity.go``):
    compared by value, ``quantity("1") == quantity("1000m")``."""

    def __init__(self, value: Fraction, text: str = "") -> None:
        self.value = value
        self.text = text  # as parsed: what AsInt64 reads (empty after arithmetic)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Quantity) and self.value == other.value

    def __hash__(self) -> int:
        return hash(self.value)


def _quantity_library(types: Any, err: Any) -> dict[str, Callable[..., Any]]:
    """The Kubernetes quantity library: ``quantity()``, ``isQuantity()``, ``isInteger()``,
    ``asInteger()``, ``asApproximateFloat()``, ``add()``, ``sub()``, ``compareTo()``,
    ``isGreaterThan()``, ``isLessThan()`` (``sign()`` is not in v1.36's environment)."""
    low, high = -(2**63), 2**63 - 1

    def quantity(text: Any) -> Any:
        value = parse_quantity(str(text))
        if value is None:
            return err(
                "quantities must match the regular expression "
                "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
            )
        return _Quantity(value, str(text))

    def number(other: Any) -> Fraction:
        return other.value if isinstance(other, _Quantity) else Fraction(int(other))

    def is_integer(q: _Quantity) -> bool:
        # Quantity.AsInt64: an int64Amount of a non-negative scale (1000m is not, 1k is)
        amount = int64_amount(q.text) if q.text else None
        if q.text and (amount is None or amount[1] < 0):
            return False
        return q.value.denominator == 1 and low <= q.value <= high

    def as_integer(q: _Quantity) -> Any:
        if not is_integer(q):
            return err("cannot convert value to integer")
        return types.IntType(int(q.value))

    def compare(a: _Quantity, b: _Quantity) -> int:
        return (a.value > b.value) - (a.value < b.value)

    return {
        "quantity": quantity,
        "isQuantity": lambda text: types.BoolType(parse_quantity(str(text)) is not None),
        "isInteger": lambda q: types.BoolType(is_integer(q)),
        "asInteger": as_integer,
        "asApproximateFloat": lambda q: types.DoubleType(float(q.value)),
        "add": lambda q, other: _Quantity(q.value + number(other)),
        "sub": lambda q, other: _Quantity(q.value - number(other)),
        "compareTo": lambda a, b: types.IntType(compare(a, b)),
        "isGreaterThan": lambda a, b: types.BoolType(compare(a, b) > 0),
        "isLessThan": lambda a, b: types.BoolType(compare(a, b) < 0),
    }


def _calls(tree: Any) -> Iterator[str]:
    """The names of the functions and macros an expression calls."""
    for node in tree.iter_subtrees():
        if node.data in ("member_dot_arg", "ident_arg"):
            index = 1 if node.data == "member_dot_arg" else 0
            token = node.children[index]
            yield str(getattr(token, "value", token))


class _Rule:
    def __init__(self, rule: str) -> None:
        celpy = _celpy()
        self.env = celpy.Environment()
        try:
            self.tree = self.env.compile(rule)
        except celpy.CELParseError as err:
            raise CompileError(f"compilation failed: ERROR: {err}") from None
        known = set(celpy.evaluation.base_functions) | _MACROS | set(_library())
        self.lacking = sorted({n for n in _calls(self.tree) if n in _LACKING and n not in known})
        unknown = sorted(n for n in _calls(self.tree) if n not in known and n not in _LACKING)
        if unknown:
            raise CompileError(
                "compilation failed: ERROR: undeclared reference to "
                f"{unknown[0]!r} (in container '')"
            )
        self.program = self.env.program(self.tree, functions=_library())
        self.uses_old = any(
            getattr(t, "value", None) == "oldSelf" for t in self.tree.scan_values(lambda _: True)
        )

    def run(self, activation: dict[str, Any]) -> Any:
        if self.lacking:
            raise FeatureNotImplementedError(
                f"the CEL function {self.lacking[0]}() in x-kubernetes-validations"
            )
        return self.program.evaluate(activation)


@functools.lru_cache(maxsize=512)
def compile_rule(rule: str) -> _Rule:
    """A compiled rule; :class:`CompileError` as the apiserver refuses it."""
    return _Rule(rule)


def _to_cel(value: Any) -> Any:
    return _celpy().json_to_cel(value)


def _field(path: str, field_path: str) -> str:
    if not field_path:
        return path
    tail = field_path.lstrip(".")
    return f"{path}.{tail}" if path else tail


def _cause(reason: str, path: str, value: Any, message: str) -> Cause:
    if reason == "FieldValueForbidden":
        return (reason, path, f"Forbidden: {message}")
    if reason == "FieldValueRequired":
        return (reason, path, f"Required value: {message}")
    if reason == "FieldValueDuplicate":
        return (reason, path, f"Duplicate value: {message}")
    if isinstance(value, (dict, list)):
        return ("FieldValueInvalid", path, f"Invalid value: {message}")
    return ("FieldValueInvalid", path, f"Invalid value: {show(value)}: {message}")


def check_rules(
    schema: Mapping[str, Any], value: Any, old: Any, path: str, missing: Any
) -> list[Cause]:
    """The causes the node's ``x-kubernetes-validations`` rules give (``old``: ``missing`` when
    there is no old value; ``path`` the node's field path)."""
    causes: list[Cause] = []
    celpy = _celpy()
    where = path or "<root>"
    unchanged = old is not missing and json.dumps(old, sort_keys=True) == json.dumps(
        value, sort_keys=True
    )
    for rule in schema.get("x-kubernetes-validations") or ():
        text = str(rule.get("rule", ""))
        compiled = compile_rule(text)
        activation: dict[str, Any] = {"self": _to_cel(value)}
        if compiled.uses_old:
            if rule.get("optionalOldSelf"):
                present = old is not missing
                activation["oldSelf"] = _Optional(_to_cel(old) if present else None, present)
            elif old is missing:
                continue
            else:
                activation["oldSelf"] = _to_cel(old)
        elif unchanged:
            continue  # ratcheting: the rule held (or was let through) before
        try:
            result = compiled.run(activation)
        except celpy.CELEvalError as err:
            detail = err.args[0] if err.args else err
            causes.append(
                _cause("FieldValueInvalid", where, value, f"{detail} evaluating rule: {text}")
            )
            continue
        if isinstance(result, celpy.celtypes.BoolType) and bool(result):
            continue
        message = str(rule.get("message") or f"failed rule: {text}")
        if rule.get("messageExpression"):
            try:
                produced = compile_rule(str(rule["messageExpression"])).run(activation)
                if isinstance(produced, str) and produced.strip():
                    message = str(produced)
            except (celpy.CELEvalError, CompileError):
                pass
        field = _field(where if path else "", str(rule.get("fieldPath") or "")) or where
        causes.append(_cause(str(rule.get("reason") or "FieldValueInvalid"), field, value, message))
    return causes
