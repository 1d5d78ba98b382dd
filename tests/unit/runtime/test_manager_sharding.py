"""ManagerOptions(sharding=...): Builder controllers run once per held shard, on its cache.

Three managers on one FakeAPI (which ignores ``shardSelector``, so the reflectors filter
client-side) share 6 shards of a ConfigMap controller that owns Secrets. Every wait is a
condition with a deadline.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import pytest

from kubectrl.cache._shard import shard_index
from kubectrl.client import AsyncClient
from kubectrl.runtime import Builder, Controller, Manager, ManagerOptions, Request
from kubectrl.runtime._sharding import ShardingOptions, current_shard, owner_in_shard
from kubectrl.runtime.source import ChannelSource
from kubectrl.testing import FakeAPI

SHARDS = 6
OBJECTS = 30
CM = ("v1", "ConfigMap")
SECRET = ("v1", "Secret")
FAST = {"lease_duration": 2.0, "renew_deadline": 1.5, "retry_period": 0.2}


async def until(cond: Callable[[], bool], timeout: float = 30.0) -> None:
    end = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < end, "condition not reached before the deadline"
        await asyncio.sleep(0.02)


def sharded_manager(api: FakeAPI, identity: str, log: list[tuple[str, str, int, bool]]) -> Manager:
    sharding = ShardingOptions(
        name="cms", namespace="default", shards=SHARDS, identity=identity, **FAST
    )
    manager = Manager(api.config(), options=ManagerOptions(sharding=sharding))

    async def reconcile(request: Request) -> None:
        shard = current_shard()
        assert shard is not None
        cm = await manager.client.get(CM, request.name, namespace="default")
        assert shard_index(cm, SHARDS) == shard.index
        # The owned Secret is read from the replica's unsharded cache of Secrets.
        secret = await manager.client.get(SECRET, request.name, namespace="default")
        log.append((identity, request.name, shard.index, secret is not None))

    Builder(manager).for_(CM).owns(SECRET).complete(reconcile)
    return manager


async def test_builder_controllers_run_per_held_shard_on_the_shard_cache() -> None:
    api = FakeAPI()
    log: list[tuple[str, str, int, bool]] = []
    async with AsyncClient(api.config()) as admin:
        for i in range(OBJECTS):
            cm = await admin.create(
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": f"cm-{i}", "namespace": "default"},
                }
            )
            owner = {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "name": cm["metadata"]["name"],
                "uid": cm["metadata"]["uid"],
                "controller": True,
            }
            await admin.create(
                {
                    "apiVersion": "v1",
                    "kind": "Secret",
                    "metadata": {
                        "name": f"cm-{i}",
                        "namespace": "default",
                        "ownerReferences": [owner],
                    },
                }
            )
        managers = [sharded_manager(api, f"m{i}", log) for i in range(3)]
        async with managers[0], managers[1], managers[2]:

            def held() -> list[frozenset[int]]:
                return [m.sharded_runner.held for m in managers if m.sharded_runner]

            await until(lambda: sorted(len(h) for h in held()) == [2, 2, 2])
            await until(lambda: len({name for _, name, _, _ in log}) == OBJECTS)
            owners: dict[str, set[str]] = {}
            for who, name, _, _ in log:
                owners.setdefault(name, set()).add(who)
            assert all(len(o) == 1 for o in owners.values()), owners
            # The manager's own cache holds no ConfigMaps: each shard's cache holds its part.
            for manager in managers:
                kinds = {key.resource for key in manager.informer_factory.informers}
                assert not any("configmap" in k.lower() for k in kinds), kinds
            # An owned Secret's change reconciles its owner, in the owner's shard only.
            before = len(log)
            await admin.patch(SECRET, "cm-3", {"data": {"x": "eA=="}}, namespace="default")
            await until(lambda: any(name == "cm-3" for _, name, _, _ in log[before:]))
            assert {who for who, name, _, _ in log[before:] if name == "cm-3"} == owners["cm-3"]


def test_a_sharded_manager_refuses_a_controller_it_cannot_shard() -> None:
    api = FakeAPI()
    sharding = ShardingOptions(name="x", namespace="default", shards=2)
    manager = Manager(api.config(), options=ManagerOptions(sharding=sharding))

    async def reconcile(request: Request) -> None:
        return None

    controller = Controller("channel", reconcile, sources=[ChannelSource("c")])
    with pytest.raises(ValueError, match="sharded controller channel: every source must be"):
        manager.add(controller)


@pytest.mark.parametrize(
    ("obj", "passes"),
    [
        ({"metadata": {"ownerReferences": [{"uid": "a", "controller": True}]}}, True),
        ({"metadata": {"ownerReferences": [{"uid": "a"}]}}, False),
        ({"metadata": {}}, False),
    ],
)
def test_owner_in_shard_follows_the_controlling_owner(obj: dict[str, Any], passes: bool) -> None:
    from kubectrl.cache._shard import ShardSelector
    from kubectrl.runtime.handler import CreateEvent

    inside = next(i for i in range(4) if ShardSelector.of(i, 4).matches({"metadata": {"uid": "a"}}))
    assert owner_in_shard(ShardSelector.of(inside, 4))(CreateEvent(obj)) is passes
    outside = (inside + 1) % 4
    assert owner_in_shard(ShardSelector.of(outside, 4))(CreateEvent(obj)) is False


async def test_namespace_sharding_caches_owner_and_owned_per_shard() -> None:
    api = FakeAPI()
    log: list[tuple[str, str, int]] = []
    namespaces = [f"ns-{i}" for i in range(12)]
    async with AsyncClient(api.config()) as admin:
        for ns in namespaces:
            await admin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
            await admin.create(
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": "cm", "namespace": ns},
                }
            )

    def make(identity: str) -> Manager:
        sharding = ShardingOptions(
            name="by-ns",
            namespace="default",
            shards=4,
            field="namespace",
            identity=identity,
            **FAST,
        )
        manager = Manager(api.config(), options=ManagerOptions(sharding=sharding))

        async def reconcile(request: Request) -> None:
            shard = current_shard()
            assert shard is not None
            assert shard.selector.matches({"metadata": {"namespace": request.namespace}})
            await manager.client.get(CM, request.name, namespace=request.namespace)
            log.append((identity, request.namespace, shard.index))

        Builder(manager).for_(CM).owns(SECRET).complete(reconcile)
        return manager

    managers = [make("m0"), make("m1")]
    async with managers[0], managers[1]:
        await until(lambda: len({ns for _, ns, _ in log}) == len(namespaces))
        owners: dict[str, set[str]] = {}
        for who, ns, _ in log:
            owners.setdefault(ns, set()).add(who)
        assert all(len(o) == 1 for o in owners.values()), owners
        for manager in managers:
            # Owner and owned kinds are both cached per shard, none in the manager's cache.
            kinds = {key.resource for key in manager.informer_factory.informers}
            assert not any("configmap" in k or "secret" in k for k in kinds), kinds


async def test_a_mapped_watch_reaches_only_the_shard_holding_the_target() -> None:
    api = FakeAPI()
    log: list[tuple[str, str, int]] = []
    async with AsyncClient(api.config()) as admin:
        for i in range(OBJECTS):
            await admin.create(
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": f"cm-{i}", "namespace": "default"},
                }
            )
            await admin.create(
                {
                    "apiVersion": "v1",
                    "kind": "Secret",
                    "metadata": {"name": f"cm-{i}", "namespace": "default"},
                }
            )

        def make(identity: str) -> Manager:
            sharding = ShardingOptions(
                name="mapped", namespace="default", shards=SHARDS, identity=identity, **FAST
            )
            manager = Manager(api.config(), options=ManagerOptions(sharding=sharding))

            async def reconcile(request: Request) -> None:
                shard = current_shard()
                assert shard is not None
                log.append((identity, request.name, shard.index))

            def same_name(obj: dict[str, Any]) -> list[Request]:
                return [Request("default", obj["metadata"]["name"])]

            Builder(manager).for_(CM).watches(SECRET, same_name).complete(reconcile)
            return manager

        managers = [make("m0"), make("m1")]
        async with managers[0], managers[1]:
            await until(lambda: len({name for _, name, _ in log}) == OBJECTS)
            owners: dict[str, set[str]] = {}
            for who, name, _ in log:
                owners.setdefault(name, set()).add(who)
            assert all(len(o) == 1 for o in owners.values()), owners
            before = len(log)
            await admin.patch(SECRET, "cm-7", {"data": {"x": "eA=="}}, namespace="default")
            await until(lambda: any(name == "cm-7" for _, name, _ in log[before:]))
            assert {who for who, name, _ in log[before:] if name == "cm-7"} == owners["cm-7"]
