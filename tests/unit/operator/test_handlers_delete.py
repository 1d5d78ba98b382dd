"""Delete handlers hold a finalizer (unless optional) until they are done; the watchers (the
daemons' seam) are told ``seen`` and ``gone`` and keep the finalizer until they stopped.

Upstream semantics: kopf's ``kopf/_core/reactor/processing.py`` (finalizers added while
deletion handlers exist, removed after they ran) and ``kopf/_cogs/configs/conventions.py``
(``optional`` deletion handlers do not block deletion); the finalizer mechanics are the API
server's (``staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go``: an object
with finalizers is only marked with ``deletionTimestamp``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubectrl._internal.clock import FakeClock
from kubectrl.client import AsyncClient
from kubectrl.errors import NotFoundError
from kubectrl.objects import ObjectKey
from kubectrl.operator import KindKey, Operator, TemporaryError
from kubectrl.testing import FakeAPI, eventually, run_manager

from .conftest import CM, configmap, new_manager

FINALIZER = "operator.kubectrl.io/finalizer"


async def gone(client: AsyncClient, name: str = "a") -> bool:
    try:
        await client.get(CM, name, namespace="default")
    except NotFoundError:
        return True
    return False


async def finalizers(client: AsyncClient, name: str = "a") -> list[str]:
    obj = await client.get(CM, name, namespace="default")
    return list(obj["metadata"].get("finalizers") or [])


async def test_delete_handler_holds_the_finalizer_until_it_succeeded(
    api: FakeAPI, clock: FakeClock, client: AsyncClient
) -> None:
    manager = new_manager(api, clock)
    operator = Operator(manager)
    deleted: list[int] = []

    @operator.on_delete(CM)
    async def cleanup(retry: int, **_: Any) -> None:
        deleted.append(retry)
        if retry == 0:
            raise TemporaryError("the backend is busy", delay=20)

    async with run_manager(manager):
        await client.create(configmap("a"))
        await eventually(
            lambda: _has(client, FINALIZER), describe="the finalizer added", clock=clock
        )
        await client.delete(CM, "a", namespace="default")
        await eventually(lambda: deleted == [0], clock=clock, describe="the first try")
        assert not await gone(client)  # held while the handler retries
        await eventually(lambda: gone(client), 60, clock=clock, interval=1, describe="deleted")
    assert deleted == [0, 1]


async def _has(client: AsyncClient, finalizer: str) -> bool:
    return finalizer in await finalizers(client)


async def test_optional_delete_handler_adds_no_finalizer(
    api: FakeAPI, clock: FakeClock, client: AsyncClient
) -> None:
    manager = new_manager(api, clock)
    operator = Operator(manager)
    created: list[str] = []

    @operator.on_create(CM)
    def made(name: str, **_: Any) -> None:
        created.append(name)

    @operator.on_delete(CM, optional=True)
    def cleanup(**_: Any) -> None:
        pass

    async with run_manager(manager):
        await client.create(configmap("a"))
        await eventually(lambda: created == ["a"], clock=clock)
        assert await finalizers(client) == []
        await client.delete(CM, "a", namespace="default")
        assert await gone(client)


class FakeWatcher:
    """An ObjectWatcher that records its calls and says it stopped when told to."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []
        self.stopped_yet = False
        self.stop_calls = 0

    def kinds(self) -> set[KindKey]:
        return {CM}

    def needs_finalizer(self, kind: KindKey, obj: Mapping[str, Any]) -> bool:
        return True

    async def seen(self, kind: KindKey, obj: Mapping[str, Any]) -> None:
        self.calls.append(("seen", obj["metadata"]["name"]))

    async def gone(self, kind: KindKey, key: ObjectKey, obj: Mapping[str, Any] | None) -> bool:
        self.calls.append(("gone", key.name))
        return self.stopped_yet

    async def stop(self) -> None:
        self.stop_calls += 1


async def test_watchers_are_driven_and_hold_the_finalizer_until_gone_says_so(
    api: FakeAPI, clock: FakeClock, client: AsyncClient
) -> None:
    manager = new_manager(api, clock)
    operator = Operator(manager)
    watcher = FakeWatcher()
    operator.add_watcher(watcher)
    async with run_manager(manager):
        await client.create(configmap("a"))
        await eventually(lambda: ("seen", "a") in watcher.calls, clock=clock)
        await eventually(lambda: _has(client, FINALIZER), clock=clock)
        await client.delete(CM, "a", namespace="default")
        await eventually(lambda: watcher.calls.count(("gone", "a")) >= 2, clock=clock)
        assert not await gone(client)  # gone() said False: the finalizer stays
        watcher.stopped_yet = True
        await eventually(lambda: gone(client), clock=clock, describe="deleted once stopped")
        assert watcher.stop_calls == 0
    assert watcher.stop_calls == 1  # the operator stopped with the manager
