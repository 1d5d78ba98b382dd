"""An informer (list, then watch; streaming list where the server offers it) converges to the
same state on both targets and delivers adds, updates and deletes in order.

Upstream: k8s.io/client-go/tools/cache reflector.go (list + watch from the list's
resourceVersion; WatchList with sendInitialEvents when enabled) against the apiserver's
cacher.
"""

from __future__ import annotations

import asyncio

from contract_helpers import CM, Target, configmap

from kubectrl.cache import InformerFactory


async def test_informer_syncs_and_follows_changes(target: Target) -> None:
    c, ns = target.client, await target.new_namespace()
    await c.create(configmap("existing", ns, {"v": "1"}))
    await target.in_watch_cache(CM, ns, "existing")  # else it may come after the initial list
    events: list[tuple[str, str]] = []
    done = asyncio.Event()

    def on_add(obj: dict, initial: bool) -> None:
        events.append(("add-initial" if initial else "add", obj["metadata"]["name"]))

    def on_update(old: dict, new: dict) -> None:
        events.append(("update", new["metadata"]["name"]))

    def on_delete(obj: object) -> None:
        name = obj["metadata"]["name"] if isinstance(obj, dict) else "?"
        events.append(("delete", name))
        if name == "new":
            done.set()

    factory = InformerFactory(c)
    informer = factory.informer(CM, namespace=ns)
    informer.add_handler(on_add=on_add, on_update=on_update, on_delete=on_delete)
    factory.start()
    try:
        await factory.wait_for_cache_sync(timeout=30, raise_on_failure=True)
        assert [o["metadata"]["name"] for o in informer.lister.list()] == ["existing"]
        await c.create(configmap("new", ns, {"v": "1"}))
        await c.patch(CM, "new", {"data": {"v": "2"}}, namespace=ns)
        await c.delete(CM, "new", namespace=ns)
        await asyncio.wait_for(done.wait(), 30)
    finally:
        await factory.shutdown()
    assert events == [
        ("add-initial", "existing"),
        ("add", "new"),
        ("update", "new"),
        ("delete", "new"),
    ]
