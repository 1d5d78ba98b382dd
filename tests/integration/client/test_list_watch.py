"""Pagination, continue-token expiry, watch semantics and bookmarks on the real apiserver."""

from __future__ import annotations

import asyncio

import pytest
from client_helpers import configmap, etcd_compact

from kubectrl.client import AsyncClient, ClientConfig, EventType
from kubectrl.errors import ExpiredError

pytestmark = pytest.mark.integration

CM = ("v1", "ConfigMap")


async def test_1200_configmaps_over_3_pages_and_expired_continue(
    client_config: ClientConfig, namespace: str, control_plane
) -> None:
    async with AsyncClient(client_config.with_options(rate_limit=None)) as client:
        gate = asyncio.Semaphore(32)

        async def make(i: int) -> None:
            async with gate:
                await client.create(configmap(f"cm-{i:04d}", namespace, {"i": str(i)}))

        await asyncio.gather(*(make(i) for i in range(1200)))

        pages = [p async for p in client.list_pages(CM, namespace=namespace, limit=500)]
        assert [len(p["items"]) for p in pages] == [500, 500, 200]
        assert len({p["metadata"]["resourceVersion"] for p in pages}) == 1  # one snapshot
        collected = await client.list(CM, namespace=namespace, limit=500)
        names = {i["metadata"]["name"] for i in collected["items"]}
        assert {f"cm-{i:04d}" for i in range(1200)} <= names

        first = await anext(client.list_pages(CM, namespace=namespace, limit=500))
        token = first["metadata"]["continue"]
        # Make the snapshot the token points at older than etcd keeps. The watch cache keeps
        # its own snapshots for continuing lists (ListFromCacheSnapshot) and does not notice
        # an external compaction, so restart the apiserver: as after any apiserver roll, the
        # continuation must then be read from etcd, where that revision is gone.
        await client.patch(CM, "cm-0000", {"data": {"i": "changed"}}, namespace=namespace)
        etcd_compact(control_plane.etcd_endpoint)
        await asyncio.to_thread(control_plane.restart_apiserver)
        with pytest.raises(ExpiredError) as info:
            await anext(client.list_pages(CM, namespace=namespace, limit=500, continue_=token))
        assert info.value.code == 410
        assert "list configmaps" in str(info.value)

        # The same compacted revision is gone for watches too.
        async def watch_from(rv: str) -> None:
            async with client.watch(CM, namespace=namespace, resource_version=rv) as stream:
                async for _ in stream:
                    pass

        with pytest.raises(ExpiredError):
            await asyncio.wait_for(watch_from(first["metadata"]["resourceVersion"]), 30)


async def test_watch_from_list_rv_sees_exactly_later_changes(
    client: AsyncClient, namespace: str
) -> None:
    await client.create(configmap("before", namespace))
    listed = await client.list(CM, namespace=namespace)
    rv = listed["metadata"]["resourceVersion"]

    await client.create(configmap("after", namespace, {"v": "1"}))
    await client.patch(CM, "after", {"data": {"v": "2"}}, namespace=namespace)
    await client.delete(CM, "after", namespace=namespace)
    await client.create(configmap("marker", namespace))

    seen: list[tuple[EventType, str]] = []
    async with client.watch(CM, namespace=namespace, resource_version=rv) as stream:

        async def read() -> None:
            async for event in stream:
                if event.type is EventType.BOOKMARK:
                    continue
                seen.append((event.type, event.object["metadata"]["name"]))
                if event.object["metadata"]["name"] == "marker":
                    return

        await asyncio.wait_for(read(), 30)
    assert seen == [
        (EventType.ADDED, "after"),
        (EventType.MODIFIED, "after"),
        (EventType.DELETED, "after"),
        (EventType.ADDED, "marker"),
    ]


async def test_watch_from_compacted_rv_raises_expired(
    client: AsyncClient, namespace: str, control_plane
) -> None:
    await client.create(configmap("old", namespace))
    for i in range(3):
        await client.patch(CM, "old", {"data": {"n": str(i)}}, namespace=namespace)
    etcd_compact(control_plane.etcd_endpoint)
    # The watch cache does not notice an external compaction and may still serve an old
    # resourceVersion from its window (whether "1" is in it depends on when the cache started):
    # restart the apiserver, as after a real roll, so the cache starts past the compaction.
    control_plane.restart_apiserver()

    async def watch_from(rv: str) -> None:
        async with client.watch(
            CM, namespace=namespace, resource_version=rv, timeout_seconds=5
        ) as s:
            async for _ in s:
                pass

    # The first revision etcd ever assigned is compacted and older than the new cache.
    with pytest.raises(ExpiredError) as info:
        await asyncio.wait_for(watch_from("1"), 30)
    assert info.value.code == 410
    assert "watch configmaps" in str(info.value)


async def test_bookmarks_arrive_and_advance_resource_version(
    client: AsyncClient, namespace: str
) -> None:
    created = await client.create(configmap("b", namespace))
    start_rv = created["metadata"]["resourceVersion"]
    bookmarks: list[str] = []
    # The apiserver sends a bookmark shortly before a watch's timeout (and about every minute).
    async with client.watch(
        CM, namespace=namespace, resource_version=start_rv, timeout_seconds=4
    ) as stream:
        # A write elsewhere moves the global resourceVersion past anything this watch saw.
        await client.create(
            configmap("elsewhere", "default" if namespace != "default" else "kube-public")
        )

        async def read() -> None:
            async for event in stream:
                if event.type is EventType.BOOKMARK:
                    bookmarks.append(event.resource_version)
                    assert stream.resource_version == event.resource_version

        await asyncio.wait_for(read(), 30)  # ends cleanly at timeoutSeconds
    await client.delete(
        CM, "elsewhere", namespace="default" if namespace != "default" else "kube-public"
    )
    assert bookmarks, "no bookmark arrived"
    assert int(bookmarks[-1]) > int(start_rv)
    assert stream.resource_version == bookmarks[-1]


async def test_streaming_list_ends_with_initial_events_bookmark(
    client: AsyncClient, namespace: str
) -> None:
    for i in range(3):
        await client.create(configmap(f"s-{i}", namespace))
    added: list[str] = []
    async with client.watch(
        CM,
        namespace=namespace,
        send_initial_events=True,
        resource_version_match="NotOlderThan",
        resource_version="",
    ) as stream:

        async def read() -> str:
            async for event in stream:
                if event.type is EventType.ADDED:
                    added.append(event.object["metadata"]["name"])
                if event.is_initial_events_end:
                    return event.resource_version
            raise AssertionError("stream ended before the initial-events-end bookmark")

        rv = await asyncio.wait_for(read(), 30)
    assert sorted(added) == ["s-0", "s-1", "s-2"]
    assert rv
    assert stream.resource_version == rv


async def test_empty_metadata_only_page_has_an_empty_items_list(
    client: AsyncClient, namespace: str
) -> None:
    """The apiserver answers an empty PartialObjectMetadataList with ``"items": null`` (a nil
    slice from k8s.io/apimachinery/pkg/apis/meta/v1 PartialObjectMetadataList, whose ``Items``
    has no ``omitempty``); a page still carries a list, as the typed list's ``items: []`` does."""
    pages = [
        p
        async for p in client.list_pages(("v1", "Secret"), namespace=namespace, metadata_only=True)
    ]
    assert [p["items"] for p in pages] == [[]]
    assert pages[0]["kind"] == "PartialObjectMetadataList"
