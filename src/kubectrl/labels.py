"""Label selectors in every form Kubernetes uses, parsed once and usable everywhere.

A selector reaches kubectrl in one of four forms, and every API that takes a ``label_selector``
(the REST client, listers, the cached client, informers) accepts all of them:

- a selector string, as ``kubectl -l`` takes it: ``"app=web,tier in (front,back),!canary"``;
- a ``{label: value}`` mapping: every label must have that value (``matchLabels``);
- a ``metav1.LabelSelector`` as found in a Deployment's ``spec.selector``:
  ``{"matchLabels": {...}, "matchExpressions": [{"key", "operator", "values"}]}``;
- a :class:`LabelSelector` built in Python.

:func:`parse` turns any of them into a :class:`Selector`, which matches label mappings locally
(``Selector.matches``) and renders the string the API server takes (``str(selector)``), so a
selector evaluated in a cache and the same selector sent to the server agree.

Semantics are apimachinery's ``labels`` package: ``In`` and ``=`` need the key present;
``NotIn`` and ``!=`` match when the key is absent; an empty selector matches everything.

Example::

    >>> sel = parse({"matchLabels": {"app": "web"},
    ...              "matchExpressions": [{"key": "tier", "operator": "In",
    ...                                    "values": ["front", "back"]}]})
    >>> str(sel)
    'app=web,tier in (back,front)'
    >>> sel.matches({"app": "web", "tier": "front"}), sel.matches({"app": "web"})
    (True, False)
    >>> parse("app=web,!canary").matches({"app": "web", "canary": "yes"})
    False
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping
from typing import Any, Literal, TypeAlias

__all__ = [
    "LabelSelector",
    "LabelSelectorLike",
    "Requirement",
    "Selector",
    "parse",
    "selector_string",
]

Operator: TypeAlias = Literal["In", "NotIn", "Exists", "DoesNotExist", "=", "!="]

_SET_OPERATORS = {"In": "in", "NotIn": "notin"}


@dataclasses.dataclass(frozen=True)
class Requirement:
    """One condition on one label key.

    ``operator`` is ``"In"``, ``"NotIn"`` (``values`` non-empty), ``"Exists"``,
    ``"DoesNotExist"`` (no ``values``), ``"="`` or ``"!="`` (exactly one value).

    Example::

        >>> Requirement("tier", "NotIn", ("canary",)).matches({"tier": "front"})
        True
    """

    key: str
    operator: Operator
    values: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.key:
            raise ValueError("label selector requirement: empty key")
        if self.operator in ("In", "NotIn") and not self.values:
            raise ValueError(
                f"label selector requirement on {self.key!r}: "
                f"operator {self.operator} needs at least one value"
            )
        if self.operator in ("Exists", "DoesNotExist") and self.values:
            raise ValueError(
                f"label selector requirement on {self.key!r}: "
                f"operator {self.operator} takes no values"
            )
        if self.operator in ("=", "!=") and len(self.values) != 1:
            raise ValueError(
                f"label selector requirement on {self.key!r}: "
                f"operator {self.operator} takes exactly one value"
            )
        if self.operator not in ("In", "NotIn", "Exists", "DoesNotExist", "=", "!="):
            raise ValueError(
                f"label selector requirement on {self.key!r}: unknown operator "
                f"{self.operator!r} (In, NotIn, Exists, DoesNotExist)"
            )

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether ``labels`` satisfy this requirement."""
        op = self.operator
        if op == "Exists":
            return self.key in labels
        if op == "DoesNotExist":
            return self.key not in labels
        value = labels.get(self.key)
        if op in ("In", "="):
            return value is not None and value in self.values
        return value is None or value not in self.values

    def __str__(self) -> str:
        op = self.operator
        if op == "Exists":
            return self.key
        if op == "DoesNotExist":
            return f"!{self.key}"
        if op in ("=", "!="):
            return f"{self.key}{op}{self.values[0]}"
        return f"{self.key} {_SET_OPERATORS[op]} ({','.join(sorted(self.values))})"


@dataclasses.dataclass(frozen=True)
class LabelSelector:
    """``metav1.LabelSelector``: ``match_labels`` and ``match_expressions``, all must hold.

    Example::

        >>> LabelSelector(match_labels={"app": "web"},
        ...               match_expressions=(Requirement("tier", "Exists"),)).to_dict()
        {'matchLabels': {'app': 'web'}, 'matchExpressions': [{'key': 'tier', 'operator': 'Exists'}]}
    """

    match_labels: Mapping[str, str] = dataclasses.field(default_factory=dict)
    match_expressions: tuple[Requirement, ...] = ()

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LabelSelector:
        """Read the API's form; raises ``ValueError`` naming what is malformed."""
        unknown = set(data) - {"matchLabels", "matchExpressions"}
        if unknown:
            raise ValueError(f"label selector: unknown field(s) {sorted(unknown)}")
        labels = data.get("matchLabels") or {}
        if not isinstance(labels, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in labels.items()
        ):
            raise ValueError("label selector: matchLabels must map strings to strings")
        expressions: list[Requirement] = []
        for i, expr in enumerate(data.get("matchExpressions") or ()):
            if not isinstance(expr, Mapping):
                raise ValueError(f"label selector: matchExpressions[{i}] is not an object")
            values = expr.get("values") or ()
            if isinstance(values, str) or not all(isinstance(v, str) for v in values):
                raise ValueError(f"label selector: matchExpressions[{i}].values must be strings")
            operator = expr.get("operator")
            if operator not in ("In", "NotIn", "Exists", "DoesNotExist"):
                raise ValueError(
                    f"label selector: matchExpressions[{i}].operator {operator!r} is not one "
                    "of In, NotIn, Exists, DoesNotExist"
                )
            expressions.append(Requirement(str(expr.get("key") or ""), operator, tuple(values)))
        return cls(dict(labels), tuple(expressions))

    def to_dict(self) -> dict[str, Any]:
        """The API's form (fields left out when empty)."""
        out: dict[str, Any] = {}
        if self.match_labels:
            out["matchLabels"] = dict(self.match_labels)
        if self.match_expressions:
            out["matchExpressions"] = [
                {
                    "key": r.key,
                    "operator": r.operator,
                    **({"values": list(r.values)} if r.values else {}),
                }
                for r in self.match_expressions
            ]
        return out


