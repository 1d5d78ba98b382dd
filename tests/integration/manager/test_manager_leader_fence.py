"""A leader paused past its lease (SIGSTOP) starts no reconcile once resumed (issue 16, defect 3).

client-go's elector (tools/leaderelection/leaderelection.go, ``renew``) notices a lost lease only
at its next renewal attempt, and controller-runtime's workers (pkg/internal/controller/
controller.go, ``processNextWorkItem``) keep reconciling until then: a leader resumed after a
pause longer than the lease overlaps with its successor. Here the elector's fence is asked before
each reconcile and each write of the manager's client instead.
"""

from __future__ import annotations

import asyncio
import datetime
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from kubectrl.client import AsyncClient

from .conftest import eventually, read_log

pytestmark = pytest.mark.integration

CM = ("v1", "ConfigMap")
LEASE = ("coordination.k8s.io/v1", "Lease")
TIMING = {"LEASE": "4", "RENEW": "3", "RETRY": "1", "WRITE": "1"}


async def test_a_leader_resumed_after_sigstop_starts_no_reconcile_after_the_takeover(
    spawn: Callable[..., subprocess.Popen[bytes]],
    api: AsyncClient,
    namespace: str,
    tmp_path: Path,
) -> None:
    """Three managers on one Lease (4 s / 3 s / 1 s); SIGSTOP the leader until another holds
    the Lease, SIGCONT: the old leader must start no reconcile after the new holder's acquire
    time, and must exit with a non-zero status."""
    log_path = tmp_path / "log"
    procs = {who: spawn(who, **TIMING) for who in ("a", "b", "c")}
    await api.create(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "ticker", "namespace": namespace},
            "data": {"n": "0"},
        }
    )

    def leaders() -> list[str]:
        return [who for event, who, _, _ in read_log(log_path) if event == "leading"]

    await eventually(lambda: len(leaders()) >= 1, what="a leader started its controllers")
    old = leaders()[0]
    await eventually(
        lambda: any(e == "wrote" and w == old for e, w, _, _ in read_log(log_path)),
        what="the leader reconciled and wrote",
    )

    stop = asyncio.Event()

    async def tick() -> None:
        n = 0
        while not stop.is_set():
            n += 1
            await api.patch(CM, "ticker", {"data": {"n": str(n)}}, namespace=namespace)
            await asyncio.sleep(0.05)  # load generator pace, not a settle wait

    ticker = asyncio.ensure_future(tick())
    try:
        procs[old].send_signal(signal.SIGSTOP)
        lease: dict[str, object] = {}

        async def taken_over() -> bool:
            nonlocal lease
            lease = await api.get(LEASE, "manager-test", namespace=namespace)
            holder = lease["spec"].get("holderIdentity")
            return bool(holder) and holder != old

        await eventually(taken_over, what="another manager holds the Lease")
        spec = lease["spec"]
        assert isinstance(spec, dict)
        new = str(spec["holderIdentity"])
        acquired = datetime.datetime.fromisoformat(spec["acquireTime"].replace("Z", "+00:00"))
        acquired_at = acquired.timestamp()
        await eventually(
            lambda: any(e == "wrote" and w == new for e, w, _, _ in read_log(log_path)),
            what="the new leader reconciled and wrote",
        )
        procs[old].send_signal(signal.SIGCONT)
        await eventually(lambda: procs[old].poll() is not None, what="the old leader exited")
    finally:
        stop.set()
        await ticker
        if procs[old].poll() is None:
            procs[old].send_signal(signal.SIGCONT)

    output = (tmp_path / f"{old}.out").read_text()
    assert procs[old].returncode != 0, output
    assert "LeaderElectionLostError" in output, output
    log = read_log(log_path)
    late = [
        (event, name, stamp)
        for event, who, name, stamp in log
        if who == old and event == "begin" and stamp >= acquired_at
    ]
    assert late == [], f"the old leader started reconciles after {new} acquired the Lease"
    writes_after = sum(1 for e, w, _, t in log if w == old and e == "wrote" and t >= acquired_at)
    refused = sum(1 for e, w, _, _ in log if w == old and e == "refused")
    print(f"\nold leader after the takeover: {writes_after} writes landed, {refused} refused")
    assert [p for who, p in procs.items() if who != old and p.poll() is not None] == []
