"""Memory at scale and sharding: RSS per cached object, per-replica cost, priority latency.

Three tables; run with ``nox -s bench`` or ``python benchmarks/bench_sharding.py``
(``--large`` adds 100,000 objects; ``--objects 10000`` sets the base count).

1. **RSS per cached object** for ConfigMaps and Pods (realistic objects: labels, an owner,
   managedFields, a Pod's spec and status), each measured in a fresh process: the resident set
   after an informer synced a list of N objects (the list's bytes and the decoded page freed,
   ``malloc_trim``), minus before, over N. Beside it, the decoded JSON alone (the list decoded
   and kept, nothing else): what the objects cost before any cache logic. Variants: the
   informer as configured by default (``managedFields`` dropped), metadata-only (the list a
   ``PartialObjectMetadata`` list), with a transform (a Pod without ``status``, a ConfigMap
   without ``data``), and after 3 relists (what a dropped watch costs: the new list is decoded
   while the old objects are still cached), plain and with the repeated metadata strings
   interned (namespace, labels, owner kinds: an experiment here, not in the library; see
   docs/scaling.md for why).
2. **Per-replica cost with 1, 2 and 3 shard holders**: 6 shards of N ConfigMaps, a replica
   holding 6, 3 or 2 of them (one sharded informer each, the list served sharded as the
   apiserver does with ``ShardedListAndWatch``): RSS and objects cached per replica.
3. **Priority queue**: a controller restarted over 10,000 unchanged ConfigMaps (FakeAPI); one
   ConfigMap created just after the start: the time until it is reconciled, with the priority
   queue (initial list at low priority, the default) and with every event FIFO.

The lists are served from memory by a stub list-watch (no network, no server memory in the
process), decoded by the client's own decoder (``kubectrl.client._pipeline.loads``).
"""

# A benchmark reports by printing its table.
# ruff: noqa: T201

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()


# ---------------------------------------------------------------------------- objects


def _managed_fields(manager: str) -> list[dict[str, Any]]:
    return [
        {
            "manager": manager,
            "operation": "Update",
            "apiVersion": "v1",
            "time": "2026-01-02T03:04:05Z",
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:app": {}, "f:tier": {}}}},
        }
    ]


def _meta(kind: str, i: int, namespace: str) -> dict[str, Any]:
    app = f"web-{i % 20}"
    return {
        "name": f"{kind.lower()}-{i}",
        "namespace": namespace,
        "uid": str(uuid.UUID(int=i + 1)),
        "resourceVersion": str(1000 + i),
        "creationTimestamp": "2026-01-02T03:04:05Z",
        "labels": {"app": app, "tier": "backend", "pod-template-hash": f"{i % 7:010d}"},
        "annotations": {"team": "payments"},
        "ownerReferences": [
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "name": f"{app}-rs",
                "uid": str(uuid.UUID(int=10**9 + i % 20)),
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
        "managedFields": _managed_fields("kube-controller-manager"),
    }


def configmap(i: int, namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": _meta("ConfigMap", i, namespace),
        "data": {"config.yaml": f"replicas: {i % 5}\nlog: info\n" + "x" * 120},
    }


def pod(i: int, namespace: str) -> dict[str, Any]:
    meta = _meta("Pod", i, namespace)
    app = meta["labels"]["app"]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {
            "containers": [
                {
                    "name": "app",
                    "image": f"registry.example.com/{app}:1.2.3",
                    "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                    "resources": {
                        "requests": {"cpu": "100m", "memory": "128Mi"},
                        "limits": {"memory": "256Mi"},
                    },
                    "volumeMounts": [
                        {
                            "name": "kube-api-access",
                            "readOnly": True,
                            "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                        }
                    ],
                    "terminationMessagePath": "/dev/termination-log",
                    "terminationMessagePolicy": "File",
                    "imagePullPolicy": "IfNotPresent",
                }
            ],
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "serviceAccountName": "default",
            "nodeName": f"node-{i % 50}",
            "schedulerName": "default-scheduler",
            "tolerations": [
                {
                    "key": "node.kubernetes.io/not-ready",
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 300,
                }
            ],
            "priority": 0,
            "enableServiceLinks": True,
            "preemptionPolicy": "PreemptLowerPriority",
        },
        "status": {
            "phase": "Running",
            "conditions": [
                {"type": t, "status": "True", "lastTransitionTime": "2026-01-02T03:04:07Z"}
                for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")
            ],
            "hostIP": f"10.0.{i % 50}.1",
            "podIP": f"10.244.{i // 250 % 250}.{i % 250}",
            "startTime": "2026-01-02T03:04:05Z",
            "containerStatuses": [
                {
                    "name": "app",
                    "state": {"running": {"startedAt": "2026-01-02T03:04:06Z"}},
                    "ready": True,
                    "restartCount": 0,
                    "image": f"registry.example.com/{app}:1.2.3",
                    "imageID": f"registry.example.com/{app}@sha256:{i % 20:064x}",
                    "containerID": f"containerd://{i:064x}",
                    "started": True,
                }
            ],
            "qosClass": "Burstable",
        },
    }


