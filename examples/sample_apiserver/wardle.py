"""The wardle.example.com API: Flunder and Fischer, and the admission rule of the sample.

A Python port of the types and the ``BanFlunder`` admission plugin of ``k8s.io/sample-apiserver``
(written from its behaviour): a Flunder refers to another Flunder or to a Fischer; a Fischer
(cluster-wide) lists the names no Flunder may take.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from kubectrl.apiserver import AdmissionAttributes, AdmissionError, APIServer
from kubectrl.resources import CustomResource, PrinterColumn

GROUP = "wardle.example.com"
VERSION = "v1alpha1"


class FlunderSpec(BaseModel):
    """What a Flunder refers to."""

    reference: str = Field(
        default="", description="The name of the Flunder or Fischer referred to."
    )
    reference_type: Literal["Flunder", "Fischer"] | None = Field(
        default=None, alias="referenceType", description="What ``reference`` names."
    )


class FlunderStatus(BaseModel):
    """What the server observed (nothing yet: the sample keeps it empty)."""


class Flunder(
    CustomResource,
    group=GROUP,
    version=VERSION,
    kind="Flunder",
    printer_columns=(
        PrinterColumn("Reference", "string", ".spec.reference"),
        PrinterColumn("Type", "string", ".spec.referenceType"),
    ),
):
    """A Flunder: a namespaced object that refers to a Flunder or a Fischer."""

    spec: FlunderSpec = Field(default_factory=FlunderSpec)
    status: FlunderStatus | None = None


class Fischer(CustomResource, group=GROUP, version=VERSION, kind="Fischer", scope="Cluster"):
    """A Fischer: the Flunder names it disallows, cluster-wide."""

    disallowed_flunders: list[str] = Field(
        default_factory=list,
        alias="disallowedFlunders",
        description="Names no Flunder may be created with.",
    )


def ban_flunder(request: AdmissionAttributes) -> None:
    """Refuse a Flunder whose name a Fischer disallows (the sample's ``BanFlunder``)."""
    for fischer in request.list(Fischer):
        if request.name in (fischer.get("disallowedFlunders") or ()):
            raise AdmissionError("this name may not be used, please change the resource name")


def wardle_server(**options: object) -> APIServer:
    """The wardle API server (``options`` go to :class:`~kubectrl.apiserver.APIServer`)."""
    server = APIServer([Flunder, Fischer], **options)  # type: ignore[arg-type]
    server.admission(Flunder, operations=("CREATE",))(ban_flunder)
    return server
