"""The correlator's pure logic on a FakeClock: count bumps, combining, spam filter, LRU."""

from __future__ import annotations

from typing import Any

from kubectrl._internal.clock import FakeClock
from kubectrl.events import CorrelatorOptions, EventCorrelator

OBJ = {"kind": "ConfigMap", "apiVersion": "v1", "namespace": "ns", "name": "cm", "uid": "u1"}


def ev(message: str = "m", reason: str = "R", name: str = "cm.1", **obj: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "ns"},
        "involvedObject": {**OBJ, **obj},
        "source": {"component": "ctrl"},
        "reportingComponent": "ctrl",
        "reportingInstance": "",
        "type": "Normal",
        "reason": reason,
        "message": message,
        "count": 1,
        "firstTimestamp": "t0",
        "lastTimestamp": "t0",
    }


def stored(event: dict[str, Any], rv: str = "5") -> dict[str, Any]:
    return {**event, "metadata": {**event["metadata"], "resourceVersion": rv}}


def test_first_event_is_created_and_repeats_become_count_patches() -> None:
    c = EventCorrelator(FakeClock())
    first = c.correlate(ev(name="cm.a"))
    assert first.patch is None
    assert not first.skip
    c.update_state(stored(first.event))
    second = c.correlate({**ev(name="cm.b"), "lastTimestamp": "t1"})
    assert second.patch == {"count": 2, "lastTimestamp": "t1", "message": "m"}
    assert second.event["metadata"]["name"] == "cm.a"  # the existing Event, not a new one
    assert second.event["metadata"]["resourceVersion"] == "5"
    assert second.event["firstTimestamp"] == "t0"
    c.update_state(stored({**second.event, "count": 2}, rv="6"))
    third = c.correlate(ev(name="cm.c"))
    assert third.patch is not None
    assert third.patch["count"] == 3


def test_counts_continue_even_before_the_write_is_acknowledged() -> None:
    c = EventCorrelator(FakeClock())
    c.correlate(ev())
    assert c.correlate(ev()).event["count"] == 2
    assert c.correlate(ev()).event["count"] == 3


def test_different_messages_are_separate_events_until_ten_then_combined() -> None:
    c = EventCorrelator(FakeClock())
    results = [c.correlate(ev(message=f"msg {i}", name=f"cm.{i}")) for i in range(12)]
    for r in results[:9]:
        assert r.patch is None
        assert not r.event["message"].startswith("(combined")
    # client-go's threshold: once 10 distinct messages are in the window, combine.
    combined = results[9]
    assert combined.event["message"] == "(combined from similar events): msg 9"
    assert combined.patch is None  # the first combined event is created
    assert combined.event["count"] == 1
    # Later similar events bump the combined Event's count.
    assert results[10].patch is not None
    assert results[10].event["count"] == 2
    assert results[10].event["metadata"]["name"] == "cm.9"
    assert results[11].event["message"] == "(combined from similar events): msg 11"
    assert results[11].event["count"] == 3


def test_similar_window_slides_and_expires_after_600_seconds_of_quiet() -> None:
    clock = FakeClock()
    c = EventCorrelator(clock)
    for i in range(9):
        c.correlate(ev(message=f"msg {i}"))
        clock.advance(60)  # each within 600 s of the previous one: the window slides
    assert c.correlate(ev(message="msg 9")).event["message"].startswith("(combined")
    clock.advance(601)
    assert c.correlate(ev(message="fresh")).event["message"] == "fresh"


def test_other_reasons_or_objects_are_not_similar() -> None:
    c = EventCorrelator(FakeClock())
    for i in range(9):
        c.correlate(ev(message=f"msg {i}"))
    assert c.correlate(ev(message="x", reason="Other")).event["message"] == "x"
    assert c.correlate(ev(message="y", name="o", uid="u2")).event["message"] == "y"


def test_spam_filter_burst_25_then_one_token_per_300_seconds() -> None:
    clock = FakeClock()
    c = EventCorrelator(clock)
    results = [c.correlate(ev()) for _ in range(30)]
    assert [r.skip for r in results] == [False] * 25 + [True] * 5
    clock.advance(299)
    assert c.correlate(ev()).skip
    clock.advance(1)
    assert not c.correlate(ev()).skip
    assert c.correlate(ev()).skip
    # Another object has its own bucket.
    assert not c.correlate(ev(name="other", uid="u9")).skip


def test_spam_filter_is_per_source_and_object_across_reasons() -> None:
    c = EventCorrelator(FakeClock())
    results = [c.correlate(ev(reason=f"R{i}")) for i in range(26)]
    assert results[-1].skip


def test_caches_are_bounded_lrus() -> None:
    c = EventCorrelator(FakeClock(), CorrelatorOptions(lru_size=3))
    for i in range(10):
        c.correlate(ev(uid=f"u{i}"))
    assert len(c._observations) == 3
    assert len(c._aggregates) == 3
    assert len(c._buckets) == 3
    # The oldest object was evicted: its next identical event is new again (no patch).
    assert c.correlate(ev(uid="u0")).patch is None


def test_memory_per_object_remembered_is_about_a_kilobyte() -> None:
    """What the three caches hold per object that got an event, the writer's way: each event
    decoded afresh (a controller's objects come from the server), correlated, then the
    server's answer, also decoded afresh, remembered. A controller under churn meets a new
    object every second or so and fills the 4096 entries over an hour, so this is its memory
    creep. Measured (tracemalloc, 4096 objects): 1.97 KB each when every key kept its own
    copies of the object's strings and each record its ``__dict__`` (and a ``set`` of
    messages), 1.04 KB now; most of the rest is each object's own name, uid, Event name and
    resourceVersion, and the caches' ordered-dict entries."""
    import gc
    import json
    import tracemalloc

    count = 2000
    texts = [
        json.dumps(
            {
                **ev(name=f"foo-{i}.18a"),
                "involvedObject": {**OBJ, "name": f"foo-{i}", "uid": f"{i:08d}-aaaa-{i:012d}"},
            }
        )
        for i in range(count)
    ]
    c = EventCorrelator(FakeClock())
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for text in texts:
            result = c.correlate(json.loads(text))
            c.update_state(json.loads(json.dumps(stored(result.event, rv="123456"))))
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert held / count < 1500, f"{held / count:.0f} bytes per object"
