"""Events written to the real API server, correlated."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from kubectrl.client import AsyncClient, load_kubeconfig
from kubectrl.events import NORMAL, WARNING, ClientEventSink, EventBroadcaster

pytestmark = pytest.mark.integration


@pytest.fixture
async def client(kubeconfig: Path) -> AsyncIterator[AsyncClient]:
    async with AsyncClient(load_kubeconfig(kubeconfig)) as c:
        yield c


async def events_for(client: AsyncClient, namespace: str, name: str) -> list[dict[str, Any]]:
    listed = await client.list(("v1", "Event"), namespace=namespace)
    items: list[dict[str, Any]] = listed["items"]
    return [e for e in items if e["involvedObject"]["name"] == name]


async def test_twenty_identical_events_make_one_event_with_count_20(
    client: AsyncClient, namespace: str
) -> None:
    cm = await client.create(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "subject", "namespace": namespace},
        }
    )
    broadcaster = EventBroadcaster(ClientEventSink(client))
    broadcaster.start()
    recorder = broadcaster.new_recorder("kubectrl-test")
    for _ in range(20):
        recorder.event(cm, NORMAL, "Synced", "ConfigMap synced")
    await asyncio.wait_for(broadcaster.shutdown(timeout=60), 90)
    events = await events_for(client, namespace, "subject")
    assert len(events) == 1
    (event,) = events
    assert event["count"] == 20
    assert event["reason"] == "Synced"
    assert event["type"] == "Normal"
    assert event["involvedObject"]["uid"] == cm["metadata"]["uid"]
    assert event["source"]["component"] == "kubectrl-test"


async def test_similar_events_are_combined(client: AsyncClient, namespace: str) -> None:
    cm = await client.create(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "noisy", "namespace": namespace},
        }
    )
    broadcaster = EventBroadcaster(ClientEventSink(client))
    broadcaster.start()
    recorder = broadcaster.new_recorder("kubectrl-test")
    for i in range(15):
        recorder.event(cm, WARNING, "Failed", f"attempt {i} failed")
    await asyncio.wait_for(broadcaster.shutdown(timeout=60), 90)
    events = await events_for(client, namespace, "noisy")
    combined = [e for e in events if e["message"].startswith("(combined from similar events)")]
    assert len(events) == 9 + 1
    assert len(combined) == 1
    assert combined[0]["count"] == 6
    assert combined[0]["message"] == "(combined from similar events): attempt 14 failed"
