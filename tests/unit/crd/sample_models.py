"""Models the CLI tests import by path (``sample_models:Foo``)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from kubectrl.resources import CustomResource, PrinterColumn, ResourceModel


class FooSpec(ResourceModel):
    """The desired state of a Foo."""

    deployment_name: str
    replicas: Annotated[int, Field(ge=1, le=10)] = 1


class FooStatus(ResourceModel):
    """The observed state of a Foo."""

    available_replicas: int = 0


class Foo(
    CustomResource,
    group="samplecontroller.k8s.io",
    version="v1alpha1",
    kind="Foo",
    printer_columns=(PrinterColumn("Replicas", "integer", ".spec.replicas"),),
):
    """A Foo runs a Deployment."""

    spec: FooSpec
    status: FooStatus | None = None


class Loop(ResourceModel):
    """Refers to itself."""

    child: Loop | None = None


class Broken(CustomResource, group="example.com", version="v1", kind="Broken"):
    """A custom resource with a recursive spec."""

    spec: Loop


NOT_A_MODEL = 42
