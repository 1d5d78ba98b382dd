"""Custom resources as pydantic models, and the markers that shape their CRD schema.

A custom resource is a :class:`CustomResource` subclass whose class arguments say which kind it is
(group, version, kind, plural, scope, ...) and whose ``spec`` / ``status`` fields are
:class:`ResourceModel` subclasses. Field names are snake_case in Python and camelCase on the wire
(an alias generator); both spellings are accepted when building a model. Unknown fields are kept
(``extra="allow"``), so reading an object and writing it back never drops a field a newer version
of the CRD added.

Validation comes from ordinary pydantic metadata (``Field(ge=1)``, ``pattern``, ``max_length``,
``Literal``, defaults, docstrings); the markers below cover what pydantic has no word for
(list/map types, preserve-unknown-fields, int-or-string, embedded resources, CEL rules,
nullable, integer formats). :func:`kubectrl.crd.generate` turns the classes into a CRD.

Example::

    >>> from typing import Annotated, Literal
    >>> from pydantic import Field
    >>> class FooSpec(ResourceModel):
    ...     replicas: Annotated[int, Field(ge=1, le=10)] = 1
    ...     deployment_name: str
    ...     mode: Literal["fast", "safe"] = "safe"
    >>> class FooStatus(ResourceModel):
    ...     available_replicas: int = 0
    >>> class Foo(CustomResource, group="samplecontroller.k8s.io", version="v1alpha1", kind="Foo"):
    ...     spec: FooSpec
    ...     status: FooStatus | None = None
    >>> foo = Foo.model_validate(
    ...     {"metadata": {"name": "example"}, "spec": {"deploymentName": "web", "replicas": 2}})
    >>> foo.spec.deployment_name, foo.api_version, foo.kind
    ('web', 'samplecontroller.k8s.io/v1alpha1', 'Foo')
    >>> foo.model_dump(by_alias=True, exclude_none=True, mode="json")["spec"]
    {'replicas': 2, 'deploymentName': 'web', 'mode': 'safe'}
    >>> Foo.__kubectrl_kind__.plural, Foo.__kubectrl_kind__.namespaced
    ('foos', True)
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, ClassVar, Literal, TypeVar, Union

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.alias_generators import to_camel

from kubectrl import kinds as _kinds

__all__ = [
    "QUANTITY_PATTERN",
    "CustomResource",
    "EmbeddedResource",
    "Format",
    "Int32",
    "Int64",
    "IntOrString",
    "IntOrStringMarker",
    "ListType",
    "MapType",
    "Nullable",
    "ObjectMeta",
    "PreserveUnknownFields",
    "PrinterColumn",
    "Quantity",
    "ResourceDeclaration",
    "ResourceModel",
    "Rule",
    "Scale",
    "rules",
]

_T = TypeVar("_T", bound=type[BaseModel])


# --- markers -------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ListType:
    """``x-kubernetes-list-type`` (and ``x-kubernetes-list-map-keys``) of a list field.

    ``"atomic"`` (default for lists on the server): the list is replaced as a whole by server-side
    apply; ``"set"``: scalar items, unique; ``"map"``: items are objects identified by ``keys``
    (required fields of the item model).

    Example::

        >>> ListType("map", keys=("name",))
        ListType(type='map', keys=('name',))
    """

    type: Literal["atomic", "set", "map"]
    keys: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if (self.type == "map") != bool(self.keys):
            raise ValueError("ListType: keys are given exactly when the list type is 'map'")


@dataclasses.dataclass(frozen=True)
class MapType:
    """``x-kubernetes-map-type`` of an object field: ``"granular"`` (default) or ``"atomic"``.

    Example::

        >>> MapType("atomic").type
        'atomic'
    """

    type: Literal["granular", "atomic"]


@dataclasses.dataclass(frozen=True)
class PreserveUnknownFields:
    """``x-kubernetes-preserve-unknown-fields: true``: the server keeps fields the schema lacks.

    ``dict[str, Any]`` and ``Any`` fields get it without the marker (they mean "any JSON").

    Example::

        >>> from typing import Annotated
        >>> class Spec(ResourceModel):
        ...     raw: Annotated[dict[str, Any], PreserveUnknownFields()] = {}
    """


@dataclasses.dataclass(frozen=True)
class EmbeddedResource:
    """``x-kubernetes-embedded-resource``: the value is a whole object (apiVersion, kind, metadata).

    On a ``dict[str, Any]`` field the server keeps every field of the embedded object; on a model
    field only the model's fields (plus apiVersion/kind/metadata) are kept.

    Example::

        >>> from typing import Annotated
        >>> class Spec(ResourceModel):
        ...     template: Annotated[dict[str, Any], EmbeddedResource()] = {}
    """


@dataclasses.dataclass(frozen=True)
class Nullable:
    """``nullable: true``: an explicit ``null`` is a meaningful value, kept by the server.

    Without it an optional field (``X | None = None``) is simply not required: ``None`` is left
    out of what kubectrl sends, and a ``null`` sent by someone else is pruned by the server.

    Example::

        >>> from typing import Annotated
        >>> class Spec(ResourceModel):
        ...     paused_until: Annotated[str | None, Nullable()] = None
    """


@dataclasses.dataclass(frozen=True)
class Format:
    """The OpenAPI ``format`` of a field (``int32``, ``int64``, ``date-time``, ``byte``, ...).

    Example::

        >>> Format("int32")
        Format(format='int32')
    """

    format: str


@dataclasses.dataclass(frozen=True)
class Rule:
    """A CEL rule, one entry of ``x-kubernetes-validations``.

    On a field (``Annotated[int, Rule(...)]``) ``self`` is the field's value; on a model (the
    :func:`rules` decorator) ``self`` is the object. ``field_path`` names the field a failure is
    reported against (e.g. ``".replicas"``); ``reason`` is one of the server's ``FieldValueInvalid``
    / ``FieldValueForbidden`` / ``FieldValueRequired`` / ``FieldValueDuplicate``.

    Example::

        >>> from typing import Annotated
        >>> class Spec(ResourceModel):
        ...     replicas: Annotated[int, Rule("self % 2 == 1", message="must be odd")] = 1
    """

    rule: str
    message: str = ""
    message_expression: str = ""
    field_path: str = ""
    reason: str = ""
    optional_old_self: bool = False
    """``optionalOldSelf``: a transition rule (one using ``oldSelf``) also runs when there is no
    old value (on create, or when the field was unset), with ``oldSelf`` an optional."""

    def to_schema(self) -> dict[str, Any]:
        """The ``x-kubernetes-validations`` entry."""
        entry: dict[str, Any] = {"rule": self.rule}
        for key, value in (
            ("message", self.message),
            ("messageExpression", self.message_expression),
            ("fieldPath", self.field_path),
            ("reason", self.reason),
        ):
            if value:
                entry[key] = value
        if self.optional_old_self:
            entry["optionalOldSelf"] = True
        return entry


def rules(*entries: Rule) -> Callable[[_T], _T]:
    """Class decorator: CEL rules over a whole model (``self`` is the object).

    Example::

        >>> @rules(Rule("self.min <= self.max", message="min must not exceed max"))
        ... class Range(ResourceModel):
        ...     min: int = 0
        ...     max: int = 0
        >>> [r.rule for r in Range.__kubectrl_rules__]
        ['self.min <= self.max']
    """

    def decorate(cls: _T) -> _T:
        own = tuple(cls.__dict__.get("__kubectrl_rules__", ()))
        cls.__kubectrl_rules__ = own + entries  # type: ignore[attr-defined]
        return cls

    return decorate


Int32 = Annotated[int, Format("int32")]
"""An ``int`` sent as an OpenAPI ``integer`` with ``format: int32`` (Go's ``int32``)."""

Int64 = Annotated[int, Format("int64")]
"""An ``int`` sent as an OpenAPI ``integer`` with ``format: int64`` (Go's ``int64``)."""


@dataclasses.dataclass(frozen=True)
class IntOrStringMarker:
    """Marks ``int | str`` as Kubernetes' IntOrString (``x-kubernetes-int-or-string``).

    :data:`IntOrString` and :data:`Quantity` carry it; use it directly for an int-or-string whose
    string form has its own pattern (the pattern goes on the ``str`` member, which is where
    pydantic can check it):

    Example::

        >>> from typing import Annotated, Union
        >>> from pydantic import Field
        >>> Percent = Annotated[
        ...     Union[int, Annotated[str, Field(pattern=r"^[0-9]+%$")]], IntOrStringMarker()
        ... ]
    """


_IntOrStringMarker = IntOrStringMarker  # the name kubectrl.crd imported before it was public

IntOrString = Annotated[Union[int, str], IntOrStringMarker()]  # noqa: UP007 (runtime alias)
"""An integer or a string (``"25%"``), as Kubernetes' ``IntOrString``."""

QUANTITY_PATTERN = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+"
    r"(\.[0-9]*)?)|(\.[0-9]+))))?$"
)
"""The pattern the string form of a Kubernetes ``resource.Quantity`` (``"500m"``, ``"1Gi"``)
matches, as CRDs of Go types write it."""

