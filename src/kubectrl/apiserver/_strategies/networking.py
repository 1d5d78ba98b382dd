"""The strategies of the ``networking.k8s.io`` and ``coordination.k8s.io`` groups.

Ingresses (``pkg/apis/networking/validation``: hosts, path types, backends) and Leases
(``pkg/apis/coordination/validation``, with apimachinery's metadata validation).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubectrl.apiserver._strategies.base import Cause, Strategy
from kubectrl.apiserver._validation import kinds
from kubectrl.apiserver._validation.kinds import validate_kind

__all__ = ["Ingresses", "Leases"]


class Ingresses(Strategy):
    """Ingresses: rules or a default backend."""

    resource = ("networking.k8s.io", "ingresses")
    status = True
    generation = True
    short_names = ("ing",)
    update_metadata_passes = 2

    def validate(self, obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> list[Cause]:
        return validate_kind(kinds.ingress, obj)


class Leases(Strategy):
    """Leases: durations and transitions; metadata by apimachinery's ``ValidateObjectMeta``
    (no check of the core API's finalizer names)."""

    resource = ("coordination.k8s.io", "leases")
    kube_finalizers = False
    update_metadata_passes = 1

    def validate(self, obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> list[Cause]:
        return validate_kind(kinds.lease, obj)
