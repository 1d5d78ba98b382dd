"""kubectrl side by side with client-go, the Go sample-controller, `kubernetes`, lightkube and kopf.

One local control plane (kubectrl.envtest), every program in its own process, rounds interleaved
(each round runs every peer once, in a rotated order), medians and min-max printed with ratios to
kubectrl, and everything written as JSON. Run it with ``nox -s bench`` (which installs the Python
peers) or directly::

    python benchmarks/compare.py --rounds 5 --json build/bench/compare.json

Workloads:

- ``sync``: initial sync of ``--configmaps`` ConfigMaps (about 1 KiB each) into an informer:
  wall time, and RSS after the sync above the process's own baseline (taken after imports and
  config loading, before the informer starts). ``kubectrl-plain`` does lightkube's workload
  with kubectrl (one LIST into a dict keyed by ``namespace/name``, no informer). Each run
  starts once the machine is quiet
  (under a quarter of a core busy over half a second, waited for at most a minute): the control
  plane's own work after the seeding writes or a peer's large list is nobody's sync cost.
- ``events``: CPU per watch event: ``--events`` updates written while the informer runs, each
  going informer -> handler -> rate-limited queue -> worker (kubectrl vs client-go).
- ``replay``: CPU per replayed watch event: ``--replay-events`` updates written once per round, then
  each peer, a fresh process, watches from the resourceVersion before them, which the apiserver
  answers from its watch cache, and decodes them (kubectrl's dicts, client-go's typed
  ConfigMaps), each event's key read (kubectrl vs client-go).
- ``foo``: the Foo controller converging ``--foos`` Foos (Deployment created, status written)
  at equal client limits (QPS/burst ``--qps``, 2 workers): wall, time until every Foo has a
  ``Synced`` Event, CPU and peak RSS of the controller process (kubectrl's
  examples/sample_controller vs the Go sample-controller).
- ``recorder``: the event recorder's CPU per event, its writes to the API server included:
  ``--recorder-objects`` objects each get an event (a create) and then the same event again (a
  count patch), as a controller's recorder does for an object it reconciles twice (kubectrl,
  and the ``--baseline-src`` checkout beside it).
- ``import``: ``import kubectrl`` + ``load_config()`` vs ``import kopf`` (wall, RSS).
- ``sweep``: the ``sync`` workload at each count of ``--sweep`` (10k, 25k, 50k and 100k
  ConfigMaps by default; ``--sweep 10000,25000`` for a short run), ``--sweep-rounds`` rounds
  each: wall, CPU and memory per object, as a table and as SVG line charts
  (``sweep-time.svg``, ``sweep-memory.svg`` beside the JSON, or in ``--charts``).

Figures to read, never pass/fail. A peer that cannot be imported or built is reported as skipped
with the reason.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import _gobuild
import _report
from _bytecode import compile_sources
from _report import table

from kubectrl.client import AsyncClient, load_kubeconfig
from kubectrl.envtest import ControlPlane

HERE = Path(__file__).resolve().parent
PEERS = HERE / "peers"
ROOT = HERE.parent
FOO_CRD = ROOT / "examples" / "sample_controller" / "artifacts" / "crd.yaml"
PY = sys.executable
CLK_TCK = os.sysconf("SC_CLK_TCK")

SYNC_NS = "bench-sync"
SWEEP_NS = "bench-sweep"
EVENTS_NS = "bench-events"
RECORDER_NS = "bench-recorder"
FOO_NS = "bench-foo"
FOO = ("samplecontroller.k8s.io/v1alpha1", "Foo")
DEPLOYMENT = ("apps/v1", "Deployment")
EVENT = ("v1", "Event")
CONFIGMAP = ("v1", "ConfigMap")
#: Before each sync run the machine must be this quiet (cores busy over half a second) ...
QUIET_CORES = 0.25
#: ... or have been waited for this long (the run then goes on, and says so).
QUIET_DEADLINE_S = 60.0
#: Cores the machine keeps busy on purpose (``--loaded``: 1), added to ``QUIET_CORES``.
EXTRA_BUSY_CORES = 0.0
#: ``--smoke``: tiny sizes, one round, to prove the harness runs (its figures mean nothing).
SMOKE = {
    "rounds": 1,
    "configmaps": 30,
    "events": 20,
    "event_objects": 10,
    "replay_events": 20,
    "foos": 3,
    "recorder_objects": 3,
    "sweep": "20,40",
    "sweep_rounds": 1,
}


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)  # noqa: T201


# ----------------------------------------------------------------------------- processes


def proc_cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime, stime


def proc_status_kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return -1


def python_can_import(module: str) -> str | None:
    """None when ``module`` imports in this interpreter, else the reason it does not."""
    proc = subprocess.run(
        [PY, "-c", f"import {module}"], capture_output=True, text=True, check=False
    )
    if proc.returncode == 0:
        return None
    lines = proc.stderr.strip().splitlines()
    return lines[-1] if lines else f"exit {proc.returncode}"


class Peer:
    """One program that can run the sync (and maybe events) workload."""

    def __init__(
        self,
        name: str,
        argv: list[str],
        *,
        events: bool = False,
        env: dict[str, str] | None = None,
    ) -> None:
        self.name = name
        self.argv = argv
        self.events = events
        self.env = env
        self.skipped: str | None = None

    def start(
        self, kubeconfig: str, namespace: str, expect: int, events: int, *, replay_from: str = ""
    ) -> subprocess.Popen[str]:
        argv = [
            *self.argv,
            "--kubeconfig",
            kubeconfig,
            "--namespace",
            namespace,
            "--expect",
            str(expect),
            "--events",
            str(events),
        ]
        if replay_from:
            argv += ["--replay-from", replay_from]
        return subprocess.Popen(
            argv,
            cwd=PEERS,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )


def read_phase(proc: subprocess.Popen[str], phase: str, what: str) -> dict[str, Any]:
    assert proc.stdout is not None
    for line in proc.stdout:
        line = line.strip()
        if not line.startswith("{"):
            continue
        data: dict[str, Any] = json.loads(line)
        if data.get("phase") == phase:
            return data
    proc.wait(30)
    err = proc.stderr.read() if proc.stderr else ""
    raise RuntimeError(f"{what}: exited {proc.returncode} before phase {phase!r}:\n{err[-3000:]}")


def finish(proc: subprocess.Popen[str], what: str) -> None:
    try:
        proc.wait(60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    if proc.returncode not in (0, -9, -15):
        err = proc.stderr.read() if proc.stderr else ""
        log(f"bench: {what} exited {proc.returncode}: {err[-2000:]}")
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()


# ----------------------------------------------------------------------------- cluster work


def configmap(name: str, size: int) -> dict[str, Any]:
    filler = (name * (size // len(name) + 1))[: max(0, size - 200)]
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "labels": {"app": "bench", "shard": name[-1]}},
        "data": {"payload": filler, "mode": "benchmark"},
    }


async def bounded(calls: list[Callable[[], Any]], concurrency: int) -> None:
    semaphore = asyncio.Semaphore(concurrency)

    async def one(call: Callable[[], Any]) -> None:
        async with semaphore:
            await call()

    await asyncio.gather(*(one(call) for call in calls))


async def seed(kubeconfig: str, namespace: str, count: int, size: int = 1024) -> None:
    config = load_kubeconfig(kubeconfig).with_options(rate_limit=None)
    async with AsyncClient(config) as client:
        try:
            await client.create(
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
            )
        except Exception as err:  # AlreadyExists on a rerun
            log(f"bench: namespace {namespace}: {err}")
        existing = len((await client.list(CONFIGMAP, namespace=namespace, limit=500))["items"])
        calls = [
            (lambda i=i: client.create(configmap(f"cm-{i:06d}", size), namespace=namespace))
            for i in range(existing, count)
        ]
        await bounded(calls, 48)


async def write_updates(
    kubeconfig: str, namespace: str, objects: int, updates: int, tag: str
) -> None:
    config = load_kubeconfig(kubeconfig).with_options(rate_limit=None)
    async with AsyncClient(config) as client:
        calls = [
            (
                lambda i=i: client.patch(
                    CONFIGMAP,
                    f"cm-{i % objects:06d}",
                    {"data": {"mode": f"{tag}-{i}"}},
                    namespace=namespace,
                )
            )
            for i in range(updates)
        ]
        await bounded(calls, 32)


async def clean_foos(kubeconfig: str) -> None:
    config = load_kubeconfig(kubeconfig).with_options(rate_limit=None)
    async with AsyncClient(config) as client:
        for kind in (FOO, DEPLOYMENT):
            await client.delete_collection(kind, namespace=FOO_NS)
        for kind in (FOO, DEPLOYMENT):
            deadline = time.monotonic() + 120
            while (await client.list(kind, namespace=FOO_NS, limit=1))["items"]:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{kind[1]}s in {FOO_NS} were not deleted within 120 s")
                await asyncio.sleep(0.1)


def foo(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "samplecontroller.k8s.io/v1alpha1",
        "kind": "Foo",
        "metadata": {"name": name, "namespace": FOO_NS},
        "spec": {"deploymentName": name, "replicas": 1},
    }


async def converge(kubeconfig: str, names: list[str], timeout: float) -> tuple[float, float | None]:
    """Create the Foos ``names``; return the seconds until every one has a status, and until
    every one has a ``Synced`` Event (``None`` if they did not all come within ``timeout``)."""
    config = load_kubeconfig(kubeconfig).with_options(rate_limit=None)
    async with AsyncClient(config) as client:
        listed = await client.list(FOO, namespace=FOO_NS)
        events_listed = await client.list(EVENT, namespace=FOO_NS, limit=1)
        pending = set(names)
        unsynced = set(names)
        async with (
            client.watch(
                FOO, namespace=FOO_NS, resource_version=listed["metadata"]["resourceVersion"]
            ) as foos,
            client.watch(
                EVENT,
                namespace=FOO_NS,
                resource_version=events_listed["metadata"]["resourceVersion"],
            ) as events,
        ):
            started = time.perf_counter()
            deadline = started + timeout
            creates = asyncio.ensure_future(
                bounded([(lambda n=n: client.create(foo(n))) for n in names], 32)
            )

            async def synced_events() -> float | None:
                async for event in events:
                    obj = event.object
                    if obj.get("reason") == "Synced":
                        unsynced.discard(obj.get("involvedObject", {}).get("name"))
                    if not unsynced:
                        return time.perf_counter() - started
                return None

            synced = asyncio.ensure_future(synced_events())
            async for event in foos:
                status = event.object.get("status") or {}
                if "availableReplicas" in status:
                    pending.discard(event.object["metadata"]["name"])
                if not pending:
                    break
                if time.perf_counter() > deadline:
                    raise RuntimeError(f"{len(pending)} Foos did not converge in {timeout:g} s")
            elapsed = time.perf_counter() - started
            await creates
            try:
                events_s = await asyncio.wait_for(synced, max(1.0, deadline - time.perf_counter()))
            except asyncio.TimeoutError:
                log(f"bench: {len(unsynced)} Foos had no Synced event within {timeout:g} s")
                events_s = None
            return elapsed, events_s


# ----------------------------------------------------------------------------- workloads


def cpu_ticks() -> tuple[int, int]:
    """The machine's CPU time so far from ``/proc/stat``: (all ticks, idle and iowait ticks)."""
    with open("/proc/stat") as stat:
        fields = [int(value) for value in stat.readline().split()[1:]]
    return sum(fields), fields[3] + fields[4]


