"""Read-your-own-writes in the controller: the next reconcile of a key waits for its writes.

Upstream: Kubernetes 1.36 stale controller mitigation (KEP-5647,
kubernetes/enhancements keps/sig-api-machinery/5647-stale-controller-handling/README.md;
kubernetes/kubernetes pkg/controller/util/consistency/consistency.go): a controller records the
resourceVersion of each write made while reconciling a key, and before the next reconcile of
that key checks that the informers have synced at least that far
(``LastStoreSyncResourceVersion``), else requeues it. controller-runtime has only a design
(kubernetes-sigs/controller-runtime#3473, designs/read_your_own_write_client.md).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from kubectrl.runtime import Builder, Controller, ControllerOptions, Manager, Request
from kubectrl.testing import FakeAPI, eventually, run_manager

PARENT = ("v1", "ConfigMap")
CHILD = ("v1", "Pod")


def children_reconciler(manager: Manager, controllers: list[Controller], created: list[str]) -> Any:
    """kopf's children example, ported literally: create the child Pod unless the cache shows one.

    The first reconcile of a key also enqueues the key again while it runs (an event about the
    parent arriving meanwhile: the key is reconciled twice in quick succession).
    """
    client = manager.client
    runs: dict[Request, int] = {}

    async def reconcile(request: Request) -> None:
        runs[request] = runs.get(request, 0) + 1
        if runs[request] == 1:
            controllers[0].enqueue(request)
        pods = await client.list(
            CHILD, namespace=request.namespace, label_selector={"parent": request.name}
        )
        if pods["items"]:
            return
        pod = await client.create(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "generateName": f"{request.name}-",
                    "namespace": request.namespace,
                    "labels": {"parent": request.name},
                },
                "spec": {"containers": [{"name": "main", "image": "busybox"}]},
            }
        )
        created.append(pod["metadata"]["name"])

    return reconcile


def sync_children_reconciler(
    manager: Manager, controllers: list[Controller], created: list[str]
) -> Any:
    """The same, as a ``def`` reconciler with the blocking client."""
    client = manager.blocking_client
    runs: dict[Request, int] = {}

    def reconcile(request: Request) -> None:
        runs[request] = runs.get(request, 0) + 1
        if runs[request] == 1:
            controllers[0].enqueue(request)
        pods = client.list(
            CHILD, namespace=request.namespace, label_selector={"parent": request.name}
        )
        if pods["items"]:
            return
        pod = client.create(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "generateName": f"{request.name}-",
                    "namespace": request.namespace,
                    "labels": {"parent": request.name},
                },
                "spec": {"containers": [{"name": "main", "image": "busybox"}]},
            }
        )
        created.append(pod["metadata"]["name"])

    return reconcile


#: How long the Pod informer's watch request is held (FakeAPI.delay_next): its cache stays at
#: its first list meanwhile, as an informer whose watch events lag behind the writes.
WATCH_LAG = 1.0


@dataclasses.dataclass
class Outcome:
    created: list[str]
    pods: list[str]
    stale: dict[str, float]
    pending_writes: int


async def run_children(
    options: ControllerOptions | None = None, *, sync: bool = False, lag: float = WATCH_LAG
) -> Outcome:
    api = FakeAPI()
    api.delay_next("watch", "pods", lag)
    registry = CollectorRegistry()
    manager = Manager(api.config(), registry=registry)
    controllers: list[Controller] = []
    created: list[str] = []
    builder = Builder(manager).for_(PARENT)
    if options is not None:
        builder = builder.with_options(options)
    make = sync_children_reconciler if sync else children_reconciler
    controllers.append(builder.complete(make(manager, controllers, created)))
    async with run_manager(manager):
        await manager.api_reader.create(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "p", "namespace": "default"},
            }
        )
        queue = controllers[0].queue
        await eventually(
            lambda: (
                created and queue.num_requeues(Request("default", "p")) == 0 and len(queue) == 0
            ),
            describe="the parent reconciled",
        )
        pods = await manager.api_reader.list(CHILD, namespace="default")
        pending = len(getattr(controllers[0], "_writes", None) or ())
    stale = {
        result: registry.get_sample_value(
            "controller_runtime_reconcile_stale_cache_total",
            {"controller": controllers[0].name, "result": result},
        )
        or 0.0
        for result in ("waited", "requeued", "gave_up")
    }
    return Outcome(created, [p["metadata"]["name"] for p in pods["items"]], stale, pending)


async def test_a_key_reconciled_twice_at_once_creates_one_child() -> None:
    """Without read-your-writes the second reconcile lists the Pods from a cache that has not
    seen the first one's create yet, and creates a second Pod (issue 37, item 1). With it (the
    default) the second reconcile waits for the Pod informer to reach the create's
    resourceVersion, sees the Pod and creates nothing; the wait is counted."""
    outcome = await run_children()
    assert len(outcome.created) == 1, f"created {outcome.created}"
    assert outcome.pods == outcome.created
    assert outcome.stale == {"waited": 1.0, "requeued": 0.0, "gave_up": 0.0}
    assert outcome.pending_writes == 0, "a seen write is forgotten"


async def test_opting_out_reconciles_on_the_stale_cache() -> None:
    """``read_your_writes=False`` is the old behaviour: the second reconcile does not wait, and
    the literal port creates two children (what the default prevents)."""
    outcome = await run_children(ControllerOptions(read_your_writes=False))
    assert len(outcome.created) == 2, f"created {outcome.created}"
    assert outcome.stale == {"waited": 0.0, "requeued": 0.0, "gave_up": 0.0}


async def test_a_cache_slower_than_the_timeout_requeues_the_key_until_it_catches_up() -> None:
    """Past ``read_your_writes_timeout`` the key is requeued with backoff (KEP-5647: "requeue
    the object the same way as if an error occurred"), still waiting for the write on its next
    turn: one child, at least one requeue counted."""
    outcome = await run_children(ControllerOptions(read_your_writes_timeout=0.05), lag=0.5)
    assert len(outcome.created) == 1, f"created {outcome.created}"
    assert outcome.stale["requeued"] >= 1
    assert outcome.stale["gave_up"] == 0


async def test_a_sync_reconciler_writing_through_the_blocking_client_is_tracked_too() -> None:
    """``def`` reconcilers run in threads and write through ``manager.blocking_client``: those
    writes are noted for the key as well."""
    outcome = await run_children(sync=True)
    assert len(outcome.created) == 1, f"created {outcome.created}"
    assert outcome.stale["waited"] == 1.0


def test_read_your_writes_timeout_must_be_positive() -> None:
    with pytest.raises(ValueError, match="read_your_writes_timeout must be a finite number"):
        ControllerOptions(read_your_writes_timeout=0)
