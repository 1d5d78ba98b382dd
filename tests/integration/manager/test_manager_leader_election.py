"""Two manager processes with leader election; SIGTERM during a slow reconcile."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from kubectrl.client import AsyncClient

from .conftest import eventually, read_log

pytestmark = pytest.mark.integration

CM = ("v1", "ConfigMap")


def intervals(
    log: list[tuple[str, str, str, float]], identity: str, end: float
) -> list[tuple[float, float]]:
    """(begin, end) of each reconcile by ``identity``; one still open ends at ``end``."""
    open_: dict[str, float] = {}
    spans = []
    for event, who, name, stamp in log:
        if who != identity:
            continue
        if event == "begin":
            open_[name] = stamp
        elif event == "end" and name in open_:
            spans.append((open_.pop(name), stamp))
    spans.extend((start, end) for start in open_.values())
    return spans


async def test_one_leader_runs_controllers_and_failover_never_overlaps(
    spawn: Callable[..., subprocess.Popen[bytes]],
    api: AsyncClient,
    namespace: str,
    tmp_path: Path,
) -> None:
    log_path = tmp_path / "log"
    procs = {"a": spawn("a"), "b": spawn("b")}
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
    first = leaders()[0]
    other = "b" if first == "a" else "a"
    await eventually(
        lambda: any(e == "end" and w == first for e, w, _, _ in read_log(log_path)),
        what="the leader reconciled",
    )
    assert procs[other].poll() is None
    assert leaders() == [first], "both processes started their controllers"

    # Keep reconciles coming through the failover.
    stop = asyncio.Event()

    async def tick() -> None:
        n = 0
        while not stop.is_set():
            n += 1
            await api.patch(CM, "ticker", {"data": {"n": str(n)}}, namespace=namespace)
            await asyncio.sleep(0.1)  # load generator pace, not a settle wait

    ticker = asyncio.ensure_future(tick())
    try:
        killed_at = time.time()
        procs[first].send_signal(signal.SIGKILL)
        procs[first].wait()
        await eventually(lambda: other in leaders(), what="the other process took over")
        taken_at = next(t for e, w, _, t in read_log(log_path) if e == "leading" and w == other)
        await eventually(
            lambda: any(e == "end" and w == other for e, w, _, _ in read_log(log_path)),
            what="the new leader reconciled",
        )
    finally:
        stop.set()
        await ticker
    print(f"\nleader failover after SIGKILL: {taken_at - killed_at:.2f} s (lease 4 s)")

    log = read_log(log_path)
    assert leaders() == [first, other]
    first_spans = intervals(log, first, killed_at)
    other_spans = intervals(log, other, time.time())
    assert first_spans
    assert other_spans
    for b1, e1 in first_spans:
        for b2, e2 in other_spans:
            assert e1 <= b2 or e2 <= b1, "both processes reconciled at the same time"
    # Nothing by the new leader before it led.
    assert min(b for b, _ in other_spans) >= taken_at


async def test_sigterm_during_slow_reconcile_finishes_it_releases_lease_exits_0(
    spawn: Callable[..., subprocess.Popen[bytes]],
    api: AsyncClient,
    namespace: str,
    tmp_path: Path,
) -> None:
    log_path = tmp_path / "log"
    proc = spawn("solo", SLOW="3", RELEASE="1")
    await eventually(lambda: any(e == "leading" for e, *_ in read_log(log_path)), what="leading")
    await api.create(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "slow", "namespace": namespace},
            "data": {"slow": "1"},
        }
    )
    await eventually(
        lambda: any(e == "begin" and n == "slow" for e, _, n, _ in read_log(log_path)),
        what="slow reconcile began",
    )
    proc.send_signal(signal.SIGTERM)
    await eventually(lambda: proc.poll() is not None, what="process exited")
    output = (tmp_path / "solo.out").read_text()
    assert proc.returncode == 0, output
    events = [(e, n) for e, _, n, _ in read_log(log_path)]
    assert ("end", "slow") in events, "the in-flight reconcile did not finish"
    assert events[-1] == ("exit", "-")
    lease = await api.get(("coordination.k8s.io/v1", "Lease"), "manager-test", namespace=namespace)
    assert not lease["spec"].get("holderIdentity"), lease["spec"]
