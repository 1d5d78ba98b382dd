"""Copy labelled ConfigMaps from a management cluster into every engaged cluster.

A ConfigMap in the management cluster labelled ``multicluster.kubectrl.dev/copy=true`` is copied
(same namespace, name and data) into every cluster the provider engages, and kept so: an edit
or a deletion of a copy is undone, a change of the source is carried over, a deleted source
deletes its copies. Each cluster's outcome is reported in the management cluster, in the
ConfigMap ``<name>-copy-status`` next to the source: one key per cluster (``/`` and other
characters a key cannot hold become ``_``) holding ``copied <resourceVersion of the source>``.

Usage (a management kubeconfig, and a directory with one kubeconfig per cluster)::

    python examples/multicluster_configmap --management ~/.kube/config --fleet /etc/fleet
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import re
from typing import Any

from kubectrl.errors import AlreadyExistsError, NotFoundError
from kubectrl.multicluster import (
    ClusterReconciler,
    ClusterRequest,
    DirectoryProvider,
    MultiClusterBuilder,
    MultiClusterManager,
)
from kubectrl.runtime import Controller, Result
from kubectrl.runtime.predicate import new_predicate_funcs

CONFIGMAP = ("v1", "ConfigMap")
COPY_LABEL = "multicluster.kubectrl.dev/copy"
COPIED_FROM = "multicluster.kubectrl.dev/copied-from"


def status_key(cluster: str) -> str:
    """The status ConfigMap's key for ``cluster`` (ConfigMap keys allow ``[-._a-zA-Z0-9]``)."""
    return re.sub(r"[^-._a-zA-Z0-9]", "_", cluster)


def _labelled(obj: Any) -> bool:
    labels = (obj.get("metadata") or {}).get("labels") or {}
    return labels.get(COPY_LABEL) == "true" or COPIED_FROM in labels


#: Only sources (labelled to copy) and copies (labelled with their origin) matter.
labelled = new_predicate_funcs(_labelled)


class CopyConfigMap(ClusterReconciler):
    """One request per (cluster, namespace, name): make the cluster's copy match the source."""

    async def reconcile(self, request: ClusterRequest) -> Result | None:
        if self.manager is None:
            raise RuntimeError("CopyConfigMap is not bound to a manager")
        local = self.manager.local.client
        target = self.client(request)
        try:
            source = await local.get(CONFIGMAP, request.name, namespace=request.namespace)
        except NotFoundError:
            source = None
        if source is None or (source["metadata"].get("labels") or {}).get(COPY_LABEL) != "true":
            await self._delete_copy(target, request)
            return None
        version = source["metadata"]["resourceVersion"]
        desired = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": request.name,
                "namespace": request.namespace,
                "labels": {COPIED_FROM: "management"},
            },
            "data": dict(source.get("data") or {}),
        }
        try:
            current = await target.get(CONFIGMAP, request.name, namespace=request.namespace)
        except NotFoundError:
            await target.create(desired)
        else:
            if current.get("data") != desired["data"] or COPIED_FROM not in (
                current["metadata"].get("labels") or {}
            ):
                current["data"] = desired["data"]
                current["metadata"].setdefault("labels", {})[COPIED_FROM] = "management"
                await target.update(current)
        await self._report(request, f"copied {version}")
        return None

    async def _delete_copy(self, target: Any, request: ClusterRequest) -> None:
        try:
            current = await target.get(CONFIGMAP, request.name, namespace=request.namespace)
        except NotFoundError:
            return
        if COPIED_FROM in (current["metadata"].get("labels") or {}):
            with contextlib.suppress(NotFoundError):  # deleted meanwhile: done
                await target.delete(CONFIGMAP, request.name, namespace=request.namespace)

    async def _report(self, request: ClusterRequest, text: str) -> None:
        if self.manager is None:
            return
        api = self.manager.local.api
        name = f"{request.name}-copy-status"
        patch = {"data": {status_key(request.cluster): text}}
        for _ in range(3):
            try:
                await api.patch(CONFIGMAP, name, patch, namespace=request.namespace)
                return
            except NotFoundError:
                body = {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": name, "namespace": request.namespace},
                    **patch,
                }
                try:
                    await api.create(body)
                    return
                except AlreadyExistsError:
                    continue  # another cluster's reconcile created it: patch it


def build(manager: MultiClusterManager) -> Controller:
    """Add the copier to ``manager`` (which needs ``local=``, the management cluster)."""
    return (
        MultiClusterBuilder(manager)
        .for_(CONFIGMAP, predicates=[labelled])
        .watches_local(CONFIGMAP, predicates=[labelled])
        .with_options(max_concurrent_reconciles=4)
        .named("configmap-copier")
        .complete(CopyConfigMap())
    )


async def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--management", required=True, help="the management cluster's kubeconfig")
    parser.add_argument("--fleet", required=True, help="a directory of kubeconfigs, one a cluster")
    args = parser.parse_args(argv)
    manager = MultiClusterManager(DirectoryProvider(args.fleet), local=args.management)
    build(manager)
    await manager.start()


if __name__ == "__main__":
    asyncio.run(main())
