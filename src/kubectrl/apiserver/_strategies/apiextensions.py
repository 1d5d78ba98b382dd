"""The strategy of CustomResourceDefinitions: the resource a CRD defines, and the status the
apiserver gives it.

Creating or updating a CRD (re)defines its resource, served at once (its names accepted,
Established); deleting it removes its objects and the resource. A CRD is validated as
``apiextensions-apiserver`` does (:mod:`~kubectrl.apiserver._validation.crds`) and not decoded
as a Go type here (its schemas are data of its own).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubectrl._internal.clock import Clock
from kubectrl.apiserver._resources.info import ResourceInfo, crd_resource
from kubectrl.apiserver._resources.objects import now_string
from kubectrl.apiserver._status import invalid
from kubectrl.apiserver._strategies.base import Strategy
from kubectrl.apiserver._validation import crds

__all__ = ["CustomResourceDefinitions"]


class CustomResourceDefinitions(Strategy):
    """CustomResourceDefinitions: each defines a resource."""

    resource = ("apiextensions.k8s.io", "customresourcedefinitions")
    status = True
    generation = True
    short_names = ("crd", "crds")
    typed = False
    # apiextensions-apiserver's strategy has no rest.DeclarativeValidation.
    declarative_validation = False

    def accept(self, obj: dict[str, Any], clock: Clock) -> ResourceInfo | None:
        """The resource ``obj`` defines; sets its status (names accepted, Established).

        A CRD that defines no resource, or that the apiserver refuses
        (:mod:`~kubectrl.apiserver._validation.crds`), is 422 Invalid.
        """
        name = str((obj.get("metadata") or {}).get("name", ""))
        causes = crds.admit(obj)
        if causes:
            raise invalid("CustomResourceDefinition", "apiextensions.k8s.io", name, causes)
        try:
            crd_info = crd_resource(obj)
        except (ValueError, KeyError, TypeError, AttributeError) as err:
            raise invalid(
                "CustomResourceDefinition",
                "apiextensions.k8s.io",
                name,
                [("FieldValueInvalid", "spec", f"Invalid value: {err}")],
            ) from None
        names = (obj.get("spec") or {}).get("names") or {}
        accepted = {k: v for k, v in names.items()}
        accepted.setdefault("singular", crd_info.singular)
        accepted.setdefault("listKind", crd_info.list_kind)
        now = now_string(clock)
        obj["status"] = {
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
                v["name"] for v in (obj.get("spec") or {}).get("versions") or () if v.get("storage")
            ],
        }
        return crd_info

    def defines(self, obj: Mapping[str, Any]) -> ResourceInfo | None:
        """The resource a stored CRD defines (``None`` if it defines none)."""
        try:
            return crd_resource(obj)
        except (ValueError, KeyError, TypeError, AttributeError):
            return None
