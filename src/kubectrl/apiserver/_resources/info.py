"""What the API core serves of a resource: names, scope, subresources and a CRD's schemas.

A CRD brings its versions, scope, names, subresources and the structural schema the core
defaults, prunes and validates custom objects with (types, required, enum, bounds, lengths,
pattern; CEL rules are not evaluated).
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["ResourceInfo", "crd_resource", "schema_has", "with_defaults"]

_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]


@dataclasses.dataclass
class ResourceInfo:
    """One served resource: names, scope, subresources and (CRDs) its schema per version."""

    group: str
    versions: list[str]
    plural: str
    kind: str
    namespaced: bool
    singular: str = ""
    short_names: list[str] = dataclasses.field(default_factory=list)
    status: bool = False
    scale: dict[str, str] | None = None  # CRD scale paths, or {} for a built-in scale
    generation: bool = False
    crd: bool = False
    schemas: dict[str, Mapping[str, Any] | None] = dataclasses.field(default_factory=dict)
    list_kind: str = ""
    #: CRDs: the field paths of ``selectableFields`` (``spec.color``), per version.
    selectable: dict[str, list[str]] = dataclasses.field(default_factory=dict)
    #: Built-ins: decoded as their Go type (all but CustomResourceDefinitions).
    typed: bool = True
    #: Built-ins: field selectors of the kind's own field label conversion, besides
    #: ``metadata.name`` and ``metadata.namespace``.
    field_labels: frozenset[str] = frozenset()
    #: Subresources routed besides ``status`` and ``scale`` (a Pod's ``ephemeralcontainers``).
    subresources: tuple[str, ...] = ()
    #: CRDs: the versions whose schema has a ``default`` somewhere (reads are defaulted).
    defaulted: frozenset[str] = frozenset()

    @property
    def key(self) -> tuple[str, str]:
        """``(group, plural)``: objects are stored per key whatever the version."""
        return (self.group, self.plural)

    def api_version(self, version: str | None = None) -> str:
        """``group/version`` (``v1`` for the core group), the first version by default."""
        v = version or self.versions[0]
        return f"{self.group}/{v}" if self.group else v

    def discovery(self, version: str) -> list[dict[str, Any]]:
        """This resource's ``APIResourceList`` entries (the resource, then its subresources)."""
        main: dict[str, Any] = {
            "name": self.plural,
            "singularName": self.singular or self.kind.lower(),
            "namespaced": self.namespaced,
            "kind": self.kind,
            "verbs": list(_VERBS),
        }
        if self.short_names:
            main["shortNames"] = list(self.short_names)
        out = [main]
        if self.status:
            out.append(
                {
                    "name": f"{self.plural}/status",
                    "singularName": "",
                    "namespaced": self.namespaced,
                    "kind": self.kind,
                    "verbs": ["get", "patch", "update"],
                }
            )
        if self.scale is not None:
            out.append(
                {
                    "name": f"{self.plural}/scale",
                    "singularName": "",
                    "group": "autoscaling",
                    "version": "v1",
                    "namespaced": self.namespaced,
                    "kind": "Scale",
                    "verbs": ["get", "patch", "update"],
                }
            )
        return out


