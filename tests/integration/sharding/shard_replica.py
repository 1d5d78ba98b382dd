"""One replica of a sharded manager, as a separate process (run as a script).

Environment: KUBECONFIG, NAMESPACE, LOG (a file every replica appends to), STATS (this replica's
stats file), IDENTITY, SHARDS.

The manager shards a ConfigMap controller (``ManagerOptions(sharding=...)``, 6 shards, lease
4 s, renew deadline 3 s, retry 1 s). Each reconcile reads the ConfigMap from the shard's cache.
Every line of LOG is ``<event> <identity> <name> <shard> <time.time()>`` written with one
O_APPEND write (lines of several processes never interleave): ``begin`` and ``end`` of each
reconcile, ``ready`` once the manager runs, ``exit``. STATS is rewritten (atomically) every
0.2 s with JSON: the shards held, the ConfigMaps cached (summed over the held shards' caches)
and the bytes received from the apiserver for ConfigMaps (a counting transport under the
client: list and watch bodies as they came off the wire).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx

from kubectrl.client import load_kubeconfig
from kubectrl.runtime import Builder, Manager, ManagerOptions, Request
from kubectrl.runtime.sharding import ShardingOptions, current_shard

CM = ("v1", "ConfigMap")


class _Counted(httpx.AsyncByteStream):
    def __init__(self, inner: httpx.AsyncByteStream, add: dict[str, int], key: str) -> None:
        self._inner = inner
        self._add = add
        self._key = key

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:
            self._add[self._key] = self._add.get(self._key, 0) + len(chunk)
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


class CountingTransport(httpx.AsyncBaseTransport):
    """Counts response body bytes by resource (``configmaps``, ``leases``, ...)."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner
        self.bytes: dict[str, int] = {}

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        parts = [p for p in request.url.path.split("/") if p]
        key = parts[-1] if parts else ""
        if "namespaces" in parts and parts.index("namespaces") + 2 < len(parts):
            key = parts[parts.index("namespaces") + 2]
        assert isinstance(response.stream, httpx.AsyncByteStream)
        return httpx.Response(
            response.status_code,
            headers=response.headers,
            stream=_Counted(response.stream, self.bytes, key),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self.inner.aclose()


def main() -> int:
    identity = os.environ["IDENTITY"]
    namespace = os.environ["NAMESPACE"]
    stats_path = Path(os.environ["STATS"])
    log_fd = os.open(os.environ["LOG"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def record(event: str, name: str = "-", shard: int = -1) -> None:
        os.write(log_fd, f"{event} {identity} {name} {shard} {time.time():.6f}\n".encode())

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)
    config = load_kubeconfig(os.environ["KUBECONFIG"]).with_options(rate_limit=None)
    counting = CountingTransport(httpx.AsyncHTTPTransport(verify=config.ssl_context()))
    config = config.with_options(transport=counting)
    sharding = ShardingOptions(
        name="acceptance",
        namespace=namespace,
        shards=int(os.environ["SHARDS"]),
        identity=identity,
        lease_duration=4,
        renew_deadline=3,
        retry_period=1,
    )
    manager = Manager(
        config,
        options=ManagerOptions(
            metrics_bind_address="0",
            health_probe_bind_address="0",
            cache_namespace=namespace,
            sharding=sharding,
            graceful_shutdown_timeout=10,
        ),
    )

    async def reconcile(request: Request) -> None:
        shard = current_shard()
        index = shard.index if shard is not None else -1
        record("begin", request.name, index)
        await manager.client.get(CM, request.name, namespace=namespace)
        record("end", request.name, index)

    Builder(manager).for_(CM).complete(reconcile)
    runner = manager.sharded_runner
    assert runner is not None

    async def report() -> None:
        record("ready")
        while True:
            cached = sum(
                len(informer.indexer)
                for factory in runner.caches.values()
                for informer in factory.informers.values()
            )
            stats = {
                "held": sorted(runner.held),
                "cached": cached,
                "configmap_bytes": counting.bytes.get("configmaps", 0),
                "bytes": dict(counting.bytes),
            }
            tmp = stats_path.with_suffix(".tmp")
            tmp.write_text(json.dumps(stats))
            tmp.replace(stats_path)
            await asyncio.sleep(0.2)  # the report's pace, not a settle wait

    manager.add(report, need_leader_election=False)
    try:
        manager.run()
    finally:
        record("exit")
    return 0


if __name__ == "__main__":
    sys.exit(main())
