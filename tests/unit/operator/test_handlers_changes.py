"""Change handlers: create, update (old, new, diff), field, resume, and the last-handled state
stored on the object so a manager restart neither loses nor repeats a change.

Upstream semantics: kopf's ``kopf/_core/intents/causes.py`` (which cause an object's state
is), ``kopf/_cogs/configs/diffbase.py`` (the last-handled configuration annotation) and
``kopf/_cogs/structs/diffs.py`` (the diff's shape).
"""

from __future__ import annotations

import json
from typing import Any

from kubectrl._internal.clock import FakeClock
from kubectrl.client import AsyncClient
from kubectrl.operator import DiffItem, Operator, TemporaryError
from kubectrl.testing import FakeAPI, consistently, eventually, run_manager

from .conftest import CM, configmap, new_manager


async def test_create_then_update_each_seen_once_with_old_new_and_diff(
    api: FakeAPI, clock: FakeClock, client: AsyncClient
) -> None:
    manager = new_manager(api, clock)
    operator = Operator(manager)
    calls: list[tuple[str, Any]] = []

    @operator.on_create(CM)
    async def created(name: str, body: dict[str, Any], **_: Any) -> None:
        calls.append(("create", body["data"]))

    @operator.on_update(CM)
    def updated(old: Any, new: Any, diff: Any, **_: Any) -> None:
        calls.append(("update", (old["data"], new["data"], diff)))

    async with run_manager(manager):
        await client.create(configmap("a", {"x": "1"}))
        await eventually(lambda: len(calls) == 1, clock=clock, describe="the create handler")
        await client.patch(CM, "a", {"data": {"x": "2"}}, namespace="default")
        await eventually(lambda: len(calls) == 2, clock=clock, describe="the update handler")
        # Nothing else happens: the handlers' own writes (the annotation) are not changes.
        await consistently(lambda: len(calls) == 2, 0.2)
    assert calls == [
        ("create", {"x": "1"}),
        ("update", ({"x": "1"}, {"x": "2"}, (DiffItem("change", ("data", "x"), "1", "2"),))),
    ]
    stored = (await client.get(CM, "a", namespace="default"))["metadata"]["annotations"]
    assert json.loads(stored["operator.kubectrl.io/last-handled-configuration"]) == {
        "apiVersion": "v1",
        "data": {"x": "2"},
        "kind": "ConfigMap",
    }
    assert "operator.kubectrl.io/progress" not in stored


async def test_a_restart_neither_loses_nor_repeats_a_change(
    api: FakeAPI, clock: FakeClock, client: AsyncClient
) -> None:
    """Every change is seen once across a manager restart, including one made while no
    operator ran: the last handled state is on the object, not in the process."""
    calls: list[tuple[str, str, Any]] = []

    def build() -> Any:
        manager = new_manager(api, clock)
        operator = Operator(manager)

        @operator.on_create(CM)
        def created(name: str, body: dict[str, Any], **_: Any) -> None:
            calls.append(("create", name, body["data"]))

        @operator.on_update(CM)
        def updated(name: str, new: Any, **_: Any) -> None:
            calls.append(("update", name, new["data"]))

        return manager

    manager = build()
    async with run_manager(manager):
        await client.create(configmap("a", {"x": "1"}))
        await eventually(lambda: len(calls) == 1, clock=clock, describe="create of a")
        await client.patch(CM, "a", {"data": {"x": "2"}}, namespace="default")
        await eventually(lambda: len(calls) == 2, clock=clock, describe="update of a")
    # While no operator runs: a is changed, b is created.
    await client.patch(CM, "a", {"data": {"x": "3"}}, namespace="default")
    await client.create(configmap("b", {"y": "1"}))
    manager = build()
    async with run_manager(manager):
        await eventually(lambda: len(calls) == 4, clock=clock, describe="the missed changes")
        await consistently(lambda: len(calls) == 4, 0.2)
    assert sorted(calls[2:]) == [("create", "b", {"y": "1"}), ("update", "a", {"x": "3"})]
    assert calls[:2] == [("create", "a", {"x": "1"}), ("update", "a", {"x": "2"})]