def busy_cores(before: tuple[int, int], after: tuple[int, int], cores: int) -> float:
    """How many cores were busy on average between two :func:`cpu_ticks` readings."""
    total = after[0] - before[0]
    if total <= 0:
        return 0.0
    return (total - (after[1] - before[1])) / total * cores


def wait_quiet(limit: float = QUIET_CORES, deadline: float | None = None) -> float:
    """Wait until the machine is quiet: under ``limit`` cores busy over half a second.

    The control plane goes on working after a burst of writes (the API server's garbage
    collector, etcd's snapshot), and after a peer's list of 100k objects; a peer started
    meanwhile pays for it in wall time and in page faults that cost more. Every peer's run waits
    the same way. Returns the busy cores last measured (logged when still above ``limit`` at
    ``deadline`` seconds: the run goes on, on a busy machine).
    """
    cores = os.cpu_count() or 1
    deadline = QUIET_DEADLINE_S if deadline is None else deadline
    end = time.monotonic() + deadline
    while True:
        before = cpu_ticks()
        time.sleep(0.5)  # a measuring window, not a wait for something to settle
        busy = busy_cores(before, cpu_ticks(), cores)
        if busy < limit:
            return busy
        if time.monotonic() >= end:
            log(f"bench: the machine is still busy ({busy:.2f} cores) after {deadline:g} s")
            return busy