def list_bytes(kind: str, count: int, metadata_only: bool) -> bytes:
    make = pod if kind == "Pod" else configmap
    items = []
    for i in range(count):
        obj = make(i, f"ns-{i % 100}")
        if metadata_only:
            obj = {
                "apiVersion": "meta.k8s.io/v1",
                "kind": "PartialObjectMetadata",
                "metadata": obj["metadata"],
            }
        items.append(obj)
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": f"{kind}List",
            "metadata": {"resourceVersion": "5000"},
            "items": items,
        },
        separators=(",", ":"),
    ).encode()


# ---------------------------------------------------------------------------- measuring


def rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def trim() -> None:
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


class StubListWatch:
    """Serves one list from bytes (decoded by the client's decoder; a shard's list holds only
    its objects and echoes the selector, as the apiserver with the gate); its watch never
    sends anything."""

    def __init__(self, data: bytearray, shard: Any = None) -> None:
        self.data = data
        self.shard = shard
        self.description = "stub"

    async def list_page(self, options: Any) -> dict[str, Any]:
        from kubectrl.client._pipeline import loads

        page: dict[str, Any] = loads(self.data)
        if self.shard is not None:
            page["metadata"]["shardInfo"] = {"selector": str(self.shard)}
        return page

    @contextlib.asynccontextmanager
    async def watch(self, options: Any) -> AsyncIterator[AsyncIterator[Any]]:
        async def never() -> AsyncIterator[Any]:
            await asyncio.Event().wait()
            yield None

        yield never()


def _drop_status(obj: dict[str, Any]) -> dict[str, Any]:
    obj.pop("status", None)
    return obj


def _drop_data(obj: dict[str, Any]) -> dict[str, Any]:
    obj.pop("data", None)
    return obj


def _intern_metadata(obj: dict[str, Any]) -> dict[str, Any]:
    """One shared copy of the namespace, label keys and values, annotation keys, owner kinds."""
    meta = obj.get("metadata")
    if meta.__class__ is not dict:
        return obj
    if meta.get("namespace").__class__ is str:
        meta["namespace"] = sys.intern(meta["namespace"])
    for field in ("labels", "annotations"):
        values = meta.get(field)
        if values.__class__ is dict:
            meta[field] = {
                sys.intern(k): sys.intern(v) if field == "labels" and v.__class__ is str else v
                for k, v in values.items()
            }
    for ref in meta.get("ownerReferences") or ():
        for key in ("apiVersion", "kind", "name"):
            if ref.get(key).__class__ is str:
                ref[key] = sys.intern(ref[key])
    return obj


async def _child_informers(
    kind: str, parts: list[tuple[bytearray, int]], variant: str, count: int, before: int
) -> int:
    """Informers over ``parts`` (list bytes, shard index or -1); prints RSS grown and cached."""
    from kubectrl.cache import Informer, ListOptions, ShardSelector

    transform = None
    if variant == "transform":
        transform = _drop_status if kind == "Pod" else _drop_data
    elif variant == "intern":
        transform = _intern_metadata
    relists = 3 if variant in ("relists", "intern") else 0
    informers = [
        Informer(
            StubListWatch(data, ShardSelector.of(index, count) if index >= 0 else None),
            transform=transform,
        )
        for data, index in parts
    ]
    del parts
    for informer in informers:
        informer.start()
    for informer in informers:
        await informer.wait_for_cache_sync(600)
    for round_ in range(relists):
        for informer in informers:
            # A relist as the reflector makes it: the whole list decoded, then replaced.
            page = await informer.list_watch.list_page(ListOptions())
            informer._replace(page["items"], str(round_))
            del page
    for informer in informers:
        # The list's bytes, as a response's, are gone once decoded.
        informer.list_watch.data.clear()  # type: ignore[attr-defined]
    trim()
    after = rss()
    cached = sum(len(i.indexer) for i in informers)
    print(json.dumps({"bytes": after - before, "cached": cached}))
    for informer in informers:
        await informer.stop()
    return 0


def child(argv: list[str]) -> int:
    """One measurement in this (fresh) process; prints JSON."""
    path, variant = argv[0], argv[1]
    shards = [int(s) for s in argv[2].split(",")] if len(argv) > 2 and argv[2] else []
    count = int(argv[3]) if len(argv) > 3 else 6
    if variant == "json":
        from kubectrl.client._pipeline import loads

        trim()
        before = rss()
        raw = Path(path).read_bytes()
        page = loads(raw)
        del raw
        trim()
        print(json.dumps({"bytes": rss() - before, "cached": len(page["items"])}))
        return 0
    kind = "Pod" if "Pod" in Path(path).name else "ConfigMap"
    import kubectrl.cache
    import kubectrl.client._pipeline  # noqa: F401 - imported before measuring (JSON)

    asyncio.run(asyncio.sleep(0))  # the event loop machinery, too
    # Measured from before the list's bytes are read: they are freed once decoded, as a
    # response's are.
    trim()
    before = rss()
    if shards:
        parts = [(bytearray(Path(f"{path}.shard-{i}").read_bytes()), i) for i in shards]
    else:
        parts = [(bytearray(Path(path).read_bytes()), -1)]
    return asyncio.run(_child_informers(kind, parts, variant, count, before))


