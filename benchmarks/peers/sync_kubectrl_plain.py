"""kubectrl on lightkube's workload: one list of the ConfigMaps into a dict, no informer.

What ``sync_lightkube.py`` does (a list stored in a dict by ``namespace/name``), with kubectrl's
``AsyncClient.list``: one LIST request, its items as dicts. Only the ``synced`` phase.
"""

from __future__ import annotations

import asyncio
import gc
import time
from typing import Any

from _measure import cpu_s, emit, profiled, rss_kib, sync_args, sys_s

from kubectrl.client import AsyncClient, load_kubeconfig
from kubectrl.objects import meta_namespace_key


async def main() -> None:
    args = sync_args()
    config = load_kubeconfig(args.kubeconfig)
    async with AsyncClient(config) as client:
        gc.collect()
        baseline = rss_kib()
        store: dict[str, Any] = {}
        cpu0, sys0, started = cpu_s(), sys_s(), time.perf_counter()
        with profiled("synced"):
            listing = await client.list(("v1", "ConfigMap"), namespace=args.namespace)
            for item in listing["items"]:
                store[meta_namespace_key(item)] = item
        wall = time.perf_counter() - started
        cpu = cpu_s() - cpu0
        system = sys_s() - sys0
        gc.collect()
        emit(
            phase="synced",
            objects=len(store),
            expected=args.expect,
            wall_s=wall,
            cpu_s=cpu,
            sys_s=system,
            rss_kib=rss_kib(),
            baseline_rss_kib=baseline,
        )


if __name__ == "__main__":
    asyncio.run(main())
