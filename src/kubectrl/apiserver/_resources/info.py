"""What the API core serves of a resource: names, scope, subresources and a CRD's schemas.

A CRD brings its versions, scope, names, subresources and the structural schema the core
defaults, prunes and validates custom objects with (types, required, enum, bounds, lengths,
pattern; CEL rules are not evaluated).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["ResourceInfo", "crd_resource", "schema_has"]

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
    #: CRDs: the spec changed since the CRD was made (``metadata.generation`` > 1), so objects
    #: stored earlier may hold what the schemas now prune, drop or default: reads settle them.
    reshaped: bool = False
    #: CRDs: ``spec.conversion.strategy`` (``None`` relabels; ``Webhook`` is not called here).
    conversion: str = "None"

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
        reshaped=int((crd.get("metadata") or {}).get("generation") or 1) > 1,
        conversion=str((spec.get("conversion") or {}).get("strategy") or "None"),
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
