"""kopf's 05-handlers, ported (``examples/kopf/ex05_handlers.py``), on the real API server and
on FakeAPI, the same scenario on both: create, a change of ``spec.field``, a restart (resume),
and a delete held by the operator's finalizer until both delete handlers ran.

What the server does with the operator's writes (the custom resource's merge patches and
status subresource, the object kept with ``deletionTimestamp`` while the finalizer is on it:
``staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go``) is asked of the real
server; the causes are kopf's (``kopf/_core/intents/causes.py``, ``examples/05-handlers``).
"""

from __future__ import annotations

import importlib.util
import logging
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from kubectrl.client import AsyncClient, ClientConfig, load_kubeconfig
from kubectrl.envtest import ControlPlane
from kubectrl.errors import NotFoundError
from kubectrl.runtime import Manager, ManagerOptions
from kubectrl.testing import FakeAPI, eventually, run_manager

pytestmark = pytest.mark.integration
PORTS = Path(__file__).resolve().parents[3] / "examples" / "kopf"
KEX = ("kopf.dev/v1", "KopfExample")
DEADLINE = 30.0


@pytest.fixture(params=["real", "fake"])
async def backend(
    request: pytest.FixtureRequest, control_plane: ControlPlane, kubeconfig: Path, namespace: str
) -> AsyncIterator[tuple[ClientConfig, str]]:
    if request.param == "real":
        control_plane.install_crds([PORTS / "crd.yaml"])
        yield load_kubeconfig(kubeconfig).with_options(rate_limit=None), namespace
    else:
        fake = FakeAPI()
        fake.install_crd(PORTS / "crd.yaml")
        yield fake.config(), "default"


def load_port(run: int) -> ModuleType:
    name = f"kopf_port_ex05_it_{run}"
    spec = importlib.util.spec_from_file_location(name, PORTS / "ex05_handlers.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


async def run_scenario(
    config: ClientConfig, ns: str, caplog: pytest.LogCaptureFixture
) -> tuple[list[str], dict[str, Any]]:
    prefix = f"[{ns}/kex] "

    def lines() -> list[str]:
        found = (r.getMessage() for r in caplog.records)
        return [m[len(prefix) :] for m in found if m.startswith(prefix)]

    def logged(*wanted: str) -> Any:
        return lambda: all(w in lines() for w in wanted)

    def manager(run: int) -> Manager:
        built = Manager(
            config, options=ManagerOptions(metrics_bind_address="0", cache_namespace=ns)
        )
        load_port(run).operator.attach(built)
        return built

    obj = {
        "apiVersion": "kopf.dev/v1",
        "kind": "KopfExample",
        "metadata": {"name": "kex", "namespace": ns},
        "spec": {"field": "value"},
    }
    async with AsyncClient(config) as api:
        async with run_manager(manager(1)):
            await api.create(obj)
            await eventually(logged("CREATED 2nd", "FIELD CHANGED: None -> value"), DEADLINE)
            await api.patch(KEX, "kex", {"spec": {"field": "changed"}}, namespace=ns)
            await eventually(logged("UPDATED", "FIELD CHANGED: value -> changed"), DEADLINE)
        async with run_manager(manager(2)):
            await eventually(logged("RESUMED 1st", "RESUMED 2nd"), DEADLINE)
            stored = await api.get(KEX, "kex", namespace=ns)
            await api.delete(KEX, "kex", namespace=ns)
            await eventually(logged("DELETED 1st", "DELETED 2nd"), DEADLINE)

            async def removed() -> bool:
                try:
                    await api.get(KEX, "kex", namespace=ns)
                except NotFoundError:
                    return True
                return False

            await eventually(removed, DEADLINE, describe="the finalizer released")
    return lines(), stored


async def test_kopf_05_handlers_on_the_server_and_on_fakeapi(
    backend: tuple[ClientConfig, str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    config, ns = backend
    lines, stored = await run_scenario(config, ns, caplog)
    assert lines == [
        "CREATED 1st",
        "CREATED 2nd",
        "FIELD CHANGED: None -> value",
        "UPDATED",
        "FIELD CHANGED: value -> changed",
        "RESUMED 1st",
        "RESUMED 2nd",
        "DELETED 1st",
        "DELETED 2nd",
    ]
    assert stored["metadata"]["finalizers"] == ["operator.kubectrl.io/finalizer"]
    assert "status" not in stored or not stored["status"]  # the handlers return nothing


def load_named(stem: str) -> ModuleType:
    name = f"kopf_port_{stem}_it"
    spec = importlib.util.spec_from_file_location(name, PORTS / f"{stem}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


async def test_14_and_15_daemons_and_timers_on_the_real_api_server(
    control_plane: ControlPlane, kubeconfig: Path, namespace: str, caplog: pytest.LogCaptureFixture
) -> None:
    """kopf's 14-daemons and 15-timers, ported, on a real API server and the real clock: the
    daemons fail three times (the sync one's status patch goes through the real status
    subresource), then ping; the sync timer pings once the object has been idle 5 s; deleting
    the object stops every daemon and timer."""
    control_plane.install_crds([PORTS / "crd.yaml"])
    config = load_kubeconfig(kubeconfig).with_options(rate_limit=None)
    caplog.set_level(logging.INFO, "kubectrl.operator")
    manager = Manager(
        config, options=ManagerOptions(metrics_bind_address="0", cache_namespace=namespace)
    )
    daemons, timers = load_named("ex14_daemons"), load_named("ex15_timers")
    daemons.operator.attach(manager)
    timers.operator.attach(manager)
    obj = {
        "apiVersion": "kopf.dev/v1",
        "kind": "KopfExample",
        "metadata": {
            "name": "kex",
            "namespace": namespace,
            "annotations": {"someannotation": "somevalue"},
        },
        "spec": {"field": "value"},
    }

    def logged(text: str) -> bool:
        return any(text in r.getMessage() for r in caplog.records)

    async with AsyncClient(config) as client, run_manager(manager):
        await client.create(obj)
        await eventually(lambda: logged("=> Ping from an async daemon"), timeout=DEADLINE)
        await eventually(lambda: logged("retry=3"), timeout=DEADLINE)

        async def failed_three_times() -> bool:
            got = await client.get(KEX, "kex", namespace=namespace)
            return bool(got.get("status", {}).get("message"))

        await eventually(failed_three_times, timeout=DEADLINE)
        await eventually(lambda: logged("Ping from a sync timer"), timeout=DEADLINE)
        await client.delete(KEX, "kex", namespace=namespace)
        running = daemons.operator._daemons.running
        await eventually(
            lambda: not running() and not timers.operator._daemons.running(), timeout=DEADLINE
        )