def stamped(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with the 1-minute load average at the end of its run (every figure carries the
    load it was measured at)."""
    data["loadavg"] = os.getloadavg()[0]
    return data


#: What the ``--loaded`` mode's second process runs.
BUSY_LOOP = "while True: pass"


class BusyCore:
    """``--loaded``: a second process spinning on one core (core 0 when affinity can be set),
    standing in for a busy node; started before the control plane and stopped at the end."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen[bytes] | None = None
        self.pinned: int | None = None

    def __enter__(self) -> BusyCore:
        self.proc = subprocess.Popen([PY, "-c", BUSY_LOOP])
        try:
            os.sched_setaffinity(self.proc.pid, {0})
            self.pinned = 0
        except (AttributeError, OSError) as err:  # no affinity on this platform: unpinned
            log(f"bench: the busy process runs unpinned: {err}")
        log(f"bench: loaded mode: busy process {self.proc.pid} on core {self.pinned}")
        return self

    def record(self) -> dict[str, Any]:
        """What the report says about the busy process (its CPU so far: proof it ran)."""
        if self.proc is None:
            return {"loaded": False}
        return {
            "loaded": True,
            "busy_pid": self.proc.pid,
            "busy_core": self.pinned,
            "busy_cpu_s": proc_cpu_s(self.proc.pid) if self.proc.poll() is None else None,
        }

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(30)


def rotate(items: list[Any], round_: int) -> list[Any]:
    shift = round_ % len(items) if items else 0
    return items[shift:] + items[:shift]


def run_sync(
    peers: list[Peer],
    kubeconfig: str,
    rounds: int,
    count: int,
    namespace: str = SYNC_NS,
) -> dict[str, list[dict[str, Any]]]:
    results: dict[str, list[dict[str, Any]]] = {p.name: [] for p in peers if not p.skipped}
    for round_ in range(rounds):
        for peer in rotate([p for p in peers if not p.skipped], round_):
            busy = wait_quiet(QUIET_CORES + EXTRA_BUSY_CORES)
            proc = peer.start(kubeconfig, namespace, count, 0)
            try:
                data = read_phase(proc, "synced", f"sync {peer.name}")
            except RuntimeError as err:
                peer.skipped = f"failed: {err}"
                log(f"bench: sync {peer.name} failed, skipping it: {err}")
                results.pop(peer.name, None)
                continue
            finally:
                finish(proc, f"sync {peer.name}")
            if data["objects"] != count:
                raise RuntimeError(f"{peer.name} synced {data['objects']} of {count}")
            data["busy_cores_before"] = busy
            data["above_baseline_kib"] = data["rss_kib"] - data["baseline_rss_kib"]
            data["wall_us_per_object"] = data["wall_s"] / count * 1e6
            data["cpu_us_per_object"] = data["cpu_s"] / count * 1e6
            if "sys_s" in data:  # the kernel's part varies between identical runs (page faults)
                data["user_us_per_object"] = (data["cpu_s"] - data["sys_s"]) / count * 1e6
                data["sys_us_per_object"] = data["sys_s"] / count * 1e6
            data["kb_per_object"] = data["above_baseline_kib"] * 1.024 / count
            results[peer.name].append(stamped(data))
            log(
                f"bench: round {round_ + 1} sync {count} {peer.name}: {data['wall_s']:.3f} s, "
                f"{data['rss_kib'] / 1024:.0f} MB "
                f"({data['above_baseline_kib'] / 1024:.0f} above baseline)"
            )
    return results


def run_sweep(
    peers: list[Peer], kubeconfig: str, args: argparse.Namespace
) -> dict[int, dict[str, list[dict[str, Any]]]]:
    """The sync workload at each count of ``--sweep``, seeding one namespace up to each count."""
    chosen = set(args.sweep_peers.split(","))
    if args.list_forms:
        chosen |= {"kubectrl-stream", "kubectrl-list"}
    swept = [p for p in peers if p.name in chosen]
    results: dict[int, dict[str, list[dict[str, Any]]]] = {}
    for count in sorted(int(c) for c in args.sweep.split(",") if c):
        log(f"bench: sweep: seeding {count} ConfigMaps")
        asyncio.run(seed(kubeconfig, SWEEP_NS, count))
        results[count] = run_sync(swept, kubeconfig, args.sweep_rounds, count, SWEEP_NS)
    return results


SWEEP_METRICS = [
    ("wall_us_per_object", "start -> synced, per object", "us", 1.0, 1),
    ("cpu_us_per_object", "CPU per object", "us", 1.0, 1),
    ("user_us_per_object", "user CPU per object", "us", 1.0, 1),
    ("sys_us_per_object", "system CPU per object", "us", 1.0, 1),
    ("kb_per_object", "RSS above baseline per object", "KB", 1.0, 2),
]


def sweep_report(runs: dict[int, dict[str, list[dict[str, Any]]]], charts: Path) -> dict[str, Any]:
    """Print the sweep's tables, write its charts; return medians per count and peer."""
    out: dict[str, Any] = {}
    for count, by_peer in runs.items():
        out[str(count)] = table(
            f"Sweep: initial sync of {count} ConfigMaps, per object",
            SWEEP_METRICS,
            by_peer,
            "kubectrl",
        )
    if "kubectrl" in out.get(str(min(runs, default=0)), {}):
        base = out[str(min(runs))]["kubectrl"]
        print("\n## Sweep: kubectrl's cost per object at each count / at the smallest")  # noqa: T201
        for count in runs:
            own = out[str(count)].get("kubectrl", {})
            growth = {
                key: own[key]["median"] / base[key]["median"]
                for key, *_ in SWEEP_METRICS
                if key in own and base[key]["median"]
            }
            out.setdefault("kubectrl_growth", {})[str(count)] = growth
            cells = ", ".join(f"{key} {value:.2f}x" for key, value in growth.items())
            print(f"- {count}: {cells}")  # noqa: T201
    for path in _report.sweep_charts(out, charts):
        print(f"chart: {path}")  # noqa: T201
    return out


def run_events(
    peers: list[Peer], kubeconfig: str, args: argparse.Namespace
) -> dict[str, list[dict[str, Any]]]:
    chosen = [p for p in peers if p.events and not p.skipped]
    results: dict[str, list[dict[str, Any]]] = {p.name: [] for p in chosen}
    for round_ in range(args.rounds):
        for peer in rotate(chosen, round_):
            proc = peer.start(kubeconfig, EVENTS_NS, args.event_objects, args.events)
            try:
                read_phase(proc, "synced", f"events {peer.name}")
                asyncio.run(
                    write_updates(
                        kubeconfig,
                        EVENTS_NS,
                        args.event_objects,
                        args.events,
                        f"{peer.name}{round_}",
                    )
                )
                data = read_phase(proc, "events", f"events {peer.name}")
            finally:
                finish(proc, f"events {peer.name}")
            data["cpu_per_event_us"] = data["cpu_s"] / args.events * 1e6
            results[peer.name].append(stamped(data))
            log(
                f"bench: round {round_ + 1} events {peer.name}: "
                f"{data['cpu_per_event_us']:.1f} us/event"
            )
    return results


async def current_rv(kubeconfig: str, namespace: str) -> str:
    config = load_kubeconfig(kubeconfig).with_options(rate_limit=None)
    async with AsyncClient(config) as client:
        listed = await client.list(CONFIGMAP, namespace=namespace, limit=1)
    rv: str = listed["metadata"]["resourceVersion"]
    return rv


def run_replay(
    peers: list[Peer], kubeconfig: str, args: argparse.Namespace
) -> dict[str, list[dict[str, Any]]]:
    chosen = [p for p in peers if p.events and not p.skipped]
    results: dict[str, list[dict[str, Any]]] = {p.name: [] for p in chosen}
    for round_ in range(args.rounds):
        # One history per round, replayed by every peer (well inside the watch cache's window).
        from_rv = asyncio.run(current_rv(kubeconfig, EVENTS_NS))
        asyncio.run(
            write_updates(
                kubeconfig, EVENTS_NS, args.event_objects, args.replay_events, f"replay{round_}"
            )
        )
        for peer in rotate(chosen, round_):
            proc = peer.start(
                kubeconfig, EVENTS_NS, args.event_objects, args.replay_events, replay_from=from_rv
            )
            try:
                data = read_phase(proc, "replayed", f"replay {peer.name}")
            finally:
                finish(proc, f"replay {peer.name}")
            data["cpu_per_event_us"] = data["cpu_s"] / args.replay_events * 1e6
            results[peer.name].append(stamped(data))
            log(
                f"bench: round {round_ + 1} replay {peer.name}: "
                f"{data['cpu_per_event_us']:.1f} us/event"
            )
    return results


def run_foo(
    controllers: dict[str, tuple[list[str], dict[str, str] | None]],
    kubeconfig: str,
    args: argparse.Namespace,
) -> dict[str, list[dict[str, Any]]]:
    results: dict[str, list[dict[str, Any]]] = {name: [] for name in controllers}
    logs = Path(tempfile.mkdtemp(prefix="kubectrl-bench-foo-"))
    for round_ in range(args.rounds):
        for name in rotate(list(controllers), round_):
            asyncio.run(clean_foos(kubeconfig))
            log_path = logs / f"{name}-{round_}.log"
            with open(log_path, "w") as out:
                argv, env = controllers[name]
                proc = subprocess.Popen(
                    argv, cwd=PEERS, env=env, stdout=out, stderr=subprocess.STDOUT
                )
            try:
                # Warm-up: one Foo converged means the controller is synced and running.
                asyncio.run(converge(kubeconfig, [f"warmup-{round_}"], 120))
                cpu0 = proc_cpu_s(proc.pid)
                names = [f"foo-{round_}-{i:04d}" for i in range(args.foos)]
                wall, events_s = asyncio.run(converge(kubeconfig, names, 600))
                cpu = proc_cpu_s(proc.pid) - cpu0
                peak = proc_status_kib(proc.pid, "VmHWM")
            finally:
                proc.terminate()
                try:
                    proc.wait(30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            data: dict[str, Any] = {"wall_s": wall, "cpu_s": cpu, "peak_rss_kib": peak}
            if events_s is not None:
                data["synced_events_s"] = events_s
            results[name].append(stamped(data))
            log(
                f"bench: round {round_ + 1} foo {name}: {wall:.2f} s, CPU {cpu:.2f} s, "
                f"peak {peak / 1024:.0f} MB, Synced events {events_s or float('nan'):.2f} s"
            )
    asyncio.run(clean_foos(kubeconfig))
    return results


def run_recorder(
    peers: list[Peer], kubeconfig: str, args: argparse.Namespace
) -> dict[str, list[dict[str, Any]]]:
    # kubectrl and the --baseline-src checkout: the list-form and plain peers are the same
    # library as kubectrl, so their recorders would measure the same code again
    chosen = [p for p in peers if p.name in ("kubectrl", "kubectrl-baseline") and not p.skipped]
    results: dict[str, list[dict[str, Any]]] = {p.name: [] for p in chosen}
    for round_ in range(args.rounds):
        for peer in rotate(chosen, round_):
            argv = [PY, str(PEERS / "recorder_kubectrl.py"), "--kubeconfig", kubeconfig]
            argv += ["--namespace", RECORDER_NS, "--objects", str(args.recorder_objects)]
            proc = subprocess.Popen(
                argv,
                cwd=PEERS,
                env=peer.env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            try:
                data = read_phase(proc, "recorded", f"recorder {peer.name}")
            finally:
                finish(proc, f"recorder {peer.name}")
            data["cpu_per_event_us"] = data["cpu_s"] / data["events"] * 1e6
            results[peer.name].append(stamped(data))
            log(
                f"bench: round {round_ + 1} recorder {peer.name}: "
                f"{data['cpu_per_event_us']:.0f} us/event"
            )
            asyncio.run(clean_events(kubeconfig, RECORDER_NS))
    return results


async def clean_events(kubeconfig: str, namespace: str) -> None:
    config = load_kubeconfig(kubeconfig).with_options(rate_limit=None)
    async with AsyncClient(config) as client:
        await client.delete_collection(EVENT, namespace=namespace)


def run_import(
    kubeconfig: str, args: argparse.Namespace, kopf_skipped: str | None
) -> dict[str, list[dict[str, Any]]]:
    whats = ["none", "kubectrl"] + ([] if kopf_skipped else ["kopf"])
    results: dict[str, list[dict[str, Any]]] = {w: [] for w in whats}
    env = dict(os.environ, KUBECONFIG=kubeconfig)
    for round_ in range(args.rounds):
        for what in rotate(whats, round_):
            proc = subprocess.run(
                [PY, str(PEERS / "import_cost.py"), what],
                cwd=PEERS,
                capture_output=True,
                text=True,
                check=True,
                env=env,
            )
            data = json.loads(proc.stdout.strip().splitlines()[-1])
            results[what].append(stamped(data))
    return results


# ----------------------------------------------------------------------------- report


HIDER = """import sys

HIDDEN = {names!r}


class _Hide:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name.partition(".")[0] in HIDDEN:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None


sys.meta_path.insert(0, _Hide)
"""


def baseline_environment(checkout: Path, hide: str) -> dict[str, str]:
    """The environment of the baseline peer: its ``src`` first on the path, its example, and
    stub modules that fail to import for each module in ``hide``."""
    checkout = checkout.resolve()
    if not (checkout / "src" / "kubectrl").is_dir():
        raise SystemExit(f"--baseline-src {checkout}: no src/kubectrl in it")
    paths = [str(checkout / "src")]
    names = [name for name in hide.split(",") if name]
    if names:
        # A sitecustomize that makes the modules look uninstalled (ModuleNotFoundError, as a
        # missing module gives; cheaper than the real sys.path search, so it flatters the
        # baseline a little).
        stubs = Path(tempfile.mkdtemp(prefix="kubectrl-bench-hide-"))
        (stubs / "sitecustomize.py").write_text(HIDER.format(names=names))
        paths.insert(0, str(stubs))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(paths))
    env["KUBECTRL_BENCH_EXAMPLE"] = str(checkout / "examples" / "sample_controller")
    return env


def machine() -> dict[str, Any]:
    model = ""
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    return {
        "cpu_model": model,
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "loadavg_at_start": os.getloadavg(),
    }


def main() -> int:
    global QUIET_DEADLINE_S, EXTRA_BUSY_CORES  # one run per process: its settings
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--configmaps", type=int, default=10_000)
    parser.add_argument("--events", type=int, default=5_000)
    parser.add_argument("--event-objects", type=int, default=500)
    parser.add_argument("--replay-events", type=int, default=20_000)
    parser.add_argument("--foos", type=int, default=500)
    parser.add_argument("--recorder-objects", type=int, default=300)
    parser.add_argument("--qps", type=float, default=1000)
    parser.add_argument(
        "--workloads",
        default="sync,events,replay,foo,recorder,import,memory,sweep",
        help="comma-separated subset to run (memory: the Foo controller's imports layer by "
        "layer, benchmarks/bench_memory.py)",
    )
    parser.add_argument(
        "--sweep",
        default="10000,25000,50000,100000",
        help="ConfigMap counts of the scaling sweep (e.g. 10000,25000 to skip the long ones)",
    )
    parser.add_argument("--sweep-rounds", type=int, default=5)
    parser.add_argument(
        "--sweep-peers",
        default="kubectrl,client-go,kubernetes,lightkube,kubectrl-plain",
        help="peers in the sweep (kopf, about 1.2 ms per object, would outlast all others)",
    )
    parser.add_argument(
        "--charts", help="where the sweep's SVG charts go (default: beside the JSON file)"
    )
    parser.add_argument("--json", default="build/bench/compare.json", help="where to write results")
    parser.add_argument(
        "--baseline-src",
        help="a checkout (e.g. `git archive <ref> src examples | tar -x -C DIR`) to run as an "
        "extra peer 'kubectrl-baseline' (its src/ and examples/), for before/after in one run",
    )
    parser.add_argument(
        "--baseline-hide",
        default="",
        help="comma-separated modules the baseline must not find (e.g. sniffio,orjson), to "
        "reproduce the environment it ran in",
    )
    parser.add_argument(
        "--quiet-wait",
        type=float,
        default=QUIET_DEADLINE_S,
        help="seconds a sync run waits for a quiet machine before it starts anyway (default "
        "%(default)s; on a machine others keep busy, a few seconds)",
    )
    parser.add_argument(
        "--list-forms",
        action="store_true",
        help="add peers kubectrl-stream and kubectrl-list to sync and sweep (add them to "
        "--sweep-peers): the initial list as a streaming list and as a paged LIST",
    )
    parser.add_argument(
        "--soak-minutes",
        type=float,
        default=0,
        help="also run benchmarks/soak.py for this many minutes (the Foo controller's RSS "
        "under churn, each minute; 0: no soak)",
    )
    parser.add_argument(
        "--loaded",
        action="store_true",
        help="keep one core busy with a second process for the whole run (a busy node)",
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="tiny sizes and one round: proves the harness runs; the figures mean nothing",
    )
    parser.add_argument(
        "--render",
        metavar="JSON[,JSON]",
        help="no run: rewrite --docs's generated results section (tables and SVG charts) from "
        "these result files (e.g. a quiet run's, then a loaded run's)",
    )
    parser.add_argument("--docs", default=str(ROOT / "docs" / "performance.md"))
    parser.add_argument(
        "--assets",
        default=str(ROOT / "docs" / "assets" / "bench"),
        help="where --render's charts go",
    )
    args = parser.parse_args()
    if args.render:
        return render(args.render.split(","), Path(args.docs), Path(args.assets))
    compile_sources()
    QUIET_DEADLINE_S = args.quiet_wait
    if args.smoke:
        for key, value in SMOKE.items():
            setattr(args, key, value)
        QUIET_DEADLINE_S = 1.0
    workloads = set(args.workloads.split(","))
    with BusyCore() if args.loaded else contextlib.nullcontext() as busy:
        if busy is not None:
            EXTRA_BUSY_CORES = 1.0
        report = run(args, workloads)
        report["load"] = busy.record() if busy is not None else {"loaded": False}
    charts = Path(args.charts) if args.charts else Path(args.json).parent
    for path in (p for paths in _report.write_charts(report, charts).values() for p in paths):
        log(f"chart: {path}")
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2, sort_keys=True))
    print(f"\nJSON: {out}")  # noqa: T201
    return 0


