"""The manager's client refuses writes once the leader fence is closed (issue 16, defect 3).

The refusal happens before anything is sent, so these tests need no server (nothing listens on
the configured address: a write that got through would fail with a connection error instead).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from kubectrl.cache import InformerFactory
from kubectrl.client import AsyncClient, ClientConfig
from kubectrl.leaderelection import LeaderElectionLostError
from kubectrl.runtime import CachedClient

CONFIG = ClientConfig(server="https://127.0.0.1:9")
CM: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "settings", "namespace": "ns", "resourceVersion": "7"},
    "data": {"a": "1"},
}


def writes(client: CachedClient) -> dict[str, Callable[[], Awaitable[Any]]]:
    changed = {**CM, "data": {"a": "2"}}
    return {
        "create": lambda: client.create(CM),
        "update": lambda: client.update(CM),
        "update_status": lambda: client.status().update(CM),
        "patch": lambda: client.patch(("v1", "ConfigMap"), "settings", {}, namespace="ns"),
        "apply": lambda: client.apply(CM, field_manager="t"),
        "delete": lambda: client.delete(("v1", "ConfigMap"), "settings", namespace="ns"),
        "patch_merge_from": lambda: client.patch_merge_from(CM, changed, optimistic_lock=True),
        "status().update": lambda: client.status().update(CM),
        "status().patch": lambda: client.status().patch(
            ("v1", "ConfigMap"), "settings", {}, namespace="ns"
        ),
        "status().apply": lambda: client.status().apply(CM, field_manager="t"),
        "status().patch_merge_from": lambda: client.status().patch_merge_from(CM, changed),
    }


async def test_every_write_is_refused_without_sending_when_the_fence_is_closed() -> None:
    asked: list[bool] = []

    def fence() -> bool:
        asked.append(False)
        return False

    async with AsyncClient(CONFIG) as api:
        client = CachedClient(api, InformerFactory(api), leader_fence=fence)
        for verb, call in writes(client).items():
            with pytest.raises(LeaderElectionLostError, match="ns/settings") as info:
                await call()
            assert "no longer the leader" in str(info.value), verb
        assert len(asked) == len(writes(client))


async def test_set_leader_fence_installs_and_removes_the_fence() -> None:
    async with AsyncClient(CONFIG) as api:
        client = CachedClient(api, InformerFactory(api))
        client.check_fence("create", "ConfigMap (v1) ns/settings")  # no fence: a no-op
        client.set_leader_fence(lambda: False)
        with pytest.raises(LeaderElectionLostError, match=r"create ConfigMap \(v1\) ns/settings"):
            await client.create(CM)
        client.set_leader_fence(None)
        client.check_fence("create", "ConfigMap (v1) ns/settings")


async def test_a_write_guard_sees_each_write_once_before_anything_is_sent() -> None:
    """The fence is the live client's write guard (``AsyncClient.with_write_hooks``): every write
    of the interface asks it exactly once, before discovery, and names the object."""
    seen: list[tuple[str, str]] = []

    def guard(verb: str, what: str) -> None:
        seen.append((verb, what))
        raise PermissionError(verb)

    async with AsyncClient(CONFIG) as api:
        guarded = api.with_write_hooks(before=guard)
        calls = {
            "create": lambda: guarded.create(CM),
            "update": lambda: guarded.update(CM),
            "update status of": lambda: guarded.status().update(CM),
            "patch": lambda: guarded.patch(("v1", "ConfigMap"), "settings", {}, namespace="ns"),
            "apply": lambda: guarded.apply(CM, field_manager="t"),
            "delete": lambda: guarded.delete(("v1", "ConfigMap"), "settings", namespace="ns"),
            "delete collection of": lambda: guarded.delete_collection(
                ("v1", "ConfigMap"), namespace="ns"
            ),
            "patch scale of": lambda: guarded.scale(
                ("v1", "ConfigMap"), "settings", 2, namespace="ns"
            ),
        }
        for verb, call in calls.items():
            with pytest.raises(PermissionError, match=verb):
                await call()
        assert [verb for verb, _ in seen] == list(calls)
        assert seen[0][1] == "ConfigMap (v1) ns/settings"
        # The view leaves the client it came from unguarded.
        assert api._write_guard is None


async def test_a_write_observer_sees_each_answer_of_a_write() -> None:
    """``after`` is awaited with the server's answer of every write that succeeded (FakeAPI
    answers as the apiserver does); a refused write, or one through the plain client, reaches
    no observer."""
    from kubectrl.errors import AlreadyExistsError
    from kubectrl.testing import FakeAPI

    answers: list[dict[str, Any]] = []

    async def after(answer: dict[str, Any]) -> None:
        answers.append(answer)

    cm = {**CM, "metadata": {"name": "settings", "namespace": "default"}}
    async with AsyncClient(FakeAPI().config()) as api:
        hooked = api.with_write_hooks(after=after)
        await hooked.create(cm)
        await hooked.patch(
            ("v1", "ConfigMap"), "settings", {"data": {"a": "3"}}, namespace="default"
        )
        await api.create({**cm, "metadata": {"name": "plain", "namespace": "default"}})
        with pytest.raises(AlreadyExistsError):
            await hooked.create(cm)
        await hooked.delete(("v1", "ConfigMap"), "settings", namespace="default")
    # The delete's answer is a Status (the object was removed at once), as the apiserver's.
    assert [a["kind"] for a in answers] == ["ConfigMap", "ConfigMap", "Status"]
    created, patched = (a["metadata"] for a in answers[:2])
    assert created["name"] == patched["name"] == "settings"
    assert created["resourceVersion"] != patched["resourceVersion"]
