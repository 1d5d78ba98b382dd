"""An object as served at a version and as stored: what the storage codec of a CRD version
makes of it (apiextensions-apiserver ``pkg/apiserver/customresource_handler.go``,
``crdConversionRESTOptionsGetter``).

A custom resource is stored at the storage version. Written at another version, it is
converted (``None`` strategy: relabelled) and coerced by the storage version's schema: fields
that version does not know are pruned and nulls it does not allow dropped. Read, it is settled
by the schema of the version it was stored at (pruned, nulls dropped, defaults filled), then
converted to the version asked for and coerced by that version's schema. Defaults therefore
come from the stored version's schema whichever version is read (apimachinery's versioning
codec defaults before it converts).

Objects written under the CRD's current schemas are already settled, so a read copies and
walks them only when the CRD's spec changed since (``ResourceInfo.reshaped``) or the version
read is not the one stored.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from kubectrl.apiserver._resources.info import ResourceInfo
from kubectrl.apiserver._resources.objects import ordered
from kubectrl.apiserver._schema.defaults import with_defaults
from kubectrl.apiserver._schema.structural import prune
from kubectrl.apiserver._status import FeatureNotImplementedError

__all__ = ["as_read", "decoded", "render", "stored_version", "to_storage"]


def stored_version(info: ResourceInfo, obj: Mapping[str, Any]) -> str:
    """The version ``obj`` is stored at (its ``apiVersion``'s, when that version is served;
    the storage version otherwise)."""
    api_version = obj.get("apiVersion")
    version = api_version.rpartition("/")[2] if isinstance(api_version, str) else ""
    return version if version in info.versions else info.versions[0]


def _convertible(info: ResourceInfo, source: str, target: str) -> None:
    if info.conversion != "None":
        raise FeatureNotImplementedError(
            f"the {info.conversion} conversion strategy of {info.plural}.{info.group} "
            f"(from {source} to {target}): objects are served at the version they are "
            "stored at only"
        )


def _coerced(schema: Mapping[str, Any] | None, obj: dict[str, Any], fill: bool) -> dict[str, Any]:
    """``obj`` (changed in place) pruned by ``schema``, its nulls dropped, its defaults filled
    when ``fill``; the result may be a new top-level dict."""
    if not schema:
        return obj
    prune(schema, obj, root=True)
    settled: dict[str, Any] = with_defaults(schema, obj, fill=fill)
    return settled


def _settled_on_read(info: ResourceInfo, version: str, at: str) -> bool:
    """Whether a custom resource stored at ``at`` and read at ``version`` is walked (and
    copied): the versions differ, or the CRD's spec changed since the object was written."""
    return info.crd and (info.reshaped or at != version)


def as_read(info: ResourceInfo, version: str, obj: dict[str, Any]) -> dict[str, Any]:
    """A stored object as the storage codec decodes it at ``version``: ``obj`` itself when
    that changes nothing, else a settled copy (:func:`render`)."""
    if _settled_on_read(info, version, stored_version(info, obj)):
        return render(info, version, obj)
    return obj


def render(
    info: ResourceInfo,
    version: str | None,
    obj: Mapping[str, Any],
    metadata_only: bool = False,
    *,
    shared: bool = False,
) -> dict[str, Any]:
    """A copy of a stored object as served at ``version`` (or as ``PartialObjectMetadata``).

    ``shared=True`` is for an answer that is encoded at once and never changed: only its top
    level and its ``metadata`` are new, the rest is the stored object's own values (stored
    objects are replaced on every write, never changed in place). A custom resource's
    defaults are then filled by copying only the containers on the way to a missing one.
    """
    version = version or info.versions[0]
    at = stored_version(info, obj) if info.crd else version
    if _settled_on_read(info, version, at):
        if at != version:
            _convertible(info, at, version)
        out = _coerced(info.schemas.get(at), copy.deepcopy(dict(obj)), fill=True)
        if at != version:
            out = _coerced(info.schemas.get(version), out, fill=False)
    else:
        out = dict(obj) if shared else copy.deepcopy(dict(obj))
        if version in info.defaulted:
            out = with_defaults(info.schemas.get(version), out)
    out["apiVersion"] = info.api_version(version)
    out["kind"] = info.kind
    if metadata_only:
        return {
            "kind": "PartialObjectMetadata",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": dict(out.get("metadata") or {}),
        }
    return ordered(out)


def to_storage(info: ResourceInfo, version: str, obj: dict[str, Any]) -> dict[str, Any]:
    """``obj``, written at ``version``, as stored: at the storage version, coerced by its
    schema (``obj`` itself when it is written at the storage version)."""
    storage = info.versions[0]
    if not info.crd or version == storage:
        return obj
    _convertible(info, version, storage)
    obj["apiVersion"] = info.api_version(storage)
    return _coerced(info.schemas.get(storage), obj, fill=False)


def decoded(info: ResourceInfo, version: str, obj: dict[str, Any]) -> dict[str, Any]:
    """The body of a write as the request's decoder hands it to admission: a custom resource
    pruned, its nulls settled and its defaults filled by the schema of ``version``
    (``obj``, changed in place, or a new top-level dict)."""
    if not info.crd:
        return obj
    return _coerced(info.schemas.get(version), obj, fill=True)
