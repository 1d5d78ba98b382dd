"""The informer's fan-out, fed by an in-memory event sequence (no API server)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from cache_fakes import FakeServer, cm, eventually

from kubectrl._internal.clock import FakeClock
from kubectrl.cache import (
    CacheSyncError,
    DeletedFinalStateUnknown,
    Informer,
    Notification,
    ReflectorOptions,
    strip_managed_fields,
)
from kubectrl.errors import ExpiredError, ForbiddenError, NotFoundError

LIST_ONLY = ReflectorOptions(streaming_list=False)
STREAMING = ReflectorOptions(streaming_list=True)


class Recorder:
    """A handler (protocol form) that records what it saw as compact tuples."""

    def __init__(self) -> None:
        self.seen: list[tuple[Any, ...]] = []

    def on_add(self, obj: dict[str, Any], is_in_initial_list: bool) -> None:
        self.seen.append(("add", obj["metadata"]["name"], is_in_initial_list))

    def on_update(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        self.seen.append(
            ("update", new["metadata"]["name"], old["metadata"]["resourceVersion"],
             new["metadata"]["resourceVersion"])
        )  # fmt: skip

    def on_delete(self, obj: Any) -> None:
        if isinstance(obj, DeletedFinalStateUnknown):
            self.seen.append(("tombstone", obj.key, obj.obj["metadata"]["resourceVersion"]))
        else:
            self.seen.append(("delete", obj["metadata"]["name"]))


def informer_for(server: FakeServer, **kwargs: Any) -> Informer:
    kwargs.setdefault("reflector_options", LIST_ONLY)
    return Informer(server, **kwargs)


async def test_initial_list_then_watch_events_in_order() -> None:
    server = FakeServer([cm("a", 1), cm("b", 2)], rv=10)
    informer = informer_for(server)
    rec = Recorder()
    reg = informer.add_handler(rec)
    async with informer:
        await informer.wait_for_cache_sync(timeout=5)
        watch = await server.next_watch(1)
        assert server.lists[0].resource_version == "0"
        assert server.lists[0].limit == 500
        assert watch.options.resource_version == "10"
        assert watch.options.allow_watch_bookmarks
        assert 300 <= (watch.options.timeout_seconds or 0) < 600
        watch.send("MODIFIED", cm("a", 11))
        watch.send("ADDED", cm("c", 12))
        watch.send("DELETED", cm("b", 13))
        watch.bookmark(14)
        watch.send("ADDED", cm("a", 15))  # ADDED for a cached key is an update
        await eventually(lambda: len(rec.seen) == 6)
        assert reg.has_synced()
    assert rec.seen == [
        ("add", "a", True),
        ("add", "b", True),
        ("update", "a", "1", "11"),
        ("add", "c", False),
        ("delete", "b"),
        ("update", "a", "11", "15"),
    ]
    assert sorted(informer.indexer.list_keys()) == ["ns/a", "ns/c"]
    assert informer.last_sync_resource_version == "15"


async def test_relist_emits_tombstones_then_adds_and_updates_in_order() -> None:
    server = FakeServer([cm("a", 1), cm("b", 2), cm("c", 3)], rv=10)
    clock = FakeClock()
    informer = informer_for(server, clock=clock)
    rec = Recorder()
    informer.add_handler(rec)
    async with informer:
        await informer.wait_for_cache_sync(timeout=5)
        watch = await server.next_watch(1)
        # While the watch is down, b is deleted, c updated, d created.
        server.objects = {"d": cm("d", 20), "c": cm("c", 19), "a": cm("a", 1)}
        server.rv = 21
        watch.fail(ExpiredError("too old resource version"))
        await eventually(lambda: clock.sleepers() == 1)  # the reflector backs off
        clock.advance(clock.next_deadline() - clock.now())  # type: ignore[operator]
        await server.next_watch(2)
        await eventually(lambda: len(rec.seen) == 7)
    # After a 410 during the watch: relist at the last synced resourceVersion (the watch cache
    # answers "at least as fresh as 10"), not a quorum read.
    assert server.lists[1].resource_version == "10"
    assert rec.seen[3:] == [
        ("tombstone", "ns/b", "2"),
        ("add", "d", False),
        ("update", "c", "3", "19"),
        ("update", "a", "1", "1"),
    ]


async def test_blocked_handler_does_not_delay_another() -> None:
    server = FakeServer([cm("a", 1)], rv=10)
    informer = informer_for(server)
    gate = asyncio.Event()
    slow_seen: list[str] = []
    fast = Recorder()

    async def slow(n: Notification) -> None:
        await gate.wait()
        slow_seen.append(n.obj["metadata"]["name"])

    slow_reg = informer.add_handler(slow)
    informer.add_handler(fast)
    async with informer:
        watch = await server.next_watch(1)
        for i in range(50):
            watch.send("ADDED", cm(f"x{i}", 11 + i))
        # The fast handler receives everything while the slow one is stuck on its first call.
        await eventually(lambda: len(fast.seen) == 51)
        assert slow_seen == []
        assert slow_reg.pending == 50
        gate.set()
        await eventually(lambda: len(slow_seen) == 51)
    assert slow_seen == ["a"] + [f"x{i}" for i in range(50)]


async def test_async_handler_calls_never_overlap_and_keep_order() -> None:
    """An idle handler is called at once, on the informer's stack; an ``async`` call that
    suspends is finished by the handler's task before the next notification starts."""
    server = FakeServer([cm("a", 1)], rv=10)
    informer = informer_for(server)
    trace: list[str] = []

    async def handler(n: Notification) -> None:
        name = n.obj["metadata"]["name"]
        trace.append(f"start {name}")
        for _ in range(3):
            await asyncio.sleep(0)
        trace.append(f"end {name}")

    reg = informer.add_handler(handler)
    async with informer:
        watch = await server.next_watch(1)
        for i in range(20):
            watch.send("ADDED", cm(f"x{i}", 11 + i))
            if i % 3 == 0:
                await asyncio.sleep(0)  # some arrive while a call runs, some while idle
        await eventually(lambda: len(trace) == 42)
    names = ["a"] + [f"x{i}" for i in range(20)]
    assert trace == [step for name in names for step in (f"start {name}", f"end {name}")]
    assert (reg.delivered, reg.errors) == (21, 0)


