"""Read-your-own-writes on a real kube-apiserver: a key reconciled twice at once creates one child.

Upstream: Kubernetes 1.36 stale controller mitigation (KEP-5647,
kubernetes/enhancements keps/sig-api-machinery/5647-stale-controller-handling/README.md;
kubernetes/kubernetes pkg/controller/util/consistency/consistency.go) and apimachinery's
``CompareResourceVersion`` (staging/src/k8s.io/apimachinery/pkg/util/resourceversion/
resourceversion.go). The apiserver's answer to a create carries the resourceVersion its watch
event will carry, a decimal integer: an informer reaches it exactly when it has the object.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from kubectrl.cache import Informer, ListWatch, is_comparable_resource_version
from kubectrl.client import AsyncClient
from kubectrl.runtime import Builder, Controller, ControllerOptions, Request
from kubectrl.runtime._manager import Manager

from .conftest import eventually, start_in_background, wait_synced

pytestmark = pytest.mark.integration

PARENT = ("v1", "ConfigMap")
CHILD = ("v1", "Pod")


async def test_the_informer_reaches_a_create_at_its_answers_resource_version(
    api: AsyncClient, namespace: str
) -> None:
    informer = Informer(ListWatch(api, PARENT, namespace=namespace))
    async with informer:
        await informer.wait_for_cache_sync(30)
        created = await api.create(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "a", "namespace": namespace},
            }
        )
        version = created["metadata"]["resourceVersion"]
        assert is_comparable_resource_version(version), version
        assert await informer.wait_for_resource_version(version, timeout=30)
        assert (
            informer.lister.namespace(namespace).get("a")["metadata"]["resourceVersion"] == version
        )


async def run_children(
    manager: Manager, api: AsyncClient, namespace: str, name: str, options: ControllerOptions
) -> list[str]:
    """Run the children controller in ``manager`` until parent ``name`` was reconciled twice;
    the Pods it created."""
    client = manager.client
    controllers: list[Controller] = []
    created: list[str] = []
    runs: dict[Request, int] = {}

    async def reconcile(request: Request) -> None:
        if request.name != name:
            return
        runs[request] = runs.get(request, 0) + 1
        if runs[request] == 1:
            controllers[0].enqueue(request)
        pods: Any = await client.list(
            CHILD, namespace=request.namespace, label_selector={"parent": request.name}
        )
        if pods["items"]:
            return
        pod = await client.create(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "generateName": f"{request.name}-",
                    "namespace": request.namespace,
                    "labels": {"parent": request.name},
                },
                "spec": {"containers": [{"name": "main", "image": "busybox"}]},
            }
        )
        created.append(pod["metadata"]["name"])

    builder = Builder(manager).for_(PARENT).named(f"children-{name}").with_options(options)
    controllers.append(builder.complete(reconcile))
    task = start_in_background(manager)
    await wait_synced(manager, task)
    await api.create(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": namespace},
        }
    )
    key = Request(namespace, name)
    await eventually(
        lambda: runs.get(key, 0) >= 2 and not controllers[0].in_flight,
        what=f"parent {name} reconciled twice",
    )
    manager.stop()
    await task
    return created


async def test_a_key_reconciled_twice_at_once_creates_one_child(
    managers: Callable[..., Manager], api: AsyncClient, namespace: str
) -> None:
    """kopf's children example ported literally (list the children from the cache, create one
    if none), its key reconciled again while the first reconcile runs: with read-your-writes
    (the default) the second reconcile waits for the Pod informer to see the create, and
    creates nothing. Without it, the second reconcile lists a cache that lags the create (the
    Pod informer was started by the first reconcile's list and its watch is not open yet, or
    its event not read) and creates a second Pod: in about 2 runs of 3, so five managers run
    in turn, each with a fresh cache."""
    options = ControllerOptions(read_your_writes=True)
    created = {}
    for i in range(5):
        name = f"p{i}"
        created[name] = await run_children(managers(), api, namespace, name, options)
    pods = await api.list(CHILD, namespace=namespace)
    by_parent = sorted(p["metadata"]["labels"]["parent"] for p in pods["items"])
    assert by_parent == sorted(created), f"children per parent: {by_parent}; created {created}"
    assert all(len(names) == 1 for names in created.values()), created
