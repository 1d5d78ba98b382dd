"""The acceptance test of sharded managers: separate replica processes on a real apiserver.

Three replicas (``shard_replica.py``: a manager with ``ManagerOptions(sharding=...)``, 6
shards, lease 4 s, renew deadline 3 s, retry 1 s) share a ConfigMap controller. Once they hold
2 shards each, OBJECTS ConfigMaps are created (300 here; ``KUBECTRL_SHARD_ACCEPTANCE_OBJECTS=3000``
for the acceptance count, documented in docs/scaling.md). Then:

- each object is reconciled by exactly one replica, the holder of its shard;
- each replica caches about a third of them (counted by the replica) and, with the
  ``ShardedListAndWatch`` gate on, receives about a third of the ConfigMap bytes (counted by a
  transport under its client); with the gate off it receives every object's bytes (the
  client-side fallback, logged once per informer) and caches still only its third;
- a replica SIGSTOPped past its leases: the others take its shards and reconcile its objects;
  once continued it starts no reconcile of them (the shard fence) and rejoins;
- a SIGKILLed replica: its shards are taken over and their objects reconciled within the lease
  duration + 10 s;
- a gracefully stopped replica releases its shards at once (no Lease names it as holder when
  it exited);
- a fourth replica joining takes shards over;
- the per-object log of reconcile intervals (wall-clock stamps of one machine) shows no two
  replicas ever reconciling one object at once, through all of the above.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from kubectrl.cache import shard_index
from kubectrl.client import AsyncClient, load_kubeconfig
from kubectrl.envtest import ControlPlane

pytestmark = pytest.mark.integration

SCRIPT = Path(__file__).with_name("shard_replica.py")
ROOT = Path(__file__).resolve().parents[3]
OBJECTS = int(os.environ.get("KUBECTRL_SHARD_ACCEPTANCE_OBJECTS", "300"))
SHARDS = 6
LEASE_DURATION = 4.0
CM = ("v1", "ConfigMap")
LEASE = ("coordination.k8s.io/v1", "Lease")
DEADLINE = 90.0
FALLBACK = "filtering client-side with the same hash"

Entry = tuple[str, str, str, int, float]  # event, identity, name, shard, time.time()


class Replica:
    """A replica process; its merged output is collected by a thread."""

    def __init__(self, identity: str, env: dict[str, str], tmp: Path) -> None:
        self.identity = identity
        self.stats_path = tmp / f"stats-{identity}.json"
        self.proc = subprocess.Popen(
            [sys.executable, str(SCRIPT)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={
                **os.environ,
                "PYTHONUNBUFFERED": "1",
                **env,
                "IDENTITY": identity,
                "STATS": str(self.stats_path),
            },
        )
        self.lines: list[str] = []
        assert self.proc.stdout is not None
        self._reader = threading.Thread(target=self._read, args=(self.proc.stdout,), daemon=True)
        self._reader.start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            self.lines.append(line.rstrip("\n"))

    def stats(self) -> dict[str, Any]:
        try:
            return dict(json.loads(self.stats_path.read_text()))
        except (OSError, ValueError):
            return {"held": [], "cached": 0, "configmap_bytes": 0}

    def held(self) -> set[int]:
        return set(self.stats()["held"]) if self.alive() else set()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def tail(self, count: int = 30) -> str:
        return "\n".join(self.lines[-count:])


@pytest.fixture
def replicas(tmp_path: Path) -> Iterator[Callable[..., Replica]]:
    started: list[Replica] = []

    def start(identity: str, env: dict[str, str]) -> Replica:
        replica = Replica(identity, env, tmp_path)
        started.append(replica)
        return replica

    yield start
    for replica in started:
        if replica.proc.poll() is None:
            replica.proc.kill()
            replica.proc.wait()


def read_log(path: Path) -> list[Entry]:
    if not path.exists():
        return []
    entries = []
    for line in path.read_text().splitlines():
        event, identity, name, shard, stamp = line.split()
        entries.append((event, identity, name, int(shard), float(stamp)))
    return entries


async def wait_until(what: str, predicate: Callable[[], bool], timeout: float = DEADLINE) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"not reached before the deadline: {what}")
        await asyncio.sleep(0.1)


def intervals(log: list[Entry]) -> dict[str, list[tuple[float, float, str]]]:
    """Each object's reconciles as (begin, end, replica); a reconcile still open ends never."""
    open_: dict[tuple[str, str], float] = {}
    spans: dict[str, list[tuple[float, float, str]]] = {}
    for event, who, name, _, stamp in log:
        if event == "begin":
            open_[who, name] = stamp
        elif event == "end" and (who, name) in open_:
            spans.setdefault(name, []).append((open_.pop((who, name)), stamp, who))
    for (who, name), began in open_.items():
        spans.setdefault(name, []).append((began, float("inf"), who))
    return spans


