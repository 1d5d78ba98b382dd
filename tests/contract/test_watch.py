"""Watches: events in order from a resourceVersion, selector filtering, bookmarks, 410.

Upstream: staging/src/k8s.io/apiserver/pkg/storage/cacher/cache_watcher.go
(convertToWatchEvent: an object leaving a selector is a DELETED event; nextBookmarkTime: a
bookmark is sent 2 s before the watch's deadline and about every minute, and the initial-events-end
bookmark right after the initial events of a streaming list) and
staging/src/k8s.io/apiserver/pkg/storage/cacher/watch_cache.go (a resourceVersion older than the
cache's window is 410 Expired "too old resource version").
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from contract_helpers import CM, Target, configmap, unique

from kubectrl.client import EventType, WatchStream
from kubectrl.errors import ExpiredError

TIMEOUT = 30


async def _collect(stream: WatchStream, until: str, *, bookmarks: bool = False) -> list[Any]:
    """(type, name) of events until the object named ``until`` is seen (bookmarks skipped)."""
    seen: list[Any] = []

    async def read() -> None:
        async for event in stream:
            if event.type is EventType.BOOKMARK:
                if bookmarks:
                    seen.append((event.type, event.resource_version))
                continue
            seen.append((event.type, event.object["metadata"]["name"]))
            if event.object["metadata"]["name"] == until:
                return
        raise AssertionError(f"the watch ended before {until} was seen; saw {seen}")

    await asyncio.wait_for(read(), TIMEOUT)
    return seen


async def test_watch_from_list_rv_sees_exactly_later_changes_in_order(target: Target) -> None:
    c, ns = target.client, await target.new_namespace()
    await c.create(configmap("before", ns))
    rv = (await c.list(CM, namespace=ns))["metadata"]["resourceVersion"]
    await c.create(configmap("obj", ns, {"v": "1"}))
    await c.patch(CM, "obj", {"data": {"v": "2"}}, namespace=ns)
    await c.delete(CM, "obj", namespace=ns)
    await c.create(configmap("marker", ns))
    async with c.watch(CM, namespace=ns, resource_version=rv) as stream:
        seen = await _collect(stream, "marker")
    assert seen == [
        (EventType.ADDED, "obj"),
        (EventType.MODIFIED, "obj"),
        (EventType.DELETED, "obj"),
        (EventType.ADDED, "marker"),
    ]


async def test_watch_event_objects_carry_growing_resource_versions(target: Target) -> None:
    c, ns = target.client, await target.new_namespace()
    rv = (await c.list(CM, namespace=ns))["metadata"]["resourceVersion"]
    created = await c.create(configmap("obj", ns))
    await c.patch(CM, "obj", {"data": {"v": "2"}}, namespace=ns)
    await c.delete(CM, "obj", namespace=ns)
    rvs: list[int] = []
    async with c.watch(CM, namespace=ns, resource_version=rv) as stream:

        async def read() -> None:
            async for event in stream:
                if event.type is not EventType.BOOKMARK:
                    rvs.append(int(event.object["metadata"]["resourceVersion"]))
                if event.type is EventType.DELETED:
                    return

        await asyncio.wait_for(read(), TIMEOUT)
    assert rvs[0] == int(created["metadata"]["resourceVersion"])
    assert rvs == sorted(rvs)
    assert len(set(rvs)) == 3


async def test_watch_without_resource_version_starts_with_synthetic_added(
    target: Target,
) -> None:
    c, ns = target.client, await target.new_namespace()
    await c.create(configmap("old-a", ns))
    await c.create(configmap("old-b", ns))
    async with c.watch(CM, namespace=ns) as stream:
        first = await _collect(stream, "old-b")
    names = sorted(name for _, name in first)
    assert names == ["old-a", "old-b"]
    assert {t for t, _ in first} == {EventType.ADDED}


async def test_label_selector_watch_sees_leaving_as_deleted(target: Target) -> None:
    c, ns = target.client, await target.new_namespace()
    rv = (await c.list(CM, namespace=ns))["metadata"]["resourceVersion"]
    await c.create(configmap("obj", ns, labels={"keep": "yes"}))
    await c.create(configmap("other", ns))
    await c.patch(CM, "obj", {"metadata": {"labels": {"keep": "no"}}}, namespace=ns)
    await c.patch(CM, "obj", {"metadata": {"labels": {"keep": "yes"}}}, namespace=ns)
    await c.create(configmap("marker", ns, labels={"keep": "yes"}))
    async with c.watch(CM, namespace=ns, resource_version=rv, label_selector="keep=yes") as s:
        seen = await _collect(s, "marker")
    assert seen == [
        (EventType.ADDED, "obj"),
        (EventType.DELETED, "obj"),
        (EventType.ADDED, "obj"),
        (EventType.ADDED, "marker"),
    ]


async def test_field_selector_watch_by_name(target: Target) -> None:
    c, ns = target.client, await target.new_namespace()
    rv = (await c.list(CM, namespace=ns))["metadata"]["resourceVersion"]
    await c.create(configmap("noise", ns))
    await c.create(configmap("wanted", ns))
    async with c.watch(
        CM, namespace=ns, resource_version=rv, field_selector="metadata.name=wanted"
    ) as stream:
        seen = await _collect(stream, "wanted")
    assert seen == [(EventType.ADDED, "wanted")]


async def test_all_namespaces_watch(target: Target) -> None:
    c = target.client
    ns1, ns2 = await target.new_namespace(), await target.new_namespace()
    label = unique("w")
    rv = (await c.list(CM, label_selector=f"run={label}"))["metadata"]["resourceVersion"]
    await c.create(configmap("a", ns1, labels={"run": label}))
    await c.create(configmap("b", ns2, labels={"run": label}))
    async with c.watch(CM, resource_version=rv, label_selector=f"run={label}") as stream:
        seen = await _collect(stream, "b")
    assert seen == [(EventType.ADDED, "a"), (EventType.ADDED, "b")]


async def test_finalizer_delete_is_modified_then_deleted(target: Target) -> None:
    c, ns = target.client, await target.new_namespace()
    obj = configmap("held", ns)
    obj["metadata"]["finalizers"] = ["contract.kubectrl.test/hold"]
    rv = (await c.list(CM, namespace=ns))["metadata"]["resourceVersion"]
    await c.create(obj)
    await c.delete(CM, "held", namespace=ns)
    await c.patch(CM, "held", {"metadata": {"finalizers": None}}, namespace=ns)
    await c.create(configmap("marker", ns))
    async with c.watch(CM, namespace=ns, resource_version=rv) as stream:
        seen = await _collect(stream, "marker")
    assert seen == [
        (EventType.ADDED, "held"),
        (EventType.MODIFIED, "held"),
        (EventType.DELETED, "held"),
        (EventType.ADDED, "marker"),
    ]


async def test_streaming_list_ends_with_initial_events_end_bookmark(target: Target) -> None:
    c, ns = target.client, await target.new_namespace()
    for i in range(3):
        await c.create(configmap(f"s-{i}", ns))
    added: list[str] = []
    async with c.watch(
        CM,
        namespace=ns,
        send_initial_events=True,
        resource_version_match="NotOlderThan",
        resource_version="",
    ) as stream:

        async def read() -> Any:
            async for event in stream:
                if event.type is EventType.ADDED:
                    added.append(event.object["metadata"]["name"])
                if event.is_initial_events_end:
                    return event
            raise AssertionError("the stream ended before the initial-events-end bookmark")

        bookmark = await asyncio.wait_for(read(), TIMEOUT)
    assert sorted(added) == ["s-0", "s-1", "s-2"]
    assert bookmark.type is EventType.BOOKMARK
    annotations = bookmark.object["metadata"]["annotations"]
    assert annotations == {"k8s.io/initial-events-end": "true"}
    assert stream.resource_version == bookmark.resource_version


async def test_bookmark_before_the_watch_timeout(target: Target) -> None:
    """With allowWatchBookmarks the server sends a bookmark 2 s before timeoutSeconds
    (cache_watcher.go nextBookmarkTime) once the resourceVersion has moved past the start."""
    c, ns = target.client, await target.new_namespace()
    created = await c.create(configmap("b", ns))
    start = created["metadata"]["resourceVersion"]
    bookmarks: list[str] = []
    async with c.watch(
        CM, namespace=ns, resource_version=start, allow_watch_bookmarks=True, timeout_seconds=3
    ) as stream:
        # Only events newer than the watch's start are sent (cache_watcher.go process), so
        # move the resourceVersion on with a write this watch does not see.
        await c.create(configmap(unique("elsewhere"), target.namespace))

        async def read() -> None:
            async for event in stream:
                if event.type is EventType.BOOKMARK:
                    bookmarks.append(event.resource_version)

        await asyncio.wait_for(read(), TIMEOUT)  # ends cleanly at timeoutSeconds
    assert bookmarks, "no bookmark before the timeout"
    assert int(bookmarks[-1]) > int(start)
    assert bookmarks[-1] == stream.resource_version


async def test_compacted_resource_version_is_410_expired_for_watch_and_list(
    target: Target,
) -> None:
    c, ns, name = target.client, target.namespace, unique("old")
    created = await c.create(configmap(name, ns))
    old_rv = created["metadata"]["resourceVersion"]
    for i in range(3):
        await c.patch(CM, name, {"data": {"n": str(i)}}, namespace=ns)
    await target.compact()

    async def watch_from(rv: str) -> None:
        async with c.watch(CM, namespace=ns, resource_version=rv, timeout_seconds=5) as s:
            async for _ in s:
                pass

    with pytest.raises(ExpiredError) as info:
        await asyncio.wait_for(watch_from(old_rv), TIMEOUT)
    assert (info.value.code, info.value.reason) == (410, "Expired")
    assert f"too old resource version: {old_rv}" in info.value.server_message
    with pytest.raises(ExpiredError) as listed:
        await c.list(CM, namespace=ns, resource_version=old_rv, resource_version_match="Exact")
    assert listed.value.code == 410
    # A watch from after the compaction works.
    rv = (await c.list(CM, namespace=ns))["metadata"]["resourceVersion"]
    await c.patch(CM, name, {"data": {"n": "after"}}, namespace=ns)
    async with c.watch(CM, namespace=ns, resource_version=rv) as stream:
        seen = await _collect(stream, name)
    assert seen == [(EventType.MODIFIED, name)]


async def test_streaming_list_with_a_label_selector(target: Target) -> None:
    c, ns = target.client, await target.new_namespace()
    await c.create(configmap("in-1", ns, labels={"pick": "yes"}))
    await c.create(configmap("out", ns))
    await c.create(configmap("in-2", ns, labels={"pick": "yes"}))
    added: list[str] = []
    async with c.watch(
        CM,
        namespace=ns,
        label_selector="pick=yes",
        send_initial_events=True,
        resource_version_match="NotOlderThan",
        resource_version="",
    ) as stream:

        async def read() -> None:
            async for event in stream:
                if event.type is EventType.ADDED:
                    added.append(event.object["metadata"]["name"])
                if event.is_initial_events_end:
                    return

        await asyncio.wait_for(read(), TIMEOUT)
    assert sorted(added) == ["in-1", "in-2"]


async def test_delete_collection_is_one_deleted_event_per_object(target: Target) -> None:
    c, ns = target.client, await target.new_namespace()
    for i in range(3):
        await c.create(configmap(f"cm-{i}", ns, labels={"batch": "1"}))
    rv = (await c.list(CM, namespace=ns))["metadata"]["resourceVersion"]
    await c.delete_collection(CM, namespace=ns, label_selector="batch=1")
    await c.create(configmap("marker", ns))
    async with c.watch(CM, namespace=ns, resource_version=rv) as stream:
        seen = await _collect(stream, "marker")
    assert sorted(seen[:-1]) == [(EventType.DELETED, f"cm-{i}") for i in range(3)]
    assert seen[-1] == (EventType.ADDED, "marker")
