"""The Foo API as models (``pkg/apis/samplecontroller/v1alpha1/types.go`` of the Go original).

``Foo`` is ``samplecontroller.k8s.io/v1alpha1``, kind ``Foo``, plural ``foos``, namespaced, with
the status subresource (the class has a ``status`` field). Its CRD, ``artifacts/crd.yaml``, is
generated from these classes; ``tests/unit/examples/test_sample_controller_crd.py`` fails when
the committed file and the models disagree. To regenerate it, from the repository root::

    python examples/sample_controller/api.py

The schema keeps the hand-written CRD's meaning: nothing is required (a Foo without
``spec.deploymentName`` is accepted and logged by the controller, as in Go), ``spec.replicas``
is an int32 in 1..10 that may be left out (the Deployment then gets the server's default, 1),
and no field has a default (optional fields are ``None``, so the server fills in nothing).

Example::

    >>> foo = Foo.model_validate(
    ...     {"metadata": {"name": "example-foo"},
    ...      "spec": {"deploymentName": "example-foo", "replicas": 1}}
    ... )
    >>> foo.spec.deployment_name, foo.spec.replicas, foo.status
    ('example-foo', 1, None)
    >>> foo.api_version, foo.kind
    ('samplecontroller.k8s.io/v1alpha1', 'Foo')
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from kubectrl import CustomResource, ResourceModel, crd
from kubectrl.resources import Int32

#: Where the generated CRD is committed.
CRD_PATH = Path(__file__).resolve().parent / "artifacts" / "crd.yaml"

#: ``*.k8s.io`` groups are protected: the API server refuses a CRD in one unless this annotation
#: says whether the API was approved (here: it was not; see kubernetes/enhancements#1111).
API_APPROVED = (
    "api-approved.kubernetes.io",
    "unapproved, sample controller used by kubectrl's examples and tests",
)


class FooSpec(ResourceModel):
    """FooSpec is the spec for a Foo resource."""

    deployment_name: str | None = None
    """Name of the Deployment the Foo owns (created in the Foo's namespace)."""
    replicas: Annotated[Int32 | None, Field(ge=1, le=10)] = None
    """Number of replicas of the Deployment; the server's default (1) when left out."""


class FooStatus(ResourceModel):
    """FooStatus is the status for a Foo resource."""

    available_replicas: Int32 | None = None
    """Available replicas of the Deployment, copied from its status by the controller."""


class Foo(
    CustomResource,
    group="samplecontroller.k8s.io",
    version="v1alpha1",
    kind="Foo",
    plural="foos",
    scope="Namespaced",
    crd_annotations=dict([API_APPROVED]),
):
    """Foo is a specification for a Foo resource: an nginx Deployment and its size."""

    spec: FooSpec | None = None
    status: FooStatus | None = None


def crd_manifest() -> dict[str, Any]:
    """The Foo CRD: :func:`kubectrl.crd.generate` of :class:`Foo` (approval annotation included).

    Example::

        >>> manifest = crd_manifest()
        >>> manifest["metadata"]["name"], manifest["spec"]["versions"][0]["subresources"]
        ('foos.samplecontroller.k8s.io', {'status': {}})
    """
    return crd.generate(Foo)


def crd_yaml() -> str:
    """The text ``artifacts/crd.yaml`` must hold, byte for byte."""
    return crd.to_yaml(crd_manifest())


if __name__ == "__main__":
    CRD_PATH.write_text(crd_yaml(), encoding="utf-8")
    sys.stdout.write(f"{CRD_PATH}\n")