async def test_sync_handler_counts_every_delivery_and_error() -> None:
    server = FakeServer([cm("a", 1), cm("b", 2)], rv=10)
    informer = informer_for(server)
    seen: list[str] = []

    def handler(n: Notification) -> None:
        seen.append(n.obj["metadata"]["name"])
        if n.obj["metadata"]["name"] == "bad":
            raise ValueError("bad object")

    reg = informer.add_handler(handler)
    async with informer:
        await informer.wait_for_cache_sync(timeout=5)
        watch = await server.next_watch(1)
        for name in ("c", "bad", "d"):
            watch.send("ADDED", cm(name, 11))
        await eventually(lambda: len(seen) == 5)
        assert reg.has_synced()
        assert reg.pending == 0
    assert seen == ["a", "b", "c", "bad", "d"]
    assert (reg.delivered, reg.errors) == (5, 1)


async def test_raising_handler_keeps_receiving(caplog: pytest.LogCaptureFixture) -> None:
    server = FakeServer([cm("a", 1)], rv=10)
    informer = informer_for(server)
    seen: list[str] = []

    def flaky(n: Notification) -> None:
        seen.append(n.obj["metadata"]["name"])
        raise RuntimeError("handler bug")

    reg = informer.add_handler(flaky)
    async with informer:
        watch = await server.next_watch(1)
        watch.send("ADDED", cm("b", 11))
        watch.send("ADDED", cm("c", 12))
        await eventually(lambda: len(seen) == 3)
    assert seen == ["a", "b", "c"]
    assert reg.errors == 3
    assert "event handler raised" in caplog.text


