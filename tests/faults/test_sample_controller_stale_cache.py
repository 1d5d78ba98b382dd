"""The Foo sample controller makes progress while its cache lags the API server.

A cache lags its own writes (a write shows in the cache only when its watch event arrives) and
everyone else's. The chaos proxy holds back the events of one watched resource so the
controller's cache of it stays stale for as long as the test needs, deterministically:

* Deployments' watch held back: the controller creates a Foo's Deployment, then (its own status
  write changed the Foo) the Foo comes back while its cache still has no Deployment. By default
  (read-your-writes, Kubernetes 1.36's stale controller mitigation, KEP-5647) that sync waits
  for the cache to see the create, requeued with backoff while the watch is held, and then
  creates nothing. With ``--no-read-your-writes`` it syncs on the stale cache: its create gets
  ``AlreadyExists``; it must read the Deployment from the API server and finish the sync, not
  fail the key into backoff until the watch catches up.
* Foos' watch held back: someone else changed a Foo (its resourceVersion moved on) when a
  Deployment's availability changes. The status write from the stale Foo must not fail with
  ``Conflict`` until the watch catches up: the controller patches ``status.availableReplicas``.

controller-runtime users do the same (kubernetes-sigs/controller-runtime#1464 and #3320: the
cached client does not read its own writes; read from the API reader, patch instead of
update). The Go original (kubernetes/sample-controller ``controller.go``: ``syncHandler``
returns the create's error, ``updateFooStatus`` calls ``UpdateStatus`` on a copy of the cached
Foo; ``processNextWorkItem`` then ``AddRateLimited``) fails and retries with backoff in both.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kubectrl.client import AsyncClient, load_kubeconfig
from kubectrl.envtest import ControlPlane

from .chaos_proxy import ChaosProxy
from .conftest import Process, reconcile_errors, sample_controller_argv

pytestmark = pytest.mark.integration

FOO = ("samplecontroller.k8s.io/v1alpha1", "Foo")
DEPLOYMENT = ("apps/v1", "Deployment")
EVENT = ("v1", "Event")
DEADLINE = 30.0


@pytest.fixture
def controller_flags() -> tuple[str, ...]:
    """The sample controller's extra flags (a test overrides it by parametrizing)."""
    return ()


@pytest.fixture
def controller(
    foo_crd: None,
    chaos_proxy: ChaosProxy,
    processes: Callable[..., Process],
    namespace: str,
    tmp_path: Path,
    controller_flags: tuple[str, ...],
) -> Iterator[Process]:
    proxied = chaos_proxy.kubeconfig(tmp_path / "via-proxy.kubeconfig")
    argv = sample_controller_argv(proxied, "--namespace", namespace, *controller_flags)
    process = processes(argv)
    yield process
    assert process.stop() == 0, process.tail()


async def eventually(
    what: str, probe: Callable[[], bool | Awaitable[bool]], process: Process
) -> None:
    deadline = time.monotonic() + DEADLINE
    while True:
        result = probe()
        if not isinstance(result, bool):
            result = await result
        if result:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"not reached before the deadline: {what}\n{process.tail()}")
        await asyncio.sleep(0.1)


def new_foo(namespace: str, name: str, replicas: int = 1) -> dict[str, Any]:
    return {
        "apiVersion": "samplecontroller.k8s.io/v1alpha1",
        "kind": "Foo",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"deploymentName": name, "replicas": replicas},
    }


async def synced_at_least(api: AsyncClient, namespace: str, name: str, times: int) -> bool:
    events = await api.list(
        EVENT,
        namespace=namespace,
        field_selector=f"involvedObject.name={name},involvedObject.kind=Foo,reason=Synced",
    )
    return sum(int(e.get("count", 1)) for e in events["items"]) >= times


