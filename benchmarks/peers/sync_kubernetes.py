"""The official ``kubernetes`` client as an informer: list (typed models), then a watch stream.

Only the ``synced`` phase (list into a dict keyed by namespace/name, then the watch opened).
"""

from __future__ import annotations

import gc
import threading
import time

from _measure import cpu_s, emit, rss_kib, sync_args, sys_s
from kubernetes import client, config, watch


def main() -> None:
    args = sync_args()
    api_client = config.new_client_from_config(config_file=args.kubeconfig)
    core = client.CoreV1Api(api_client)
    gc.collect()
    baseline = rss_kib()
    store: dict[str, object] = {}
    cpu0, sys0, started = cpu_s(), sys_s(), time.perf_counter()
    listed = core.list_namespaced_config_map(args.namespace)
    for item in listed.items:
        store[f"{item.metadata.namespace}/{item.metadata.name}"] = item
    resource_version = listed.metadata.resource_version
    del listed
    opened = threading.Event()

    def follow() -> None:
        stream = watch.Watch().stream(
            core.list_namespaced_config_map,
            args.namespace,
            resource_version=resource_version,
            timeout_seconds=600,
        )
        opened.set()
        for event in stream:
            obj = event["object"]
            store[f"{obj.metadata.namespace}/{obj.metadata.name}"] = obj

    threading.Thread(target=follow, daemon=True).start()
    opened.wait()
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


main()
