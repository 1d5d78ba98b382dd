"""The strategy of a resource: what the generic store asks of the kind it writes.

As ``k8s.io/apiserver`` ``pkg/registry/rest`` (``RESTCreateStrategy``, ``RESTUpdateStrategy``,
``RESTDeleteStrategy``, ``GarbageCollectionDeleteStrategy``) and the strategies of
``pkg/registry/<group>/<resource>/strategy.go``: one object per resource answers what the
store (:class:`~kubectrl.apiserver._registry.store.ObjectStore`) would otherwise branch on the
resource's name for. The store calls the hooks in the order its docstring gives.

A strategy also says what is served of its resource (status and scale subresources, whether
it keeps ``metadata.generation``, short names, field selectors): the facts of the built-in
resources' :class:`~kubectrl.apiserver._resources.info.ResourceInfo`. A CRD's come from the CRD.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubectrl._internal.clock import Clock
from kubectrl.apiserver._resources.info import ResourceInfo
from kubectrl.apiserver._status import FeatureNotImplementedError

__all__ = ["Cause", "Key", "ReadOnly", "Strategy"]

#: A validation cause: (type, field, message), as a ``Status``'s details carry it.
Cause = tuple[str, str, str]
#: A resource: ``(group, plural)``.
Key = tuple[str, str]


class Strategy:
    """What one served resource does on writes; the base is a kind the core writes with
    nothing of its own (its metadata validated, no defaults).

    The hooks get the object being written (a dict they change in place) and, on an update,
    the stored one.
    """

    #: The resource this strategy is registered for.
    resource: Key = ("", "")

    # ---------------------------------------------------------------- what is served

    #: A ``status`` subresource: a status write changes only the status, a main-resource
    #: write keeps the stored one.
    status: bool = False
    #: A ``scale`` subresource (``spec.replicas``, ``status.replicas``, ``spec.selector``).
    scale: bool = False
    #: ``metadata.generation`` kept: 1 on create, bumped when the spec changes.
    generation: bool = False
    #: Discovery's short names.
    short_names: tuple[str, ...] = ()
    #: Field selectors besides ``metadata.name`` and ``metadata.namespace``: the kind has a
    #: field label conversion function of its own (an unknown field is then "field label not
    #: supported"); empty: the default one.
    field_labels: frozenset[str] = frozenset()
    #: Subresources served besides ``status`` and ``scale`` (their writes go to
    #: :meth:`merge_subresource` and :meth:`validate_subresource`).
    subresources: tuple[str, ...] = ()
    #: Decoded and encoded as its Go type, by the definitions the pinned server publishes
    #: (:mod:`~kubectrl.apiserver._schema.gotypes`); not a CRD, whose schemas are its data.
    typed: bool = True

    # ---------------------------------------------------------------- how it is written

    #: Whether the core writes it (defaults and validates it as the apiserver does); a write
    #: of a kind it does not is refused as not implemented.
    writable: bool = True
    #: An update without ``metadata.resourceVersion`` is allowed (``AllowUnconditionalUpdate``).
    allow_unconditional_update: bool = True
    #: Names are RFC 1123 labels (namespaces), not subdomains.
    name_is_label: bool = False
    #: ``ValidateObjectMeta`` of the core API (finalizer names checked), not apimachinery's.
    kube_finalizers: bool = True
    #: How often an update validates the new metadata besides the generic passes (see
    #: :func:`kubectrl.apiserver._validation.objects.validate_object_meta`): 0, 1 or 2.
    update_metadata_passes: int = 0
    #: The registry's strategy embeds ``rest.DeclarativeValidation`` from Kubernetes 1.37 on
    #: (every built-in one the core writes; not apiextensions-apiserver's): its handwritten
    #: causes then pass through ``ErrorList.Filter``, which drops repeated ones (see
    #: :func:`kubectrl.apiserver._registry.store` ``_validate``).
    declarative_validation: bool = True
    #: A delete answers the deleted object, not a ``Status`` (``ReturnDeletedObject``).
    return_deleted_object: bool = False
    #: A delete without finalizers marks the object deleted (a MODIFIED event, the generation
    #: bumped) before it goes: graceful deletion with a grace period of 0.
    graceful_delete: bool = False
    #: A delete terminates it: marked Terminating, what it holds deleted, gone when empty
    #: (the namespace controller, run at once).
    terminates: bool = False

    def __repr__(self) -> str:
        group, plural = self.resource
        return f"{type(self).__name__}({plural}{'.' + group if group else ''})"

    def check_writable(self, info: ResourceInfo) -> None:
        """Refuse a write of a kind the core does not default and validate."""
        if not self.writable:
            raise FeatureNotImplementedError(
                f"writing {info.kind} ({info.api_version()}): the API core does not default "
                "and validate this built-in kind as the apiserver does"
            )

    # ---------------------------------------------------------------- create and update

    def reset_status(self, info: ResourceInfo, obj: dict[str, Any]) -> None:
        """A create's status, for a kind with a status subresource: the empty one."""
        del info
        obj["status"] = {}

    def default(self, obj: dict[str, Any]) -> None:
        """Fill the defaults (``SetDefaults_<Kind>``), on create and update."""

    def prepare_for_create(self, obj: dict[str, Any]) -> None:
        """What the create strategy adds once the object has its uid (``PrepareForCreate``)."""

    def validate_schema(
        self,
        info: ResourceInfo,
        version: str,
        obj: dict[str, Any],
        name: str,
        old: dict[str, Any] | None,
    ) -> None:
        """Prune, default and validate by a schema of the object's own (custom resources)."""

    def validate(self, obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> list[Cause]:
        """The kind's validation causes (``old``: the stored object of an update); its
        metadata is validated for every kind before."""
        del obj, old
        return []

    def accept(self, obj: dict[str, Any], clock: Clock) -> ResourceInfo | None:
        """The resource this object defines, served once it is written (a CRD's; its status
        set); ``None`` for a kind that defines none."""
        del obj, clock
        return None

    def defines(self, obj: Mapping[str, Any]) -> ResourceInfo | None:
        """The resource a stored object defines (no longer served once it is gone)."""
        del obj
        return None

    def allocate(self, obj: dict[str, Any]) -> None:
        """What admission plugins and registries add on create (after the field manager: no
        manager owns it)."""

    def allocate_update(self, new: dict[str, Any], old: Mapping[str, Any]) -> None:
        """What admission plugins and registries keep or add on an update."""

    def canonicalize(self, obj: dict[str, Any]) -> None:
        """What the kind's encoding writes besides its Go type's zero values."""

    def prepare_for_update(self, new: dict[str, Any], old: Mapping[str, Any]) -> None:
        """What the update strategy does to the object (``PrepareForUpdate``)."""

    def spec_of(self, info: ResourceInfo, obj: Mapping[str, Any]) -> Any:
        """What ``metadata.generation`` counts: the spec."""
        del info
        return obj.get("spec")

    # ---------------------------------------------------------------- subresources

    def merge_subresource(
        self, sub: str, old: Mapping[str, Any], body: Mapping[str, Any]
    ) -> dict[str, Any]:
        """The object a write to subresource ``sub`` (one of :attr:`subresources`) makes."""
        raise NotImplementedError(sub)

    def validate_subresource(
        self, sub: str, new: dict[str, Any], old: Mapping[str, Any]
    ) -> tuple[list[Cause], dict[str, Any]]:
        """A subresource write's own causes, and the object validated as a whole after."""
        raise NotImplementedError(sub)


class ReadOnly(Strategy):
    """A built-in resource the core serves and reads but does not write, with what is served
    of it."""

    writable = False

    def __init__(
        self,
        resource: Key,
        *,
        status: bool = False,
        scale: bool = False,
        generation: bool = False,
        short_names: tuple[str, ...] = (),
        field_labels: frozenset[str] = frozenset(),
    ) -> None:
        self.resource = resource
        self.status = status
        self.scale = scale
        self.generation = generation
        self.short_names = short_names
        self.field_labels = field_labels
