"""Shutdown: the Lease is released before events are flushed (issue 16, defect 16); a stuck
sync reconcile cannot keep the process alive past the grace period (defect 4).

controller-runtime (pkg/manager/internal.go, ``engageStopProcedure``) cancels leader election,
which releases the lease with ``LeaderElectionReleaseOnCancel``, before it stops the event
recorder provider; a broadcaster that cannot write must not delay the successor's takeover.
"""

from __future__ import annotations

import asyncio
import signal
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from kubectrl.client import AsyncClient
from kubectrl.runtime._manager import SHUTDOWN_MARGIN, Manager

from .conftest import eventually, read_log, start_in_background

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
    # core v1: each of the three events is a write of its own (events.k8s.io/v1 would fold
    # them into one series).
    recorder = manager.event_recorder("flush-order-test", api="v1")
    sink = StuckSink()
    # The broadcaster's sink is the one thing replaced: the Lease is the real server's.
    manager._broadcasters["v1"]._sink = sink
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


async def test_sigterm_with_a_hung_sync_reconcile_exits_non_zero_after_the_grace_period(
    spawn: Callable[..., subprocess.Popen[bytes]],
    api: AsyncClient,
    namespace: str,
    tmp_path: Path,
) -> None:
    """A ``def`` reconciler that never returns cannot be interrupted: the process must still
    exit once the graceful shutdown period ends, with a non-zero status and one error line
    naming the controller (seen before: alive 20 s after SIGTERM, until a second signal)."""
    grace = 2.0
    log_path = tmp_path / "log"
    proc = spawn("hung", SYNC="hang", GRACE=str(grace))
    await eventually(lambda: any(e == "leading" for e, *_ in read_log(log_path)), what="leading")
    await api.create(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "stuck", "namespace": namespace},
        }
    )
    await eventually(
        lambda: any(e == "begin" and n == "stuck" for e, _, n, _ in read_log(log_path)),
        what="the sync reconcile began (and hangs)",
    )
    proc.send_signal(signal.SIGTERM)
    # A wait bound (grace + the manager's margin + slack for a loaded machine), not a timing
    # assertion: the process must exit at all.
    await eventually(
        lambda: proc.poll() is not None, timeout=grace + SHUTDOWN_MARGIN + 30, what="exited"
    )
    output = (tmp_path / "hung.out").read_text()
    assert proc.returncode == 1, output
    lines = [line for line in output.splitlines() if "exiting with status 1" in line]
    assert len(lines) == 1, output
    assert "controller(s) configmap" in lines[0]
    assert "exit" not in [e for e, *_ in read_log(log_path)]  # run() did not return normally
