"""The ``scale`` subresource: an ``autoscaling/v1`` Scale read from and written to an object."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubectrl import labels as _labels
from kubectrl.apiserver._endpoints.selection import field_value
from kubectrl.apiserver._resources.info import ResourceInfo
from kubectrl.apiserver._resources.objects import lookup

__all__ = ["scale_of", "scale_paths"]


def scale_paths(info: ResourceInfo) -> tuple[str, str, str]:
    """Where the replicas are set, where they are reported and the label selector (CRD paths)."""
    scale = info.scale or {}
    return (
        str(scale.get("specReplicasPath", ".spec.replicas")).lstrip("."),
        str(scale.get("statusReplicasPath", ".status.replicas")).lstrip("."),
        str(scale.get("labelSelectorPath", "")).lstrip("."),
    )


def scale_of(info: ResourceInfo, obj: Mapping[str, Any]) -> dict[str, Any]:
    """The Scale of a stored object."""
    spec_path, status_path, selector_path = scale_paths(info)
    meta = obj["metadata"]
    selector = field_value(obj, selector_path) if selector_path else ""
    if not info.crd:
        match = (obj.get("spec") or {}).get("selector") or {}
        selector = str(_labels.parse(match)) if match else ""
    status_replicas = lookup(obj, status_path)
    status: dict[str, Any] = {
        "replicas": status_replicas if isinstance(status_replicas, int) else 0
    }
    if selector:
        status["selector"] = selector
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            k: meta[k]
            for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
            if k in meta
        },
        "spec": {"replicas": lookup(obj, spec_path) or 0},
        "status": status,
    }