def run_script(script: str, argv: list[str]) -> Any:
    """Run another benchmark script of this directory with ``--json`` and return its JSON."""
    with tempfile.TemporaryDirectory(prefix="kubectrl-bench-") as directory:
        out = Path(directory) / "out.json"
        command = [PY, str(HERE / script), *argv, "--json", str(out)]
        if script == "soak.py":
            command += ["--chart", str(Path(directory) / "soak.svg")]
        log(f"bench: {script} {' '.join(argv)}")
        subprocess.run(command, cwd=HERE, check=True, stdout=subprocess.DEVNULL)
        return json.loads(out.read_text())


def render(paths: list[str], docs: Path, assets: Path) -> int:
    """Rewrite the generated section of ``docs`` from result files (labelled quiet or loaded by
    what each recorded), its charts written to ``assets``."""
    reports: dict[str, dict[str, Any]] = {}
    for path in paths:
        report = json.loads(Path(path).read_text())
        label = "loaded" if report.get("load", {}).get("loaded") else "quiet"
        if label in reports:
            label = f"{label} ({Path(path).name})"
        reports[label] = report
    section = _report.markdown(reports, assets, docs.parent)
    docs.write_text(_report.replace_section(docs.read_text(), section))
    log(f"bench: {docs} rewritten from {', '.join(paths)}; charts in {assets}")
    return 0


