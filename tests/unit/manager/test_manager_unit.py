"""Manager, Builder and KindSource without a cluster: wiring, validation, lifecycle."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from kubectrl.cache import DeletedFinalStateUnknown
from kubectrl.client import ClientConfig
from kubectrl.objects import GroupVersionKind
from kubectrl.runtime import Request
from kubectrl.runtime._builder import Builder
from kubectrl.runtime._kind_source import KindSource, group_kind, normalize_resource
from kubectrl.runtime._manager import Manager, ManagerError, ManagerOptions
from kubectrl.runtime.predicate import generation_changed
from kubectrl.runtime.source import ChannelSource

# Nothing listens here: these tests never make a request.
CONFIG = ClientConfig(server="https://127.0.0.1:9")


async def eventually(cond: Callable[[], bool], timeout: float = 10.0) -> None:
    end = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < end, "condition not reached"
        await asyncio.sleep(0.01)


def manager(**options: Any) -> Manager:
    options.setdefault("metrics_bind_address", "127.0.0.1:0")
    options.setdefault("health_probe_bind_address", "127.0.0.1:0")
    return Manager(CONFIG, options=ManagerOptions(**options))


# ---------------------------------------------------------------- options


def test_leader_election_needs_an_id_and_valid_timings() -> None:
    with pytest.raises(ValueError, match="leader_election_id"):
        ManagerOptions(leader_election=True)
    with pytest.raises(ValueError, match="renew"):
        ManagerOptions(leader_election=True, leader_election_id="x", renew_deadline=20)
    config = ManagerOptions(leader_election=True, leader_election_id="x").leader_election_config()
    assert (config.lease_duration, config.renew_deadline, config.retry_period) == (15, 10, 2)


def test_resource_helpers() -> None:
    assert normalize_resource(GroupVersionKind("apps", "v1", "Deployment")) == (
        "apps/v1",
        "Deployment",
    )
    assert group_kind(("v1", "Secret")) == ("", "Secret")
    assert group_kind(GroupVersionKind("example.com", "v1", "Foo")) == ("example.com", "Foo")


# ---------------------------------------------------------------- builder


def test_builder_wires_sources_and_names() -> None:
    mgr = manager()
    controller = (
        Builder(mgr)
        .for_(("apps/v1", "Deployment"))
        .owns(("v1", "ConfigMap"))
        .watches(("v1", "Secret"), lambda obj: [Request("ns", "x")])
        .with_event_filter(generation_changed)
        .with_options(max_concurrent_reconciles=3)
        .complete(lambda request: None)
    )
    assert controller.name == "deployment"
    assert controller.options.max_concurrent_reconciles == 3
    assert len(mgr.informer_factory.informers) == 3  # one shared informer per kind
    with pytest.raises(ValueError, match="already added"):
        Builder(mgr).for_(("apps/v1", "Deployment")).complete(lambda request: None)
    Builder(mgr).for_(("apps/v1", "Deployment")).named("second").complete(lambda r: None)
    assert len(mgr.informer_factory.informers) == 3


def test_builder_misuse() -> None:
    mgr = manager()
    with pytest.raises(ValueError, match="for_"):
        Builder(mgr).complete(lambda request: None)
    with pytest.raises(ValueError, match="once"):
        Builder(mgr).for_(("v1", "Pod")).for_(("v1", "Pod"))
    with pytest.raises(ValueError, match="handler"):
        Builder(mgr).watches(("v1", "Pod"))
    src = ChannelSource("external")
    controller = Builder(mgr).for_(("v1", "Pod")).watches(src).complete(lambda r: None)
    assert controller.name == "pod"


# ---------------------------------------------------------------- kind source


class FakeInformer:
    def __init__(self) -> None:
        self.handlers: dict[str, Any] = {}
        self.started = False
        self.last_error = None

    def add_handler(self, **kwargs: Any) -> Any:
        self.handlers = kwargs

        class Registration:
            def has_synced(self) -> bool:
                return True

            def remove(self) -> None:
                pass

        return Registration()

    def start(self) -> None:
        self.started = True

    async def wait_for_cache_sync(self, timeout: float | None = None) -> None:
        return None


class FakeFactory:
    def __init__(self) -> None:
        self.informer_obj = FakeInformer()
        self.asked: list[Any] = []

    def informer(self, resource: Any, **kwargs: Any) -> FakeInformer:
        self.asked.append(resource)
        return self.informer_obj


def obj(name: str, generation: int = 1) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "ns", "generation": generation}}


async def test_kind_source_events_predicates_and_tombstones() -> None:
    factory = FakeFactory()
    source = KindSource(
        factory,  # type: ignore[arg-type]
        GroupVersionKind("", "v1", "ConfigMap"),
        predicates=[generation_changed],
    )
    assert factory.asked == [("v1", "ConfigMap")]
    assert source.name == "kind source: v1, Kind=ConfigMap"
    got: list[Request] = []
    await source.start(got.append)
    await source.wait_for_sync(1)
    informer = factory.informer_obj
    assert informer.started
    informer.handlers["on_add"](obj("a"), True)
    informer.handlers["on_update"](obj("a"), obj("a"))  # status-only: filtered
    informer.handlers["on_update"](obj("a"), obj("a", 2))
    informer.handlers["on_delete"](DeletedFinalStateUnknown("ns/b", obj("b")))
    informer.handlers["on_delete"](obj("c"))
    assert got == [Request("ns", "a"), Request("ns", "a"), Request("ns", "b"), Request("ns", "c")]


# ---------------------------------------------------------------- lifecycle


async def test_runnables_start_probes_answer_and_stop() -> None:
    mgr = manager()
    events: list[str] = []

    async def leader_only() -> None:
        events.append("leader-only")
        try:
            await asyncio.get_running_loop().create_future()
        finally:
            events.append("leader-only stopped")

    async def everywhere() -> None:
        events.append("everywhere")
        await asyncio.get_running_loop().create_future()

    mgr.add(leader_only)
    mgr.add(everywhere, need_leader_election=False)
    task = asyncio.ensure_future(mgr.start())
    await eventually(lambda: len(events) == 2)
    assert events == ["everywhere", "leader-only"]
    async with httpx.AsyncClient() as http:
        ready = await http.get(f"http://127.0.0.1:{mgr.probe_port}/readyz")
        health = await http.get(f"http://127.0.0.1:{mgr.probe_port}/healthz")
        metrics = await http.get(f"http://127.0.0.1:{mgr.metrics_port}/metrics")
    assert (ready.status_code, health.status_code, metrics.status_code) == (200, 200, 200)
    mgr.stop()
    await asyncio.wait_for(task, 10)
    assert events[-1] == "leader-only stopped"


async def test_a_failing_runnable_stops_the_manager_with_its_error() -> None:
    mgr = manager(metrics_bind_address="0", health_probe_bind_address="0")

    async def broken() -> None:
        raise RuntimeError("boom")

    mgr.add(broken)
    with pytest.raises(ManagerError, match="boom") as info:
        await asyncio.wait_for(mgr.start(), 10)
    assert isinstance(info.value.__cause__, RuntimeError)


async def test_stop_before_start_returns_at_once() -> None:
    mgr = manager(metrics_bind_address="0", health_probe_bind_address="0")
    mgr.stop()
    await asyncio.wait_for(mgr.start(), 10)


async def test_leader_only_runnables_get_the_fence_hook_others_do_not() -> None:
    """Without leader election the manager passes no fence (``None``); runnables that need no
    leadership are never handed one (the interface agreed with the controller)."""
    mgr = manager(metrics_bind_address="0", health_probe_bind_address="0")
    calls: dict[str, list[object]] = {"leader": [], "everywhere": []}

    class Fenced:
        def __init__(self, name: str, need_leader_election: bool) -> None:
            self.name = name
            self.need_leader_election = need_leader_election

        def set_leader_fence(self, fence: object) -> None:
            calls[self.name].append(fence)

        async def start(self) -> None:
            pass

        async def stop(self, timeout: float | None = 30.0) -> None:
            pass

    mgr.add(Fenced("leader", True))
    mgr.add(Fenced("everywhere", False))
    task = asyncio.ensure_future(mgr.start())
    await eventually(mgr.is_leader)
    mgr.stop()
    await asyncio.wait_for(task, 10)
    assert calls == {"leader": [None], "everywhere": []}
