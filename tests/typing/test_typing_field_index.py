"""Static typing of field indexes and ``matching_fields`` (checked by mypy --strict through
``tests/typing/test_mypy_passes.py``; never called). Lines marked ``# type: ignore[...]`` must
be errors: strict mypy warns about an unused ignore."""

from __future__ import annotations

from typing import Any

from kubernetes.client.models import V1Job
from typing_extensions import assert_type

from kubectrl.client import AsyncClient, BlockingClient, BlockingKubeClient, KubeClient, ModelList
from kubectrl.runtime import BlockingCachedClient, CachedClient, Manager


def job_owner(job: V1Job) -> list[str]:
    refs = (job.metadata.owner_references if job.metadata else None) or []
    return [ref.name for ref in refs if ref.controller]


def pod_node(pod: dict[str, Any]) -> list[str]:
    return [pod["spec"].get("nodeName", "")]


def registering(manager: Manager) -> None:
    manager.field_indexer.index_field(V1Job, "metadata.controller", job_owner)
    manager.field_indexer.index_field(("v1", "Pod"), "spec.nodeName", pod_node)
    # A typed kind gives the function the model, not a dict.
    manager.field_indexer.index_field(V1Job, "x", pod_node)  # type: ignore[arg-type]


async def listing(api: AsyncClient, cached: CachedClient) -> None:
    clients: list[KubeClient] = [api, cached]
    for client in clients:
        fields = {"metadata.controller": "backup"}
        assert_type(
            await client.list(V1Job, namespace="ns", matching_fields=fields), ModelList[V1Job]
        )
        assert_type(await client.list(("batch/v1", "Job"), matching_fields=fields), dict[str, Any])
        await client.list(V1Job, matching_fields={"a": 1})  # type: ignore[dict-item]
        await client.list(V1Job, matching_field=fields)  # type: ignore[call-overload]


def listing_blocking(api: BlockingClient, cached: BlockingCachedClient) -> None:
    clients: list[BlockingKubeClient] = [api, cached]
    for client in clients:
        assert_type(
            client.list(V1Job, matching_fields={"metadata.controller": "x"}), ModelList[V1Job]
        )
