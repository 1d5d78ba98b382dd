"""lightkube as an informer: a (chunked) list of typed ConfigMaps into a dict, then a watch.

Only the ``synced`` phase.
"""

from __future__ import annotations

from _measure import emit_synced, sync_args, sync_baseline, sync_start
from lightkube import Client, KubeConfig
from lightkube.resources.core_v1 import ConfigMap


def main() -> None:
    args = sync_args()
    client = Client(config=KubeConfig.from_file(args.kubeconfig))
    baseline = sync_baseline()
    store: dict[str, ConfigMap] = {}
    start = sync_start()
    listing = client.list(ConfigMap, namespace=args.namespace)
    for item in listing:
        assert item.metadata is not None
        store[f"{item.metadata.namespace}/{item.metadata.name}"] = item
    resource_version = listing.resourceVersion
    stream = client.watch(ConfigMap, namespace=args.namespace, resource_version=resource_version)
    emit_synced(
        start,
        objects=len(store),
        expected=args.expect,
        baseline_rss_kib=baseline,
    )
    del stream


main()
