"""Watches that do not read, fail or crowd the server: bounded buffers, isolated failures and a
fan-out that is not the write's work, on both storages.

The apiserver's cacher (k8s.io/apiserver pkg/storage/cacher/cache_watcher.go) gives each watcher
a channel of a bounded size and terminates a watcher whose channel is full instead of waiting for
it (``cacheWatcher.add``); the hub here does the same with its buffer of ``WATCH_BUFFER`` events.
"""

from __future__ import annotations

import asyncio
import json
import threading
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kubectrl._internal.clock import RealClock
from kubectrl.apiserver._endpoints import watch as _watch
from kubectrl.apiserver._endpoints.core import APICore
from kubectrl.apiserver._endpoints.watch import WatchStream
from kubectrl.apiserver._router import Reply, Request
from kubectrl.apiserver._storage.memory import MemoryStorage, Storage
from kubectrl.apiserver._storage.sqlite import SQLiteStorage

CMS = "/api/v1/namespaces/d/configmaps"
MiB = 1024 * 1024
DEADLINE = 10.0


@pytest.fixture(params=["memory", "sqlite"])
def core(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[APICore]:
    storage: Storage = (
        MemoryStorage() if request.param == "memory" else SQLiteStorage(tmp_path / "s.db")
    )
    core = APICore(RealClock(), storage=storage)
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "d"}}
    assert _reply(core.handle(_request("POST", "/api/v1/namespaces", ns))).code == 201
    yield core
    if isinstance(storage, SQLiteStorage):
        storage.close()


def _request(method: str, path: str, body: Any = None, **params: str) -> Request:
    raw = b"" if body is None else json.dumps(body).encode()
    return Request(method, path, params=params, body=raw)


def _reply(answer: Reply | WatchStream) -> Reply:
    assert isinstance(answer, Reply), answer
    return answer


def _create(core: APICore, name: str, value: str = "") -> dict[str, Any]:
    body = {"metadata": {"name": name}, "data": {"v": value}}
    created = _reply(core.handle(_request("POST", CMS, body)))
    assert created.code == 201, created.body
    return dict(created.body)


def _update(core: APICore, obj: dict[str, Any], value: str) -> dict[str, Any]:
    name = obj["metadata"]["name"]
    updated = _reply(core.handle(_request("PUT", f"{CMS}/{name}", {**obj, "data": {"v": value}})))
    assert updated.code == 200, updated.body
    return dict(updated.body)


def _watch_from(core: APICore, obj: dict[str, Any], **params: str) -> WatchStream:
    rv = obj["metadata"]["resourceVersion"]
    stream = core.handle(_request("GET", CMS, watch="1", resourceVersion=rv, **params))
    assert isinstance(stream, WatchStream), stream
    return stream


async def _read_all(stream: WatchStream) -> list[dict[str, Any]]:
    """The stream's events until it ends (a stream that never ends fails the test)."""

    async def collect() -> list[dict[str, Any]]:
        return [json.loads(line) async for line in stream]

    return await asyncio.wait_for(collect(), DEADLINE)


async def _read(stream: WatchStream, count: int) -> list[dict[str, Any]]:
    """The next ``count`` events of a stream (within the deadline)."""
    lines = stream.__aiter__()

    async def collect() -> list[dict[str, Any]]:
        return [json.loads(await anext(lines)) for _ in range(count)]

    return await asyncio.wait_for(collect(), DEADLINE)


async def test_a_watch_that_never_reads_is_ended_and_holds_a_bounded_buffer(
    core: APICore,
) -> None:
    """cache_watcher.go ``add``: a watcher that cannot take an event is terminated. Before the
    fix, 1,000 events of 64 KiB to a watch that never reads grew the server by ~64 MiB."""
    big = "x" * (64 * 1024)
    obj = _create(core, "big")
    stalled = _watch_from(core, obj)  # opened, never read while the writes happen
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for i in range(1000):
            obj = _update(core, obj, f"{i}{big}")
            if i % 50 == 0:
                core.storage.compact()  # history is not what this test measures
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    # The buffer's bound: WATCH_BUFFER lines of ~64 KiB (6.4 MiB), and up to 50 changes of
    # history between compactions (in memory); the old unbounded queue grew by ~64 MiB.
    assert grown < 32 * MiB, f"the server grew by {grown / MiB:.1f} MiB"
    # The watch was ended: its client sees the stream end and watches again from the last
    # resourceVersion it saw (here, one it never saw anything after).
    events = await _read_all(stalled)
    assert len(events) <= _watch.WATCH_BUFFER
    assert core.hub.watchers == []


