"""Handler progress: several handlers per change, each run to success once, with retries,
backoff, timeouts and permanent errors per handler, and progress stored on the object.

Upstream semantics: kopf's ``kopf/_core/actions/execution.py`` (``PermanentError``,
``TemporaryError(delay)``, ``retries``, ``timeout``, ``backoff``),
``kopf/_core/actions/progression.py`` (the per-handler state: started, retries, delayed,
success, failure, message) and ``kopf/_core/actions/invocation.py`` with ``kopf.register``
(sub-handlers).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from kubectrl._internal.clock import FakeClock
from kubectrl.client import AsyncClient
from kubectrl.operator import Operator, PermanentError, TemporaryError, register
from kubectrl.testing import FakeAPI, consistently, eventually, run_manager

from .conftest import CM, configmap, new_manager

PROGRESS = "operator.kubectrl.io/progress"
LAST = "operator.kubectrl.io/last-handled-configuration"


async def annotations(client: AsyncClient, name: str = "a") -> dict[str, str]:
    obj = await client.get(CM, name, namespace="default")
    return dict(obj["metadata"].get("annotations") or {})


async def test_each_handler_succeeds_once_while_another_retries(
    api: FakeAPI, clock: FakeClock, client: AsyncClient
) -> None:
    manager = new_manager(api, clock)
    operator = Operator(manager)
    ok: list[int] = []
    flaky: list[int] = []

    @operator.on_create(CM)
    async def first(retry: int, **_: Any) -> None:
        ok.append(retry)

    @operator.on_create(CM)
    async def second(retry: int, **_: Any) -> None:
        flaky.append(retry)
        if retry < 2:
            raise TemporaryError("not yet", delay=30)

    async with run_manager(manager):
        await client.create(configmap("a"))
        await eventually(lambda: flaky == [0], clock=clock, describe="the first try")
        # Progress is on the object while `second` waits: retries and when it is due.
        stored = json.loads((await eventually(lambda: annotations(client)))[PROGRESS])
        assert stored["cause"] == "create"
        assert (
            stored["handlers"][
                "test_each_handler_succeeds_once_while_another_retries.<locals>.first"
            ]["success"]
            is True
        )
        second_state = stored["handlers"][
            "test_each_handler_succeeds_once_while_another_retries.<locals>.second"
        ]
        assert second_state["retries"] == 1
        assert "TemporaryError: not yet" in second_state["message"]
        clock.advance(29)
        await consistently(lambda: flaky == [0], 0.1)
        await eventually(
            lambda: flaky == [0, 1, 2], 120, clock=clock, interval=1, describe="the retries"
        )
        done = await eventually(
            lambda: _done(client), clock=clock, describe="last-handled stored, progress removed"
        )
        assert done
    assert ok == [0]


async def _done(client: AsyncClient) -> bool:
    found = await annotations(client)
    return LAST in found and PROGRESS not in found


async def test_permanent_error_and_exhausted_retries_end_the_handler(
    api: FakeAPI, clock: FakeClock, client: AsyncClient
) -> None:
    manager = new_manager(api, clock)
    operator = Operator(manager)
    permanent: list[int] = []
    failing: list[int] = []

    @operator.on_create(CM, id="permanent")
    async def never(retry: int, **_: Any) -> None:
        permanent.append(retry)
        raise PermanentError("spec is wrong")

    @operator.on_create(CM, id="limited", retries=3, backoff=5)
    def broken(retry: int, **_: Any) -> None:
        failing.append(retry)
        raise RuntimeError("boom")

    async with run_manager(manager):
        await client.create(configmap("a"))
        await eventually(
            lambda: _done(client), 60, clock=clock, interval=1, describe="the change handled"
        )
        await consistently(lambda: len(failing) == 3, 10, clock=clock, interval=1)
    assert permanent == [0]
    assert failing == [0, 1, 2]


async def test_timeout_fails_the_handler_after_its_deadline(
    api: FakeAPI, clock: FakeClock, client: AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    manager = new_manager(api, clock)
    operator = Operator(manager)
    tries: list[float] = []

    @operator.on_create(CM, id="slow", timeout=100, backoff=30)
    async def slow(runtime: Any, **_: Any) -> None:
        tries.append(runtime.total_seconds())
        raise RuntimeError("still failing")

    async with run_manager(manager):
        await client.create(configmap("a"))
        await eventually(
            lambda: _done(client), 300, clock=clock, interval=1, describe="the handler given up"
        )
        await consistently(lambda: len(tries) == 4, 60, clock=clock, interval=1)
    # Tries at 0, 30, 60, 90 s; at 120 s the 100 s timeout has passed: no fifth try.
    assert [round(t) for t in tries] == [0, 30, 60, 90]


async def test_progress_survives_a_restart(
    api: FakeAPI, clock: FakeClock, client: AsyncClient
) -> None:
    """A handler's retry count and the handlers already done are kept across a restart."""
    calls: list[tuple[str, int]] = []

    def build() -> Any:
        manager = new_manager(api, clock)
        operator = Operator(manager)

        @operator.on_create(CM, id="done-once")
        def first(retry: int, **_: Any) -> None:
            calls.append(("first", retry))

        @operator.on_create(CM, id="retrying")
        def second(retry: int, **_: Any) -> None:
            calls.append(("second", retry))
            if retry < 1:
                raise TemporaryError("later", delay=10)

        return manager

    async with run_manager(build()):
        await client.create(configmap("a"))
        await eventually(lambda: _has_progress(client), describe="progress stored")
    async with run_manager(build()):
        await eventually(
            lambda: _done(client), 60, clock=clock, interval=1, describe="the change handled"
        )
    assert calls == [("first", 0), ("second", 0), ("second", 1)]


