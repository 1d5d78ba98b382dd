"""events.k8s.io/v1 events as client-go's ``tools/events`` writes them, on FakeAPI (which
validates them as the apiserver does: tests/contract/test_events.py) with a FakeClock.

Upstream: k8s.io/client-go tools/events/event_broadcaster.go (``recordToSink``: the first
isomorphic event is created, the second starts a series ``{count: 2, lastObservedTime}``,
later ones only count; ``finishSeries`` every 6 minutes writes an ended series' count,
``refreshExistingEventSeries`` every 30 minutes a running one's; ``getKey``),
tools/events/event_recorder.go (``makeEvent``: name ``<regarding>.<nanos hex>``,
``eventTime``, namespace of the regarding object or ``default``; reporting instance
``<controller>-<hostname>``); pkg/apis/core/validation/events.go (what the server refuses).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from kubectrl._internal.clock import FakeClock
from kubectrl.client import AsyncClient
from kubectrl.events import (
    CORE_V1,
    EVENTS_V1,
    NORMAL,
    WARNING,
    ClientEventSink,
    EventBroadcaster,
    SeriesCorrelator,
)
from kubectrl.testing import FakeAPI, eventually

EVENT = ("events.k8s.io/v1", "Event")
CM = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "cm", "namespace": "ns", "uid": "u1", "resourceVersion": "7"},
}
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"}}


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def client() -> AsyncIterator[AsyncClient]:
    api = FakeAPI()
    async with AsyncClient(api.config()) as c:
        await c.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}})
        yield c


async def events(client: AsyncClient) -> list[dict[str, Any]]:
    listed = await client.list(EVENT, namespace="ns")
    items: list[dict[str, Any]] = listed["items"]
    return items


def broadcaster(client: AsyncClient, clock: FakeClock) -> EventBroadcaster:
    b = EventBroadcaster(ClientEventSink(client), clock=clock, api=EVENTS_V1)
    b.start()
    return b


async def test_an_event_has_every_events_v1_field(client: AsyncClient, clock: FakeClock) -> None:
    b = broadcaster(client, clock)
    r = b.new_recorder("example.com/foo-controller", reporting_instance="foo-0")
    r.event(CM, WARNING, "FailedScale", "cannot scale", action="Scale", related=POD)
    await b.wait_idle()
    (event,) = await events(client)
    assert event["regarding"] == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": "cm",
        "namespace": "ns",
        "uid": "u1",
        "resourceVersion": "7",
    }
    assert event["related"] == {"apiVersion": "v1", "kind": "Pod", "name": "p", "namespace": "ns"}
    assert (event["type"], event["reason"], event["action"], event["note"]) == (
        WARNING,
        "FailedScale",
        "Scale",
        "cannot scale",
    )
    assert event["reportingController"] == "example.com/foo-controller"
    assert event["reportingInstance"] == "foo-0"
    assert event["metadata"]["name"].startswith("cm.")
    assert event["eventTime"].endswith("Z")
    assert "." in event["eventTime"]
    assert "series" not in event
    await b.shutdown()


async def test_action_defaults_to_the_reason_and_instance_to_controller_and_host(
    client: AsyncClient, clock: FakeClock
) -> None:
    b = broadcaster(client, clock)
    r = b.new_recorder("foo-controller")
    r.eventf(CM, NORMAL, "Synced", "%s synced", "cm")
    await b.wait_idle()
    (event,) = await events(client)
    assert event["action"] == "Synced"
    assert event["note"] == "cm synced"
    assert event["reportingInstance"].startswith("foo-controller-")
    await b.shutdown()


async def test_isomorphic_events_become_one_series_written_when_it_ends(
    client: AsyncClient, clock: FakeClock
) -> None:
    b = broadcaster(client, clock)
    r = b.new_recorder("foo-controller")
    r.event(CM, NORMAL, "Synced", "first")
    await b.wait_idle()
    r.event(CM, NORMAL, "Synced", "second")  # starts the series: count 2, written now
    await b.wait_idle()
    (event,) = await events(client)
    assert event["series"]["count"] == 2
    assert event["note"] == "first"
    for _ in range(3):  # counted, not written yet
        r.event(CM, NORMAL, "Synced", "again")
    await b.wait_idle()
    assert (await events(client))[0]["series"]["count"] == 2
    clock.advance(6 * 60)  # no isomorphic event for 6 minutes: the series ended

    async def final_count() -> bool:
        (event,) = await events(client)
        return bool(event["series"]["count"] == 5)

    await eventually(final_count, describe="the series' final count 5 written")
    assert len(b.correlator) == 0  # the ended series is forgotten
    await b.shutdown()


async def test_shutdown_writes_the_counts_not_written_yet(
    client: AsyncClient, clock: FakeClock
) -> None:
    b = broadcaster(client, clock)
    r = b.new_recorder("foo-controller")
    for _ in range(7):
        r.event(CM, NORMAL, "Synced", "same")
    await b.shutdown()
    (event,) = await events(client)
    assert event["series"]["count"] == 7


async def test_a_different_action_type_or_related_object_is_another_event(
    client: AsyncClient, clock: FakeClock
) -> None:
    b = broadcaster(client, clock)
    r = b.new_recorder("foo-controller")
    r.event(CM, NORMAL, "Synced", "m")
    r.event(CM, NORMAL, "Synced", "m", action="Other")
    r.event(CM, WARNING, "Synced", "m")
    r.event(CM, NORMAL, "Synced", "m", related=POD)
    await b.shutdown()
    assert len(await events(client)) == 4


@pytest.mark.parametrize(
    ("call", "field"),
    [
        ({"type": "SomeType"}, "type"),
        ({"type": "Error"}, "type"),
        ({"reason": ""}, "reason"),
        ({"reason": "R" * 129}, "reason"),
        ({"action": ""}, "action"),
        ({"action": "A" * 129}, "action"),
        ({"message": "n" * 1025}, "note"),
    ],
)
async def test_what_the_server_refuses_is_refused_with_the_field_named(
    client: AsyncClient, clock: FakeClock, call: dict[str, str], field: str
) -> None:
    b = broadcaster(client, clock)
    r = b.new_recorder("foo-controller")
    args = {"type": NORMAL, "reason": "Synced", "message": "m", **call}
    action = args.pop("action", None)
    with pytest.raises(ValueError, match=field):
        r.event(CM, args["type"], args["reason"], args["message"], action=action)
    await b.shutdown()
    assert await events(client) == []


def test_a_reporting_controller_that_is_not_a_qualified_name_is_refused(
    clock: FakeClock,
) -> None:
    b = EventBroadcaster(ClientEventSink.__new__(ClientEventSink), clock=clock, api=EVENTS_V1)
    with pytest.raises(ValueError, match="qualified name"):
        b.new_recorder("foo controller")
    with pytest.raises(ValueError, match="128"):
        b.new_recorder("foo", reporting_instance="i" * 129)


async def test_core_v1_recorder_still_writes_counts(client: AsyncClient, clock: FakeClock) -> None:
    b = EventBroadcaster(ClientEventSink(client), clock=clock, api=CORE_V1)
    b.start()
    r = b.new_recorder("foo-controller")
    r.event(CM, NORMAL, "Synced", "same")
    r.event(CM, NORMAL, "Synced", "same")
    await b.shutdown()
    (event,) = (await client.list(("v1", "Event"), namespace="ns"))["items"]
    assert event["count"] == 2


def test_series_correlator_refreshes_a_running_series_every_30_minutes(clock: FakeClock) -> None:
    c = SeriesCorrelator(clock)
    event = {"type": NORMAL, "reason": "R", "action": "A", "regarding": CM["metadata"]}
    assert c.correlate(event).patch is None
    assert c.correlate(event).patch is not None
    for _ in range(10):  # keeps going: one every 5 minutes for 50 minutes
        clock.advance(5 * 60)
        assert c.correlate(event).skip
        due = c.due()
        if due:
            break
    assert len(due) == 1
    assert due[0].patch is not None
    assert due[0].patch["series"]["count"] >= 3
    assert len(c) == 1  # still running


def test_series_correlator_memory_is_bounded(clock: FakeClock) -> None:
    c = SeriesCorrelator(clock, max_entries=2)
    for name in ("a", "b", "c"):
        event = {"type": NORMAL, "reason": "R", "action": "A", "regarding": {"name": name}}
        c.correlate(event)
        c.correlate(event)
        c.correlate(event)  # count 3, unwritten
    assert len(c) == 2
    (evicted,) = c.due()  # a's count is written, not lost
    assert evicted.event["regarding"]["name"] == "a"
    assert evicted.patch == {"series": evicted.event["series"]}
