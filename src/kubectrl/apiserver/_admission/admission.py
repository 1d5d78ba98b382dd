"""What the generic store admits a write with.

As ``k8s.io/apiserver`` ``pkg/admission``: a write's :class:`Attributes`, and the plugins the
store calls with them (:class:`Admission`): the namespace lifecycle when a create names its
namespace, then, after the resource's strategy, each validating plugin in order, with the
object as it will be stored (decoded, defaulted, pruned, with its uid, creationTimestamp,
generation and managedFields; what the mutating admission plugins of the built-in kinds add,
the strategies' ``allocate``, already in it), as ``pkg/registry/generic/registry/store.go``
calls ``createValidation`` after ``rest.BeforeCreate``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kubectrl.apiserver._resources.info import ResourceInfo

__all__ = ["Admission", "Attributes", "Mutating", "NamespaceCheck", "Validating"]


@dataclasses.dataclass(frozen=True)
class Attributes:
    """A write as admission sees it (``admission.Attributes``): the operation (``CREATE``,
    ``UPDATE``, ``DELETE``), the resource and the version the request names, the namespace and
    name, the object as it will be stored (``None`` for a delete) and as it is stored (``None``
    for a create), whether it is a dry run, and the subresource written (``status``). The
    objects are the store's: a plugin hands on copies."""

    operation: str
    info: ResourceInfo
    version: str
    namespace: str | None
    name: str
    object: Mapping[str, Any] | None
    old_object: Mapping[str, Any] | None
    dry_run: bool
    subresource: str = ""


#: A validating plugin: refuses the write by raising a
#: :class:`~kubectrl.apiserver._status.StatusError`.
Validating = Callable[[Attributes], None]
#: A mutating plugin: the object as it leaves it (``None``: unchanged), given the write and the
#: kind's defaulting (run after each change); refuses by raising a ``StatusError``.
Mutating = Callable[[Attributes, Callable[[dict[str, Any]], None]], "dict[str, Any] | None"]
#: The namespace lifecycle: ``(resource, namespace, name)``; refuses a create into a
#: namespace that does not exist (or is terminating).
NamespaceCheck = Callable[[ResourceInfo, str, str], None]


class Admission:
    """The admission plugins of a store: ``namespaces`` (the NamespaceLifecycle plugin),
    ``mutating`` (run after the kind's defaults, before its validation) and ``validating``
    (run in order after the strategy)."""

    def __init__(
        self,
        namespaces: NamespaceCheck,
        validating: Sequence[Validating] = (),
        mutating: Sequence[Mutating] = (),
    ) -> None:
        self.namespaces = namespaces
        self.validating = list(validating)
        self.mutating = list(mutating)
        #: The ``Warning`` texts of the request being served (the core sets a list of its own
        #: for each request).
        self.warnings: list[str] = []

    def __repr__(self) -> str:
        return f"Admission(validating={len(self.validating)})"

    def check_namespace(self, info: ResourceInfo, namespace: str, name: str) -> None:
        """Refuse a create of ``name`` into ``namespace`` the lifecycle does not allow."""
        self.namespaces(info, namespace, name)

    def warn(self, text: str) -> None:
        """Add a ``Warning`` header to the answer of the request being served."""
        self.warnings.append(text)

    def mutate(
        self, attributes: Attributes, default: Callable[[dict[str, Any]], None]
    ) -> dict[str, Any] | None:
        """Run the mutating plugins in order, each on the object the one before left; the
        object they leave, or ``None`` when none changed it."""
        changed = None
        for plugin in self.mutating:
            if changed is not None:
                attributes = dataclasses.replace(attributes, object=changed)
            out = plugin(attributes, default)
            if out is not None:
                changed = out
        return changed

    def validate(self, attributes: Attributes) -> None:
        """Run the validating plugins; the first that refuses ends the write."""
        for plugin in self.validating:
            plugin(attributes)
