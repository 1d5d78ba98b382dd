"""Sharded runners on the in-memory API server: exclusive shards, fair shares, handover.

FakeAPI ignores ``shardSelector`` (as a kube-apiserver without the ShardedListAndWatch gate),
so these also exercise the reflector's client-side filtering. Real time with short leases;
every wait is a condition with a deadline.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable
from typing import Any

import pytest

from kubectrl.cache._shard import shard_index
from kubectrl.client import AsyncClient
from kubectrl.runtime import Controller, ControllerOptions, Request
from kubectrl.runtime._sharding import ShardContext, ShardedRunner, ShardingOptions
from kubectrl.runtime.source import KindSource
from kubectrl.testing import FakeAPI

SHARDS = 6
#: (object, replica, start, end) of every reconcile, on this process's monotonic clock.
intervals: list[tuple[str, str, float, float]] = []
OBJECTS = 60
FAST = {"lease_duration": 2.0, "renew_deadline": 1.5, "retry_period": 0.2}


async def until(cond: Callable[[], bool], timeout: float = 30.0) -> None:
    end = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < end, "condition not reached before the deadline"
        await asyncio.sleep(0.02)


class Replica:
    def __init__(self, api: FakeAPI, name: str, log: list[tuple[str, str, int]]) -> None:
        self.name = name
        self.client = AsyncClient(api.config())
        self.cached: dict[int, int] = {}

        def setup(context: ShardContext) -> list[Controller]:
            source = KindSource(context.factory, ("v1", "ConfigMap"), namespace="default")
            informer = source.informer

            async def reconcile(request: Request) -> None:
                began = time.monotonic()
                obj = informer.lister.namespace("default").get(request.name)
                assert obj is not None
                assert shard_index(obj, SHARDS) == context.index
                self.cached[context.index] = len(informer.indexer)
                await asyncio.sleep(0.005)  # a reconcile takes time: overlaps would show
                log.append((self.name, request.name, context.index))
                intervals.append((request.name, self.name, began, time.monotonic()))

            options = ControllerOptions(need_leader_election=False)
            return [Controller(f"cm-{context.index}", reconcile, sources=[source], options=options)]

        self.runner = ShardedRunner(
            self.client,
            ShardingOptions(name="cms", namespace="default", shards=SHARDS, identity=name, **FAST),
            setup,
            stop_timeout=5.0,
        )

    async def close(self) -> None:
        await self.runner.stop()
        await self.client.aclose()


async def test_replicas_share_the_shards_exclusively_and_hand_them_over() -> None:
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
    replicas = [Replica(api, f"r{i}", log) for i in range(3)]
    try:
        for r in replicas:
            await r.runner.start()

        def held() -> list[frozenset[int]]:
            return [r.runner.held for r in replicas]

        def balanced(rs: list[Replica], each: set[int]) -> bool:
            sets = [r.runner.held for r in rs]
            union = frozenset().union(*sets)
            return (
                union == frozenset(range(SHARDS))
                and sum(len(s) for s in sets) == SHARDS
                and {len(s) for s in sets} <= each
            )

        await until(lambda: balanced(replicas, {2}))
        await until(lambda: len({name for _, name, _ in log}) == OBJECTS)
        # Each object was reconciled by exactly one replica, in its own shard.
        owners: dict[str, set[str]] = {}
        for replica, name, _ in log:
            owners.setdefault(name, set()).add(replica)
        assert all(len(o) == 1 for o in owners.values()), owners
        # Each replica's caches hold only its shards' objects: about a third each.
        for r in replicas:
            assert 0 < sum(r.cached.values()) < OBJECTS
        assert sum(sum(r.cached.values()) for r in replicas) == OBJECTS

        # A graceful stop releases at once; the others take over its shards.
        gone = replicas.pop()
        await gone.close()
        assert gone.runner.held == frozenset()
        await until(lambda: balanced(replicas, {3}))

        # A new replica joins and takes shards over (6 over 3 again).
        joining = Replica(api, "r9", log)
        replicas.append(joining)
        await joining.runner.start()
        await until(lambda: balanced(replicas, {2}))
    finally:
        for r in replicas:
            await r.close()
    assert held() == [frozenset()] * len(replicas)
    # Never two replicas reconciling one object at once, through every handover.
    by_object: dict[str, list[tuple[float, float, str]]] = {}
    for name, replica, began, ended in intervals:
        by_object.setdefault(name, []).append((began, ended, replica))
    for name, spans in by_object.items():
        spans.sort()
        for (_, end_a, rep_a), (start_b, _, rep_b) in itertools.pairwise(spans):
            assert rep_a == rep_b or end_a <= start_b, (name, rep_a, rep_b)


@pytest.mark.parametrize("shards", [0, -1, True])
def test_bad_sharding_options_name_the_value(shards: Any) -> None:
    with pytest.raises(ValueError, match="shards must be an int >= 1"):
        ShardingOptions(name="x", namespace="default", shards=shards)