Quantity = Annotated[
    Union[int, Annotated[str, Field(pattern=QUANTITY_PATTERN)]],  # noqa: UP007 (runtime alias)
    IntOrStringMarker(),
]
"""A Kubernetes ``resource.Quantity``: an integer or a string such as ``"500m"`` or ``"1Gi"``
(``x-kubernetes-int-or-string`` with the quantity pattern, as controller-gen writes it)."""


# --- models --------------------------------------------------------------------------------------


class ResourceModel(BaseModel):
    """Base of the models inside a custom resource (spec, status and their parts).

    snake_case fields are camelCase on the wire; both spellings are accepted on input; attribute
    docstrings become descriptions; unknown fields are kept so a round trip loses nothing.

    Example::

        >>> class Port(ResourceModel):
        ...     container_port: int
        ...     '''The port the container listens on.'''
        >>> Port(container_port=80).model_dump(by_alias=True)
        {'containerPort': 80}
        >>> Port.model_validate({"containerPort": 80, "hostIP": "1.2.3.4"}).model_extra
        {'hostIP': '1.2.3.4'}
    """

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="allow",
        use_attribute_docstrings=True,
    )


class ObjectMeta(ResourceModel):
    """The ``metadata`` of a custom resource (the fields a controller reads; the rest are kept).

    Example::

        >>> ObjectMeta.model_validate({"name": "a", "resourceVersion": "7"}).resource_version
        '7'
    """

    name: str | None = None
    generate_name: str | None = None
    namespace: str | None = None
    uid: str | None = None
    resource_version: str | None = None
    generation: int | None = None
    creation_timestamp: datetime.datetime | None = None
    deletion_timestamp: datetime.datetime | None = None
    deletion_grace_period_seconds: int | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    finalizers: list[str] | None = None
    owner_references: list[dict[str, Any]] | None = None
    managed_fields: list[dict[str, Any]] | None = None


