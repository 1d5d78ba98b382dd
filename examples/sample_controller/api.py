"""The Foo API as models (``pkg/apis/samplecontroller/v1alpha1/types.go`` of the Go original).

``Foo`` is ``samplecontroller.k8s.io/v1alpha1``, kind ``Foo``, plural ``foos``, namespaced, with
the status subresource (the class has a ``status`` field). It is the storage version and the
conversion *hub*. ``FooV1beta1`` is the same kind in another shape (``spec.deployment.name`` and
``spec.deployment.replicas``); it converts itself to and from the hub (``to_hub`` /
``from_hub``), and the API server calls the controller's conversion webhook (``/convert``) to
serve one version from the other. Their CRD, ``artifacts/crd.yaml``, is generated from these
classes; ``tests/unit/examples/test_sample_controller_crd.py`` fails when the committed file and
the models disagree. To regenerate it, from the repository root::

    python examples/sample_controller/api.py

The schema keeps the hand-written CRD's meaning: nothing is required (a Foo without
``spec.deploymentName`` is accepted and logged by the controller, as in Go), ``spec.replicas``
is an int32 in 1..10 that may be left out, and no field has a default (optional fields are
``None``, so the server fills in nothing). With the webhooks on (``webhooks.py``), the
defaulter sets ``replicas`` to 1 and the validator requires a valid ``deploymentName``.

Example::

    >>> foo = Foo.model_validate(
    ...     {"metadata": {"name": "example-foo"},
    ...      "spec": {"deploymentName": "example-foo", "replicas": 1}}
    ... )
    >>> foo.spec.deployment_name, foo.spec.replicas, foo.status
    ('example-foo', 1, None)
    >>> foo.api_version, foo.kind
    ('samplecontroller.k8s.io/v1alpha1', 'Foo')
    >>> FooV1beta1.from_hub(foo).spec.deployment
    FooDeployment(name='example-foo', replicas=1)
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from kubectrl import CustomResource, ResourceModel, crd
from kubectrl.resources import Int32, PrinterColumn

#: Where the generated CRD is committed.
CRD_PATH = Path(__file__).resolve().parent / "artifacts" / "crd.yaml"

#: In a cluster (``artifacts/deployment.yaml``): the controller's namespace, the Service in
#: front of its webhook server, and the cert-manager Certificate of that server.
NAMESPACE = "sample-controller"
#: The CRD's name, ``<plural>.<group>``.
CRD_NAME = "foos.samplecontroller.k8s.io"
WEBHOOK_SERVICE = "sample-controller-webhook-service"
CERTIFICATE = "sample-controller-serving-cert"

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
    storage=True,
    crd_annotations=dict([API_APPROVED]),
    printer_columns=(
        PrinterColumn("Deployment", "string", ".spec.deploymentName"),
        PrinterColumn("Replicas", "integer", ".spec.replicas"),
        PrinterColumn("Available", "integer", ".status.availableReplicas"),
        PrinterColumn("Age", "date", ".metadata.creationTimestamp"),
    ),
):
    """Foo is a specification for a Foo resource: an nginx Deployment and its size."""

    spec: FooSpec | None = None
    status: FooStatus | None = None


class FooDeployment(ResourceModel):
    """The Deployment a Foo owns: its name and size."""

    name: str | None = None
    """Name of the Deployment (created in the Foo's namespace)."""
    replicas: Annotated[Int32 | None, Field(ge=1, le=10)] = None
    """Number of replicas of the Deployment."""


class FooSpecV1beta1(ResourceModel):
    """FooSpec is the spec for a Foo resource."""

    deployment: FooDeployment | None = None
    """The Deployment the Foo owns."""


class FooV1beta1(
    CustomResource,
    group="samplecontroller.k8s.io",
    version="v1beta1",
    kind="Foo",
    plural="foos",
    scope="Namespaced",
    crd_annotations=dict([API_APPROVED]),
    printer_columns=(
        PrinterColumn("Deployment", "string", ".spec.deployment.name"),
        PrinterColumn("Replicas", "integer", ".spec.deployment.replicas"),
        PrinterColumn("Available", "integer", ".status.availableReplicas"),
        PrinterColumn("Age", "date", ".metadata.creationTimestamp"),
    ),
):
    """Foo is a specification for a Foo resource: an nginx Deployment and its size."""

    spec: FooSpecV1beta1 | None = None
    status: FooStatus | None = None

    def to_hub(self) -> Foo:
        """This Foo as ``v1alpha1``; ``from_hub`` of the result gives this Foo back.

        Example::

            >>> beta = FooV1beta1.model_validate({"metadata": {"name": "a"},
            ...     "spec": {"deployment": {"name": "web", "replicas": 2}}})
            >>> hub = beta.to_hub()
            >>> hub.api_version, hub.spec
            ('samplecontroller.k8s.io/v1alpha1', FooSpec(deployment_name='web', replicas=2))
            >>> FooV1beta1.from_hub(hub) == beta
            True
        """
        spec = None
        if self.spec is not None:
            deployment = self.spec.deployment or FooDeployment()
            spec = FooSpec(deployment_name=deployment.name, replicas=deployment.replicas)
        return Foo(metadata=self.metadata, spec=spec, status=self.status)

    @classmethod
    def from_hub(cls, hub: Foo) -> FooV1beta1:
        """The ``v1alpha1`` Foo ``hub`` as ``v1beta1``."""
        spec = None
        if hub.spec is not None:
            deployment = None
            if hub.spec.deployment_name is not None or hub.spec.replicas is not None:
                deployment = FooDeployment(
                    name=hub.spec.deployment_name, replicas=hub.spec.replicas
                )
            spec = FooSpecV1beta1(deployment=deployment)
        return cls(metadata=hub.metadata, spec=spec, status=hub.status)


def crd_manifest() -> dict[str, Any]:
    """The Foo CRD: :func:`kubectrl.crd.generate` of both versions, conversion by webhook.

    As kubebuilder's ``config/crd/patches`` make it: ``spec.conversion`` calls the
    controller's ``/convert`` through its Service, and the ``cert-manager.io/inject-ca-from``
    annotation has cert-manager's CA injector fill in the CA bundle.

    Example::

        >>> manifest = crd_manifest()
        >>> manifest["metadata"]["name"], manifest["spec"]["versions"][0]["subresources"]
        ('foos.samplecontroller.k8s.io', {'status': {}})
        >>> [(v["name"], v["storage"]) for v in manifest["spec"]["versions"]]
        [('v1alpha1', True), ('v1beta1', False)]
        >>> manifest["spec"]["conversion"]["webhook"]["clientConfig"]["service"]["path"]
        '/convert'
    """
    from kubectrl.webhook import conversion_stanza

    conversion = conversion_stanza(service_name=WEBHOOK_SERVICE, service_namespace=NAMESPACE)
    manifest = crd.generate(Foo, FooV1beta1, conversion=conversion)
    manifest["metadata"]["annotations"]["cert-manager.io/inject-ca-from"] = (
        f"{NAMESPACE}/{CERTIFICATE}"
    )
    return manifest


def crd_yaml() -> str:
    """The text ``artifacts/crd.yaml`` must hold, byte for byte."""
    return crd.to_yaml(crd_manifest())


if __name__ == "__main__":
    CRD_PATH.write_text(crd_yaml(), encoding="utf-8")
    sys.stdout.write(f"{CRD_PATH}\n")
