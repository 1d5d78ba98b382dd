"""The NamespaceLifecycle admission plugin (``plugin/pkg/admission/namespace/lifecycle``): no
object is created in a namespace that does not exist, or that is being terminated."""

from __future__ import annotations

from collections.abc import Callable

from kubectrl.apiserver._admission.admission import NamespaceCheck
from kubectrl.apiserver._resources.info import ResourceInfo
from kubectrl.apiserver._status import StatusError, not_found, qualified
from kubectrl.apiserver._storage.memory import Storage
from kubectrl.apiserver._strategies import NAMESPACES

__all__ = ["declared_namespaces", "stored_namespaces"]


def stored_namespaces(storage: Storage) -> NamespaceCheck:
    """The lifecycle of the Namespaces in ``storage``: 404 for one that does not exist, 403
    for one with a deletionTimestamp."""

    def check(info: ResourceInfo, ns: str, name: str) -> None:
        namespace = storage.get(NAMESPACES.resource, ("", ns))
        if namespace is None:
            raise not_found("namespaces", "", ns)
        if (namespace.get("metadata") or {}).get("deletionTimestamp"):
            raise StatusError.make(
                403,
                (
                    f'{qualified(info.plural, info.group)} "{name}" is forbidden: unable to '
                    f"create new content in namespace {ns} because it is being terminated"
                ),
                details={
                    "name": name,
                    "group": info.group,
                    "kind": info.plural,
                    "causes": [
                        {
                            "reason": "NamespaceTerminating",
                            "message": f"namespace {ns} is being terminated",
                            "field": "metadata.namespace",
                        }
                    ],
                },
            )

    return check


def declared_namespaces(exists: Callable[[str], bool] | None) -> NamespaceCheck:
    """The lifecycle of namespaces another server keeps (an extension API server's cluster):
    404 for one ``exists`` denies; ``None`` accepts any."""

    def check(info: ResourceInfo, ns: str, name: str) -> None:
        del info, name
        if exists is not None and not exists(ns):
            raise StatusError.make(
                404,
                f'namespaces "{ns}" not found',
                reason="NotFound",
                details={"name": ns, "kind": "namespaces"},
            )

    return check
