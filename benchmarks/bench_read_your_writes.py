"""Read-your-own-writes: what the controller's wait costs, with it on and off, on FakeAPI.

The workload is a parent/child controller as users write them: ``N`` ConfigMaps, each reconciled
by reading it and listing its Pods from the cache, creating one owned Pod and marking the parent
done with a patch (two writes), then reconciled again by the events of those writes (the Pod's,
through ``owns``, and the parent's own update), when it finds the Pod and stops. Reported:
reconciles per second from the first create to the last reconcile, the reconciles that waited
for the cache (``controller_runtime_reconcile_stale_cache_total{result="waited"}``) and the
children created (``N`` when no reconcile acted on a stale cache). Best of three runs each.
Run with ``nox -s bench`` or ``python benchmarks/bench_read_your_writes.py``.
"""

# A benchmark reports by printing its table.
# ruff: noqa: T201

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any

from prometheus_client import CollectorRegistry

from kubectrl.runtime import Builder, ControllerOptions, Manager, Request
from kubectrl.runtime.controllerutil import set_controller_reference
from kubectrl.testing import FakeAPI, eventually, run_manager

PARENT = ("v1", "ConfigMap")
CHILD = ("v1", "Pod")
NAMESPACE = "default"


async def run(parents: int, read_your_writes: bool, workers: int) -> tuple[float, int, float]:
    """(reconciles per second, children created, reconciles that waited) for one run."""
    api = FakeAPI(garbage_collection=False)
    registry = CollectorRegistry()
    manager = Manager(api.config(), registry=registry)
    client = manager.client
    reconciles = 0

    async def reconcile(request: Request) -> None:
        nonlocal reconciles
        reconciles += 1
        parent: Any = await client.get(PARENT, request.name, namespace=request.namespace)
        pods: Any = await client.list(
            CHILD, namespace=request.namespace, label_selector={"parent": request.name}
        )
        if pods["items"]:
            return
        pod: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "generateName": f"{request.name}-",
                "namespace": request.namespace,
                "labels": {"parent": request.name},
            },
            "spec": {"containers": [{"name": "main", "image": "busybox"}]},
        }
        set_controller_reference(parent, pod)
        await client.create(pod)
        await client.patch(
            PARENT,
            request.name,
            {"metadata": {"annotations": {"done": "yes"}}},
            namespace=request.namespace,
        )

    options = ControllerOptions(
        read_your_writes=read_your_writes, max_concurrent_reconciles=workers
    )
    controller = Builder(manager).for_(PARENT).owns(CHILD).with_options(options).complete(reconcile)
    async with run_manager(manager, timeout=60):
        await client.list(CHILD, namespace=NAMESPACE)  # both informers running before the clock
        start = time.perf_counter()
        for i in range(parents):
            await manager.api_reader.create(
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": f"p{i}", "namespace": NAMESPACE},
                }
            )

        def finished() -> bool:
            return (
                reconciles >= 2 * parents
                and len(controller.queue) == 0
                and not controller.in_flight
            )

        await eventually(finished, timeout=300, describe="every parent reconciled")
        elapsed = time.perf_counter() - start
        children: Any = await manager.api_reader.list(CHILD, namespace=NAMESPACE)
    waited = registry.get_sample_value(
        "controller_runtime_reconcile_stale_cache_total",
        {"controller": controller.name, "result": "waited"},
    )
    return reconciles / elapsed, len(children["items"]), waited or 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parents", type=int, default=300, help="parent objects per run")
    args = parser.parse_args()
    print(f"read-your-writes on FakeAPI: {args.parents} parents, 2 writes each (best of 3)")
    header = f"{'read_your_writes':<17} {'workers':>7} {'reconciles/s':>13} {'children':>9}"
    header += f" {'waited':>7}"
    print(header)
    print("-" * len(header))
    for workers in (1, 4):
        for on in (False, True):
            runs = [asyncio.run(run(args.parents, on, workers)) for _ in range(3)]
            rate, children, waited = max(runs, key=lambda r: r[0])
            print(f"{on!s:<17} {workers:>7} {rate:>13,.0f} {children:>9} {waited:>7.0f}")


if __name__ == "__main__":
    main()