def run(args: argparse.Namespace, workloads: set[str]) -> dict[str, Any]:
    """Every workload asked for, on one control plane; the report (not yet written)."""
    report: dict[str, Any] = {"machine": machine(), "args": vars(args), "skipped": {}}
    try:
        go = _gobuild.build(log)
        go_error = None
    except RuntimeError as err:
        go, go_error = {}, str(err)
        log(f"bench: Go peers skipped: {err}")

    peers = [
        Peer("kubectrl", [PY, str(PEERS / "sync_kubectrl.py")], events=True),
        Peer("client-go", [str(go.get("informer", "informer"))], events=True),
        Peer("kubernetes", [PY, str(PEERS / "sync_kubernetes.py")]),
        Peer("lightkube", [PY, str(PEERS / "sync_lightkube.py")]),
        # lightkube's workload done with kubectrl: a list into a dict, no informer
        Peer("kubectrl-plain", [PY, str(PEERS / "sync_kubectrl_plain.py")]),
        Peer("kopf", [PY, str(PEERS / "sync_kopf.py")]),
    ]
    for peer, module in zip(
        peers, ["kubectrl", None, "kubernetes", "lightkube", "kubectrl", "kopf"], strict=True
    ):
        if module is None:
            peer.skipped = go_error and f"Go build failed: {go_error}"
        else:
            peer.skipped = python_can_import(module)
    kopf_skipped = peers[-1].skipped
    if args.list_forms:
        # The same kubectrl informer with its initial list forced to each form (the default is
        # one of them): streaming list against paged LIST, in the same rounds.
        for index, form in enumerate(("stream", "list"), start=1):
            peers.insert(
                index,
                Peer(
                    f"kubectrl-{form}",
                    [PY, str(PEERS / "sync_kubectrl.py")],
                    env=dict(os.environ, KUBECTRL_BENCH_LIST=form),
                ),
            )
    baseline_env = None
    if args.baseline_src:
        baseline_env = baseline_environment(Path(args.baseline_src), args.baseline_hide)
        peers.insert(
            1,
            Peer(
                "kubectrl-baseline",
                [PY, str(PEERS / "sync_kubectrl.py")],
                events=True,
                env=baseline_env,
            ),
        )

    with ControlPlane() as control_plane:
        kubeconfig = str(control_plane.kubeconfig.path)
        control_plane.install_crds([FOO_CRD])
        report["apiserver"] = control_plane.http_client().get("/version").json()["gitVersion"]
        if "sync" in workloads:
            log(f"bench: seeding {args.configmaps} ConfigMaps")
            asyncio.run(seed(kubeconfig, SYNC_NS, args.configmaps))
        if workloads & {"events", "replay"}:
            asyncio.run(seed(kubeconfig, EVENTS_NS, args.event_objects))
        if "foo" in workloads:
            asyncio.run(seed(kubeconfig, FOO_NS, 0))
        if "recorder" in workloads:
            asyncio.run(seed(kubeconfig, RECORDER_NS, 0))

        if "sync" in workloads:
            runs = run_sync(peers, kubeconfig, args.rounds, args.configmaps)
            report["sync"] = table(
                f"Initial sync of {args.configmaps} ConfigMaps (~1 KiB)",
                [
                    ("wall_s", "wall", "s", 1, 2),
                    ("above_baseline_kib", "RSS above baseline", "MB", 1 / 1024, 0),
                    ("rss_kib", "RSS after sync", "MB", 1 / 1024, 0),
                    ("cpu_s", "CPU", "s", 1, 2),
                ],
                runs,
                "kubectrl",
            )
            report["sync_runs"] = runs
        if "events" in workloads:
            runs = run_events(peers, kubeconfig, args)
            report["events"] = table(
                f"CPU per watch event ({args.events} updates, informer -> handler -> queue)",
                [("cpu_per_event_us", "CPU per event", "us", 1, 1)],
                runs,
                "kubectrl",
            )
            report["events_runs"] = runs
        if "replay" in workloads:
            runs = run_replay(peers, kubeconfig, args)
            report["replay"] = table(
                f"CPU per replayed watch event ({args.replay_events} events from the watch cache, "
                "decoded, key read)",
                [("cpu_per_event_us", "CPU per event", "us", 1, 1)],
                runs,
                "kubectrl",
            )
            report["replay_runs"] = runs
        if "foo" in workloads:
            limits = ["--qps", str(args.qps), "--burst", str(int(args.qps))]
            kubectrl_foo = [PY, str(PEERS / "foo_kubectrl.py"), "--kubeconfig", kubeconfig, *limits]
            controllers: dict[str, tuple[list[str], dict[str, str] | None]] = {
                "kubectrl": (kubectrl_foo, None),
            }
            if baseline_env is not None:
                controllers["kubectrl-baseline"] = (kubectrl_foo, baseline_env)
            if "sample-controller" in go:
                controllers["go-sample-controller"] = (
                    [
                        str(go["sample-controller"]),
                        f"-kubeconfig={kubeconfig}",
                        f"-qps={args.qps}",
                        f"-burst={int(args.qps)}",
                        "-workers=2",
                    ],
                    None,
                )
            runs = run_foo(controllers, kubeconfig, args)
            report["foo"] = table(
                f"Foo controller converging {args.foos} Foos (QPS {args.qps:g}, 2 workers)",
                [
                    ("wall_s", "converge wall", "s", 1, 2),
                    ("synced_events_s", "every Foo's Synced event", "s", 1, 2),
                    ("cpu_s", "CPU", "s", 1, 2),
                    ("peak_rss_kib", "peak RSS", "MB", 1 / 1024, 0),
                ],
                runs,
                "kubectrl",
            )
            report["foo_runs"] = runs
        if "recorder" in workloads:
            runs = run_recorder(peers, kubeconfig, args)
            report["recorder"] = table(
                f"Event recorder: CPU per event, writes included ({args.recorder_objects} objects, "
                "an event and its repeat each)",
                [("cpu_per_event_us", "CPU per event", "us", 1, 0)],
                runs,
                "kubectrl",
            )
            report["recorder_runs"] = runs
        if "import" in workloads:
            runs = run_import(kubeconfig, args, kopf_skipped)
            report["import"] = table(
                "import kubectrl + load_config() vs import kopf (empty interpreter: none)",
                [("wall_s", "time", "ms", 1000, 0), ("rss_kib", "RSS", "MB", 1 / 1024, 1)],
                runs,
                "kubectrl",
            )
            report["import_runs"] = runs
        if "memory" in workloads:
            report["memory_layers"] = run_script("bench_memory.py", [])
        if args.soak_minutes:
            report["soak"] = run_script("soak.py", ["--minutes", str(args.soak_minutes)])
        if "sweep" in workloads:
            sweep_runs = run_sweep(peers, kubeconfig, args)
            charts = Path(args.charts) if args.charts else Path(args.json).parent
            report["sweep"] = sweep_report(sweep_runs, charts)
            report["sweep_runs"] = {str(count): runs for count, runs in sweep_runs.items()}

    for peer in peers:
        if peer.skipped:
            report["skipped"][peer.name] = peer.skipped
            print(f"\nskipped {peer.name}: {peer.skipped}")  # noqa: T201
    report["machine"]["loadavg_at_end"] = os.getloadavg()
    return report


if __name__ == "__main__":
    sys.exit(main())
