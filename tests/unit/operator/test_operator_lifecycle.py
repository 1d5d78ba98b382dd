"""The Operator as a runnable: startup and cleanup hooks around its controllers, probes,
indexes passed to handlers, raw event handlers, adopt, and the errors for bad registrations.

Upstream semantics: kopf's ``kopf/_core/reactor/running.py`` (startup before, cleanup after
the handlers), ``kopf/_core/engines/probing.py`` (probe values), ``kopf/_core/engines/indexing.py``
(indexes by the function's name), ``kopf/_core/intents/handlers.py`` (``on.event``) and
``kopf/_kits/hierarchies.py`` (``adopt``: owner reference, namespace, name prefix, labels).
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from kubectrl._internal.clock import FakeClock
from kubectrl.client import AsyncClient
from kubectrl.operator import Index, Operator, adopt, call_handler
from kubectrl.runtime import Manager, ManagerError, ManagerOptions
from kubectrl.testing import FakeAPI, eventually, run_manager

from .conftest import CM, configmap, new_manager


async def test_startup_runs_before_handlers_and_cleanup_after_stop(
    api: FakeAPI, clock: FakeClock, client: AsyncClient
) -> None:
    manager = new_manager(api, clock)
    operator = Operator(manager)
    order: list[str] = []

    @operator.on_startup()
    async def connect(memo: Any, **_: Any) -> None:
        memo.db = "connected"
        order.append("startup")

    @operator.on_create(CM)
    def created(name: str, **_: Any) -> None:
        order.append(f"create {name}")

    @operator.on_cleanup()
    def disconnect(memo: Any, **_: Any) -> None:
        order.append(f"cleanup {memo.db}")

    await client.create(configmap("a"))
    async with run_manager(manager):
        await eventually(lambda: "create a" in order, clock=clock)
        assert operator.controllers  # one controller per kind while running
    assert order == ["startup", "create a", "cleanup connected"]
    assert operator.controllers == {}


async def test_a_failing_startup_hook_stops_the_manager_naming_it(
    api: FakeAPI, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    manager = new_manager(api, clock)
    operator = Operator(manager)
    handled: list[str] = []

    @operator.on_startup()
    def connect(**_: Any) -> None:
        raise ConnectionError("database unreachable")

    @operator.on_create(CM)
    def created(name: str, **_: Any) -> None:
        handled.append(name)

    with pytest.raises(ManagerError) as info:
        await manager.start()
    cause = info.value.__cause__
    assert isinstance(cause, ConnectionError)
    assert "in the startup hook" in caplog.text
    assert "connect" in caplog.text
    assert "database unreachable" in caplog.text
    assert handled == []


async def test_probes_report_values_on_the_method_and_healthz(
    api: FakeAPI, clock: FakeClock
) -> None:
    manager = Manager(
        api.config(),
        options=ManagerOptions(metrics_bind_address="0", health_probe_bind_address="127.0.0.1:0"),
        clock=clock,
    )
    operator = Operator(manager)
    broken = {"now": False}

    @operator.on_probe(id="objects")
    def count(**_: Any) -> int:
        if broken["now"]:
            raise RuntimeError("lost the database")
        return 3

    async with run_manager(manager):
        assert await operator.probe() == {"objects": 3}
        url = f"http://127.0.0.1:{manager.probe_port}/healthz?verbose"
        async with httpx.AsyncClient() as http:
            assert (await http.get(url)).status_code == 200
            broken["now"] = True
            answer = await http.get(url)
        assert answer.status_code == 503
        assert "operator-operator" in answer.text
        with pytest.raises(RuntimeError, match="probe 'objects' failed: lost the database"):
            await operator.probe()


async def test_index_is_passed_to_handlers_by_name(
    api: FakeAPI, clock: FakeClock, client: AsyncClient
) -> None:
    manager = new_manager(api, clock)
    operator = Operator(manager)
    seen: list[tuple[Any, ...]] = []

    @operator.index(CM)
    def by_app(labels: dict[str, str], name: str, **_: Any) -> dict[str, str] | None:
        return {labels["app"]: name} if "app" in labels else None

    @operator.on_create(CM, labels={"role": "reader"})
    def reader(by_app: Index, **_: Any) -> None:
        seen.append(by_app.get("web", ()))

    for name in ("w1", "w2"):
        obj = configmap(name)
        obj["metadata"]["labels"] = {"app": "web"}  # type: ignore[index]
        await client.create(obj)
    async with run_manager(manager):
        await eventually(lambda: sorted(operator.indexes()["by_app"]["web"]) == ["w1", "w2"])
        reader_obj = configmap("r")
        reader_obj["metadata"]["labels"] = {"role": "reader"}  # type: ignore[index]
        await client.create(reader_obj)
        await eventually(lambda: seen, clock=clock, describe="the reader handler")
        await client.delete(CM, "w1", namespace="default")
        await eventually(lambda: operator.indexes()["by_app"]["web"] == ("w2",))
    assert sorted(seen[0]) == ["w1", "w2"]


async def test_event_handlers_see_raw_events_in_order(
    api: FakeAPI, clock: FakeClock, client: AsyncClient
) -> None:
    manager = new_manager(api, clock)
    operator = Operator(manager)
    events: list[tuple[str, str]] = []

    @operator.on_event(CM)
    async def on_any(type: str, name: str, **_: Any) -> None:
        events.append((type, name))

    async with run_manager(manager):
        await client.create(configmap("a"))
        await client.patch(CM, "a", {"data": {"k": "v"}}, namespace="default")
        await client.delete(CM, "a", namespace="default")
        await eventually(lambda: ("DELETED", "a") in events, clock=clock)
    assert events == [("ADDED", "a"), ("MODIFIED", "a"), ("DELETED", "a")]


async def test_kinds_without_change_handlers_get_nothing_written_on_them(
    api: FakeAPI, clock: FakeClock, client: AsyncClient
) -> None:
    """kopf stores the last-handled essence only for resources with change handlers
    (``kopf/_core/reactor/processing.py``); raw event handlers and delete handlers alone add
    no annotation (a delete handler adds only its finalizer)."""
    manager = new_manager(api, clock)
    operator = Operator(manager)
    events: list[str] = []

    @operator.on_event(CM)
    def on_any(name: str, **_: Any) -> None:
        events.append(name)

    @operator.on_delete(("v1", "Secret"))
    def secret_gone(**_: Any) -> None: ...

    async with run_manager(manager):
        await client.create(configmap("a"))
        await client.create(
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": "s", "namespace": "default"},
            }
        )

        async def finalized() -> bool:
            secret = await client.get(("v1", "Secret"), "s", namespace="default")
            return secret["metadata"].get("finalizers") == ["operator.kubectrl.io/finalizer"]

        await eventually(finalized, clock=clock, describe="the secret's finalizer")
        await eventually(lambda: events == ["a"], clock=clock)
        assert list(operator.controllers) == [("v1", "Secret")]
    cm = await client.get(CM, "a", namespace="default")
    secret = await client.get(("v1", "Secret"), "s", namespace="default")
    assert "annotations" not in cm["metadata"]
    assert "annotations" not in secret["metadata"]


def test_adopt_sets_owner_namespace_name_prefix_and_labels() -> None:
    owner = {
        "apiVersion": "example.com/v1",
        "kind": "Foo",
        "metadata": {"name": "foo", "namespace": "ns", "uid": "u-1", "labels": {"app": "x"}},
    }
    child = adopt({"metadata": {"labels": {"app": "mine"}}}, owner)
    assert child["metadata"] == {
        "labels": {"app": "mine"},
        "ownerReferences": [
            {
                "apiVersion": "example.com/v1",
                "kind": "Foo",
                "name": "foo",
                "uid": "u-1",
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
        "namespace": "ns",
        "generateName": "foo-",
    }
    with pytest.raises(ValueError, match=r"no metadata\.uid"):
        adopt({}, {"apiVersion": "v1", "kind": "Foo", "metadata": {"name": "x"}})
    other = {**owner, "metadata": {**owner["metadata"], "uid": "u-2"}}  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="already controlled by Foo 'foo'"):
        adopt(child, other)


def test_bad_registrations_are_errors_naming_the_fault(api: FakeAPI, clock: FakeClock) -> None:
    manager = new_manager(api, clock)
    with pytest.raises(ValueError, match="DNS label"):
        Operator(manager, name="Not_A_Label")
    operator = Operator(manager)
    with pytest.raises(TypeError, match=r"\(apiVersion, kind\) tuple"):
        operator.on_create("ConfigMap")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="retries must be"):
        operator.on_update(CM, retries=0)
    with pytest.raises(ValueError, match="dotted path"):
        operator.on_field(CM, field="")

    @operator.on_create(CM, id="same")
    def one(**_: Any) -> None: ...

    with pytest.raises(ValueError, match="'same' is already registered"):
        operator.on_create(CM, id="same")(one)

    with pytest.raises(TypeError, match="plain def"):

        @operator.index(CM)
        async def async_index(**_: Any) -> None: ...


async def test_call_handler_passes_only_declared_kwargs_and_names_missing_ones() -> None:
    def takes_name(name: str) -> str:
        return name

    assert await call_handler(takes_name, name="a", namespace="ns") == "a"

    async def takes_all(**kwargs: Any) -> list[str]:
        return sorted(kwargs)

    assert await call_handler(takes_all, name="a", spec={}) == ["name", "spec"]

    def needs_old(old: Any) -> None: ...

    with pytest.raises(TypeError, match="no keyword argument 'old'"):
        await call_handler(needs_old, name="a")
