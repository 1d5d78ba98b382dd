"""The Foo sample controller converges under churn while its connections are cut, stalled and
corrupted and kube-apiserver restarts.

The controller runs as a subprocess whose only way to the API server is the chaos proxy; the test
writes directly to the API server. Sequence (each step waits on a condition, never on time):

1. Create the Foos (random replicas); the proxy cuts every connection part-way through; wait
   until every Foo has converged.
2. Churn: a writer changes random Foos' replicas and random Deployments' status
   (``availableReplicas``, which the controller copies into the Foo's status) while the proxy
   injects a non-JSON line into the live watches, stalls all traffic, truncates a watch chunk,
   kube-apiserver restarts, the proxy cuts everything and finally stalls all traffic again.
3. The writer stops with the last fault. Within a deadline every Foo has its Deployment with the
   Foo's replicas and the Foo as controlling owner, and the Foo's status has the Deployment's
   ``availableReplicas``. How long that took after the last fault is printed (``pytest -s``)
   with the controller's reconcile errors by kind and its requests, as the proxy saw them.
"""

from __future__ import annotations

import asyncio
import collections
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kubectrl.client import AsyncClient, load_kubeconfig
from kubectrl.envtest import ControlPlane
from kubectrl.errors import KubectrlError, NotFoundError

from .chaos_proxy import ChaosProxy
from .conftest import Process, reconcile_errors, sample_controller_argv

pytestmark = pytest.mark.integration

FOO = ("samplecontroller.k8s.io/v1alpha1", "Foo")
DEPLOYMENT = ("apps/v1", "Deployment")
FOOS = 150
#: Writes between two faults: at the writer's pace, a few seconds of churn each.
WRITES_PER_STEP = 30
#: Seconds between two churn writes: about 8 changes a second, which the controller keeps up
#: with when nothing fails (each change costs it a write and an event, at the client's default
#: 20 requests per second), so what is left after the last fault is the faults' doing.
CHURN_PACE = 0.1
DEADLINE = 120.0
SEED = 16


async def wait_until(what: str, predicate: Callable[[], bool], timeout: float = DEADLINE) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"not reached before the deadline: {what}")
        await asyncio.sleep(0.05)


def new_foo(namespace: str, index: int, replicas: int) -> dict[str, Any]:
    return {
        "apiVersion": "samplecontroller.k8s.io/v1alpha1",
        "kind": "Foo",
        "metadata": {"name": f"foo-{index:03d}", "namespace": namespace},
        "spec": {"deploymentName": f"dep-{index:03d}", "replicas": replicas},
    }


class Churn:
    """One writer changing Foos' replicas and Deployments' status; failures are tolerated."""

    def __init__(self, client: AsyncClient, namespace: str, rng: random.Random) -> None:
        self.client = client
        self.namespace = namespace
        self.rng = rng
        self.ok = 0
        self.failed = 0
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.ensure_future(self._run())

    async def halt(self) -> None:
        self._stop.set()
        assert self._task is not None
        await self._task

    async def _run(self) -> None:
        while not self._stop.is_set():
            index = self.rng.randrange(FOOS)
            try:
                if self.rng.random() < 0.7:
                    await self.client.patch(
                        FOO,
                        f"foo-{index:03d}",
                        {"spec": {"replicas": self.rng.randint(1, 10)}},
                        namespace=self.namespace,
                    )
                else:
                    available = self.rng.randint(0, 10)
                    await self.client.status().patch(
                        DEPLOYMENT,
                        f"dep-{index:03d}",
                        {
                            "status": {
                                "replicas": 10,
                                "readyReplicas": available,
                                "availableReplicas": available,
                            }
                        },
                        namespace=self.namespace,
                    )
                self.ok += 1
            except NotFoundError:
                self.ok += 1  # the controller has not created that Deployment yet
            except KubectrlError:
                self.failed += 1
                await asyncio.sleep(0.05)  # the server is down; do not spin
            await asyncio.sleep(CHURN_PACE)  # load generator pace, not a settle wait

    async def steps(self, count: int = 1) -> None:
        mark = self.ok
        await wait_until(
            f"{count * WRITES_PER_STEP} more writes",
            lambda: self.ok >= mark + count * WRITES_PER_STEP,
        )


def divergence(foos: list[dict[str, Any]], deployments: list[dict[str, Any]]) -> list[str]:
    """What still differs from the converged state, one line per Foo (empty when converged)."""
    by_name = {d["metadata"]["name"]: d for d in deployments}
    wrong = []
    for foo in foos:
        name = foo["metadata"]["name"]
        dep = by_name.get(foo["spec"]["deploymentName"])
        if dep is None:
            wrong.append(f"{name}: no Deployment")
            continue
        owners = [o for o in dep["metadata"].get("ownerReferences") or [] if o.get("controller")]
        if [o["uid"] for o in owners] != [foo["metadata"]["uid"]]:
            wrong.append(f"{name}: Deployment not controlled by it: {owners}")
        if dep["spec"].get("replicas") != foo["spec"]["replicas"]:
            wrong.append(f"{name}: replicas {dep['spec'].get('replicas')} != {foo['spec']}")
        available = (dep.get("status") or {}).get("availableReplicas", 0)
        status = foo.get("status") or {}
        if status.get("availableReplicas") != available:
            wrong.append(f"{name}: status {status} != availableReplicas {available}")
    return wrong


