"""CustomResourceDefinitions: the resource a CRD defines, and the status the apiserver gives it.

Creating or updating a CRD (re)registers its resource at once (its names accepted, Established);
deleting it removes its objects and unregisters it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubectrl._clock import Clock
from kubectrl.apiserver import _crd_admission, _resources
from kubectrl.apiserver._objects import now_string
from kubectrl.apiserver._resources import ResourceInfo
from kubectrl.apiserver._status import invalid

__all__ = ["CRDS", "accept", "defined"]

#: The resource of CustomResourceDefinitions.
CRDS = ("apiextensions.k8s.io", "customresourcedefinitions")


def accept(crd: dict[str, Any], clock: Clock) -> ResourceInfo:
    """The resource ``crd`` defines; sets its status (names accepted, Established).

    A CRD that defines no resource, or that the apiserver refuses (:mod:`._crd_admission`),
    is 422 Invalid.
    """
    causes = _crd_admission.admit(crd)
    if causes:
        raise invalid(
            "CustomResourceDefinition",
            "apiextensions.k8s.io",
            str((crd.get("metadata") or {}).get("name", "")),
            causes,
        )
    try:
        crd_info = _resources.crd_resource(crd)
    except (ValueError, KeyError, TypeError, AttributeError) as err:
        raise invalid(
            "CustomResourceDefinition",
            "apiextensions.k8s.io",
            str((crd.get("metadata") or {}).get("name", "")),
            [("FieldValueInvalid", "spec", f"Invalid value: {err}")],
        ) from None
    names = (crd.get("spec") or {}).get("names") or {}
    accepted = {k: v for k, v in names.items()}
    accepted.setdefault("singular", crd_info.singular)
    accepted.setdefault("listKind", crd_info.list_kind)
    now = now_string(clock)
    crd["status"] = {
        "acceptedNames": accepted,
        "conditions": [
            {
                "type": "NamesAccepted",
                "status": "True",
                "lastTransitionTime": now,
                "reason": "NoConflicts",
                "message": "no conflicts found",
            },
            {
                "type": "Established",
                "status": "True",
                "lastTransitionTime": now,
                "reason": "InitialNamesAccepted",
                "message": "the initial names have been accepted",
            },
        ],
        "storedVersions": [
            v["name"] for v in (crd.get("spec") or {}).get("versions") or () if v.get("storage")
        ],
    }
    return crd_info


def defined(crd: Mapping[str, Any]) -> ResourceInfo | None:
    """The resource a stored CRD defines (``None`` if it defines none)."""
    try:
        return _resources.crd_resource(crd)
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
