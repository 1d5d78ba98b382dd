"""What the reflector does with inputs it must not trust: nameless objects, failures to report."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from cache_fakes import FakeServer, cm, eventually

from kubectrl.cache import Informer, Notification, ReflectorOptions
from kubectrl.errors import ForbiddenError

LIST_ONLY = ReflectorOptions(streaming_list=False)


def nameless(rv: int, **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"resourceVersion": str(rv), **meta},
    }


def rejections(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.levelno == logging.WARNING and "without metadata.name" in r.getMessage()
    ]


async def test_nameless_objects_in_a_list_are_skipped_with_one_warning_each(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = FakeServer(rv=10)
    server.objects = {
        "a": cm("a", 1),
        "x": nameless(2, namespace="ns"),
        "y": {"apiVersion": "v1", "kind": "ConfigMap"},  # no metadata at all
        "z": nameless(3, name=""),
    }
    informer = Informer(server, reflector_options=LIST_ONLY)
    seen: list[Notification] = []
    informer.add_handler(seen.append)
    caplog.set_level(logging.WARNING, "kubectrl.cache")
    async with informer:
        await informer.wait_for_cache_sync(timeout=5)
        await eventually(lambda: len(seen) == 1)
        assert informer.indexer.list_keys() == ["ns/a"]
    assert [n.obj["metadata"]["name"] for n in seen] == ["a"]
    messages = rejections(caplog)
    assert len(messages) == 3
    for message in messages:
        assert server.description in message
        assert "LIST" in message


async def test_nameless_objects_in_watch_events_are_never_cached_nor_delivered(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = FakeServer([cm("a", 1)], rv=10)
    informer = Informer(server, reflector_options=LIST_ONLY)
    seen: list[Notification] = []
    informer.add_handler(seen.append)
    caplog.set_level(logging.WARNING, "kubectrl.cache")
    async with informer:
        watch = await server.next_watch(1)
        watch.send("ADDED", nameless(11, namespace="ns"))
        watch.send("MODIFIED", nameless(12, namespace="ns"))
        watch.send("DELETED", nameless(13, namespace="ns"))
        watch.send("ADDED", cm("b", 14))
        await eventually(lambda: len(seen) == 2)
        assert sorted(informer.indexer.list_keys()) == ["ns/a", "ns/b"]
        # The stream's position still advances past the skipped events.
        assert informer.last_sync_resource_version == "14"
    assert [(n.type, n.obj["metadata"]["name"]) for n in seen] == [("add", "a"), ("add", "b")]
    messages = rejections(caplog)
    assert len(messages) == 3
    for message, event_type in zip(messages, ["ADDED", "MODIFIED", "DELETED"], strict=True):
        assert server.description in message
        assert event_type in message


async def test_nameless_objects_in_a_streaming_list_are_skipped(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = FakeServer([], rv=10)
    informer = Informer(server, reflector_options=ReflectorOptions(streaming_list=True))
    caplog.set_level(logging.WARNING, "kubectrl.cache")
    async with informer:
        watch = await server.next_watch(1)
        watch.send("ADDED", cm("a", 5))
        watch.send("ADDED", nameless(6, namespace="ns"))
        watch.bookmark(9, initial_end=True)
        await informer.wait_for_cache_sync(timeout=5)
        assert informer.indexer.list_keys() == ["ns/a"]
    [message] = rejections(caplog)
    assert server.description in message
    assert "ADDED" in message


async def test_reflector_warning_message_names_the_resource_and_the_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Defect 19: a plain log format (``%(message)s``) must show what failed and why."""
    server = FakeServer([cm("a", 1)], rv=10)
    informer = Informer(server, reflector_options=LIST_ONLY)
    caplog.set_level(logging.WARNING, "kubectrl.cache")
    async with informer:
        watch = await server.next_watch(1)
        watch.fail(ForbiddenError('configmaps is forbidden: User "bob" cannot watch'))
        await eventually(lambda: informer.last_error is not None)
    [record] = [r for r in caplog.records if r.getMessage().startswith("reflector watch failed")]
    message = record.getMessage()
    assert server.description in message
    assert 'configmaps is forbidden: User "bob" cannot watch' in message
    # The structured fields stay for JSON log formats.
    assert record.__dict__["reflector"] == server.description
    assert record.__dict__["kind"] == "other"