async def test_late_handler_gets_cached_objects_first_then_new_events() -> None:
    server = FakeServer([cm("a", 1), cm("b", 2)], rv=10)
    informer = informer_for(server)
    async with informer:
        await informer.wait_for_cache_sync(timeout=5)
        watch = await server.next_watch(1)
        watch.send("ADDED", cm("c", 11))
        await eventually(lambda: "ns/c" in informer.indexer)
        late = Recorder()
        reg = informer.add_handler(late)
        assert not reg.has_synced()
        watch.send("MODIFIED", cm("a", 12))
        await eventually(lambda: len(late.seen) == 4)
        assert reg.has_synced()
    assert sorted(late.seen[:3]) == [("add", "a", True), ("add", "b", True), ("add", "c", True)]
    assert late.seen[3] == ("update", "a", "1", "12")


async def test_removed_handler_receives_nothing_more() -> None:
    server = FakeServer([], rv=10)
    informer = informer_for(server)
    keep, gone = Recorder(), Recorder()
    informer.add_handler(keep)
    reg = informer.add_handler(gone)
    async with informer:
        watch = await server.next_watch(1)
        watch.send("ADDED", cm("a", 11))
        await eventually(lambda: len(gone.seen) == 1)
        reg.remove()
        watch.send("ADDED", cm("b", 12))
        await eventually(lambda: len(keep.seen) == 2)
    assert gone.seen == [("add", "a", False)]
    assert informer.handlers == [h for h in informer.handlers if h.handler is keep]


async def test_plain_function_and_keyword_handlers() -> None:
    server = FakeServer([cm("a", 1)], rv=10)
    informer = informer_for(server)
    notes: list[Notification] = []
    adds: list[str] = []
    informer.add_handler(notes.append)
    informer.add_handler(on_add=lambda obj, initial: adds.append(obj["metadata"]["name"]))
    async with informer:
        watch = await server.next_watch(1)
        watch.send("DELETED", cm("a", 11))
        await eventually(lambda: len(notes) == 2)
    assert [n.type for n in notes] == ["add", "delete"]
    assert notes[0].is_in_initial_list
    assert adds == ["a"]  # no on_delete given: skipped


async def test_transform_strips_managed_fields_before_storing() -> None:
    obj = cm("a", 1)
    obj["metadata"]["managedFields"] = [{"manager": "kubectl"}]
    server = FakeServer([obj], rv=10)
    informer = informer_for(server, transform=strip_managed_fields)
    async with informer:
        await informer.wait_for_cache_sync(timeout=5)
        assert "managedFields" not in informer.indexer.get_by_key("ns/a")["metadata"]  # type: ignore[index]


def with_managed_fields(obj: dict[str, Any]) -> dict[str, Any]:
    obj["metadata"]["managedFields"] = [{"manager": "kubectl", "fieldsV1": {"f:data": {}}}]
    return obj


async def test_managed_fields_are_dropped_from_listed_and_watched_objects_by_default() -> None:
    server = FakeServer([with_managed_fields(cm("a", 1))], rv=10)
    informer = informer_for(server)
    seen: list[dict[str, Any]] = []
    informer.add_handler(on_add=lambda obj, initial: seen.append(obj))
    async with informer:
        await informer.wait_for_cache_sync(timeout=5)
        watch = await server.next_watch(1)
        watch.send("ADDED", with_managed_fields(cm("b", 11)))
        await eventually(lambda: informer.indexer.get_by_key("ns/b") is not None)
        for key in ("ns/a", "ns/b"):
            stored = informer.indexer.get_by_key(key)
            assert stored is not None
            assert "managedFields" not in stored["metadata"]
            assert stored["metadata"]["name"] == key[3:]
        await eventually(lambda: len(seen) == 2)
    assert all("managedFields" not in obj["metadata"] for obj in seen)


async def test_keep_managed_fields_keeps_them_and_a_transform_still_runs() -> None:
    server = FakeServer([with_managed_fields(cm("a", 1))], rv=10)

    def label(obj: dict[str, Any]) -> dict[str, Any]:
        obj["metadata"].setdefault("labels", {})["seen"] = "yes"
        return obj

    informer = informer_for(server, keep_managed_fields=True, transform=label)
    async with informer:
        await informer.wait_for_cache_sync(timeout=5)
        stored = informer.indexer.get_by_key("ns/a")
        assert stored is not None
        assert stored["metadata"]["managedFields"][0]["manager"] == "kubectl"
        assert stored["metadata"]["labels"]["seen"] == "yes"


