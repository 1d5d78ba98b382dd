"""Which objects a list or watch asks for: namespace, label selector and field selector."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from kubectrl import labels as _labels
from kubectrl.apiserver._resources.info import ResourceInfo
from kubectrl.apiserver._status import bad_request

__all__ = ["FieldSelector", "Selection", "field_value"]


def field_value(obj: Mapping[str, Any], path: str) -> str:
    """A field as a field selector compares it (``""`` when missing, ``true``/``false``)."""
    node: Any = obj
    for part in path.split("."):
        node = node.get(part) if isinstance(node, Mapping) else None
    if node is None:
        return ""
    if isinstance(node, bool):
        return "true" if node else "false"
    return str(node)


class FieldSelector:
    """A parsed ``fieldSelector``; a field the resource does not support is a 400."""

    def __init__(self, text: str | None, info: ResourceInfo) -> None:
        self.terms: list[tuple[str, str, str]] = []
        allowed = {"metadata.name", "metadata.namespace"} | set(info.field_labels)
        # CRDs: the selectableFields of any served version (apiextensions-apiserver
        # pkg/registry/customresource/strategy.go: GetAttrs reads them from the object).
        selectable = sorted({f for fields in info.selectable.values() for f in fields})
        allowed |= set(selectable)
        for raw in (text or "").split(","):
            raw = raw.strip()
            if not raw:
                continue
            match = re.match(r"^([^!=]+?)\s*(==|!=|=)\s*(.*)$", raw)
            if match is None:
                raise bad_request(f"invalid selector: '{text}'; can't understand '{raw}'")
            field, op, value = match.group(1).strip(), match.group(2), match.group(3).strip()
            if field not in allowed:
                if info.field_labels:  # kinds with their own field label conversion
                    raise bad_request(f"field label not supported: {field}")
                known = ", ".join(f'"{f}"' for f in ["metadata.name", "metadata.namespace"])
                known += "".join(f', "{f}"' for f in selectable)
                raise bad_request(f'"{field}" is not a known field selector: only {known}')
            self.terms.append((field, "!=" if op == "!=" else "=", value))

    def matches(self, obj: Mapping[str, Any]) -> bool:
        """Whether every term holds for ``obj``."""
        for field, op, value in self.terms:
            actual = field_value(obj, field)
            if (actual == value) != (op == "="):
                return False
        return True


class Selection:
    """A namespace (or all), a label selector and a field selector, from query parameters."""

    def __init__(self, info: ResourceInfo, namespace: str | None, params: Mapping[str, str]):
        try:
            self.labels = _labels.parse(params.get("labelSelector") or None)
        except ValueError as err:
            raise bad_request(f"unable to parse requirement: {err}") from None
        self.fields = FieldSelector(params.get("fieldSelector"), info)
        self.namespace = namespace

    def matches(self, obj: Mapping[str, Any] | None) -> bool:
        """Whether ``obj`` (``None``: no object) is selected."""
        if obj is None:
            return False
        meta = obj.get("metadata") or {}
        if self.namespace is not None and meta.get("namespace") != self.namespace:
            return False
        return self.labels.matches_object(obj) and self.fields.matches(obj)