@dataclasses.dataclass(frozen=True)
class PrinterColumn:
    """An ``additionalPrinterColumns`` entry (what ``kubectl get`` shows).

    ``type``: ``string``, ``integer``, ``number``, ``boolean`` or ``date``; ``json_path`` is
    relative to the object (``.spec.replicas``); ``priority`` 0 shows in the default view.

    Example::

        >>> PrinterColumn("Replicas", "integer", ".spec.replicas").json_path
        '.spec.replicas'
    """

    name: str
    type: str
    json_path: str
    description: str = ""
    format: str = ""
    priority: int = 0

    def to_schema(self) -> dict[str, Any]:
        """The ``additionalPrinterColumns`` entry."""
        entry: dict[str, Any] = {"name": self.name, "type": self.type, "jsonPath": self.json_path}
        if self.description:
            entry["description"] = self.description
        if self.format:
            entry["format"] = self.format
        if self.priority:
            entry["priority"] = self.priority
        return entry


@dataclasses.dataclass(frozen=True)
class Scale:
    """The scale subresource: where the desired and observed replica counts live.

    Example::

        >>> Scale(".spec.replicas", ".status.replicas", ".status.selector").to_schema()
        {'specReplicasPath': '.spec.replicas', 'statusReplicasPath': '.status.replicas', \
'labelSelectorPath': '.status.selector'}
    """

    spec_replicas_path: str = ".spec.replicas"
    status_replicas_path: str = ".status.replicas"
    label_selector_path: str = ""

    def to_schema(self) -> dict[str, str]:
        """The ``subresources.scale`` entry."""
        entry = {
            "specReplicasPath": self.spec_replicas_path,
            "statusReplicasPath": self.status_replicas_path,
        }
        if self.label_selector_path:
            entry["labelSelectorPath"] = self.label_selector_path
        return entry


