"""Memory of an owned kind cached whole against cached as metadata only (``only_metadata=True``).

``--objects`` objects (10,000 by default) of ``--kind``: Deployments as the sample controller
makes them (one nginx container; the Foo controller's owned kind), or ConfigMaps of about 1 KiB,
on a local control plane. Each mode runs in fresh processes that sync one informer of them (the
factory's whole-object informer, or its ``metadata_only`` one, which ``Builder.owns(kind,
only_metadata=True)`` uses): one reports RSS above its own baseline (taken before the informer
starts), another the bytes tracemalloc counts once synced (tracemalloc's own bookkeeping would
inflate the first). Medians over ``--rounds``, min-max in parentheses::

    python benchmarks/bench_metadata_cache.py --kind deployment --objects 10000 --rounds 3
"""

# A benchmark reports by printing its table.
# ruff: noqa: T201

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
from pathlib import Path

import _svg
from compare import bounded, seed

from kubectrl.client import AsyncClient, load_kubeconfig
from kubectrl.envtest import ControlPlane

NAMESPACE = "bench-metadata"

CHILD = """
import asyncio, gc, json, sys, tracemalloc
from kubectrl.cache import InformerFactory
from kubectrl.client import AsyncClient, load_kubeconfig

def rss_kib():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])

async def main(kubeconfig, namespace, kind, metadata_only, traced):
    config = load_kubeconfig(kubeconfig).with_options(rate_limit=None)
    async with AsyncClient(config) as client:
        factory = InformerFactory(client, namespace=namespace)
        informer = factory.informer(tuple(kind.split(",")), metadata_only=metadata_only)
        gc.collect()
        baseline = rss_kib()
        if traced:
            tracemalloc.start()
        factory.start()
        await factory.wait_for_cache_sync(timeout=600)
        objects = len(informer.indexer.list())
        gc.collect()
        if traced:
            result = {"traced_kib": tracemalloc.get_traced_memory()[0] // 1024}
        else:
            result = {"above_baseline_kib": rss_kib() - baseline}
        await factory.shutdown()
    print(json.dumps({"objects": objects, **result}))

asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "metadata",
                 sys.argv[5] == "traced"))
"""


KINDS = {"deployment": ("apps/v1", "Deployment"), "configmap": ("v1", "ConfigMap")}


def deployment(name: str) -> dict[str, object]:
    """A Deployment as examples/sample_controller's newDeployment makes it."""
    labels = {"app": "nginx", "controller": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": name,
            "labels": labels,
        },
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "nginx", "image": "nginx:latest"}]},
            },
        },
    }


async def seed_deployments(kubeconfig: str, count: int) -> None:
    await seed(kubeconfig, NAMESPACE, 0)  # the namespace
    config = load_kubeconfig(kubeconfig).with_options(rate_limit=None)
    async with AsyncClient(config) as client:
        listed = await client.list(KINDS["deployment"], namespace=NAMESPACE)
        calls = [
            (lambda i=i: client.create(deployment(f"foo-{i:06d}"), namespace=NAMESPACE))
            for i in range(len(listed["items"]), count)
        ]
        await bounded(calls, 48)


def run(kubeconfig: str, kind: str, mode: str, objects: int, what: str) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, kubeconfig, NAMESPACE, ",".join(KINDS[kind]), mode, what],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    data: dict[str, float] = json.loads(out.strip().splitlines()[-1])
    if data["objects"] != objects:
        raise RuntimeError(f"{mode}: cached {data['objects']} of {objects} objects")
    return data


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--objects", type=int, default=10_000)
    parser.add_argument("--kind", choices=sorted(KINDS), default="deployment")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", help="also write the runs here")
    parser.add_argument("--chart", help="an SVG bar chart of the tracemalloc figures here")
    args = parser.parse_args()
    runs: dict[str, list[dict[str, float]]] = {"whole": [], "metadata": []}
    with ControlPlane() as control_plane:
        kubeconfig = str(control_plane.kubeconfig.path)
        if args.kind == "configmap":
            asyncio.run(seed(kubeconfig, NAMESPACE, args.objects))
        else:
            asyncio.run(seed_deployments(kubeconfig, args.objects))
        for _ in range(args.rounds):
            for mode in runs:
                data = run(kubeconfig, args.kind, mode, args.objects, "rss")
                data.update(run(kubeconfig, args.kind, mode, args.objects, "traced"))
                runs[mode].append(data)
    print(f"\n{args.objects} {KINDS[args.kind][1]}s, one informer, medians of {args.rounds} rounds")
    print("| cache | RSS above baseline | tracemalloc | per object |")
    print("|---|---|---|---|")
    for mode, mode_runs in runs.items():
        rss = [r["above_baseline_kib"] / 1024 for r in mode_runs]
        traced = [r["traced_kib"] / 1024 for r in mode_runs]
        per = statistics.median(traced) * 1024 / args.objects
        print(
            f"| {mode} | {statistics.median(rss):.1f} MB ({min(rss):.1f}-{max(rss):.1f}) | "
            f"{statistics.median(traced):.1f} MB ({min(traced):.1f}-{max(traced):.1f}) | "
            f"{per:.2f} KiB |"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(runs, indent=2))
    if args.chart:
        bars = {}
        for mode, mode_runs in runs.items():
            traced = [r["traced_kib"] / 1024 for r in mode_runs]
            bars[mode] = (statistics.median(traced), min(traced), max(traced))
        title = f"{args.objects} {KINDS[args.kind][1]}s cached: whole or metadata only"
        Path(args.chart).write_text(_svg.bar_chart(title, "MB (tracemalloc)", bars))
    return 0


if __name__ == "__main__":
    sys.exit(main())
