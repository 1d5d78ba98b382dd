"""Recorder and broadcaster with an in-memory sink and a FakeClock: no real sleeps."""

from __future__ import annotations

import asyncio
import random
import threading
from collections.abc import Mapping
from typing import Any

import pytest

from kubectrl._internal.clock import FakeClock
from kubectrl.errors import APIConnectionError, InvalidError, NotFoundError
from kubectrl.events import NORMAL, WARNING, EventBroadcaster, object_reference

CM = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "cm", "namespace": "ns", "uid": "u1", "resourceVersion": "7"},
}


class Sink:
    def __init__(self) -> None:
        self.events: dict[str, dict[str, Any]] = {}
        self.calls: list[str] = []
        self.fail_next = 0
        self.error: Exception = APIConnectionError("down", verb="create", resource="events")
        self._rv = 0

    def _maybe_fail(self) -> None:
        if self.fail_next:
            self.fail_next -= 1
            raise self.error

    async def create(self, event: Mapping[str, Any]) -> dict[str, Any]:
        self.calls.append("create")
        self._maybe_fail()
        assert "resourceVersion" not in event["metadata"]
        self._rv += 1
        stored = {**event, "metadata": {**event["metadata"], "resourceVersion": str(self._rv)}}
        self.events[event["metadata"]["name"]] = stored
        return stored

    async def patch(self, event: Mapping[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
        self.calls.append("patch")
        self._maybe_fail()
        name = event["metadata"]["name"]
        if name not in self.events:
            raise NotFoundError("gone")
        self._rv += 1
        stored = {**self.events[name], **patch}
        stored["metadata"] = {**stored["metadata"], "resourceVersion": str(self._rv)}
        self.events[name] = stored
        return stored


async def settle() -> None:
    for _ in range(50):
        await asyncio.sleep(0)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def sink() -> Sink:
    return Sink()


def make(sink: Sink, clock: FakeClock, **kwargs: Any) -> EventBroadcaster:
    return EventBroadcaster(sink, clock=clock, rng=random.Random(0), **kwargs)


async def test_event_fields(sink: Sink, clock: FakeClock) -> None:
    b = make(sink, clock)
    b.start()
    b.new_recorder("ctrl", host="node-1").event(CM, WARNING, "Failed", "it broke")
    await b.wait_idle()
    (event,) = sink.events.values()
    assert event["metadata"]["namespace"] == "ns"
    assert event["metadata"]["name"].startswith("cm.")
    assert event["involvedObject"] == {
        "kind": "ConfigMap",
        "apiVersion": "v1",
        "name": "cm",
        "namespace": "ns",
        "uid": "u1",
        "resourceVersion": "7",
    }
    assert event["type"] == "Warning"
    assert event["reason"] == "Failed"
    assert event["message"] == "it broke"
    assert event["source"] == {"component": "ctrl", "host": "node-1"}
    assert event["reportingComponent"] == "ctrl"
    assert event["reportingInstance"] == "node-1"
    assert event["count"] == 1
    assert event["firstTimestamp"] == event["lastTimestamp"] == "2026-01-01T00:00:00Z"
    await b.shutdown()


async def test_a_typed_model_is_the_involved_object(sink: Sink, clock: FakeClock) -> None:
    from kubernetes.client.models import V1ConfigMap, V1ObjectMeta

    b = make(sink, clock)
    b.start()
    cm = V1ConfigMap(metadata=V1ObjectMeta(name="cm", namespace="ns", uid="u1"))
    b.new_recorder("ctrl").event(cm, NORMAL, "Seen", "typed")
    await b.wait_idle()
    (event,) = sink.events.values()
    assert event["involvedObject"] == {
        "kind": "ConfigMap",
        "apiVersion": "v1",
        "name": "cm",
        "namespace": "ns",
        "uid": "u1",
    }
    await b.shutdown()


async def test_cluster_scoped_objects_get_events_in_default(sink: Sink, clock: FakeClock) -> None:
    b = make(sink, clock)
    b.start()
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}
    b.new_recorder("ctrl").eventf(node, NORMAL, "Ready", "node %s is %s", "n1", "ready")
    await b.wait_idle()
    (event,) = sink.events.values()
    assert event["metadata"]["namespace"] == "default"
    assert event["message"] == "node n1 is ready"
    assert "namespace" not in object_reference(node)
    await b.shutdown()


async def test_an_object_without_kind_is_logged_and_dropped_not_raised(
    sink: Sink, clock: FakeClock
) -> None:
    b = make(sink, clock)
    b.start()
    r = b.new_recorder("ctrl")
    r.event({"metadata": {"name": "x"}}, NORMAL, "R", "m")  # no kind
    await b.wait_idle()
    assert sink.events == {}
    await b.shutdown()


@pytest.mark.parametrize("event_type", ["SomeType", "Error", "Bogus"])
async def test_core_v1_sends_any_type_the_server_stores(
    sink: Sink, clock: FakeClock, event_type: str
) -> None:
    """pkg/apis/core/validation/events.go: a core/v1 Event without ``eventTime`` passes the
    legacy checks only, which do not look at ``type`` (tests/contract/test_events.py shows the
    real apiserver storing "SomeType" and "Error"); kopf's examples send such types. The
    recorder dropped them."""
    b = make(sink, clock)
    b.start()
    b.new_recorder("ctrl").event(CM, event_type, "R", "m")
    await b.wait_idle()
    assert [e["type"] for e in sink.events.values()] == [event_type]
    await b.shutdown()


async def test_identical_events_patch_the_count(sink: Sink, clock: FakeClock) -> None:
    b = make(sink, clock)
    b.start()
    r = b.new_recorder("ctrl")
    for _ in range(20):
        r.event(CM, NORMAL, "Synced", "synced")
        clock.advance(1)
        await b.wait_idle()  # each one written before the next is recorded
    (event,) = sink.events.values()
    assert event["count"] == 20
    assert sink.calls == ["create"] + ["patch"] * 19
    assert event["firstTimestamp"] == "2026-01-01T00:00:00Z"
    assert event["lastTimestamp"] == "2026-01-01T00:00:19Z"
    await b.shutdown()


async def test_identical_events_queued_together_are_one_write_of_the_same_result(
    sink: Sink, clock: FakeClock
) -> None:
    """What the server holds is the same as when each event is written on its own (previous
    test): one Event, count 20, the first and the last timestamps; it takes one write."""
    b = make(sink, clock)
    r = b.new_recorder("ctrl")
    for _ in range(20):
        r.event(CM, NORMAL, "Synced", "synced")
        clock.advance(1)
    b.start()
    await b.wait_idle()
    (event,) = sink.events.values()
    assert sink.calls == ["create"]
    assert event["count"] == 20
    assert event["firstTimestamp"] == "2026-01-01T00:00:00Z"
    assert event["lastTimestamp"] == "2026-01-01T00:00:19Z"
    # Later repeats patch that Event: several queued together are one patch of the last state.
    for _ in range(5):
        r.event(CM, NORMAL, "Synced", "synced")
        clock.advance(1)
    await b.wait_idle()
    (event,) = sink.events.values()
    assert sink.calls == ["create", "patch"]
    assert (event["count"], event["lastTimestamp"]) == (25, "2026-01-01T00:00:24Z")
    await b.shutdown()


async def test_a_batch_writes_each_event_once_in_order_of_first_appearance(
    sink: Sink, clock: FakeClock
) -> None:
    b = make(sink, clock)
    r = b.new_recorder("ctrl")
    other = {**CM, "metadata": {"name": "other", "namespace": "ns", "uid": "u2"}}
    for obj, reason in [(CM, "A"), (other, "B"), (CM, "A"), (CM, "C"), (other, "B")]:
        r.event(obj, NORMAL, reason, "m")
        clock.advance(1)
    b.start()
    await b.wait_idle()
    assert sink.calls == ["create"] * 3
    written = sorted(
        (e["involvedObject"]["name"], e["reason"], e["count"]) for e in sink.events.values()
    )
    assert written == [("cm", "A", 2), ("cm", "C", 1), ("other", "B", 2)]
    await b.shutdown()


async def test_deleted_event_is_recreated_on_patch_not_found(sink: Sink, clock: FakeClock) -> None:
    b = make(sink, clock)
    b.start()
    r = b.new_recorder("ctrl")
    r.event(CM, NORMAL, "Synced", "synced")
    await b.wait_idle()
    sink.events.clear()  # the Event's TTL ran out
    r.event(CM, NORMAL, "Synced", "synced")
    await b.wait_idle()
    assert sink.calls == ["create", "patch", "create"]
    (event,) = sink.events.values()
    assert event["count"] == 2
    await b.shutdown()


async def test_failed_writes_retry_12_times_10_seconds_apart(sink: Sink, clock: FakeClock) -> None:
    b = make(sink, clock)
    b.start()
    sink.fail_next = 100
    b.new_recorder("ctrl").event(CM, NORMAL, "R", "m")
    await settle()
    start = clock.now()
    for _ in range(11):
        deadline = clock.next_deadline()
        assert deadline is not None
        clock.set(deadline)
        await settle()
    await b.wait_idle()
    assert sink.calls == ["create"] * 12
    # First wait randomised in [0, 10), then 10 s each.
    assert 100 <= clock.now() - start < 110
    assert clock.next_deadline() is None  # gave up: nothing more scheduled
    await b.shutdown()


async def test_transient_failure_then_success(sink: Sink, clock: FakeClock) -> None:
    b = make(sink, clock)
    b.start()
    sink.fail_next = 2
    b.new_recorder("ctrl").event(CM, NORMAL, "R", "m")
    await settle()
    while clock.next_deadline() is not None:
        clock.set(clock.next_deadline() or 0)
        await settle()
    await b.wait_idle()
    assert sink.calls == ["create"] * 3
    assert len(sink.events) == 1
    await b.shutdown()


async def test_rejected_events_are_not_retried(sink: Sink, clock: FakeClock) -> None:
    b = make(sink, clock)
    b.start()
    sink.fail_next = 1
    sink.error = InvalidError("bad", verb="create", resource="events")
    b.new_recorder("ctrl").event(CM, NORMAL, "R", "m")
    await b.wait_idle()
    assert sink.calls == ["create"]
    assert clock.next_deadline() is None
    await b.shutdown()


async def test_queue_of_1000_drops_when_full(sink: Sink, clock: FakeClock) -> None:
    b = make(sink, clock)  # not started: events wait in the queue
    r = b.new_recorder("ctrl")
    for i in range(1005):
        r.event(CM, NORMAL, f"R{i}", "m")
    assert b.dropped == 5
    b.start()
    await b.wait_idle()
    # The spam filter lets 25 per object through; the rest were queued but filtered.
    assert len(sink.events) == 25
    await b.shutdown()


async def test_events_from_threads(sink: Sink, clock: FakeClock) -> None:
    b = make(sink, clock)
    b.start()
    r = b.new_recorder("ctrl")
    objs = [
        {**CM, "metadata": {**CM["metadata"], "name": f"cm{i}", "uid": f"u{i}"}} for i in range(8)
    ]
    threads = [threading.Thread(target=r.event, args=(o, NORMAL, "R", "m")) for o in objs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    await asyncio.wait_for(b.wait_idle(), 10)
    for _ in range(100):
        if len(sink.events) == 8:
            break
        await asyncio.sleep(0.01)
    assert len(sink.events) == 8
    await b.shutdown()


async def test_shutdown_writes_what_is_queued_then_refuses(sink: Sink, clock: FakeClock) -> None:
    b = make(sink, clock)
    b.start()
    r = b.new_recorder("ctrl")
    r.event(CM, NORMAL, "A", "m")
    r.event(CM, NORMAL, "B", "m")
    await b.shutdown()
    assert len(sink.events) == 2
    assert b.action({"reason": "late"}) is False


async def test_names_are_unique_at_one_instant(sink: Sink, clock: FakeClock) -> None:
    b = make(sink, clock)
    names = {b.unique_name_suffix() for _ in range(100)}
    assert len(names) == 100


class HeldSink(Sink):
    """Holds every write about the object named ``held`` until ``release`` is set."""

    def __init__(self, held: str) -> None:
        super().__init__()
        self.held = held
        self.release = asyncio.Event()
        self.order: list[tuple[str, str]] = []

    async def create(self, event: Mapping[str, Any]) -> dict[str, Any]:
        about = event["involvedObject"]["name"]
        if about == self.held:
            await self.release.wait()
        self.order.append((about, event["reason"]))
        return await super().create(event)


def _cm(name: str) -> dict[str, Any]:
    return {**CM, "metadata": {**CM["metadata"], "name": name, "uid": f"uid-{name}"}}


async def test_one_objects_events_keep_their_order_while_anothers_are_written(
    clock: FakeClock,
) -> None:
    sink = HeldSink("a")
    b = make(sink, clock)
    b.start()
    recorder = b.new_recorder("test")
    recorder.event(_cm("a"), NORMAL, "First", "1")
    recorder.event(_cm("b"), NORMAL, "Other", "x")
    recorder.event(_cm("a"), NORMAL, "Second", "2")
    for _ in range(100):  # b's event is written while a's first write is held
        if sink.order:
            break
        await asyncio.sleep(0)
    assert sink.order == [("b", "Other")]
    sink.release.set()
    await b.wait_idle()
    assert sink.order == [("b", "Other"), ("a", "First"), ("a", "Second")]
    await b.shutdown()


async def test_one_write_at_a_time_keeps_the_recorded_order_of_every_event(
    clock: FakeClock,
) -> None:
    sink = HeldSink("a")
    b = make(sink, clock, max_concurrent_writes=1)
    b.start()
    recorder = b.new_recorder("test")
    recorder.event(_cm("a"), NORMAL, "First", "1")
    recorder.event(_cm("b"), NORMAL, "Other", "x")
    await settle()
    assert sink.order == []  # b waits for a, as with client-go's broadcaster
    sink.release.set()
    await b.wait_idle()
    assert sink.order == [("a", "First"), ("b", "Other")]
    await b.shutdown()


def test_max_concurrent_writes_is_at_least_one(sink: Sink, clock: FakeClock) -> None:
    with pytest.raises(ValueError, match="max_concurrent_writes"):
        make(sink, clock, max_concurrent_writes=0)