async def test_wait_for_cache_sync_names_resource_and_forbidden_error() -> None:
    server = FakeServer([], rv=10)
    forbidden = ForbiddenError(
        'configmaps is forbidden: User "bob" cannot list resource "configmaps"',
        reason="Forbidden",
        verb="list",
        resource="configmaps",
        namespace="ns",
    )
    server.list_errors = [forbidden] * 100
    clock = FakeClock()
    informer = informer_for(server, clock=clock)
    async with informer:
        waiting = asyncio.ensure_future(informer.wait_for_cache_sync(timeout=5))
        await eventually(lambda: informer.last_error is not None and clock.sleepers() >= 2)
        clock.advance(5)
        with pytest.raises(CacheSyncError) as info:
            await waiting
    message = str(info.value)
    assert "configmaps (fake)" in message
    assert "Forbidden" in message
    assert "within 5 s" in message


async def test_lister_reads_the_cache() -> None:
    server = FakeServer([cm("a", 1, app="web"), cm("b", 2, app="db")], rv=10)
    informer = informer_for(server)
    async with informer:
        await informer.wait_for_cache_sync(timeout=5)
        assert [o["metadata"]["name"] for o in informer.lister.list("app=web")] == ["a"]
        assert informer.lister.namespace("ns").get("b")["metadata"]["name"] == "b"
        with pytest.raises(NotFoundError):
            informer.lister.namespace("ns").get("zzz")


async def test_streaming_list_fills_store_at_initial_events_end_bookmark() -> None:
    server = FakeServer([], rv=10)
    informer = Informer(server, reflector_options=STREAMING)
    rec = Recorder()
    informer.add_handler(rec)
    async with informer:
        watch = await server.next_watch(1)
        assert watch.options.send_initial_events
        assert watch.options.resource_version_match == "NotOlderThan"
        watch.send("ADDED", cm("a", 5))
        watch.send("ADDED", cm("b", 6))
        watch.bookmark(8)  # an ordinary bookmark does not end the initial events
        assert not informer.has_synced()
        watch.bookmark(9, initial_end=True)
        await informer.wait_for_cache_sync(timeout=5)
        watch.send("MODIFIED", cm("a", 11))  # the same stream goes on as a watch
        await eventually(lambda: len(rec.seen) == 3)
    assert server.lists == []
    assert rec.seen == [("add", "a", True), ("add", "b", True), ("update", "a", "5", "11")]


async def test_streaming_list_error_falls_back_to_list() -> None:
    server = FakeServer([cm("a", 1)], rv=10)
    informer = Informer(server, reflector_options=STREAMING)
    async with informer:
        watch = await server.next_watch(1)
        watch.send("ADDED", cm("a", 1))
        watch.fail(ForbiddenError("sendInitialEvents not allowed", reason="BadRequest"))
        await informer.wait_for_cache_sync(timeout=5)
        assert len(server.lists) == 1
        watch2 = await server.next_watch(2)
        assert not watch2.options.send_initial_events


async def test_resync_redelivers_cached_objects_as_updates() -> None:
    server = FakeServer([cm("a", 1)], rv=10)
    clock = FakeClock()
    informer = informer_for(server, clock=clock)
    rec = Recorder()
    no_resync = Recorder()
    informer.add_handler(rec, resync_period=30)
    informer.add_handler(no_resync)
    async with informer:
        await informer.wait_for_cache_sync(timeout=5)
        await server.next_watch(1)
        await eventually(lambda: clock.sleepers() == 1)
        clock.advance(30)
        await eventually(lambda: len(rec.seen) == 2)
    assert rec.seen[1] == ("update", "a", "1", "1")
    assert no_resync.seen == [("add", "a", True)]
