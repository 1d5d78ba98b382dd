"""4 workers, 200 keys updated repeatedly: never two reconciles of one key at once."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from kubectrl.client import AsyncClient
from kubectrl.runtime import Request
from kubectrl.runtime._builder import Builder
from kubectrl.runtime._manager import Manager

from .conftest import eventually, start_in_background, wait_synced

pytestmark = pytest.mark.integration

CM = ("v1", "ConfigMap")
KEYS = 200
ROUNDS = 3


async def test_no_key_reconciled_concurrently_and_last_reconcile_sees_final_state(
    managers: Callable[..., Manager], api: AsyncClient, namespace: str
) -> None:
    manager = managers()
    in_flight: set[str] = set()
    violations: list[str] = []
    last_seen: dict[str, str] = {}
    active = 0
    max_active = 0

    async def reconcile(request: Request) -> None:
        nonlocal active, max_active
        if request.name in in_flight:
            violations.append(request.name)
        in_flight.add(request.name)
        active += 1
        max_active = max(max_active, active)
        try:
            cm = await manager.client.get(CM, request.name, namespace=request.namespace)
            await asyncio.sleep(0.002)  # widen the window in which overlap would show
            last_seen[request.name] = str((cm.get("data") or {}).get("v"))
        finally:
            active -= 1
            in_flight.discard(request.name)

    controller = (
        Builder(manager)
        .for_(CM)
        .named("concurrency")
        .with_options(max_concurrent_reconciles=4)
        .complete(reconcile)
    )
    task = start_in_background(manager)
    await wait_synced(manager, task)

    names = [f"k{i:03d}" for i in range(KEYS)]
    limit = asyncio.Semaphore(16)

    async def write(name: str, version: int) -> None:
        async with limit:
            body = {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": name, "namespace": namespace},
                "data": {"v": str(version)},
            }
            if version == 0:
                await api.create(body)
            else:
                await api.patch(CM, name, {"data": {"v": str(version)}}, namespace=namespace)

    for version in range(ROUNDS + 1):
        await asyncio.gather(*(write(n, version) for n in names))

    final = str(ROUNDS)
    await eventually(
        lambda: all(last_seen.get(n) == final for n in names),
        timeout=180,
        what="every key's last reconcile saw the final state",
    )
    await eventually(lambda: len(controller.queue) == 0 and active == 0, what="queue drained")
    assert violations == []
    assert all(last_seen[n] == final for n in names)
    assert max_active > 1, "the 4 workers never overlapped; the test proves nothing"
