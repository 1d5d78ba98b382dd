"""The Foo kind in two versions, as the webhook tests use it (v1alpha1 is the hub)."""

from __future__ import annotations

from pydantic import Field

from kubectrl.resources import CustomResource, ResourceModel


class FooSpec(ResourceModel):
    deployment_name: str | None = Field(default=None, alias="deploymentName")
    replicas: int | None = None


class Foo(CustomResource, group="samplecontroller.k8s.io", version="v1alpha1", kind="Foo"):
    spec: FooSpec = Field(default_factory=FooSpec)


class Deployment(ResourceModel):
    name: str | None = None
    replicas: int | None = None


class FooV1beta1Spec(ResourceModel):
    deployment: Deployment = Field(default_factory=Deployment)


class FooV1beta1(CustomResource, group="samplecontroller.k8s.io", version="v1beta1", kind="Foo"):
    spec: FooV1beta1Spec = Field(default_factory=FooV1beta1Spec)

    def to_hub(self) -> Foo:
        if self.spec.deployment.name == "explode":
            raise ValueError("deployment name 'explode' cannot be converted")
        return Foo(
            metadata=self.metadata,
            spec=FooSpec(
                deploymentName=self.spec.deployment.name, replicas=self.spec.deployment.replicas
            ),
        )

    @classmethod
    def from_hub(cls, hub: Foo) -> FooV1beta1:
        return cls(
            metadata=hub.metadata,
            spec=FooV1beta1Spec(
                deployment=Deployment(name=hub.spec.deployment_name, replicas=hub.spec.replicas)
            ),
        )


def admission_review(
    operation: str,
    obj: dict | None,
    old: dict | None = None,
    *,
    uid: str = "4b1a6c4e-0000-4000-8000-000000000001",
    kind: tuple[str, str, str] = ("samplecontroller.k8s.io", "v1alpha1", "Foo"),
    plural: str = "foos",
) -> dict:
    """An AdmissionReview v1 as the API server sends it."""
    meta = (obj or old or {}).get("metadata", {})
    request: dict = {
        "uid": uid,
        "kind": {"group": kind[0], "version": kind[1], "kind": kind[2]},
        "resource": {"group": kind[0], "version": kind[1], "resource": plural},
        "requestKind": {"group": kind[0], "version": kind[1], "kind": kind[2]},
        "name": meta.get("name", ""),
        "namespace": meta.get("namespace", ""),
        "operation": operation,
        "userInfo": {"username": "admin"},
        "object": obj,
        "oldObject": old,
        "dryRun": False,
    }
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}


def foo(name: str = "example-foo", **spec: object) -> dict:
    return {
        "apiVersion": "samplecontroller.k8s.io/v1alpha1",
        "kind": "Foo",
        "metadata": {"name": name, "namespace": "default", "uid": "u-1", "generation": 1},
        "spec": dict(spec),
    }