@dataclasses.dataclass(frozen=True)
class Selector:
    """A parsed selector: requirements that must all hold. Empty matches everything.

    ``str(selector)`` is the string form the API server takes as ``labelSelector``.
    """

    requirements: tuple[Requirement, ...] = ()

    @property
    def empty(self) -> bool:
        """Whether this selector matches everything."""
        return not self.requirements

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        """Whether a label mapping (``metadata.labels``; ``None`` is no labels) matches."""
        labels = labels or {}
        return all(r.matches(labels) for r in self.requirements)

    def matches_object(self, obj: Mapping[str, Any]) -> bool:
        """Whether an object dict's ``metadata.labels`` match."""
        meta = obj.get("metadata")
        labels = meta.get("labels") if isinstance(meta, Mapping) else None
        return self.matches(labels if isinstance(labels, Mapping) else None)

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)


LabelSelectorLike: TypeAlias = str | Mapping[str, Any] | LabelSelector | Selector | None
"""Every accepted form: string, ``{label: value}``, ``metav1.LabelSelector`` dict,
:class:`LabelSelector`, :class:`Selector`, or ``None`` (everything)."""

_SET_RE = re.compile(r"^\s*([^\s!=,()]+)\s+(in|notin)\s+\(([^)]*)\)\s*$")
_EQ_RE = re.compile(r"^\s*([^\s!=,()]+)\s*(==|=|!=)\s*([^\s!=,()]*)\s*$")
_EXISTS_RE = re.compile(r"^\s*(!?)\s*([^\s!=,()]+)\s*$")


def _split(selector: str) -> list[str]:
    parts: list[str] = []
    depth = 0
    current: list[str] = []
    for ch in selector:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return [p for p in parts if p.strip()]


def _parse_requirement(text: str) -> Requirement:
    match = _SET_RE.match(text)
    if match:
        key, op, raw = match.groups()
        values = tuple(v.strip() for v in raw.split(",") if v.strip())
        return Requirement(key, "In" if op == "in" else "NotIn", values)
    match = _EQ_RE.match(text)
    if match:
        key, op, value = match.groups()
        return Requirement(key, "!=" if op == "!=" else "=", (value,))
    match = _EXISTS_RE.match(text)
    if match:
        negate, key = match.groups()
        return Requirement(key, "DoesNotExist" if negate else "Exists")
    raise ValueError(f"invalid label selector requirement: {text.strip()!r}")


def _is_label_selector_dict(selector: Mapping[str, Any]) -> bool:
    # Label values are strings, so a mapping whose "matchLabels" / "matchExpressions" entries are
    # not strings can only be a metav1.LabelSelector.
    return bool(selector) and all(
        k in ("matchLabels", "matchExpressions") and not isinstance(v, str)
        for k, v in selector.items()
    )


def parse(selector: LabelSelectorLike) -> Selector:
    """A :class:`Selector` from any accepted form; ``ValueError`` for a malformed one.

    Example::

        >>> str(parse({"app": "web"}))
        'app=web'
        >>> parse(None).empty
        True
    """
    if selector is None:
        return Selector()
    if isinstance(selector, Selector):
        return selector
    if isinstance(selector, str):
        return Selector(tuple(_parse_requirement(part) for part in _split(selector)))
    if isinstance(selector, LabelSelector):
        structured = selector
    elif isinstance(selector, Mapping):
        if _is_label_selector_dict(selector):
            structured = LabelSelector.from_dict(selector)
        else:
            bad = [
                k for k, v in selector.items() if not isinstance(k, str) or not isinstance(v, str)
            ]
            if bad:
                raise ValueError(
                    f"label selector: {bad[0]!r} is not a label=value pair (a matchLabels "
                    "mapping takes string values; a LabelSelector takes only matchLabels and "
                    "matchExpressions)"
                )
            structured = LabelSelector(dict(selector))
    else:
        raise TypeError(
            f"label selector: expected a string, a mapping or a LabelSelector, "
            f"got {type(selector).__name__}"
        )
    return Selector(_requirements(structured))


def _requirements(selector: LabelSelector) -> tuple[Requirement, ...]:
    reqs: Iterable[Requirement] = (
        *(Requirement(k, "=", (v,)) for k, v in sorted(selector.match_labels.items())),
        *selector.match_expressions,
    )
    return tuple(reqs)


def selector_string(selector: LabelSelectorLike) -> str | None:
    """The ``labelSelector`` query value for any accepted form (``None`` when empty).

    Example::

        >>> selector_string({"matchExpressions": [{"key": "a", "operator": "DoesNotExist"}]})
        '!a'
        >>> selector_string("") is None
        True
    """
    parsed = parse(selector)
    return None if parsed.empty else str(parsed)
