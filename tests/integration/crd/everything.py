"""A custom resource using every construct the CRD generator supports (two versions)."""

from __future__ import annotations

import datetime
import enum
from typing import Annotated, Any, Literal

from pydantic import Field

from kubectrl.resources import (
    CustomResource,
    EmbeddedResource,
    Int32,
    Int64,
    IntOrString,
    ListType,
    MapType,
    Nullable,
    PreserveUnknownFields,
    PrinterColumn,
    ResourceModel,
    Rule,
    Scale,
    rules,
)

GROUP = "kubectrl.example.com"


class Tier(str, enum.Enum):
    """How much the widget is worth."""

    GOLD = "gold"
    SILVER = "silver"


class Port(ResourceModel):
    """A named port; the list of ports is a map keyed by name."""

    name: str
    port: Annotated[int, Field(ge=1, le=65535)]
    protocol: Literal["TCP", "UDP"] = "TCP"


@rules(Rule("self.min <= self.max", message="min must not exceed max", field_path=".min"))
class Range(ResourceModel):
    """An inclusive range."""

    min: int = 0
    max: int = 10


class EmbeddedConfigMap(ResourceModel):
    """A ConfigMap carried inside the object (typed embedded resource)."""

    api_version: str = "v1"
    kind: str = "ConfigMap"
    metadata: dict[str, Any] = Field(default_factory=dict)
    data: dict[str, str] = Field(default_factory=dict)


class EverythingSpec(ResourceModel):
    """The desired state."""

    replicas: Annotated[Int32, Field(ge=0, le=10)] = 1
    """Desired number of replicas."""
    name: Annotated[str, Field(pattern=r"^[a-z][a-z0-9-]*$", min_length=1, max_length=20)]
    size: Annotated[int, Field(gt=0, lt=100)] = 5
    ratio: float = 1.0
    # A fractional multipleOf breaks on the server for integral values (it takes 1.0 for an
    # integer and the factor 0.5 for 0), so the multiple-of construct is shown on an int.
    step: Annotated[int, Field(multiple_of=5)] = 10
    enabled: bool = True
    mode: Literal["fast", "safe"] = "safe"
    tier: Tier = Tier.SILVER
    big: Int64 = 0
    started: datetime.datetime | None = None
    labels: dict[str, str] = Field(default_factory=dict, description="Labels to copy.")
    tags: set[str] = Field(default_factory=set)
    ports: Annotated[list[Port], ListType("map", keys=("name",)), Field(max_length=8)] = Field(
        default_factory=list
    )
    hosts: Annotated[list[Annotated[str, Field(max_length=63)]], ListType("atomic")] = Field(
        default_factory=list
    )
    selector: Annotated[dict[str, str], MapType("atomic")] = Field(default_factory=dict)
    max_unavailable: IntOrString = "25%"
    template: Annotated[dict[str, Any], EmbeddedResource()] | None = None
    config: Annotated[EmbeddedConfigMap, EmbeddedResource()] | None = None
    extra: Annotated[dict[str, Any], PreserveUnknownFields()] | None = None
    anything: Any = None
    range: Range = Field(default_factory=Range)
    note: Annotated[str | None, Nullable()] = None
    odd: Annotated[int, Rule("self % 2 == 1", message="odd must be odd")] = 1


class EverythingStatus(ResourceModel):
    """The observed state."""

    replicas: int = 0
    selector: str = ""
    phase: str = ""


_COLUMNS = (
    PrinterColumn("Replicas", "integer", ".spec.replicas", description="Desired replicas"),
    PrinterColumn("Mode", "string", ".spec.mode"),
    PrinterColumn("Phase", "string", ".status.phase", priority=1),
    PrinterColumn("Age", "date", ".metadata.creationTimestamp"),
)


class EverythingV1Alpha1(
    CustomResource,
    group=GROUP,
    version="v1alpha1",
    kind="Everything",
    plural="everythings",
    short_names=("evt",),
    storage=False,
):
    """Everything, the first version."""

    spec: EverythingSpec


class Everything(
    CustomResource,
    group=GROUP,
    version="v1",
    kind="Everything",
    plural="everythings",
    short_names=("evt", "ev"),
    categories=("kubectrl-tests",),
    printer_columns=_COLUMNS,
    scale=Scale(".spec.replicas", ".status.replicas", ".status.selector"),
    storage=True,
):
    """Everything: one field per construct the generator supports."""

    spec: EverythingSpec
    status: EverythingStatus | None = None