async def test_a_loop_that_stops_taking_changes_has_its_watches_ended(core: APICore) -> None:
    """Writes from another thread while the watch's loop is blocked: the changes waiting for
    that loop are bounded too, and its watches end (their clients watch again)."""
    obj = _create(core, "a")
    stream = _watch_from(core, obj)

    def writes() -> None:
        current = obj
        for i in range(1500):
            current = _update(core, current, str(i))

    writer = threading.Thread(target=writes)
    writer.start()
    writer.join()  # blocks this loop: it takes none of the changes meanwhile
    events = await _read_all(stream)
    assert len(events) <= _watch.WATCH_BUFFER
    assert core.hub.watchers == []
    # The writes all succeeded, and a new watch from the last one sees the next.
    last = _reply(core.handle(_request("GET", f"{CMS}/a"))).body
    assert last["data"] == {"v": "1499"}
    again = _watch_from(core, last)
    _update(core, last, "next")
    (event,) = await _read(again, 1)
    assert (event["type"], event["object"]["data"]) == ("MODIFIED", {"v": "next"})
    await again.aclose()


async def test_a_failing_watch_fails_neither_the_write_nor_the_other_watches(
    core: APICore,
) -> None:
    obj = _create(core, "a")
    good, bad = _watch_from(core, obj), _watch_from(core, obj)

    def boom(*args: object, **kwargs: object) -> bytes:
        raise ValueError("this watch cannot encode its event")

    bad.watcher.change_line = boom  # type: ignore[method-assign]
    updated = _update(core, obj, "2")  # the write succeeds
    (event,) = await _read(good, 1)
    assert event["object"]["metadata"]["resourceVersion"] == updated["metadata"]["resourceVersion"]
    assert await _read_all(bad) == []  # ended, without an event it could not encode
    assert core.hub.watchers == [good.watcher]
    await good.aclose()


async def test_the_write_does_not_fan_out_and_each_form_is_encoded_once(
    core: APICore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before the fix the write rendered and encoded the event once per watch (200 reading
    watches took a write from 6 ms to 127 ms); now the write hands the change to the loop's feed
    and the feed encodes each form of it (version, metadata-only, type) once."""
    obj = _create(core, "a")
    streams = [_watch_from(core, obj) for _ in range(50)]
    meta = _watch_from(core, obj, labelSelector="")
    renders: list[bool] = []
    real_render = _watch.render

    def counting(*args: Any, **kwargs: Any) -> dict[str, Any]:
        renders.append(True)
        return real_render(*args, **kwargs)

    monkeypatch.setattr(_watch, "render", counting)
    updated = _update(core, obj, "2")
    assert renders == []  # the write's own work encodes nothing for the watches
    rv = updated["metadata"]["resourceVersion"]
    for stream in [*streams, meta]:
        (event,) = await _read(stream, 1)
        assert (event["type"], event["object"]["metadata"]["resourceVersion"]) == ("MODIFIED", rv)
    assert len(renders) == 1  # one form served: encoded once for the 51 watches
    for stream in [*streams, meta]:
        await stream.aclose()


async def test_bookmarks_and_ends_come_after_the_changes_before_them(core: APICore) -> None:
    obj = _create(core, "a")
    stream = _watch_from(core, obj, allowWatchBookmarks="true")
    updated = _update(core, obj, "2")
    assert core.hub.bookmark(lambda w: True) == 1
    assert core.hub.drop(lambda w: True) == 1
    events = await _read_all(stream)
    rv = updated["metadata"]["resourceVersion"]
    assert [(e["type"], e["object"]["metadata"]["resourceVersion"]) for e in events] == [
        ("MODIFIED", rv),
        ("BOOKMARK", rv),
    ]
