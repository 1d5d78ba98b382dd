"""The Operator SDK memcached tutorial's deletion flow, ported line by line, converges.

Go's ``r.Status().Update(ctx, memcached)`` decodes the server's answer into ``memcached``
(controller-runtime ``pkg/client/typed_client.go``: ``UpdateSubResource`` ends in
``Do(ctx).Into(body)``, ``Update`` in ``Do(ctx).Into(obj)``; ``unstructured_client.go`` the
same), so the tutorial's ``r.Update(ctx, memcached)`` right after it, removing the finalizer,
carries the new ``resourceVersion``. When the status write left the object stale, that update
conflicted on every reconcile (232 conflicts in 30 s) and the object stayed Terminating. Here
the same variable goes through the same writes against the real API server: no conflict, and
the object is gone after one reconcile of the deletion.
"""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest
from pydantic import Field

from kubectrl import crd
from kubectrl.client import AsyncClient, load_kubeconfig
from kubectrl.conditions import Condition, Conditions, set_status_condition
from kubectrl.envtest import ControlPlane
from kubectrl.errors import ConflictError, NotFoundError
from kubectrl.resources import CustomResource, ResourceModel
from kubectrl.runtime import Request
from kubectrl.runtime.controllerutil import add_finalizer, contains_finalizer, remove_finalizer

pytestmark = pytest.mark.integration

MEMCACHED_FINALIZER = "cache.example.com/finalizer"
TYPE_AVAILABLE = "Available"
TYPE_DEGRADED = "Degraded"


class MemcachedSpec(ResourceModel):
    size: int = 1


class MemcachedStatus(ResourceModel):
    conditions: Conditions = Field(default_factory=list)


class Memcached(
    CustomResource, group="cache.refresh.kubectrl.test", version="v1alpha1", kind="Memcached"
):
    spec: MemcachedSpec = Field(default_factory=MemcachedSpec)
    status: MemcachedStatus = Field(default_factory=MemcachedStatus)


def _condition(type_: str, status: str, reason: str, message: str) -> Condition:
    now = datetime.datetime.now(datetime.timezone.utc)
    return Condition(
        type=type_, status=status, reason=reason, message=message, last_transition_time=now
    )


class MemcachedReconciler:
    """``MemcachedReconciler.Reconcile`` of the tutorial, its deletion path line by line."""

    def __init__(self, client: AsyncClient) -> None:
        self.client = client

    async def reconcile(self, req: Request) -> None:
        # memcached := &cachev1alpha1.Memcached{}; err := r.Get(ctx, req.NamespacedName, memcached)
        try:
            memcached = await self.client.get(Memcached, req.name, namespace=req.namespace)
        except NotFoundError:
            return
        # if len(memcached.Status.Conditions) == 0 { SetStatusCondition; r.Status().Update }
        if not memcached.status.conditions:
            set_status_condition(
                memcached.status.conditions,
                _condition(TYPE_AVAILABLE, "Unknown", "Reconciling", "Starting reconciliation"),
            )
            await self.client.status().update(memcached)
            # Let's re-fetch the memcached Custom Resource after updating the status
            memcached = await self.client.get(Memcached, req.name, namespace=req.namespace)
        # if !controllerutil.ContainsFinalizer(...) { AddFinalizer; r.Update(ctx, memcached) }
        if not contains_finalizer(memcached, MEMCACHED_FINALIZER):
            add_finalizer(memcached, MEMCACHED_FINALIZER)
            await self.client.update(memcached)
        # isMemcachedMarkedToBeDeleted := memcached.GetDeletionTimestamp() != nil
        if memcached.metadata.deletion_timestamp is not None:
            if contains_finalizer(memcached, MEMCACHED_FINALIZER):
                set_status_condition(
                    memcached.status.conditions,
                    _condition(TYPE_DEGRADED, "Unknown", "Finalizing", "Performing finalizer"),
                )
                await self.client.status().update(memcached)
                # r.doFinalizerOperationsForMemcached(memcached): nothing to clean up here.
                # Re-fetch the memcached Custom Resource before updating the status
                memcached = await self.client.get(Memcached, req.name, namespace=req.namespace)
                set_status_condition(
                    memcached.status.conditions,
                    _condition(TYPE_DEGRADED, "True", "Finalizing", "Finalizer operations done"),
                )
                await self.client.status().update(memcached)
                # The same variable, as in Go: its resourceVersion is the status write's.
                remove_finalizer(memcached, MEMCACHED_FINALIZER)
                await self.client.update(memcached)
            return
        # ... the Deployment part of the tutorial is not needed for the deletion flow.


async def test_memcached_deletion_converges_without_a_conflict(
    kubectrl_control_plane: ControlPlane,
    kubectrl_kubeconfig: Path,
    kubectrl_namespace: str,
    tmp_path: Path,
) -> None:
    manifest = tmp_path / "memcached.yaml"
    manifest.write_text(crd.to_yaml(crd.generate(Memcached)), encoding="utf-8")
    kubectrl_control_plane.install_crds([manifest])
    ns = kubectrl_namespace
    async with AsyncClient(load_kubeconfig(kubectrl_kubeconfig)) as client:
        await client.create(Memcached(metadata={"name": "sample", "namespace": ns}))
        reconciler = MemcachedReconciler(client)
        req = Request(name="sample", namespace=ns)
        await reconciler.reconcile(req)
        live = await client.get(Memcached, "sample", namespace=ns)
        assert live.metadata.finalizers == [MEMCACHED_FINALIZER]

        await client.delete(Memcached, "sample", namespace=ns)
        conflicts: list[ConflictError] = []
        for _ in range(3):  # a controller would requeue a conflict: it must not need to
            try:
                await reconciler.reconcile(req)
                break
            except ConflictError as err:
                conflicts.append(err)
        assert conflicts == []
        with pytest.raises(NotFoundError):
            await client.get(Memcached, "sample", namespace=ns)
