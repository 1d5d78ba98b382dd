"""Change handlers on the real API server and on FakeAPI, the same scenario on both: create,
update (old, new, diff), a restart that must neither lose nor repeat a change, and a delete
held by the operator's finalizer until its delete handler ran.

What the API server does with the operator's writes (merge patches of annotations and
finalizers, the object kept with ``deletionTimestamp`` while a finalizer is on it:
``staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go``) is asked of the real
server here; the handlers' semantics are kopf's (``kopf/_core/intents/causes.py``,
``kopf/_cogs/configs/diffbase.py``).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from kubectrl.client import AsyncClient, ClientConfig, load_kubeconfig
from kubectrl.errors import NotFoundError
from kubectrl.operator import Operator
from kubectrl.runtime import Manager, ManagerOptions
from kubectrl.testing import FakeAPI, eventually, run_manager

pytestmark = pytest.mark.integration
CM = ("v1", "ConfigMap")
DEADLINE = 30.0
LAST = "it.kubectrl.io/last-handled-configuration"


@pytest.fixture(params=["real", "fake"])
async def backend(
    request: pytest.FixtureRequest, kubeconfig: Path, namespace: str
) -> AsyncIterator[tuple[ClientConfig, str]]:
    if request.param == "real":
        yield load_kubeconfig(kubeconfig).with_options(rate_limit=None), namespace
    else:
        yield FakeAPI().config(), "default"


async def run_scenario(config: ClientConfig, ns: str) -> tuple[list[Any], dict[str, Any]]:
    calls: list[Any] = []

    def build() -> Manager:
        manager = Manager(
            config, options=ManagerOptions(metrics_bind_address="0", cache_namespace=ns)
        )
        operator = Operator(manager, name="it")

        @operator.on_create(CM)
        def created(name: str, body: dict[str, Any], **_: Any) -> None:
            calls.append(["create", name, body["data"]])

        @operator.on_update(CM)
        def updated(name: str, old: Any, new: Any, diff: Any, **_: Any) -> None:
            calls.append(["update", name, old["data"], new["data"], [list(d) for d in diff]])

        @operator.on_delete(CM)
        def deleted(name: str, **_: Any) -> None:
            calls.append(["delete", name])

        return manager

    def seen(n: int) -> Callable[[], bool]:
        return lambda: len(calls) >= n

    async with AsyncClient(config) as api:
        cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": ns}}
        async with run_manager(build()):
            await api.create({**cm, "data": {"x": "1"}})
            await eventually(seen(1), DEADLINE, describe="create")
            await api.patch(CM, "a", {"data": {"x": "2"}}, namespace=ns)
            await eventually(seen(2), DEADLINE, describe="update")
        await api.patch(CM, "a", {"data": {"x": "3"}}, namespace=ns)  # while stopped
        async with run_manager(build()):
            await eventually(seen(3), DEADLINE, describe="the update made while stopped")

            async def handled() -> dict[str, Any] | None:
                obj = await api.get(CM, "a", namespace=ns)
                text = obj["metadata"].get("annotations", {}).get(LAST, "{}")
                return obj if json.loads(text).get("data") == {"x": "3"} else None

            stored = await eventually(handled, DEADLINE, describe="the last-handled state")
            await api.delete(CM, "a", namespace=ns)
            await eventually(seen(4), DEADLINE, describe="delete")

            async def removed() -> bool:
                try:
                    await api.get(CM, "a", namespace=ns)
                except NotFoundError:
                    return True
                return False

            await eventually(removed, DEADLINE, describe="the finalizer released")
    return calls, stored


async def test_change_handlers_on_the_server_and_on_fakeapi(
    backend: tuple[ClientConfig, str],
) -> None:
    config, ns = backend
    calls, stored = await run_scenario(config, ns)
    assert calls == [
        ["create", "a", {"x": "1"}],
        ["update", "a", {"x": "1"}, {"x": "2"}, [["change", ("data", "x"), "1", "2"]]],
        ["update", "a", {"x": "2"}, {"x": "3"}, [["change", ("data", "x"), "2", "3"]]],
        ["delete", "a"],
    ]
    meta = stored["metadata"]
    assert meta["finalizers"] == ["it.kubectrl.io/finalizer"]
    assert json.loads(meta["annotations"][LAST]) == {
        "apiVersion": "v1",
        "data": {"x": "3"},
        "kind": "ConfigMap",
    }
