"""kubectrl: a ConfigMap informer whose handler feeds a rate-limited workqueue drained by a worker.

Phase ``synced``: wall, CPU and RSS of the initial sync; phase ``events``: CPU spent on
``--events`` update notifications (informer -> handler -> queue -> worker).
"""

from __future__ import annotations

import asyncio
import gc
import time

from _measure import cpu_s, emit, rss_kib, sync_args

from kubectrl.cache import InformerFactory
from kubectrl.client import AsyncClient, RateLimit, load_kubeconfig
from kubectrl.objects import meta_namespace_key
from kubectrl.workqueue import RateLimitingQueue, default_controller_rate_limiter


async def main() -> None:
    args = sync_args()
    config = load_kubeconfig(args.kubeconfig).with_options(
        rate_limit=RateLimit(qps=1000, burst=1000)
    )
    gc.collect()
    baseline = rss_kib()
    queue: RateLimitingQueue[str] = RateLimitingQueue(default_controller_rate_limiter())
    updates = 0
    done = asyncio.Event()

    def on_add(obj: dict[str, object], initial: bool) -> None:
        queue.add(meta_namespace_key(obj))

    def on_update(old: dict[str, object], new: dict[str, object]) -> None:
        nonlocal updates
        queue.add(meta_namespace_key(new))
        updates += 1
        if updates == args.events:
            done.set()

    async with AsyncClient(config) as client:
        factory = InformerFactory(client)
        informer = factory.informer(("v1", "ConfigMap"), namespace=args.namespace)
        informer.add_handler(on_add=on_add, on_update=on_update)

        async def worker() -> None:
            while True:
                key = await queue.get()
                informer.indexer.get_by_key(key)
                queue.forget(key)
                queue.done(key)

        drain = asyncio.create_task(worker())
        cpu0, started = cpu_s(), time.perf_counter()
        factory.start()
        await factory.wait_for_cache_sync(timeout=600)
        wall = time.perf_counter() - started
        cpu = cpu_s() - cpu0
        emit(
            phase="synced",
            objects=len(informer.indexer),
            expected=args.expect,
            wall_s=wall,
            cpu_s=cpu,
            rss_kib=rss_kib(),
            baseline_rss_kib=baseline,
        )
        if args.events:
            cpu0 = cpu_s()
            await asyncio.wait_for(done.wait(), 600)
            # The worker drains what the last updates queued (a benchmark's end, not a test).
            while len(queue):  # noqa: ASYNC110
                await asyncio.sleep(0.001)
            emit(phase="events", events=args.events, cpu_s=cpu_s() - cpu0)
        drain.cancel()
        await factory.shutdown()


asyncio.run(main())