@dataclasses.dataclass(frozen=True)
class ResourceDeclaration:
    """Everything a :class:`CustomResource` subclass declared in its class arguments.

    Read it as ``Foo.__kubectrl_resource__`` (the CRD generator does).

    Example::

        >>> class Gizmo(CustomResource, group="example.com", version="v1", kind="Gizmo"):
        ...     pass
        >>> Gizmo.__kubectrl_resource__.plural, Gizmo.__kubectrl_resource__.storage
        ('gizmos', None)
    """

    group: str
    version: str
    kind: str
    plural: str
    scope: Literal["Namespaced", "Cluster"]
    singular: str
    short_names: tuple[str, ...]
    categories: tuple[str, ...]
    printer_columns: tuple[PrinterColumn, ...]
    status_subresource: bool | None
    scale: Scale | None
    served: bool
    storage: bool | None
    deprecated: bool
    deprecation_warning: str
    crd_annotations: Mapping[str, str] = dataclasses.field(default_factory=dict)
    crd_labels: Mapping[str, str] = dataclasses.field(default_factory=dict)
    selectable_fields: tuple[str, ...] = ()
    meta_properties: tuple[str, ...] = ("apiVersion", "kind", "metadata")


#: What the top level of a custom resource's schema may declare besides its own fields.
_META_PROPERTIES = ("apiVersion", "kind", "metadata")


