"""The manager's start order is data: runnable groups start in ``START_ORDER``, stop in reverse.

controller-runtime sorts a manager's runnables into groups (``pkg/manager/runnable_group.go``:
``HTTPServers``, ``Webhooks``, ``Caches``, ``Others``, ``Warmup``, ``LeaderElection``), starts
them group by group in ``controllerManager.Start`` (``pkg/manager/internal.go``: HTTP servers,
webhooks, caches, others, warmup, then the leader elector, whose ``OnStartedLeading`` starts the
leader election runnables) and stops them in ``engageStopProcedure``. kubectrl declares that
sequence once (``kubectrl.runtime._runnables.START_ORDER``) and stops in its exact reverse: the
leader-only runnables first, then the lease, so a successor need not wait for the rest.

Runnables of every group are added in shuffled order to a leader-elected manager on FakeAPI,
next to the manager's own (metrics and probe servers, webhook server, informers, a warm
controller, the elector). Each records when it is started and stopped, and what it saw then:
the HTTP servers' ports, whether the caches synced, who holds the Lease. No timing: every wait
is a condition with a deadline.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

import httpx
import pytest

from kubectrl.client import AsyncClient
from kubectrl.errors import NotFoundError
from kubectrl.runtime import Builder, Manager, ManagerOptions, Request
from kubectrl.runtime._runnables import START_ORDER, STOP_ORDER, Group, Stage
from kubectrl.testing import FakeAPI, eventually, run_manager

LEASE = ("coordination.k8s.io/v1", "Lease")
LEASE_NAME = "start-order"
IDENTITY = "replica-0"
PER_GROUP = 2
POSITION = {stage.group: index for index, stage in enumerate(START_ORDER)}


def test_the_declared_order_is_controller_runtimes() -> None:
    """HTTPServers, Webhooks, Caches, Others, Warmup, leader election, then the leader election
    runnables (controllerManager.Start in controller-runtime's pkg/manager/internal.go); the
    stop order is the same sequence reversed."""
    assert [stage.group for stage in START_ORDER] == [
        Group.HTTP_SERVERS,
        Group.WEBHOOKS,
        Group.CACHES,
        Group.OTHERS,
        Group.WARMUP,
        Group.LEADER_ELECTION,
        Group.LEADER_ONLY,
    ]
    assert tuple(reversed(START_ORDER)) == STOP_ORDER
    assert {stage.group for stage in START_ORDER if stage.launched} == {
        Group.OTHERS,
        Group.LEADER_ONLY,
    }
    assert [stage.group for stage in START_ORDER if stage.after_leading] == [Group.LEADER_ONLY]
    assert len(set(START_ORDER)) == len(Group) == len(START_ORDER)
    assert all(isinstance(stage, Stage) for stage in START_ORDER)


class Recorder:
    """A runnable that logs its start and stop, with what the manager looked like then."""

    def __init__(self, name: str, group: Group, world: World) -> None:
        self.name = name
        self.group = group
        self.need_leader_election = group is Group.LEADER_ONLY
        self.world = world
        self.seen: dict[str, dict[str, Any]] = {}

    async def start(self) -> None:
        self.world.log.append(("start", self.group, self.name))
        self.seen["start"] = await self.world.state()

    async def stop(self, timeout: float | None = 30.0) -> None:
        self.world.log.append(("stop", self.group, self.name))
        self.seen["stop"] = await self.world.state()


class World:
    def __init__(self, manager: Manager, reader: AsyncClient) -> None:
        self.manager = manager
        self.reader = reader
        self.log: list[tuple[str, Group, str]] = []

    async def state(self) -> dict[str, Any]:
        """What a runnable can see when it starts or stops (read before any await)."""
        manager = self.manager
        seen: dict[str, Any] = {
            "http servers": manager.metrics_port is not None and manager.probe_port is not None,
            "caches synced": manager.caches_synced,
        }
        try:
            lease = await self.reader.get(LEASE, LEASE_NAME, namespace="default")
        except NotFoundError:
            seen["holder"] = None
        else:
            seen["holder"] = (lease.get("spec") or {}).get("holderIdentity") or ""
        return seen


def leader_elected_manager(api: FakeAPI) -> Manager:
    options = ManagerOptions(
        metrics_bind_address="127.0.0.1:0",
        health_probe_bind_address="127.0.0.1:0",
        leader_election=True,
        leader_election_id=LEASE_NAME,
        leader_election_namespace="default",
        leader_election_release_on_cancel=True,
        identity=IDENTITY,
    )
    manager = Manager(api.config(), options=options)

    async def reconcile(request: Request) -> None:
        return None

    # A warm controller: its sources are the manager's WARMUP member, its workers leader-only.
    Builder(manager).for_(("v1", "ConfigMap")).with_options(enable_warmup=True).complete(reconcile)
    return manager


def add(manager: Manager, recorder: Recorder) -> None:
    if recorder.group in (Group.OTHERS, Group.LEADER_ONLY):
        manager.add(recorder)  # the public way: by need_leader_election
    else:
        manager._runnables.add(recorder, recorder.group)  # the groups the manager fills itself


def groups_in(log: list[tuple[str, Group, str]], event: str) -> list[Group]:
    return [group for what, group, _ in log if what == event]


@pytest.mark.parametrize("seed", range(5))
async def test_every_group_starts_in_the_declared_order_and_stops_in_reverse(seed: int) -> None:
    """Whatever the order runnables are added in, they start group by group in START_ORDER and
    stop group by group in STOP_ORDER (controller-runtime: runnable_group.go sorts them into
    groups; internal.go's Start and engageStopProcedure walk the groups)."""
    api = FakeAPI()
    manager = leader_elected_manager(api)
    async with AsyncClient(api.config()) as reader:
        world = World(manager, reader)
        recorders = [
            Recorder(f"{group.name.lower()}-{n}", group, world)
            for group in Group
            for n in range(PER_GROUP)
        ]
        random.Random(seed).shuffle(recorders)
        for recorder in recorders:
            add(manager, recorder)

        async with run_manager(manager):
            await eventually(
                lambda: all("start" in r.seen for r in recorders), describe="every start"
            )
            assert manager.is_leader()
        await eventually(lambda: all("stop" in r.seen for r in recorders), describe="every stop")

    started, stopped = groups_in(world.log, "start"), groups_in(world.log, "stop")
    assert started == sorted(started, key=POSITION.__getitem__), world.log
    assert stopped == sorted(stopped, key=POSITION.__getitem__, reverse=True), world.log
    assert sorted(started, key=POSITION.__getitem__) == [
        stage.group for stage in START_ORDER for _ in range(PER_GROUP)
    ]
    assert len(world.log) == 2 * len(recorders)  # each started once and stopped once
    assert [what for what, _, _ in world.log] == ["start"] * len(recorders) + ["stop"] * len(
        recorders
    )

    by_group: dict[Group, list[Recorder]] = {}
    for recorder in recorders:
        by_group.setdefault(recorder.group, []).append(recorder)

    def seen(group: Group, event: str, key: str) -> set[Any]:
        return {recorder.seen[event][key] for recorder in by_group[group]}

    # Started: the HTTP servers serve before anything else starts; caches synced before the
    # runnables that read them; no Lease before leader election; leader-only once leading.
    for group in (Group.WEBHOOKS, Group.CACHES, Group.OTHERS, Group.WARMUP, Group.LEADER_ONLY):
        assert seen(group, "start", "http servers") == {True}, group
    for group in (Group.OTHERS, Group.WARMUP, Group.LEADER_ELECTION, Group.LEADER_ONLY):
        assert seen(group, "start", "caches synced") == {True}, group
    for group in (Group.WEBHOOKS, Group.CACHES, Group.OTHERS, Group.WARMUP):
        assert seen(group, "start", "holder") == {None}, group
    assert seen(Group.LEADER_ONLY, "start", "holder") == {IDENTITY}

    # Stopped: leader-only runnables while the lease is held; the lease released before the
    # other runnables stop; the HTTP servers still serve while caches and webhooks stop.
    assert seen(Group.LEADER_ONLY, "stop", "holder") == {IDENTITY}
    for group in (Group.WARMUP, Group.OTHERS, Group.CACHES, Group.WEBHOOKS):
        assert seen(group, "stop", "holder") == {""}, group
    for group in (Group.LEADER_ONLY, Group.OTHERS, Group.CACHES, Group.WEBHOOKS):
        assert seen(group, "stop", "http servers") == {True}, group


async def test_a_runnable_added_while_running_starts_at_once_and_stops_with_its_group() -> None:
    """controller-runtime's runnables.Add: added before Start, a runnable starts with its group;
    added after its group started, at once."""
    api = FakeAPI()
    manager = leader_elected_manager(api)
    async with AsyncClient(api.config()) as reader:
        world = World(manager, reader)
        early = Recorder("early", Group.LEADER_ONLY, world)
        manager.add(early)
        async with run_manager(manager):
            await eventually(lambda: "start" in early.seen, describe="the early runnable")
            late = [Recorder("late-other", Group.OTHERS, world)]
            late.append(Recorder("late-leader-only", Group.LEADER_ONLY, world))
            for recorder in late:
                manager.add(recorder)
            await eventually(lambda: all("start" in r.seen for r in late), describe="late ones")
    stops = [name for what, _, name in world.log if what == "stop"]
    assert sorted(stops[:2]) == ["early", "late-leader-only"]  # one group: concurrently
    assert stops[2:] == ["late-other"]


class HeldLists(httpx.AsyncBaseTransport):
    """Holds every LIST of ConfigMaps until ``release`` is set: the caches cannot sync before."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner
        self.release = asyncio.Event()
        self.held = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        is_watch = request.url.params.get("watch") in ("true", "1")
        if request.url.path.endswith("/configmaps") and not is_watch:
            self.held += 1
            await self.release.wait()
        return await self.inner.handle_async_request(request)


async def test_a_runnable_added_while_the_caches_sync_starts_once_after_they_synced() -> None:
    """Added after start() but before its group started, a runnable waits for its group
    (controller-runtime's runnableGroup queues it until the group starts); it used to be
    launched at once and launched again when the caches had synced."""
    api = FakeAPI()
    base = api.config()
    assert base.transport is not None
    lists = HeldLists(base.transport)
    manager = Manager(
        base.with_options(transport=lists), options=ManagerOptions(metrics_bind_address="0")
    )
    manager.informer_factory.informer(("v1", "ConfigMap"))
    async with AsyncClient(api.config()) as reader:
        world = World(manager, reader)
        task = asyncio.ensure_future(manager.start())
        try:
            await eventually(lambda: lists.held > 0, describe="the caches syncing")
            late = Recorder("late", Group.OTHERS, world)
            manager.add(late, need_leader_election=False)
            lists.release.set()
            await eventually(lambda: "start" in late.seen, describe="the late runnable started")
            await eventually(lambda: manager.is_leader(), describe="every group started")
        finally:
            manager.stop()
            await task
    assert [(what, name) for what, _, name in world.log] == [("start", "late"), ("stop", "late")]
    assert late.seen["start"]["caches synced"] is True
