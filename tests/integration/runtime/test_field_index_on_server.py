"""Field indexes on a real kube-apiserver: a CronJob controller lists the Jobs it controls from
the cache by a ``metadata.controller`` index (controller-runtime's IndexField + MatchingFields,
the CronJob tutorial's pattern), scoped to the request's namespace; and ``matching_fields`` on
the live client is the server's field selector.

envtest runs no kube-controller-manager, so the test creates the Jobs itself, controlled by the
CronJobs (ownerReferences with their uids), and a Job in another namespace under the same owner
name, which a namespaced list must not see and a cluster-wide list must.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes.client.models import V1CronJob, V1Job

from kubectrl.client import AsyncClient, ClientConfig, load_kubeconfig
from kubectrl.runtime import Builder, Manager, ManagerOptions, Request
from kubectrl.testing import eventually, run_manager

pytestmark = pytest.mark.integration

DEADLINE = 60.0
POD_SPEC = {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}


@pytest.fixture
def config(kubeconfig: Path) -> ClientConfig:
    return load_kubeconfig(kubeconfig).with_options(rate_limit=None)


@pytest.fixture
async def api(config: ClientConfig) -> AsyncIterator[AsyncClient]:
    async with AsyncClient(config) as client:
        yield client


def cron_job(namespace: str, name: str) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "schedule": "0 0 1 1 *",
            "suspend": True,
            "jobTemplate": {"spec": {"template": {"spec": POD_SPEC}}},
        },
    }


def job(namespace: str, name: str, owner: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "ownerReferences": [
                {
                    "apiVersion": "batch/v1",
                    "kind": "CronJob",
                    "name": owner["metadata"]["name"],
                    "uid": owner["metadata"]["uid"],
                    "controller": True,
                }
            ],
        },
        "spec": {"suspend": True, "template": {"spec": POD_SPEC}},
    }


def job_owner(obj: V1Job) -> list[str]:
    refs = (obj.metadata.owner_references if obj.metadata else None) or []
    return [ref.name for ref in refs if ref.controller and ref.kind == "CronJob"]


async def test_a_cronjob_controller_lists_its_jobs_through_a_field_index(
    config: ClientConfig, api: AsyncClient, namespace: str
) -> None:
    suffix = uuid.uuid4().hex[:8]
    other_ns = f"field-index-{suffix}"
    await api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": other_ns}})
    backup = await api.create(cron_job(namespace, f"backup-{suffix}"))
    report = await api.create(cron_job(namespace, f"report-{suffix}"))
    elsewhere = await api.create(cron_job(other_ns, f"backup-{suffix}"))
    await api.create(job(namespace, f"backup-1-{suffix}", backup))
    await api.create(job(namespace, f"report-1-{suffix}", report))
    await api.create(job(other_ns, f"backup-x-{suffix}", elsewhere))

    manager = Manager(
        config,
        options=ManagerOptions(metrics_bind_address="0", graceful_shutdown_timeout=10.0),
    )
    manager.field_indexer.index_field(V1Job, "metadata.controller", job_owner)
    seen: dict[str, list[str]] = {}

    async def reconcile(request: Request) -> None:
        jobs = await manager.client.list(
            V1Job,
            namespace=request.namespace,
            matching_fields={"metadata.controller": request.name},
        )
        assert all(isinstance(j, V1Job) for j in jobs.items)
        seen[f"{request.namespace}/{request.name}"] = [
            j.metadata.name for j in jobs.items if j.metadata and j.metadata.name
        ]

    Builder(manager).for_(V1CronJob).owns(V1Job).complete(reconcile)
    backup_key = f"{namespace}/backup-{suffix}"
    async with run_manager(manager, timeout=DEADLINE):
        await eventually(
            lambda: (
                seen.get(backup_key) == [f"backup-1-{suffix}"]
                and seen.get(f"{namespace}/report-{suffix}") == [f"report-1-{suffix}"]
                and seen.get(f"{other_ns}/backup-{suffix}") == [f"backup-x-{suffix}"]
            ),
            DEADLINE,
            describe="each CronJob's reconcile listing exactly its Jobs in its namespace",
        )
        # A new Job enqueues its owner (owns), whose list now has both, from the index.
        await api.create(job(namespace, f"backup-2-{suffix}", backup))
        await eventually(
            lambda: seen.get(backup_key) == [f"backup-1-{suffix}", f"backup-2-{suffix}"],
            DEADLINE,
            describe="the new Job in its owner's indexed list",
        )
        everywhere = await manager.client.list(
            V1Job, matching_fields={"metadata.controller": f"backup-{suffix}"}
        )
        assert sorted(
            f"{j.metadata.namespace}/{j.metadata.name}" for j in everywhere.items if j.metadata
        ) == sorted(
            [
                f"{namespace}/backup-1-{suffix}",
                f"{namespace}/backup-2-{suffix}",
                f"{other_ns}/backup-x-{suffix}",
            ]
        )
        with pytest.raises(ValueError, match=r"index_field\(V1Job, 'spec\.suspend', fn\)"):
            await manager.client.list(V1Job, matching_fields={"spec.suspend": "true"})

    # The live client sends matching_fields as the server's field selector.
    live = await api.list(
        V1Job, namespace=namespace, matching_fields={"metadata.name": f"report-1-{suffix}"}
    )
    assert [j.metadata.name for j in live.items if j.metadata] == [f"report-1-{suffix}"]
