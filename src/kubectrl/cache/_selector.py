"""Label selectors evaluated locally (for listers): ``a=b``, ``a!=b``, ``a in (x,y)``,
``a notin (x)``, ``a``, ``!a``, comma-separated (all must match), or a ``matchLabels`` dict."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["LabelSelector", "parse_label_selector"]

#: A selector string, a ``{label: value}`` dict (all must match), or ``None`` (everything).
LabelSelector = str | Mapping[str, str] | None

Matcher = Callable[[Mapping[str, str]], bool]

_SET_RE = re.compile(r"^\s*([^\s!=,()]+)\s+(in|notin)\s+\(([^)]*)\)\s*$")
_EQ_RE = re.compile(r"^\s*([^\s!=,()]+)\s*(==|=|!=)\s*([^\s!=,()]*)\s*$")
_EXISTS_RE = re.compile(r"^\s*(!?)\s*([^\s!=,()]+)\s*$")


def _split(selector: str) -> list[str]:
    parts: list[str] = []
    depth = 0
    current = ""
    for ch in selector:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    return [p for p in parts if p.strip()]


def _equals(key: str, value: str) -> Matcher:
    return lambda labels: labels.get(key) == value


def _requirement(text: str) -> Matcher:
    match = _SET_RE.match(text)
    if match:
        key, op, raw = match.groups()
        values = frozenset(v.strip() for v in raw.split(",") if v.strip())
        if op == "in":
            return lambda labels: labels.get(key) in values
        return lambda labels: labels.get(key) not in values
    match = _EQ_RE.match(text)
    if match:
        key, op, value = match.groups()
        if op == "!=":
            return lambda labels: labels.get(key) != value
        return lambda labels: labels.get(key) == value
    match = _EXISTS_RE.match(text)
    if match:
        negate, key = match.groups()
        if negate:
            return lambda labels: key not in labels
        return lambda labels: key in labels
    raise ValueError(f"invalid label selector requirement: {text.strip()!r}")


def parse_label_selector(selector: LabelSelector) -> Callable[[Mapping[str, Any]], bool]:
    """A predicate ``obj -> bool`` for ``selector`` (applied to ``metadata.labels``).

    Raises ``ValueError`` for a malformed selector.

    Example::

        >>> match = parse_label_selector("app=web,tier in (front, back),!canary")
        >>> match({"metadata": {"labels": {"app": "web", "tier": "front"}}})
        True
    """
    if selector is None or (isinstance(selector, str) and not selector.strip()):
        return lambda obj: True
    if isinstance(selector, Mapping):
        wanted = dict(selector)
        requirements: list[Matcher] = [_equals(k, v) for k, v in wanted.items()]
    else:
        requirements = [_requirement(part) for part in _split(selector)]

    def matches(obj: Mapping[str, Any]) -> bool:
        meta = obj.get("metadata")
        labels = meta.get("labels") if isinstance(meta, Mapping) else None
        if not isinstance(labels, Mapping):
            labels = {}
        return all(req(labels) for req in requirements)

    return matches