class Timeline:
    """When each fault happened (monotonic), for the printed report."""

    def __init__(self) -> None:
        self.faults: list[tuple[float, str]] = []

    def fault(self, what: str) -> None:
        self.faults.append((time.monotonic(), what))

    @property
    def last(self) -> float:
        return self.faults[-1][0]

    def describe(self) -> str:
        return ", ".join(f"{what} at {t - self.last:+.1f} s" for t, what in self.faults)


def request_rates(proxy: ChaosProxy, since: float) -> str:
    """The controller's requests per second after ``since``, as ``+0s:31 +1s:20 ...``."""
    per_second = collections.Counter(int(t - since) for t, _ in proxy.stats.timeline if t >= since)
    return " ".join(f"+{second}s:{count}" for second, count in sorted(per_second.items()))


async def wait_converged(api: AsyncClient, namespace: str, what: str) -> None:
    wrong: list[str] = []

    async def converged() -> bool:
        foos = (await api.list(FOO, namespace=namespace))["items"]
        deployments = (await api.list(DEPLOYMENT, namespace=namespace))["items"]
        wrong[:] = divergence(foos, deployments)
        return len(foos) == FOOS and not wrong

    deadline = time.monotonic() + DEADLINE
    while not await converged():
        if time.monotonic() > deadline:
            raise AssertionError(
                f"not converged {DEADLINE:.0f} s {what}: {len(wrong)} differences, e.g. {wrong[:5]}"
            )
        await asyncio.sleep(0.1)


async def test_sample_controller_converges_under_churn_cuts_stalls_corruption_and_restart(
    control_plane: ControlPlane,
    foo_crd: None,
    chaos_proxy: ChaosProxy,
    processes: Callable[..., Process],
    namespace: str,
    tmp_path: Path,
) -> None:
    rng = random.Random(SEED)
    proxied = chaos_proxy.kubeconfig(tmp_path / "via-proxy.kubeconfig")
    controller = processes(
        sample_controller_argv(proxied, "--namespace", namespace, "--workers", "2")
    )
    config = load_kubeconfig(control_plane.kubeconfig.path).with_options(rate_limit=None)
    timeline = Timeline()
    async with AsyncClient(config) as api:
        # 1. Create the Foos; cut every proxied connection part-way through.
        started = time.monotonic()
        created = 0
        gate = asyncio.Semaphore(8)

        async def create(index: int) -> None:
            nonlocal created
            async with gate:
                await api.create(new_foo(namespace, index, rng.randint(1, 10)))
            created += 1

        creations = asyncio.gather(*(create(i) for i in range(FOOS)))
        await wait_until("a third of the Foos created", lambda: created >= FOOS // 3)
        await wait_until("the controller's watches", lambda: chaos_proxy.live_watches() >= 2)
        timeline.fault(f"cut {chaos_proxy.cut()} connections")
        await creations
        await wait_converged(api, namespace, "after creating the Foos")
        initial = time.monotonic() - started

        # 2. Churn with faults between steps.
        churn = Churn(api, namespace, rng)
        churn.start()
        try:
            await churn.steps()
            await wait_until("the controller's watches", lambda: chaos_proxy.live_watches() >= 2)
            chaos_proxy.corrupt_watches("garbage")
            await wait_until("a garbage line sent", lambda: chaos_proxy.stats.garbage >= 1)
            timeline.fault("garbage line in the watches")

            await churn.steps()
            chaos_proxy.stall()
            await churn.steps()
            chaos_proxy.resume()
            timeline.fault("stall")

            await churn.steps()
            await wait_until("the controller's watches", lambda: chaos_proxy.live_watches() >= 2)
            chaos_proxy.corrupt_watches("truncate")
            await wait_until("a chunk truncated", lambda: chaos_proxy.stats.truncated >= 1)
            timeline.fault("truncated watch chunk")

            await churn.steps()
            await asyncio.to_thread(control_plane.restart_apiserver)
            timeline.fault("apiserver restarted")

            await churn.steps()
            timeline.fault(f"cut {chaos_proxy.cut()} connections")

            await churn.steps()
            chaos_proxy.stall()
            await churn.steps()
        finally:
            await churn.halt()
            chaos_proxy.resume()
        timeline.fault("stall")
        assert controller.proc.poll() is None, controller.tail()

        # 3. Converge.
        await wait_converged(api, namespace, "after the last fault")
        took = time.monotonic() - timeline.last

    code = controller.stop()
    errors = reconcile_errors(controller.output())
    print(  # the measurement is the point of the run
        f"\nsample controller, {FOOS} Foos: initial sync (one cut) {initial:.1f} s; converged "
        f"{took:.1f} s after the last fault\n  faults: {timeline.describe()}\n"
        f"  churn writes ok={churn.ok} failed={churn.failed}; reconcile errors by kind: "
        f"{dict(errors.most_common())}\n  controller requests: "
        f"{dict(chaos_proxy.stats.requests.most_common())}\n  controller requests per second "
        f"after the last fault: {request_rates(chaos_proxy, timeline.last)}"
    )
    assert code == 0, controller.tail()
