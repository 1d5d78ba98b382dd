"""Warm replicas: a standby's caches and warm controllers' sources run before it leads.

Two managers elect one leader on FakeAPI (lease 2 s, renew deadline 1.5 s, retry 0.2 s). The
standby's controller has ``enable_warmup``: its queue fills from its synced cache before the
election. When the leader goes away without releasing its Lease (as a killed process), the
standby takes over and reconciles every object without listing ConfigMaps again: LIST requests
are counted by a transport under each manager's client. Waits are conditions with deadlines.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import httpx

from kubectrl.client import AsyncClient
from kubectrl.runtime import Builder, Controller, Manager, ManagerOptions, Request
from kubectrl.testing import FakeAPI

CM = ("v1", "ConfigMap")
OBJECTS = 20


async def until(cond: Callable[[], bool], timeout: float = 30.0) -> None:
    end = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < end, "condition not reached before the deadline"
        await asyncio.sleep(0.02)


class CountingLists(httpx.AsyncBaseTransport):
    """Counts LIST requests (GET on a collection without ``watch``) per resource."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner
        self.lists: dict[str, int] = {}

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        parts = [p for p in request.url.path.split("/") if p]
        collection = parts[-1] if parts else ""
        is_list = request.method == "GET" and collection in ("configmaps", "leases")
        if is_list and request.url.params.get("watch") not in ("true", "1"):
            self.lists[collection] = self.lists.get(collection, 0) + 1
        return await self.inner.handle_async_request(request)


def replica(
    api: FakeAPI, identity: str, log: list[tuple[str, str]]
) -> tuple[Manager, Controller, CountingLists]:
    base = api.config()
    assert base.transport is not None
    counting = CountingLists(base.transport)
    options = ManagerOptions(
        leader_election=True,
        leader_election_id="warm",
        leader_election_namespace="default",
        identity=identity,
        lease_duration=2.0,
        renew_deadline=1.5,
        retry_period=0.2,
    )
    manager = Manager(base.with_options(transport=counting), options=options)

    async def reconcile(request: Request) -> None:
        await manager.client.get(CM, request.name, namespace="default")
        log.append((identity, request.name))

    controller = Builder(manager).for_(CM).with_options(enable_warmup=True).complete(reconcile)
    return manager, controller, counting


async def test_the_new_leader_reconciles_without_listing_again() -> None:
    api = FakeAPI()
    log: list[tuple[str, str]] = []
    async with AsyncClient(api.config()) as admin:
        for i in range(OBJECTS):
            await admin.create(
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": f"cm-{i}", "namespace": "default"},
                }
            )
    leader, _, _ = replica(api, "a", log)
    standby, controller, counting = replica(api, "b", log)
    leading = asyncio.ensure_future(leader.start())
    await until(lambda: len({n for w, n in log if w == "a"}) == OBJECTS)
    following = asyncio.ensure_future(standby.start())
    try:
        # Warm: the standby's cache synced and its queue holds every key, before it leads.
        await until(lambda: standby.caches_synced and len(controller.queue) == OBJECTS)
        assert not standby.is_leader()
        lists_before = counting.lists.get("configmaps", 0)
        assert lists_before == 1  # the one initial LIST of its cache
        # The leader goes away without releasing the Lease (as a killed process would).
        leading.cancel()
        await asyncio.gather(leading, return_exceptions=True)
        await until(lambda: len({n for w, n in log if w == "b"}) == OBJECTS)
        assert standby.is_leader()
        assert counting.lists.get("configmaps", 0) == lists_before, counting.lists
    finally:
        standby.stop()
        await following
