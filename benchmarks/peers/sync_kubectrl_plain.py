"""kubectrl on lightkube's workload: one list of the ConfigMaps into a dict, no informer.

What ``sync_lightkube.py`` does (a list stored in a dict by ``namespace/name``), with kubectrl's
``AsyncClient.list``: one LIST request, its items as dicts. Only the ``synced`` phase.
"""

from __future__ import annotations

import asyncio
from typing import Any

from _measure import emit_synced, profiled, sync_args, sync_baseline, sync_start

from kubectrl.client import AsyncClient, load_kubeconfig
from kubectrl.objects import meta_namespace_key


async def main() -> None:
    args = sync_args()
    config = load_kubeconfig(args.kubeconfig)
    async with AsyncClient(config) as client:
        baseline = sync_baseline()
        store: dict[str, Any] = {}
        start = sync_start()
        with profiled("synced"):
            listing = await client.list(("v1", "ConfigMap"), namespace=args.namespace)
            for item in listing["items"]:
                store[meta_namespace_key(item)] = item
        emit_synced(
            start,
            objects=len(store),
            expected=args.expect,
            baseline_rss_kib=baseline,
        )


if __name__ == "__main__":
    asyncio.run(main())
