"""The official ``kubernetes`` client as an informer: list (typed models), then a watch stream.

Only the ``synced`` phase (list into a dict keyed by namespace/name, then the watch opened).
"""

from __future__ import annotations

import threading

from _measure import emit_synced, sync_args, sync_baseline, sync_start
from kubernetes import client, config, watch


def main() -> None:
    args = sync_args()
    api_client = config.new_client_from_config(config_file=args.kubeconfig)
    core = client.CoreV1Api(api_client)
    baseline = sync_baseline()
    store: dict[str, object] = {}
    start = sync_start()
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
    emit_synced(
        start,
        objects=len(store),
        expected=args.expect,
        baseline_rss_kib=baseline,
    )


main()
