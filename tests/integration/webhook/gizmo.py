"""Gizmo: a kind in two shapes for the webhook integration tests (v1alpha1 stored, the hub).

Its own group, so the webhook configurations and the conversion installed here touch no other
test's objects in the shared control plane.
"""

from __future__ import annotations

from pydantic import Field

from kubectrl.resources import CustomResource, ResourceModel
from kubectrl.webhook import Denied

GROUP = "webhooks.kubectrl.dev"


class GizmoSpec(ResourceModel):
    deployment_name: str | None = Field(default=None, alias="deploymentName")
    replicas: int | None = None


class Gizmo(CustomResource, group=GROUP, version="v1alpha1", kind="Gizmo", storage=True):
    spec: GizmoSpec = Field(default_factory=GizmoSpec)


class Deployment(ResourceModel):
    name: str | None = None
    replicas: int | None = None


class GizmoV1beta1Spec(ResourceModel):
    deployment: Deployment = Field(default_factory=Deployment)


class GizmoV1beta1(CustomResource, group=GROUP, version="v1beta1", kind="Gizmo"):
    spec: GizmoV1beta1Spec = Field(default_factory=GizmoV1beta1Spec)

    def to_hub(self) -> Gizmo:
        return Gizmo(
            metadata=self.metadata,
            spec=GizmoSpec(
                deploymentName=self.spec.deployment.name, replicas=self.spec.deployment.replicas
            ),
        )

    @classmethod
    def from_hub(cls, hub: Gizmo) -> GizmoV1beta1:
        return cls(
            metadata=hub.metadata,
            spec=GizmoV1beta1Spec(
                deployment=Deployment(name=hub.spec.deployment_name, replicas=hub.spec.replicas)
            ),
        )


class GizmoDefaulter:
    async def default(self, gizmo: Gizmo) -> None:
        if gizmo.spec.replicas is None:
            gizmo.spec.replicas = 1


class GizmoValidator:
    def validate_create(self, gizmo: Gizmo) -> list[str] | None:
        if not gizmo.spec.deployment_name:
            raise Denied("spec.deploymentName is required")
        replicas = gizmo.spec.replicas
        if replicas is not None and not 1 <= replicas <= 10:
            raise Denied(f"spec.replicas must be between 1 and 10, got {replicas}")
        return ["more than 5 replicas"] if (replicas or 0) > 5 else None

    def validate_update(self, old: Gizmo, new: Gizmo) -> list[str] | None:
        if old.spec.deployment_name != new.spec.deployment_name:
            raise Denied("spec.deploymentName is immutable", code=422)
        return self.validate_create(new)

    def validate_delete(self, gizmo: Gizmo) -> list[str] | None:
        return None
