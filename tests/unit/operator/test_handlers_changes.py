"""Change handlers: create, update (old, new, diff), field, resume, and the last-handled state
stored on the object so a manager restart neither loses nor repeats a change.

Upstream semantics: kopf's ``kopf/_core/intents/causes.py`` (which cause an object's state
is), ``kopf/_cogs/configs/diffbase.py`` (the last-handled configuration annotation) and
``kopf/_cogs/structs/diffs.py`` (the diff's shape).
"""

from __future__ import annotations

import json
from typing import Any

from kubectrl._clock import FakeClock
from kubectrl.client import AsyncClient
from kubectrl.operator import DiffItem, Operator
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
