"""kubectrl: the event recorder's CPU per event, its writes to the API server included.

``--objects`` objects each get an event, written (a create each), then the same event again
(the correlator makes it a count patch each): what a controller's recorder does for every
object it reconciles twice. Phase ``recorded``: the process CPU from the first event recorded
to the last one written, per event.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import time
import uuid

from _measure import cpu_s, emit

from kubectrl.client import AsyncClient, RateLimit, load_kubeconfig
from kubectrl.events import ClientEventSink, EventBroadcaster


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--namespace", required=True)
    parser.add_argument("--objects", type=int, default=300)
    args = parser.parse_args()
    config = load_kubeconfig(args.kubeconfig).with_options(
        rate_limit=RateLimit(qps=1000, burst=1000)
    )
    objects = [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": f"recorded-{i:04d}",
                "namespace": args.namespace,
                "uid": str(uuid.uuid4()),
                "resourceVersion": "1",
            },
        }
        for i in range(args.objects)
    ]
    async with AsyncClient(config) as client:
        broadcaster = EventBroadcaster(ClientEventSink(client))
        broadcaster.start()
        recorder = broadcaster.new_recorder("bench-recorder")
        # Warm-up: discovery of Events and an open connection.
        recorder.event(objects[0], "Normal", "Warmup", "warm-up")
        await broadcaster.wait_idle()
        gc.collect()
        cpu0, started = cpu_s(), time.perf_counter()
        for _ in range(2):
            for obj in objects:
                recorder.event(obj, "Normal", "Synced", "Foo synced successfully")
                await asyncio.sleep(0)  # a controller records between its own awaits
            await broadcaster.wait_idle()
        cpu = cpu_s() - cpu0
        wall = time.perf_counter() - started
        await broadcaster.shutdown()
    events = 2 * args.objects
    emit(phase="recorded", events=events, cpu_s=cpu, wall_s=wall)


if __name__ == "__main__":
    asyncio.run(main())
