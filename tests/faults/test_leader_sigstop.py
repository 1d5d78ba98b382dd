"""A leader paused with SIGSTOP past its lease starts no reconcile once another replica leads.

Three manager processes (``leader_process.py``) share one Lease: lease 4 s, renew deadline 3 s,
retry 1 s. While a ticker keeps changing ConfigMaps, the leader is stopped with SIGSTOP until
another process has taken the Lease over and reconciles, then continued with SIGCONT. Its queue
and watch buffers are full of work at that moment, and its elector only learns that it lost at
its next renew attempt: client-go's elector fences nothing (``tools/leaderelection/
leaderelection.go`` in kubernetes/client-go: "does not guarantee that only one client is acting
as a leader (a.k.a. fencing)"; a leader finds out in ``renew`` only). kubectrl fences: a leader
whose last successful renew is older than the renew deadline on its own monotonic clock (which
keeps running while the process is stopped) starts no reconcile and sends no write through the
manager's client.

From the shared log of wall-clock stamps (one machine, one clock) and the Lease's
``acquireTime``, the test asserts ZERO overlap: no reconcile began and no write was sent by the
old leader at or after the moment the new leader acquired the Lease.
"""

from __future__ import annotations

import asyncio
import datetime
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from kubectrl.client import AsyncClient, load_kubeconfig

from .conftest import Process

pytestmark = pytest.mark.integration

SCRIPT = Path(__file__).with_name("leader_process.py")
CM = ("v1", "ConfigMap")
LEASE = ("coordination.k8s.io/v1", "Lease")
TICKS = 10
DEADLINE = 60.0

Entry = tuple[str, str, str, float]  # event, identity, name, time.time()


def read_log(path: Path) -> list[Entry]:
    if not path.exists():
        return []
    entries = []
    for line in path.read_text().splitlines():
        event, identity, name, stamp = line.split()
        entries.append((event, identity, name, float(stamp)))
    return entries


async def wait_until(what: str, predicate: Callable[[], bool], timeout: float = DEADLINE) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"not reached before the deadline: {what}")
        await asyncio.sleep(0.05)


def micro_time(value: str) -> float:
    """A metav1.MicroTime (``2026-01-02T03:04:05.678901Z``) as seconds since the epoch."""
    return datetime.datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


async def test_paused_leader_starts_no_reconcile_after_another_acquired(
    processes: Callable[..., Process], kubeconfig: Path, namespace: str, tmp_path: Path
) -> None:
    log_path = tmp_path / "log"
    env = {"KUBECONFIG": str(kubeconfig), "NAMESPACE": namespace, "LOG": str(log_path)}
    procs = {
        who: processes([sys.executable, str(SCRIPT)], {**env, "IDENTITY": who})
        for who in ("a", "b", "c")
    }
    config = load_kubeconfig(kubeconfig).with_options(rate_limit=None)
    async with AsyncClient(config) as api:
        for i in range(TICKS):
            await api.create(
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": f"tick-{i}", "namespace": namespace},
                    "data": {"n": "0"},
                }
            )

        def leaders() -> list[tuple[str, float]]:
            return [(who, t) for event, who, _, t in read_log(log_path) if event == "leading"]

        def began(who: str, after: float = 0.0) -> bool:
            return any(e == "begin" and w == who and t > after for e, w, _, t in read_log(log_path))

        await wait_until("a leader", lambda: len(leaders()) >= 1)
        old = leaders()[0][0]

        # Keep every key busy through the pause and after it.
        stop = asyncio.Event()

        async def tick() -> None:
            n = 0
            while not stop.is_set():
                n += 1
                await api.patch(
                    CM, f"tick-{n % TICKS}", {"data": {"n": str(n)}}, namespace=namespace
                )
                await asyncio.sleep(0.02)  # load generator pace, not a settle wait

        ticker = asyncio.ensure_future(tick())
        try:
            ticking = time.time()
            await wait_until("the leader reconciling the ticks", lambda: began(old, ticking))
            paused_at = time.time()
            os.kill(procs[old].proc.pid, signal.SIGSTOP)
            try:
                await wait_until(
                    "another process took over",
                    lambda: any(who != old for who, _ in leaders()),
                )
                new, leading_at = next((w, t) for w, t in leaders() if w != old)
                await wait_until("the new leader reconciling", lambda: began(new, leading_at))
            finally:
                os.kill(procs[old].proc.pid, signal.SIGCONT)
            continued_at = time.time()
            # The old leader learns it lost at its next renew; a lost lease ends the process.
            await wait_until("the old leader to exit", lambda: procs[old].proc.poll() is not None)
        finally:
            stop.set()
            await ticker
        lease = await api.get(LEASE, "fault-leader", namespace=namespace)

    assert lease["spec"]["holderIdentity"] == new
    acquired_at = min(micro_time(lease["spec"]["acquireTime"]), leading_at)
    log = read_log(log_path)
    late = [(event, name, t - acquired_at) for event, who, name, t in log if who == old]
    late = [entry for entry in late if entry[0] in ("begin", "write") and entry[2] >= 0]
    print(  # the measurement is part of the report
        f"\nleader {old} paused {acquired_at - paused_at:.2f} s before {new} acquired; "
        f"continued {continued_at - acquired_at:.2f} s after; old leader exit code "
        f"{procs[old].proc.returncode}; its reconciles/writes after the takeover: "
        f"{sum(e == 'begin' for e, _, _ in late)}/{sum(e == 'write' for e, _, _ in late)}"
    )
    assert not late, (
        f"the old leader {old} began {len(late)} reconciles/writes after {new} acquired: "
        f"{late[:10]}\n{procs[old].tail()}"
    )
    for who in procs:
        if who != old:
            procs[who].stop()
