"""Shutdown order: the Lease is released before the event broadcaster flushes (issue 16, #16).

controller-runtime (pkg/manager/internal.go, ``engageStopProcedure``) cancels leader election,
which releases the lease with ``LeaderElectionReleaseOnCancel``, before it stops the event
recorder provider; a broadcaster that cannot write must not delay the successor's takeover.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from kubectrl.client import AsyncClient
from kubectrl.runtime._manager import Manager

from .conftest import eventually, start_in_background

pytestmark = pytest.mark.integration

LEASE = ("coordination.k8s.io/v1", "Lease")


class StuckSink:
    """An event sink whose writes hang until the test lets them go (a server that stopped
    answering Event writes)."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.calls = 0
        self.cancelled = False

    async def create(self, event: Mapping[str, Any]) -> dict[str, Any]:
        self.calls += 1
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        return dict(event)

    async def patch(self, event: Mapping[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
        return await self.create(event)


async def test_the_lease_is_released_while_events_are_still_being_flushed(
    managers: Callable[..., Manager], api: AsyncClient, namespace: str
) -> None:
    manager = managers(
        leader_election=True,
        leader_election_id="flush-order",
        leader_election_namespace=namespace,
        leader_election_release_on_cancel=True,
        lease_duration=4,
        renew_deadline=3,
        retry_period=1,
        graceful_shutdown_timeout=30,
        event_flush_timeout=30,
    )
    recorder = manager.event_recorder("flush-order-test")
    sink = StuckSink()
    # The broadcaster's sink is the one thing replaced: the Lease is the real server's.
    manager._broadcaster._sink = sink  # type: ignore[union-attr]
    task = start_in_background(manager)
    await eventually(manager.is_leader, what="the manager leads")
    cm = await api.create(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "subject", "namespace": namespace},
        }
    )
    for n in range(3):
        recorder.event(cm, "Normal", "Tick", f"tick {n}")
    await eventually(lambda: sink.calls == 1, what="the broadcaster is stuck writing an event")

    manager.stop()

    async def released() -> bool:
        lease = await api.get(LEASE, "flush-order", namespace=namespace)
        return not lease["spec"].get("holderIdentity")

    await eventually(released, what="the Lease shows no holder")
    # Released while the broadcaster was still flushing: it holds its events, uncancelled.
    assert not task.done()
    assert not sink.cancelled
    assert sink.calls == 1
    sink.release.set()
    await eventually(task.done, what="the manager stopped once the events were written")
    task.result()
    assert sink.calls == 3