def overlaps(log: list[Entry]) -> list[tuple[str, str, str]]:
    found = []
    for name, spans in intervals(log).items():
        spans.sort()
        for (_, end_a, who_a), (begin_b, _, who_b) in itertools.pairwise(spans):
            if who_a != who_b and begin_b < end_a:
                found.append((name, who_a, who_b))
    return found


async def create_objects(api: AsyncClient, namespace: str) -> dict[str, dict[str, Any]]:
    sem = asyncio.Semaphore(32)
    made: dict[str, dict[str, Any]] = {}

    async def one(i: int) -> None:
        async with sem:
            obj = await api.create(
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": f"obj-{i}", "namespace": namespace},
                    "data": {"payload": "x" * 200},
                }
            )
            made[obj["metadata"]["name"]] = obj

    await asyncio.gather(*(one(i) for i in range(OBJECTS)))
    return made


async def touch(api: AsyncClient, namespace: str, names: list[str], value: str) -> None:
    sem = asyncio.Semaphore(32)

    async def one(name: str) -> None:
        async with sem:
            await api.patch(CM, name, {"data": {"touched": value}}, namespace=namespace)

    await asyncio.gather(*(one(n) for n in names))


def began_after(log_path: Path, names: set[str], after: float, not_by: str) -> set[str]:
    return {
        name
        for event, who, name, _, t in read_log(log_path)
        if event == "begin" and who != not_by and t > after and name in names
    }