async def test_field_handler_sees_only_its_field_on_create_and_change(
    api: FakeAPI, clock: FakeClock, client: AsyncClient
) -> None:
    manager = new_manager(api, clock)
    operator = Operator(manager)
    seen: list[tuple[Any, Any, Any]] = []

    @operator.on_field(CM, field="data.mode")
    async def mode(old: Any, new: Any, diff: Any, **_: Any) -> None:
        seen.append((old, new, diff))

    async with run_manager(manager):
        await client.create(configmap("a", {"mode": "slow", "other": "1"}))
        await eventually(lambda: len(seen) == 1, clock=clock, describe="the field on create")
        await client.patch(CM, "a", {"data": {"other": "2"}}, namespace="default")
        await client.patch(CM, "a", {"data": {"mode": "fast"}}, namespace="default")
        await eventually(lambda: len(seen) == 2, clock=clock, describe="the field's change")
        await consistently(lambda: len(seen) == 2, 0.2)
    assert seen == [
        (None, "slow", (DiffItem("add", (), None, "slow"),)),
        ("slow", "fast", (DiffItem("change", (), "slow", "fast"),)),
    ]


async def test_resume_runs_once_per_run_for_objects_handled_before(
    api: FakeAPI, clock: FakeClock, client: AsyncClient
) -> None:
    """kopf's ``on.resume``: for objects found on start that an earlier run has handled; an
    object new to the operator gets the create handlers instead."""
    events: list[tuple[str, str]] = []

    def build() -> Any:
        manager = new_manager(api, clock)
        operator = Operator(manager)

        @operator.on_create(CM)
        def created(name: str, **_: Any) -> None:
            events.append(("create", name))

        @operator.on_resume(CM)
        def resumed(name: str, **_: Any) -> None:
            events.append(("resume", name))

        return manager

    async with run_manager(build()):
        await client.create(configmap("a"))
        await eventually(lambda: ("create", "a") in events, clock=clock)
        await client.patch(CM, "a", {"data": {"k": "v"}}, namespace="default")
        await consistently(lambda: ("resume", "a") not in events, 0.2)
    async with run_manager(build()):
        await eventually(lambda: ("resume", "a") in events, clock=clock)
        await client.patch(CM, "a", {"data": {"k": "w"}}, namespace="default")
        await consistently(lambda: events.count(("resume", "a")) == 1, 0.2)
    assert events == [("create", "a"), ("resume", "a")]


async def test_a_handlers_own_patch_is_not_a_new_change(
    api: FakeAPI, clock: FakeClock, client: AsyncClient
) -> None:
    """kopf stores the essence with the handlers' patch applied
    (``kopf/_cogs/configs/diffbase.py``, ``kopf/_core/reactor/processing.py``): what a handler
    writes through ``patch`` does not come back as an update, nor restarts the progress of the
    change it belongs to, while another handler of that change is still retrying."""
    manager = new_manager(api, clock)
    operator = Operator(manager)
    calls: list[str] = []

    @operator.on_create(CM, id="label")
    def label(patch: dict[str, Any], **_: Any) -> None:
        calls.append("label")
        patch["metadata"] = {"labels": {"handled": "yes"}}

    @operator.on_create(CM, id="slow")
    def slow(retry: int, **_: Any) -> None:
        calls.append(f"slow#{retry}")
        if retry == 0:
            raise TemporaryError("later", delay=10)

    @operator.on_update(CM)
    def updated(diff: Any, **_: Any) -> None:
        calls.append(f"update {diff}")

    async with run_manager(manager):
        await client.create(configmap("a"))
        await eventually(lambda: "slow#1" in calls, 60, clock=clock, interval=1)
        await consistently(lambda: len(calls) == 3, 30, clock=clock, interval=1)
    assert calls == ["label", "slow#0", "slow#1"]
    obj = await client.get(CM, "a", namespace="default")
    assert obj["metadata"]["labels"] == {"handled": "yes"}
