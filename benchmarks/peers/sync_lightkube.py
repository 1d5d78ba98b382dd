"""lightkube as an informer: a (chunked) list of typed ConfigMaps into a dict, then a watch.

Only the ``synced`` phase.
"""

from __future__ import annotations

import gc
import time

from _measure import cpu_s, emit, rss_kib, sync_args, sys_s
from lightkube import Client, KubeConfig
from lightkube.resources.core_v1 import ConfigMap


def main() -> None:
    args = sync_args()
    client = Client(config=KubeConfig.from_file(args.kubeconfig))
    gc.collect()
    baseline = rss_kib()
    store: dict[str, ConfigMap] = {}
    cpu0, sys0, started = cpu_s(), sys_s(), time.perf_counter()
    listing = client.list(ConfigMap, namespace=args.namespace)
    for item in listing:
        assert item.metadata is not None
        store[f"{item.metadata.namespace}/{item.metadata.name}"] = item
    resource_version = listing.resourceVersion
    stream = client.watch(ConfigMap, namespace=args.namespace, resource_version=resource_version)
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
    del stream


main()
