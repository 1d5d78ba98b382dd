"""events.k8s.io/v1 Events written to the real API server, as client-go's ``tools/events``
writes them (tools/events/event_broadcaster.go: a create, then a series PATCH).

The server keeps one Event per series and shows it through both APIs: core v1 reads it with
``count`` and ``involvedObject`` (pkg/apis/events/v1 conversion).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from kubectrl.client import AsyncClient, load_kubeconfig
from kubectrl.events import EVENTS_V1, NORMAL, WARNING, ClientEventSink, EventBroadcaster

pytestmark = pytest.mark.integration


@pytest.fixture
async def client(kubeconfig: Path) -> AsyncIterator[AsyncClient]:
    async with AsyncClient(load_kubeconfig(kubeconfig)) as c:
        yield c


async def test_a_series_is_one_event_readable_through_both_apis(
    client: AsyncClient, namespace: str
) -> None:
    cm = await client.create(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "s", "namespace": namespace}}
    )
    pod_ref: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": namespace},
    }
    broadcaster = EventBroadcaster(ClientEventSink(client), api=EVENTS_V1)
    broadcaster.start()
    recorder = broadcaster.new_recorder("example.com/kubectrl-test")
    for _ in range(5):
        recorder.event(cm, WARNING, "FailedSync", "cannot sync", action="Sync", related=pod_ref)
    recorder.event(cm, NORMAL, "Synced", "synced")
    await asyncio.wait_for(broadcaster.shutdown(timeout=60), 90)
    listed = await client.list(("events.k8s.io/v1", "Event"), namespace=namespace)
    mine = sorted(
        (e for e in listed["items"] if e["regarding"]["name"] == "s"), key=lambda e: e["reason"]
    )
    assert [e["reason"] for e in mine] == ["FailedSync", "Synced"]
    failed = mine[0]
    assert failed["series"]["count"] == 5
    assert failed["action"] == "Sync"
    assert failed["related"]["name"] == "p"
    assert failed["reportingController"] == "example.com/kubectrl-test"
    assert "series" not in mine[1]
    core = await client.get(("v1", "Event"), failed["metadata"]["name"], namespace=namespace)
    assert core["involvedObject"]["uid"] == cm["metadata"]["uid"]
    assert core["message"] == "cannot sync"
    assert core["series"]["count"] == 5
