"""``controller_runtime_reconcile_timeouts_total``: reconciles cut off by the controller's
``reconcile_timeout``.

Upstream: controller-runtime pkg/internal/controller/metrics/metrics.go (``ReconcileTimeouts``,
label ``controller``), pkg/internal/controller/controller.go (initialised to 0 with the other
series; incremented only when the ``ReconciliationTimeout`` wrapper fired, not when the
reconciler fails or returns early).
"""

from __future__ import annotations

import asyncio
import threading

from prometheus_client import CollectorRegistry

from kubectrl._internal.clock import FakeClock
from kubectrl.runtime import Controller, ControllerOptions, Request
from kubectrl.testing import eventually

R = Request("ns", "a")
NAME = "controller_runtime_reconcile_timeouts_total"


def timeouts(registry: CollectorRegistry, controller: str) -> float | None:
    return registry.get_sample_value(NAME, {"controller": controller})


async def test_an_async_reconcile_cut_off_counts_one_timeout() -> None:
    clock, registry = FakeClock(), CollectorRegistry()
    calls = 0

    async def rec(request: Request) -> None:
        nonlocal calls
        calls += 1
        if request.name == "a" and calls == 1:
            await asyncio.Event().wait()
        if request.name == "fails":
            raise RuntimeError("not a timeout")

    options = ControllerOptions(reconcile_timeout=10)
    c = Controller("slow", rec, clock=clock, options=options, registry=registry)
    assert timeouts(registry, "slow") == 0  # exported at 0 before any reconcile
    await c.start()
    c.enqueue(R)
    await eventually(lambda: calls == 1 and clock.next_deadline() is not None)
    clock.advance(10)
    await eventually(lambda: c.queue.num_requeues(R) == 1)
    assert timeouts(registry, "slow") == 1
    c.enqueue(Request("ns", "fails"))  # an error that is not a timeout
    await eventually(lambda: c.queue.num_requeues(Request("ns", "fails")) == 1)
    assert timeouts(registry, "slow") == 1
    await c.stop()


async def test_a_def_reconcile_cut_off_counts_one_timeout() -> None:
    clock, registry = FakeClock(), CollectorRegistry()
    release = threading.Event()
    started = threading.Event()

    def rec(request: Request) -> None:
        started.set()
        release.wait(30)

    options = ControllerOptions(reconcile_timeout=5)
    c = Controller("slow-sync", rec, clock=clock, options=options, registry=registry)
    await c.start()
    c.enqueue(R)
    await eventually(lambda: started.is_set() and clock.next_deadline() is not None)
    clock.advance(5)
    await eventually(lambda: timeouts(registry, "slow-sync") == 1)
    release.set()
    await c.stop()