class CustomResource(ResourceModel):
    """Base class of a custom resource; the kind is declared in the class arguments.

    Arguments (all but ``group``, ``version`` and ``kind`` optional):

    * ``plural``: lower-cased kind + ``"s"`` by default (``Foo`` -> ``foos``); ``singular``: the
      lower-cased kind.
    * ``scope``: ``"Namespaced"`` (default) or ``"Cluster"``.
    * ``short_names``, ``categories``: as in ``kubectl get``.
    * ``printer_columns``: :class:`PrinterColumn` entries.
    * ``status_subresource``: ``None`` (default) means "when the model has a ``status`` field".
    * ``scale``: a :class:`Scale` to serve the scale subresource.
    * ``served`` (default ``True``), ``storage`` (default ``None``: storage when it is the only
      version given to :func:`kubectrl.crd.generate`), ``deprecated`` and
      ``deprecation_warning``: per version, for several versions of one kind.
    * ``crd_annotations``, ``crd_labels``: put on the generated CRD's own ``metadata``
      (controller-tools' ``+kubebuilder:metadata`` marker), e.g. the
      ``api-approved.kubernetes.io`` annotation the API server requires for groups under
      ``k8s.io``; merged over every version's model.
    * ``selectable_fields``: JSON paths (``".spec.color"``) the server lets field selectors
      (``kubectl get --field-selector spec.color=red``) filter on: the version's
      ``selectableFields``.
    * ``meta_properties``: which of ``apiVersion``, ``kind`` and ``metadata`` the version's
      schema declares as properties: all three by default (as controller-gen writes them); ``()``
      for a schema that leaves them to the server, as Istio's CRDs do. The model has the three
      fields either way. (A required ``metadata`` is a ``metadata: ObjectMeta`` field without a
      default, as in Argo Workflows' CRDs.)

    A subclass without class arguments keeps its parent's kind. ``apiVersion`` and ``kind`` are
    filled from the class when missing on input; ``metadata`` defaults to an empty
    :class:`ObjectMeta`.

    Example::

        >>> class Bar(CustomResource, group="example.com", version="v1", kind="Bar",
        ...           scope="Cluster", short_names=("br",)):
        ...     pass
        >>> Bar().model_dump(by_alias=True, exclude_none=True)
        {'apiVersion': 'example.com/v1', 'kind': 'Bar', 'metadata': {}}
        >>> Bar.__kubectrl_kind__
        KindInfo(group='example.com', version='v1', kind='Bar', plural='bars', namespaced=False)
    """

    __kubectrl_kind__: ClassVar[_kinds.KindInfo]
    __kubectrl_resource__: ClassVar[ResourceDeclaration]

    api_version: str = Field(default="", alias="apiVersion")
    kind: str = Field(default="", alias="kind")
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)

    def __init_subclass__(
        cls,
        *,
        group: str | None = None,
        version: str | None = None,
        kind: str | None = None,
        plural: str = "",
        singular: str = "",
        scope: Literal["Namespaced", "Cluster"] = "Namespaced",
        short_names: Sequence[str] = (),
        categories: Sequence[str] = (),
        printer_columns: Sequence[PrinterColumn] = (),
        status_subresource: bool | None = None,
        scale: Scale | None = None,
        served: bool = True,
        storage: bool | None = None,
        deprecated: bool = False,
        deprecation_warning: str = "",
        crd_annotations: Mapping[str, str] | None = None,
        crd_labels: Mapping[str, str] | None = None,
        selectable_fields: Sequence[str] = (),
        meta_properties: Sequence[str] = _META_PROPERTIES,
    ) -> None:
        # No **kwargs: pydantic consumes its own class arguments (frozen=..., etc.) before this
        # is called, so a misspelt argument is a TypeError here and a mypy error for users.
        super().__init_subclass__()
        given = (group, version, kind)
        if all(part is None for part in given):
            return  # an abstract base, or a subclass keeping its parent's kind
        if group is None or not version or not kind:
            raise TypeError(
                f"custom resource {cls.__qualname__}: give group, version and kind together "
                f"(got group={group!r}, version={version!r}, kind={kind!r})"
            )
        if scope not in ("Namespaced", "Cluster"):
            raise TypeError(
                f"custom resource {cls.__qualname__}: scope must be 'Namespaced' or 'Cluster', "
                f"not {scope!r}"
            )
        if any(
            isinstance(v, str)
            for v in (short_names, categories, selectable_fields, meta_properties)
        ):
            raise TypeError(
                f"custom resource {cls.__qualname__}: short_names, categories, "
                "selectable_fields and meta_properties are sequences of strings, not a string"
            )
        unknown = [p for p in meta_properties if p not in _META_PROPERTIES]
        if unknown or len(set(meta_properties)) != len(meta_properties):
            raise TypeError(
                f"custom resource {cls.__qualname__}: meta_properties holds each of "
                f"{', '.join(_META_PROPERTIES)} at most once, not {tuple(meta_properties)!r}"
            )
        plural = plural or kind.lower() + "s"
        cls.__kubectrl_resource__ = ResourceDeclaration(
            group=group,
            version=version,
            kind=kind,
            plural=plural,
            scope=scope,
            singular=singular or kind.lower(),
            short_names=tuple(short_names),
            categories=tuple(categories),
            printer_columns=tuple(printer_columns),
            status_subresource=status_subresource,
            scale=scale,
            served=served,
            storage=storage,
            deprecated=deprecated,
            deprecation_warning=deprecation_warning,
            crd_annotations=dict(crd_annotations or {}),
            crd_labels=dict(crd_labels or {}),
            selectable_fields=tuple(selectable_fields),
            meta_properties=tuple(meta_properties),
        )
        cls.__kubectrl_kind__ = _kinds.KindInfo(
            group=group,
            version=version,
            kind=kind,
            plural=plural,
            namespaced=scope == "Namespaced",
        )

    @model_validator(mode="before")
    @classmethod
    def _fill_type_meta(cls, data: Any) -> Any:
        # apiVersion/kind come from the class: a user building an object never spells them, and
        # an object read with the wrong class is named rather than silently relabelled.
        info = cls.__dict__.get("__kubectrl_kind__") or getattr(cls, "__kubectrl_kind__", None)
        if info is None or not isinstance(data, dict):
            return data
        data = dict(data)
        for wire, name, expected in (
            ("apiVersion", "api_version", info.api_version),
            ("kind", "kind", info.kind),
        ):
            value = data.get(wire, data.get(name))
            if value in (None, ""):
                data.pop(name, None)
                data[wire] = expected
            elif value != expected:
                raise ValueError(
                    f"{cls.__qualname__} is {info.api_version} {info.kind}, not {wire} {value!r}"
                )
        return data
