"""Object plumbing shared by the core's parts: rendering, key order, paths, timestamps."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from kubectrl._clock import Clock
from kubectrl.apiserver import _resources
from kubectrl.apiserver._resources import ResourceInfo
from kubectrl.apiserver._status import invalid

__all__ = [
    "assign",
    "check",
    "comparable",
    "key_of",
    "lookup",
    "now_string",
    "ordered",
    "render",
    "spec_of",
]

_METADATA_ORDER = (
    "name",
    "generateName",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
)


def now_string(clock: Clock) -> str:
    """The clock's wall time as the apiserver writes timestamps (RFC 3339, seconds, UTC)."""
    return clock.wall().strftime("%Y-%m-%dT%H:%M:%SZ")


def key_of(obj: Mapping[str, Any]) -> tuple[str, str]:
    """``(namespace or "", name)``: where an object is stored within its resource."""
    meta = obj["metadata"]
    return (meta.get("namespace", ""), meta["name"])


def render(
    info: ResourceInfo,
    version: str | None,
    obj: Mapping[str, Any],
    metadata_only: bool = False,
) -> dict[str, Any]:
    """A copy of a stored object as served at ``version`` (or as ``PartialObjectMetadata``)."""
    out = copy.deepcopy(dict(obj))
    out["apiVersion"] = info.api_version(version)
    out["kind"] = info.kind
    if info.crd and version is not None:
        _resources.apply_defaults(info.schemas.get(version), out)
    if metadata_only:
        return {
            "kind": "PartialObjectMetadata",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": out.get("metadata", {}),
        }
    return ordered(out)


def ordered(obj: dict[str, Any]) -> dict[str, Any]:
    """Keys in the order the apiserver's JSON has them (kind, apiVersion, metadata first)."""
    head: dict[str, Any] = {k: obj[k] for k in ("kind", "apiVersion", "metadata") if k in obj}
    meta = head.get("metadata")
    if isinstance(meta, dict):
        known = {k: meta[k] for k in _METADATA_ORDER if k in meta}
        head["metadata"] = {**known, **{k: v for k, v in meta.items() if k not in known}}
    return {**head, **{k: v for k, v in obj.items() if k not in head}}


def check(info: ResourceInfo, name: str, causes: list[tuple[str, str, str]]) -> None:
    """Raise 422 Invalid naming the object when there are ``causes``."""
    if causes:
        raise invalid(info.kind, info.group, name, causes)


def lookup(obj: Any, path: str) -> Any:
    """The value at a dotted ``path`` (``None`` when any step is missing)."""
    node = obj
    for part in path.split("."):
        if not part:
            continue
        node = node.get(part) if isinstance(node, Mapping) else None
    return node


def assign(obj: dict[str, Any], path: str, value: Any) -> None:
    """Set the value at a dotted ``path``, creating the objects on the way."""
    parts = [p for p in path.split(".") if p]
    node = obj
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    node[parts[-1]] = value


def spec_of(info: ResourceInfo, obj: Mapping[str, Any]) -> Any:
    """What a generation counts: ``spec`` (built-ins) or all but metadata and status (CRDs)."""
    if info.crd:
        skip = {"metadata", "apiVersion", "kind"} | ({"status"} if info.status else set())
        return {k: v for k, v in obj.items() if k not in skip}
    return obj.get("spec")


def comparable(obj: Mapping[str, Any]) -> Any:
    """An object without what changes on every write (an unchanged update stores nothing)."""
    out = copy.deepcopy(dict(obj))
    meta = out.get("metadata") or {}
    meta.pop("resourceVersion", None)
    for entry in meta.get("managedFields") or ():
        entry.pop("time", None)
    return out