@pytest.mark.parametrize("controller_flags", [("--no-read-your-writes",)])
async def test_create_that_finds_the_deployment_exists_reads_it_and_finishes_the_sync(
    control_plane: ControlPlane, chaos_proxy: ChaosProxy, controller: Process, namespace: str
) -> None:
    config = load_kubeconfig(control_plane.kubeconfig.path)
    async with AsyncClient(config) as api:
        await eventually(
            "the controller's watches", lambda: chaos_proxy.live_watches() >= 2, controller
        )
        chaos_proxy.stall_watches("deployments")
        try:
            await api.create(new_foo(namespace, "lagging"))
            # Sync 1 creates the Deployment and writes the status; that write changes the Foo,
            # so sync 2 runs while the cache still has no Deployment: its create gets
            # AlreadyExists. Two Synced events mean both syncs finished.
            await eventually(
                "two finished syncs while the Deployments' watch is held back",
                lambda: synced_at_least(api, namespace, "lagging", 2),
                controller,
            )
            assert chaos_proxy.stats.requests["POST deployments"] >= 2  # the second create
            foo = await api.get(FOO, "lagging", namespace=namespace)
            assert foo["status"] == {"availableReplicas": 0}
        finally:
            chaos_proxy.resume_watches("deployments")
    assert "AlreadyExists" not in reconcile_errors(controller.output())


async def test_the_next_sync_waits_for_the_cache_to_see_the_create(
    control_plane: ControlPlane, chaos_proxy: ChaosProxy, controller: Process, namespace: str
) -> None:
    """Read-your-writes (the default): the sync that follows the create waits for the held
    Deployments' watch (requeued with backoff meanwhile, and logged), then finds the Deployment
    in the cache: one create only, both syncs finished, no ``AlreadyExists``."""
    config = load_kubeconfig(control_plane.kubeconfig.path)
    async with AsyncClient(config) as api:
        await eventually(
            "the controller's watches", lambda: chaos_proxy.live_watches() >= 2, controller
        )
        chaos_proxy.stall_watches("deployments")
        try:
            await api.create(new_foo(namespace, "waiting"))
            await eventually(
                "a sync requeued because the cache has not seen the controller's create",
                lambda: any(
                    "the cache has not seen the writes of" in line and "waiting" in line
                    for line in controller.output()
                ),
                controller,
            )
            assert chaos_proxy.stats.requests["POST deployments"] == 1
        finally:
            chaos_proxy.resume_watches("deployments")
        await eventually(
            "two finished syncs once the watch caught up",
            lambda: synced_at_least(api, namespace, "waiting", 2),
            controller,
        )
        assert chaos_proxy.stats.requests["POST deployments"] == 1  # the second sync created none
    assert "AlreadyExists" not in reconcile_errors(controller.output())


async def test_status_write_from_a_stale_foo_does_not_conflict(
    control_plane: ControlPlane, chaos_proxy: ChaosProxy, controller: Process, namespace: str
) -> None:
    config = load_kubeconfig(control_plane.kubeconfig.path)
    async with AsyncClient(config) as api:
        await api.create(new_foo(namespace, "edited"))

        async def status_is(available: int) -> bool:
            foo = await api.get(FOO, "edited", namespace=namespace)
            return bool((foo.get("status") or {}).get("availableReplicas") == available)

        await eventually("the first sync", lambda: status_is(0), controller)
        chaos_proxy.stall_watches("foos")
        try:
            # Someone else edits the Foo: the controller's copy is now stale.
            await api.patch(
                FOO, "edited", {"metadata": {"labels": {"team": "a"}}}, namespace=namespace
            )
            # The Deployment becomes available: the controller syncs the (stale) Foo.
            await api.status().patch(
                DEPLOYMENT,
                "edited",
                {"status": {"replicas": 1, "readyReplicas": 1, "availableReplicas": 1}},
                namespace=namespace,
            )
            await eventually(
                "status.availableReplicas 1 while the Foos' watch is held back",
                lambda: status_is(1),
                controller,
            )
        finally:
            chaos_proxy.resume_watches("foos")
    assert "Conflict" not in reconcile_errors(controller.output())