async def _has_progress(client: AsyncClient) -> bool:
    return PROGRESS in await annotations(client)


async def test_sub_handlers_each_run_to_success_once(
    api: FakeAPI, clock: FakeClock, client: AsyncClient
) -> None:
    manager = new_manager(api, clock)
    operator = Operator(manager)
    runs: list[str] = []

    @operator.on_create(CM, id="parent")
    async def parent(body: dict[str, Any], **_: Any) -> None:
        runs.append("parent")
        for key in sorted(body["data"]):

            async def child(retry: int, key: str = key, **_: Any) -> None:
                runs.append(f"{key}#{retry}")
                if key == "b" and retry == 0:
                    raise TemporaryError("b later", delay=5)

            register(child, id=key)

    async with run_manager(manager):
        await client.create(configmap("a", {"a": "1", "b": "2"}))
        await eventually(
            lambda: _done(client), 60, clock=clock, interval=1, describe="the change handled"
        )
    # The parent is called again to register its sub-handlers; a runs once, b twice.
    assert runs == ["parent", "a#0", "b#0", "parent", "b#1"]


def test_register_outside_a_handler_is_an_error() -> None:
    with pytest.raises(RuntimeError, match="only inside a change handler"):
        register(lambda **_: None)


FOO_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "foos.example.com"},
    "spec": {
        "group": "example.com",
        "names": {"kind": "Foo", "plural": "foos", "singular": "foo", "listKind": "FooList"},
        "scope": "Namespaced",
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "x-kubernetes-preserve-unknown-fields": True,
                    }
                },
            }
        ],
    },
}
FOO = ("example.com/v1", "Foo")


async def test_return_values_and_status_patches_reach_the_status_subresource(
    api: FakeAPI, clock: FakeClock, client: AsyncClient
) -> None:
    """kopf stores a handler's return value in ``status.<handler id>``
    (``kopf/_core/actions/execution.py``); with a status subresource, the main resource's
    patch would drop ``status`` (``staging/src/k8s.io/apiextensions-apiserver/pkg/registry/
    customresource/strategy.go``), so the operator writes it through the subresource."""
    api.install_crd(FOO_CRD)
    manager = new_manager(api, clock)
    operator = Operator(manager)

    @operator.on_create(FOO, id="create")
    def create(patch: dict[str, Any], **_: Any) -> dict[str, str]:
        patch["status"] = {"phase": "Ready"}
        patch["metadata"] = {"labels": {"made": "yes"}}
        return {"message": "done"}

    async with run_manager(manager):
        await client.create(
            {"apiVersion": "example.com/v1", "kind": "Foo",
             "metadata": {"name": "f", "namespace": "default"}, "spec": {"size": 1}}
        )  # fmt: skip

        async def status() -> dict[str, Any]:
            obj = await client.get(FOO, "f", namespace="default")
            return dict(obj.get("status") or {})

        found = await eventually(status, clock=clock, describe="the status written")
    assert found == {"phase": "Ready", "create": {"message": "done"}}
    assert (await client.get(FOO, "f", namespace="default"))["metadata"]["labels"] == {
        "made": "yes"
    }


async def test_a_status_on_a_kind_without_one_is_reported_not_dropped_silently(
    api: FakeAPI, clock: FakeClock, client: AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    manager = new_manager(api, clock)
    operator = Operator(manager)
    done: list[str] = []

    @operator.on_create(CM, id="result")
    def create(name: str, **_: Any) -> str:
        done.append(name)
        return "a value a ConfigMap cannot hold"

    async with run_manager(manager):
        await client.create(configmap("a"))
        await eventually(lambda: _done(client), clock=clock, describe="the change handled")
    assert "ConfigMap default/a has no status field" in caplog.text
    assert "a value a ConfigMap cannot hold" in caplog.text