async def run_acceptance(
    cp: ControlPlane, replicas: Callable[..., Replica], tmp_path: Path, *, gate: bool
) -> None:
    namespace = f"sharded-{'on' if gate else 'off'}"
    log_path = tmp_path / "log"
    env = {
        "KUBECONFIG": str(cp.kubeconfig.path),
        "NAMESPACE": namespace,
        "LOG": str(log_path),
        "SHARDS": str(SHARDS),
    }
    config = load_kubeconfig(str(cp.kubeconfig.path)).with_options(rate_limit=None)
    async with AsyncClient(config) as api:
        await api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
        group = {who: replicas(who, env) for who in ("a", "b", "c")}

        def holdings(rs: list[Replica]) -> list[set[int]]:
            return [r.held() for r in rs]

        def balanced(rs: list[Replica]) -> bool:
            sets = holdings(rs)
            counts = sorted(len(s) for s in sets)
            fair = [SHARDS // len(rs) + (1 if k < SHARDS % len(rs) else 0) for k in range(len(rs))]
            return set().union(*sets) == set(range(SHARDS)) and counts == sorted(fair)

        started = time.monotonic()
        await wait_until("3 replicas holding 2 shards each", lambda: balanced(list(group.values())))
        balanced_after = time.monotonic() - started
        objects = await create_objects(api, namespace)
        shard_of = {name: shard_index(obj, SHARDS) for name, obj in objects.items()}
        reference = len(json.dumps((await api.list(CM, namespace=namespace))["items"]))

        def reconciled() -> set[str]:
            return {n for e, _, n, _, _ in read_log(log_path) if e == "end" and n in objects}

        await wait_until("every object reconciled", lambda: reconciled() == set(objects))

        def settled_counts() -> bool:
            return sum(int(r.stats()["cached"]) for r in group.values()) == OBJECTS

        await wait_until("the caches reporting every object", settled_counts, timeout=10)

        # 1. Exactly one replica per object, the holder of its shard.
        log = read_log(log_path)
        owners: dict[str, set[str]] = {}
        for event, who, name, shard, _ in log:
            if event == "begin" and name in objects:
                owners.setdefault(name, set()).add(who)
                assert shard == shard_of[name], (name, shard, shard_of[name])
        assert all(len(o) == 1 for o in owners.values()), {
            n: o for n, o in owners.items() if len(o) > 1
        }
        for who, replica in group.items():
            held = replica.held()
            assert {shard_of[n] for n, o in owners.items() if who in o} <= held

        # 2. Cache and bytes per replica, counted by the replicas.
        stats = {who: r.stats() for who, r in group.items()}
        for who, s in stats.items():
            assert 0.15 * OBJECTS <= s["cached"] <= 0.55 * OBJECTS, (who, s)
            if gate:
                assert s["configmap_bytes"] <= 0.6 * reference, (who, s, reference)
            else:
                assert s["configmap_bytes"] >= 0.9 * reference, (who, s, reference)
        fallback_lines = {
            who: sum(FALLBACK in line for line in r.lines) for who, r in group.items()
        }
        if gate:
            assert not any(fallback_lines.values()), fallback_lines
        else:
            # Logged once per shard informer this replica ran (a shard handed over while the
            # replicas started up ran an informer of its own).
            ran = {
                who: sum("running shard" in line for line in r.lines) for who, r in group.items()
            }
            assert all(1 <= n <= ran[w] for w, n in fallback_lines.items()), (fallback_lines, ran)
        print(  # the measurement is part of the report
            f"\ngate {'on' if gate else 'off'}, {OBJECTS} objects (JSON {reference} B), "
            f"balanced {balanced_after:.1f} s after start; per replica "
            + ", ".join(
                f"{who}: shards {sorted(group[who].held())} cached {s['cached']} "
                f"configmap bytes {s['configmap_bytes']} ({s['configmap_bytes'] / reference:.2f})"
                for who, s in stats.items()
            )
        )

        # 3. SIGSTOP one replica past its leases: the others take over; continued, it starts
        # no reconcile of the objects it lost, and rejoins.
        paused = group["a"]
        paused_shards = paused.held()
        lost = [n for n in objects if shard_of[n] in paused_shards]
        os.kill(paused.proc.pid, signal.SIGSTOP)
        stopped_at = time.time()
        try:
            others = [group["b"], group["c"]]
            await wait_until(
                "the others holding every shard",
                lambda: set().union(*holdings(others)) == set(range(SHARDS)),
            )
            touched_at = time.time()
            await touch(api, namespace, lost, "after-sigstop")
            await wait_until(
                "the paused replica's objects reconciled by the others",
                lambda: began_after(log_path, set(lost), touched_at, "a") == set(lost),
            )
        finally:
            os.kill(paused.proc.pid, signal.SIGCONT)
        late = [
            (name, t - stopped_at)
            for e, who, name, _, t in read_log(log_path)
            if who == "a" and e == "begin" and t > stopped_at
        ]
        await wait_until("3 replicas balanced again", lambda: balanced(list(group.values())))
        takeover = time.time() - stopped_at

        # 4. SIGKILL one replica: its shards are taken over within lease duration + 10 s.
        killed = group["b"]
        killed_shards = killed.held()
        orphans = [n for n in objects if shard_of[n] in killed_shards]
        killed.proc.kill()
        killed.proc.wait()
        killed_at = time.time()
        await touch(api, namespace, orphans, "after-sigkill")
        await wait_until(
            "the killed replica's objects reconciled by the others",
            lambda: began_after(log_path, set(orphans), killed_at, "b") == set(orphans),
            timeout=LEASE_DURATION + 10,
        )
        recovered = time.time() - killed_at

        # 5. A graceful stop releases its shards at once.
        leaving = group["c"]
        leaving.proc.send_signal(signal.SIGTERM)
        assert leaving.proc.wait(timeout=30) == 0, leaving.tail()
        leases = (await api.list(LEASE, namespace=namespace))["items"]
        holders = {
            lease["metadata"]["name"]: lease["spec"].get("holderIdentity") or ""
            for lease in leases
            if "-shard-" in lease["metadata"]["name"]
        }
        assert "c" not in holders.values(), holders
        remaining = [group["a"]]
        await wait_until("the last replica holding every shard", lambda: balanced(remaining))

        # 6. A fourth replica joins and takes shards over.
        joining = replicas("d", env)
        await wait_until("the joining replica balanced", lambda: balanced([*remaining, joining]))
        assert joining.held()
        for replica in [*remaining, joining]:
            replica.proc.send_signal(signal.SIGTERM)
            assert replica.proc.wait(timeout=30) == 0, replica.tail()

    log = read_log(log_path)
    print(
        f"SIGSTOP: takeover and rebalance in {takeover:.1f} s, reconciles begun by the paused "
        f"replica after it was stopped: {len(late)}; SIGKILL: objects reconciled after "
        f"{recovered:.1f} s (limit {LEASE_DURATION + 10:.0f} s); reconciles logged {len(log)}"
    )
    # The paused replica may finish reconciles for shards it kept; never ones it lost.
    assert not [(n, dt) for n, dt in late if n in set(lost)], late
    assert not overlaps(log), overlaps(log)[:10]


async def test_three_replicas_share_six_shards_with_the_gate_on(
    sharded_control_plane: ControlPlane, replicas: Callable[..., Replica], tmp_path: Path
) -> None:
    await run_acceptance(sharded_control_plane, replicas, tmp_path, gate=True)


async def test_the_same_on_the_client_side_fallback_with_the_gate_off(
    control_plane: ControlPlane, replicas: Callable[..., Replica], tmp_path: Path
) -> None:
    await run_acceptance(control_plane, replicas, tmp_path, gate=False)