def crd_resource(crd: Mapping[str, Any]) -> ResourceInfo:
    """The :class:`ResourceInfo` a CRD dict defines (served versions only, storage first)."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    versions = [v for v in spec.get("versions") or () if v.get("served", True)]
    if not spec.get("group") or not names.get("plural") or not names.get("kind") or not versions:
        raise ValueError(
            "a CustomResourceDefinition needs spec.group, spec.names.plural, spec.names.kind "
            "and at least one served spec.versions entry"
        )
    versions.sort(key=lambda v: not v.get("storage", False))
    first = versions[0]
    subresources = first.get("subresources") or {}
    scale = subresources.get("scale")
    return ResourceInfo(
        group=str(spec["group"]),
        versions=[str(v["name"]) for v in versions],
        plural=str(names["plural"]),
        kind=str(names["kind"]),
        namespaced=spec.get("scope", "Namespaced") == "Namespaced",
        singular=str(names.get("singular") or names["kind"].lower()),
        short_names=list(names.get("shortNames") or ()),
        status="status" in subresources,
        scale=dict(scale) if isinstance(scale, Mapping) else None,
        generation=True,
        crd=True,
        schemas={str(v["name"]): (v.get("schema") or {}).get("openAPIV3Schema") for v in versions},
        defaulted=frozenset(
            str(v["name"])
            for v in versions
            if schema_has((v.get("schema") or {}).get("openAPIV3Schema"), _has_default)
        ),
        list_kind=str(names.get("listKind") or f"{names['kind']}List"),
        selectable={
            str(v["name"]): [
                str(f.get("jsonPath", "")).lstrip(".")
                for f in v.get("selectableFields") or ()
                if isinstance(f, Mapping)
            ]
            for v in versions
        },
    )


def schema_has(schema: Any, found: Callable[[Mapping[str, Any]], bool]) -> bool:
    """Whether ``found`` holds for ``schema`` or any mapping nested anywhere in it (a property
    that happens to be named like a keyword counts too: callers use the answer to skip work).

    Example::

        >>> schema_has({"properties": {"a": {"default": 1}}}, lambda s: "default" in s)
        True
    """
    if isinstance(schema, Mapping):
        return found(schema) or any(schema_has(v, found) for v in schema.values())
    if isinstance(schema, list):
        return any(schema_has(v, found) for v in schema)
    return False


def _has_default(schema: Mapping[str, Any]) -> bool:
    return "default" in schema


# --------------------------------------------------------------------------- structural schema


def with_defaults(schema: Mapping[str, Any] | None, value: Any, *, nulls: bool = True) -> Any:
    """``value`` with its nulls and defaults settled as the apiserver settles them, without
    changing ``value``: a ``null`` the schema does not allow leaves when no ``default`` replaces
    it (apiextensions-apiserver ``PruneNonNullableNullsWithoutDefaults``), then a missing field,
    or a ``null`` one not nullable, gets its ``default`` (``Default``, which also defaults a
    default it filled in). Containers on the way to a change are copied, all else is shared,
    and ``value`` itself comes back when nothing changes (an object written through the API
    is already settled: reading it copies nothing). ``nulls=False`` leaves nulls without a
    default alone (inside a default just filled in, which the first pass never saw).

    Example::

        >>> schema = {"properties": {"a": {"default": 1}, "b": {"properties": {"c": {}}}}}
        >>> stored = {"b": {"c": 2}, "a": None}
        >>> served = with_defaults(schema, stored)
        >>> served, stored, served["b"] is stored["b"]
        ({'b': {'c': 2}, 'a': 1}, {'b': {'c': 2}, 'a': None}, True)
        >>> with_defaults(schema, served) is served
        True
        >>> nulls = {"properties": {"x": {}, "y": {"nullable": True}}}
        >>> with_defaults(nulls, {"x": None, "y": None})
        {'y': None}
    """
    if not schema or not isinstance(value, (dict, list)):
        return value
    if isinstance(value, dict):
        out = value
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        extra = extra if isinstance(extra, Mapping) else None
        if not props and extra is None:
            return value
        for name, item in value.items():
            sub = props.get(name, extra)
            if sub is None:
                continue
            if item is None and not sub.get("nullable"):
                default = sub.get("default")
                if default is None and not nulls:
                    continue
                if out is value:
                    out = dict(value)
                if default is None:
                    del out[name]
                else:
                    out[name] = with_defaults(sub, copy.deepcopy(default), nulls=False)
                continue
            filled = with_defaults(sub, item, nulls=nulls)
            if filled is not item:
                if out is value:
                    out = dict(value)
                out[name] = filled
        for name, sub in props.items():
            if name not in value and sub.get("default") is not None:
                if out is value:
                    out = dict(value)
                out[name] = with_defaults(sub, copy.deepcopy(sub["default"]), nulls=False)
        return out
    items = schema.get("items")
    if not isinstance(items, Mapping):
        return value
    copied: list[Any] | None = None
    for i, item in enumerate(value):
        if item is None and not items.get("nullable"):
            filled = copy.deepcopy(items.get("default"))
            filled = with_defaults(items, filled, nulls=False)
        else:
            filled = with_defaults(items, item, nulls=nulls)
        if filled is not item:
            if copied is None:
                copied = list(value)
            copied[i] = filled
    return value if copied is None else copied
