"""Churn soak of the Foo controller: its RSS each minute under steady churn.

About ``--live`` (100) Foos stay live; each second the driver creates one, deletes the oldest
and modifies ``--modify`` (5) others' ``spec.replicas``. envtest runs no garbage collector, so
the driver plays it: every ``--gc-every`` (10) seconds it deletes the Deployments whose
controlling Foo is gone, as the collector deletes a dependent whose owner's uid no longer
exists. (Deleting the old Foo's Deployment at once instead, as this soak did before, races the
controller: the Deployment's delete event requeues its Foo, still in the controller's cache,
which creates the Deployment again, and with no collector that orphan stays, in the cluster and
in the controller's cache, about 15 a minute.) Each minute the controller
process's RSS (``VmRSS``), peak (``VmHWM``) and CPU are printed as a JSON line and kept; at the
end a JSON file and an SVG chart (RSS against minutes) are written. ``--tracemalloc-after S``
has the controller start ``tracemalloc`` after S seconds and write, every
``--tracemalloc-every`` seconds, the allocation sites that grew most since its first snapshot
(``benchmarks/peers/foo_kubectrl.py``): what a creep is made of, by file and line.

    python benchmarks/soak.py --minutes 60 --json build/bench/soak.json

RSS under tracemalloc includes tracemalloc's own bookkeeping; run without it for the RSS
figures.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _svg
from _bytecode import compile_sources

from kubectrl.client import AsyncClient, load_kubeconfig
from kubectrl.envtest import ControlPlane
from kubectrl.errors import NotFoundError

HERE = Path(__file__).resolve().parent
PEERS = HERE / "peers"
FOO_CRD = HERE.parent / "examples" / "sample_controller" / "artifacts" / "crd.yaml"
NAMESPACE = "bench-soak"
FOO = ("samplecontroller.k8s.io/v1alpha1", "Foo")
DEPLOYMENT = ("apps/v1", "Deployment")
CLK_TCK = os.sysconf("SC_CLK_TCK")


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)  # noqa: T201


def status_kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"/proc/{pid}/status has no {field}")


def rss_split_kib(pid: int) -> dict[str, int]:
    """RSS by mapping kind from /proc/PID/smaps: the glibc heap (``[heap]``), anonymous
    mappings (pymalloc arenas, large buffers) and file-backed pages."""
    split = {"heap_kib": 0, "anon_kib": 0, "file_kib": 0}
    kind = "file_kib"
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        parts = line.split()
        if len(parts) >= 5 and "-" in parts[0] and ":" in parts[3]:
            name = parts[5] if len(parts) > 5 else ""
            kind = "heap_kib" if name == "[heap]" else "file_kib" if name else "anon_kib"
        elif parts and parts[0] == "Rss:":
            split[kind] += int(parts[1])
    return split


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def foo(name: str, replicas: int = 1) -> dict[str, Any]:
    return {
        "apiVersion": "samplecontroller.k8s.io/v1alpha1",
        "kind": "Foo",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {"deploymentName": name, "replicas": replicas},
    }


async def collect_garbage(client: AsyncClient, owners: set[str], counts: dict[str, int]) -> None:
    """Delete the Deployments whose controlling owner's uid is not in ``owners``: what the
    garbage collector does in a cluster (envtest runs none). ``counts``: how many it has
    deleted, and how many Deployments it found this time (about ``--live`` when no orphan is
    left behind)."""
    listed = await client.list(DEPLOYMENT, namespace=NAMESPACE)
    counts["listed"] = len(listed["items"])
    for item in listed["items"]:
        refs = item["metadata"].get("ownerReferences") or []
        owner = next((ref["uid"] for ref in refs if ref.get("controller")), None)
        if owner is not None and owner not in owners:
            try:
                await client.delete(DEPLOYMENT, item["metadata"]["name"], namespace=NAMESPACE)
            except NotFoundError:
                continue
            counts["collected"] += 1


async def churn(
    kubeconfig: str, args: argparse.Namespace, pid: int, samples: list[dict[str, Any]]
) -> None:
    config = load_kubeconfig(kubeconfig).with_options(rate_limit=None)
    rng = random.Random(46)  # noqa: S311 - which Foos to modify, reproducibly
    counter = itertools.count()
    async with AsyncClient(config) as client:
        await client.create(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
        )
        live = [f"foo-{next(counter):06d}" for _ in range(args.live)]
        made = await asyncio.gather(*(client.create(foo(name)) for name in live))
        uids = {obj["metadata"]["name"]: obj["metadata"]["uid"] for obj in made}
        counts = {"collected": 0, "listed": 0}
        started = time.monotonic()
        cpu0 = cpu_s(pid)
        next_sample = 0.0
        second = 0
        errors = 0
        while True:
            elapsed = time.monotonic() - started
            if elapsed >= next_sample:
                sample = {
                    "minute": round(elapsed / 60, 2),
                    "rss_kib": status_kib(pid, "VmRSS"),
                    "peak_kib": status_kib(pid, "VmHWM"),
                    **rss_split_kib(pid),
                    "cpu_s": round(cpu_s(pid) - cpu0, 2),
                    "live_foos": len(live),
                    "deployments_collected": counts["collected"],
                    "deployments_listed": counts["listed"],
                    "write_errors": errors,
                    "loadavg": os.getloadavg()[0],
                }
                samples.append(sample)
                print(json.dumps(sample), flush=True)  # noqa: T201
                next_sample += 60.0
                if elapsed >= args.minutes * 60:
                    return
            second += 1
            new = f"foo-{next(counter):06d}"
            old = live.pop(0)
            live.append(new)
            uids.pop(old, None)
            calls = [client.create(foo(new)), client.delete(FOO, old, namespace=NAMESPACE)]
            for name in rng.sample(live[:-1], args.modify):
                replicas = 1 + (second + hash(name)) % 3
                calls.append(
                    client.patch(FOO, name, {"spec": {"replicas": replicas}}, namespace=NAMESPACE)
                )
            results = await asyncio.gather(*calls, return_exceptions=True)
            if isinstance(results[0], dict):
                uids[new] = results[0]["metadata"]["uid"]
            errors += sum(isinstance(r, Exception) for r in results)
            if second % args.gc_every == 0:  # after the old Foo's delete and the new one's create
                await collect_garbage(client, set(uids.values()), counts)
            # One step per second of the run's clock: sleep to the next whole second.
            await asyncio.sleep(max(0.0, started + second - time.monotonic()))


def chart_from(spec: str, chart: Path) -> int:
    """One chart of several soaks' RSS, each series named by its label."""
    series: dict[str, list[tuple[float, float]]] = {}
    for item in spec.split(","):
        label, sep, path = item.partition("=")
        if not sep:
            raise SystemExit(f"--chart-from {item!r}: expected LABEL=JSON")
        samples = json.loads(Path(path).read_text())["samples"]
        series[label] = [(s["minute"], s["rss_kib"] / 1024) for s in samples]
    svg = _svg.line_chart("Foo controller RSS under churn", "minutes", "MB", series)
    chart.write_text(svg)
    log(f"soak: {chart}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=30)
    parser.add_argument("--live", type=int, default=100)
    parser.add_argument("--modify", type=int, default=5)
    parser.add_argument(
        "--gc-every",
        type=int,
        default=10,
        help="seconds between the driver's garbage collections of Deployments",
    )
    parser.add_argument("--json", default="build/bench/soak.json")
    parser.add_argument("--chart", help="SVG chart path (default: beside the JSON, soak-rss.svg)")
    parser.add_argument("--tracemalloc-after", type=float, default=0.0)
    parser.add_argument("--tracemalloc-every", type=float, default=300.0)
    parser.add_argument("--tracemalloc-frames", type=int, default=1)
    parser.add_argument(
        "--controller-env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="environment variable for the controller (repeatable), e.g. MALLOC_ARENA_MAX=2",
    )
    parser.add_argument(
        "--controller-arg",
        action="append",
        default=[],
        help="extra argument for the controller (repeatable)",
    )
    parser.add_argument(
        "--chart-from",
        metavar="LABEL=JSON,...",
        help="no run: draw the RSS of earlier soaks' JSON files as one chart (--chart)",
    )
    args = parser.parse_args()
    if args.chart_from:
        return chart_from(args.chart_from, Path(args.chart or "soak-rss.svg"))
    compile_sources()
    out = Path(args.json).resolve()  # the controller runs in benchmarks/peers: no relative paths
    out.parent.mkdir(parents=True, exist_ok=True)
    samples: list[dict[str, Any]] = []
    logs = Path(tempfile.mkdtemp(prefix="kubectrl-soak-"))
    with ControlPlane() as control_plane:
        kubeconfig = str(control_plane.kubeconfig.path)
        control_plane.install_crds([FOO_CRD])
        argv = [sys.executable, str(PEERS / "foo_kubectrl.py"), "--kubeconfig", kubeconfig]
        if args.tracemalloc_after:
            argv += [
                "--tracemalloc-after",
                str(args.tracemalloc_after),
                "--tracemalloc-every",
                str(args.tracemalloc_every),
                "--tracemalloc-frames",
                str(args.tracemalloc_frames),
                "--tracemalloc-out",
                str(out.with_suffix(".tracemalloc.jsonl")),
            ]
        argv += args.controller_arg
        with open(logs / "controller.log", "w") as controller_log:
            env = dict(os.environ)
            for setting in args.controller_env:
                name, sep, value = setting.partition("=")
                if not sep:
                    raise SystemExit(f"--controller-env {setting!r}: expected NAME=VALUE")
                env[name] = value
            proc = subprocess.Popen(
                argv, cwd=PEERS, env=env, stdout=controller_log, stderr=subprocess.STDOUT
            )
        log(f"soak: controller pid {proc.pid}, log {logs / 'controller.log'}")
        try:
            asyncio.run(churn(kubeconfig, args, proc.pid, samples))
        finally:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    report = {"args": vars(args), "samples": samples}
    out.write_text(json.dumps(report, indent=2))
    chart = Path(args.chart) if args.chart else out.parent / "soak-rss.svg"
    svg = _svg.line_chart(
        f"Foo controller RSS under churn ({args.live} live Foos, 1+1+{args.modify} per second)",
        "minutes",
        "MB",
        {"RSS": [(s["minute"], s["rss_kib"] / 1024) for s in samples]},
    )
    chart.write_text(svg)
    log(f"soak: {out}, {chart}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
