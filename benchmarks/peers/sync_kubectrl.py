"""kubectrl: a ConfigMap informer whose handler feeds a rate-limited workqueue drained by a worker.

Phase ``synced``: wall, CPU and RSS of the initial sync; phase ``events``: CPU spent on
``--events`` update notifications (informer -> handler -> queue -> worker). The environment
variable ``KUBECTRL_BENCH_LIST`` (``stream`` or ``list``) forces the initial list's form: a
``sendInitialEvents`` streaming list, or a paged LIST (one gzip document per page). With
``--replay-from RV`` no informer runs: phase ``replayed`` is the CPU of a watch from ``RV`` (the
apiserver replays it from its watch cache) decoding ``--events`` events, each event's key read.
"""

from __future__ import annotations

import asyncio
import gc
import os
import time

from _measure import cpu_s, emit, emit_synced, profiled, sync_args, sync_baseline, sync_start

from kubectrl.cache import InformerFactory, ReflectorOptions
from kubectrl.client import AsyncClient, RateLimit, load_kubeconfig
from kubectrl.objects import meta_namespace_key
from kubectrl.workqueue import RateLimitingQueue, default_controller_rate_limiter


async def replay(client: AsyncClient, namespace: str, from_rv: str, events: int) -> None:
    """Time a watch from ``from_rv`` until ``events`` replayed events were decoded."""
    gc.collect()
    cpu0, started = cpu_s(), time.perf_counter()
    seen = keys = 0
    with profiled("replayed"):
        async with client.watch(
            ("v1", "ConfigMap"), namespace=namespace, resource_version=from_rv
        ) as stream:
            async for event in stream:
                if event.type == "BOOKMARK":
                    continue
                if event.type == "ERROR":
                    raise SystemExit(f"watch error: {event.object}")
                keys += len(meta_namespace_key(event.object))
                seen += 1
                if seen == events:
                    break
    cpu = cpu_s() - cpu0
    if seen < events:
        raise SystemExit(f"watch ended after {seen} of {events} events")
    emit(
        phase="replayed",
        events=seen,
        cpu_s=cpu,
        wall_s=time.perf_counter() - started,
        key_bytes=keys,
    )


async def main() -> None:
    args = sync_args()
    config = load_kubeconfig(args.kubeconfig).with_options(
        rate_limit=RateLimit(qps=1000, burst=1000)
    )
    if args.replay_from:
        async with AsyncClient(config) as client:
            await replay(client, args.namespace, args.replay_from, args.events)
        return
    baseline = sync_baseline()
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
        # KUBECTRL_BENCH_LIST=stream|list picks the initial list's form (default: the library's).
        form = os.environ.get("KUBECTRL_BENCH_LIST", "")
        if form not in ("", "stream", "list"):
            raise SystemExit(f"KUBECTRL_BENCH_LIST={form!r}: expected stream or list")
        options = ReflectorOptions(streaming_list=form == "stream") if form else None
        factory = InformerFactory(client, reflector_options=options)
        informer = factory.informer(("v1", "ConfigMap"), namespace=args.namespace)
        informer.add_handler(on_add=on_add, on_update=on_update)

        async def worker() -> None:
            while True:
                key = await queue.get()
                informer.indexer.get_by_key(key)
                queue.forget(key)
                queue.done(key)

        drain = asyncio.create_task(worker())
        start = sync_start()
        with profiled("synced"):
            factory.start()
            await factory.wait_for_cache_sync(timeout=600)
        emit_synced(
            start,
            objects=len(informer.indexer),
            expected=args.expect,
            baseline_rss_kib=baseline,
            collect=False,
        )
        if args.events:
            cpu0 = cpu_s()
            with profiled("events"):
                await asyncio.wait_for(done.wait(), 600)
                # The worker drains what the last updates queued (a benchmark's end, not a test).
                while len(queue):  # noqa: ASYNC110
                    await asyncio.sleep(0.001)
            emit(phase="events", events=args.events, cpu_s=cpu_s() - cpu0)
        drain.cancel()
        await factory.shutdown()


asyncio.run(main())