def write_shards(path: Path, count: int) -> None:
    """``<path>.shard-<i>``: the list of shard ``i``'s objects, as the apiserver would send."""
    from kubectrl.cache import ShardSelector

    everything = json.loads(path.read_bytes())
    for index in range(count):
        shard = ShardSelector.of(index, count)
        items = [o for o in everything["items"] if shard.matches(o)]
        page = {**everything, "items": items}
        Path(f"{path}.shard-{index}").write_bytes(json.dumps(page, separators=(",", ":")).encode())


def measure(path: Path, variant: str, shards: str = "") -> dict[str, int]:
    out = subprocess.run(
        [sys.executable, str(HERE), "--child", str(path), variant, shards, "6"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return dict(json.loads(out.strip().splitlines()[-1]))


# ---------------------------------------------------------------------------- priority


async def priority_latency(objects: int, low: bool) -> float:
    from kubectrl.cache import InformerFactory
    from kubectrl.client import AsyncClient
    from kubectrl.runtime import Controller, ControllerOptions, Request
    from kubectrl.runtime.source import KindSource
    from kubectrl.testing import FakeAPI

    api = FakeAPI()
    async with AsyncClient(api.config()) as client:
        for i in range(objects):
            await client.create(
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": f"cm-{i}", "namespace": "default"},
                }
            )
        factory = InformerFactory(client)
        done: dict[str, float] = {}
        fresh = asyncio.Event()

        async def reconcile(request: Request) -> None:
            await asyncio.sleep(0.0001)  # a reconcile does some I/O
            done[request.name] = time.perf_counter()
            if request.name == "fresh":
                fresh.set()

        source = KindSource(factory, ("v1", "ConfigMap"), namespace="default")
        options = ControllerOptions(low_priority_when_unchanged=low, max_concurrent_reconciles=4)
        controller = Controller("bench", reconcile, sources=[source], options=options)
        await controller.start()  # the initial list: 10k adds queued
        created = time.perf_counter()
        await client.create(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "fresh", "namespace": "default"},
            }
        )
        await asyncio.wait_for(fresh.wait(), 600)
        latency = done["fresh"] - created
        await controller.stop(5)
        await factory.shutdown()
    return latency


# ---------------------------------------------------------------------------- main


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=10_000)
    parser.add_argument("--large", action="store_true", help="also 100,000 objects")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    parser.add_argument("--skip-priority", action="store_true")
    args = parser.parse_args()
    if args.child:
        return child(args.child)
    counts = [args.objects] + ([100_000] if args.large else [])
    with tempfile.TemporaryDirectory() as tmp:
        print("RSS per cached object (bytes; fresh process each)")
        print(
            f"{'kind':<10}{'objects':>9}  {'decoded JSON':>12}  {'informer':>9}  "
            f"{'metadata-only':>13}  {'transform':>9}  {'3 relists':>9}  {'+ intern':>9}"
        )
        for kind in ("ConfigMap", "Pod"):
            for count in counts:
                full = Path(tmp) / f"{kind}-{count}.json"
                full.write_bytes(list_bytes(kind, count, False))
                meta = Path(tmp) / f"{kind}-{count}-meta.json"
                meta.write_bytes(list_bytes(kind, count, True))
                row = {
                    "json": measure(full, "json"),
                    "informer": measure(full, "plain"),
                    "meta": measure(meta, "plain"),
                    "transform": measure(full, "transform"),
                    "relists": measure(full, "relists"),
                    "intern": measure(full, "intern"),
                }
                per = {k: v["bytes"] / max(v["cached"], 1) for k, v in row.items()}
                print(
                    f"{kind:<10}{count:>9}  {per['json']:>12.0f}  {per['informer']:>9.0f}  "
                    f"{per['meta']:>13.0f}  {per['transform']:>9.0f}  "
                    f"{per['relists']:>9.0f}  {per['intern']:>9.0f}"
                )
        print()
        print("Per-replica cost, 6 shards of ConfigMaps (one sharded informer per held shard)")
        print(f"{'objects':>9}  {'holders':>7}  {'shards held':>11}  {'cached':>7}  {'RSS MB':>7}")
        for count in counts:
            full = Path(tmp) / f"ConfigMap-{count}.json"
            write_shards(full, 6)
            for holders, held in ((1, "0,1,2,3,4,5"), (2, "0,1,2"), (3, "0,1")):
                got = measure(full, "plain", held)
                print(
                    f"{count:>9}  {holders:>7}  {len(held.split(',')):>11}  "
                    f"{got['cached']:>7}  {got['bytes'] / 1e6:>7.1f}"
                )
    if not args.skip_priority:
        print()
        print("A new object's reconcile while 10,000 unchanged ones are queued (initial list)")
        for low in (True, False):
            latency = asyncio.run(priority_latency(10_000, low))
            label = (
                "priority queue (default)" if low else "FIFO (low_priority_when_unchanged=False)"
            )
            print(f"  {label:<42} {latency * 1000:8.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
