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

from kubectrl import FakeClock
from kubectrl.cache import Informer, ListWatch
from kubectrl.runtime import Builder, Controller, ControllerOptions, Manager, Request
from kubectrl.runtime import _read_your_writes as read_your_writes
from kubectrl.runtime._read_your_writes import WriteTracker
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


async def test_a_write_unseen_for_90_seconds_is_given_up_on() -> None:
    """A write the cache has not seen after ``GIVE_UP_AFTER`` (90 s, past the apiserver's
    one-minute bookmark period) stops holding the key: the reconcile runs on the cache as it
    is (here: the watch is still held, so it creates a second child), counted as ``gave_up``.
    The time is a FakeClock's, moved by ``eventually``."""
    clock = FakeClock()
    api = FakeAPI(clock=clock)
    api.delay_next("watch", "pods", 10_000)
    registry = CollectorRegistry()
    manager = Manager(api.config(), registry=registry, clock=clock)
    controllers: list[Controller] = []
    created: list[str] = []
    reconciler = children_reconciler(manager, controllers, created)
    controllers.append(Builder(manager).for_(PARENT).complete(reconciler))

    def gave_up() -> float:
        sample = registry.get_sample_value(
            "controller_runtime_reconcile_stale_cache_total",
            {"controller": controllers[0].name, "result": "gave_up"},
        )
        return sample or 0.0

    async with run_manager(manager):
        await manager.api_reader.create(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "p", "namespace": "default"},
            }
        )
        await eventually(lambda: created, clock=clock, describe="the first child")
        await eventually(
            lambda: len(created) == 2, timeout=200, interval=1, clock=clock, describe="given up"
        )
        assert gave_up() == 1
        requeued = registry.get_sample_value(
            "controller_runtime_reconcile_stale_cache_total",
            {"controller": controllers[0].name, "result": "requeued"},
        )
        assert requeued is not None
        assert requeued >= 1


def test_a_write_at_a_version_that_cannot_be_ordered_is_not_waited_for_and_says_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A server whose resourceVersions are not decimal integers (an aggregated API's own
    scheme) cannot be ordered (apimachinery's CompareResourceVersion returns an error): such a
    write is not noted, and a warning names the controller, the kind and the version, once."""
    tracker = WriteTracker("widgets", FakeClock())
    informer = Informer(ListWatch(None, PARENT))  # type: ignore[arg-type]  # never started
    for _ in range(2):
        tracker.note(Request("ns", "a"), [informer], "v7-abc", what="Widget (example.com/v1)")
    assert len(tracker) == 0
    assert tracker.take(Request("ns", "a")) == []
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 1
    assert (
        "controller widgets: Widget (example.com/v1) was written at resourceVersion 'v7-abc'"
        in warnings[0]
    )
    assert "cannot be ordered" in warnings[0]


async def test_every_kind_of_write_in_a_reconcile_is_noted_for_its_key() -> None:
    """create, update, patch, apply, the status writes and delete (answered with the object)
    through ``manager.client``, each inside a reconcile of its own key: each key has one noted
    write, at the answer's resourceVersion; outside a reconcile nothing is noted."""
    api = FakeAPI()
    manager = Manager(api.config())
    client = manager.client
    tracker = WriteTracker("c", FakeClock())
    cm: Any = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"namespace": "default"}}
    pod: Any = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "w", "namespace": "default", "finalizers": ["example.com/hold"]},
        "spec": {"containers": [{"name": "main", "image": "busybox"}]},
    }
    async with run_manager(manager):
        await client.list(PARENT, namespace="default")  # the informers the writes are for
        await client.list(CHILD, namespace="default")
        answers: dict[str, Any] = {}

        async def noted(verb: str, write: Any) -> None:
            token = read_your_writes.enter(tracker, Request("default", verb))
            try:
                answers[verb] = await write
            finally:
                read_your_writes.leave(token)

        await client.create({**cm, "metadata": {**cm["metadata"], "name": "outside"}})
        assert len(tracker) == 0
        await noted("create", client.create({**cm, "metadata": {**cm["metadata"], "name": "a"}}))
        await noted("update", client.update({**answers["create"], "data": {"k": "v"}}))
        await noted("patch", client.patch(PARENT, "a", {"data": {"k": "w"}}, namespace="default"))
        await noted(
            "apply",
            client.apply(
                {**cm, "metadata": {**cm["metadata"], "name": "a"}, "data": {"k": "x"}},
                field_manager="test",
                force=True,
            ),
        )
        created = await client.create(pod)
        await noted(
            "status",
            client.status().patch(
                CHILD, "w", {"status": {"phase": "Running"}}, namespace="default"
            ),
        )
        await noted("delete", client.delete(CHILD, "w", namespace="default"))
    assert created["metadata"]["resourceVersion"]
    assert len(tracker) == 6
    for verb, answer in answers.items():
        expected = answer["metadata"]["resourceVersion"]
        pending = tracker._pending[Request("default", verb)]
        assert [e.resource_version for e in pending.values()] == [expected], verb
