"""The Foo sample controller's unit tests: its own manager, run unchanged on FakeAPI.

``main.build_manager`` builds the manager exactly as the program does (Builder, options, rate
limiter, recorder, FooReconciler); the test only points it at a :class:`~kubectrl.testing.FakeAPI`
(``load_config``) and gives the Manager a :class:`~kubectrl._internal.clock.FakeClock`, so the
``ErrResourceExists`` retries wait on fake time. Every branch of ``FooReconciler.reconcile`` is
covered; the end-to-end tests (tests/e2e/test_sample_controller.py) prove the same against a real
apiserver.
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import re
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from kubernetes.client.models import V1Deployment

from kubectrl._internal.clock import FakeClock
from kubectrl.client import AsyncClient
from kubectrl.errors import NotFoundError
from kubectrl.runtime import Controller, Manager
from kubectrl.testing import FakeAPI, eventually, run_manager

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "sample_controller"
FOO = ("samplecontroller.k8s.io/v1alpha1", "Foo")
DEPLOYMENT = ("apps/v1", "Deployment")
EVENT = ("v1", "Event")
NS = "default"


def load(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def sample() -> Iterator[ModuleType]:
    """examples/sample_controller/main.py, its ``api`` and ``controller`` imports resolved.

    The example's directory is not a package and its module names are too common for sys.path;
    they are loaded under names of their own and put under their plain names only while main.py
    and controller.py import them.
    """
    saved = {name: sys.modules.get(name) for name in ("api", "controller")}
    try:
        sys.modules["api"] = load("sample_controller_api", EXAMPLE / "api.py")
        sys.modules["controller"] = load("sample_controller_controller", EXAMPLE / "controller.py")
        yield load("sample_controller_main", EXAMPLE / "main.py")
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


@dataclass
class FooWorld:
    """The fake API server, the running Foo manager and a client of the test's own."""

    api: FakeAPI
    clock: FakeClock
    manager: Manager
    controller: Controller
    client: AsyncClient

    def reconciles(self, result: str) -> float:
        """``controller_runtime_reconcile_total{controller="foo", result=...}``."""
        value = self.manager.registry.get_sample_value(  # type: ignore[union-attr]
            "controller_runtime_reconcile_total", {"controller": "foo", "result": result}
        )
        return value or 0.0

    async def idle(self) -> None:
        """Wait until no Foo reconcile runs and no key is ready (waiting retries may remain)."""

        def settled() -> bool:
            stats = self.controller.queue.statistics()
            return stats.processing == 0 and stats.length == 0 and not self.controller.in_flight

        await eventually(settled, describe="the foo controller idle")

    async def create_foo(self, name: str, spec: dict[str, Any]) -> dict[str, Any]:
        foo = {
            "apiVersion": FOO[0],
            "kind": "Foo",
            "metadata": {"name": name, "namespace": NS},
            "spec": spec,
        }
        return await self.client.create(foo)

    async def deployment(self, name: str) -> dict[str, Any]:
        return await eventually(
            lambda: self.client.get(DEPLOYMENT, name, namespace=NS),
            describe=f"Deployment {NS}/{name}",
        )

    async def events(self, foo_name: str, reason: str) -> list[dict[str, Any]]:
        async def matching() -> list[dict[str, Any]]:
            events = await self.client.list(EVENT, namespace=NS)
            return [
                event
                for event in events["items"]
                if event["involvedObject"]["name"] == foo_name and event["reason"] == reason
            ]

        return await eventually(matching, describe=f"a {reason} event about Foo {foo_name}")


@pytest.fixture
async def world(sample: ModuleType, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FooWorld]:
    clock = FakeClock()
    api = FakeAPI(clock=clock)
    api.install_crd(EXAMPLE / "artifacts" / "crd.yaml")
    # The program's own wiring, pointed at the fake and given the fake clock.
    monkeypatch.setattr(sample, "load_config", api.config)
    monkeypatch.setattr(sample, "Manager", functools.partial(Manager, clock=clock))
    manager = sample.build_manager(sample.parse_args(["--metrics-bind-address", "0"]))
    (controller,) = [
        handle.runnable for handle in manager._handles if isinstance(handle.runnable, Controller)
    ]
    async with run_manager(manager), AsyncClient(api.config()) as client:
        yield FooWorld(api, clock, manager, controller, client)


async def test_a_foo_gets_its_deployment_with_labels_owner_and_field_manager(
    world: FooWorld,
) -> None:
    foo = await world.create_foo("web", {"deploymentName": "web-nginx", "replicas": 2})
    deployment = await world.deployment("web-nginx")
    assert deployment["spec"]["replicas"] == 2
    labels = {"app": "nginx", "controller": "web"}
    assert deployment["spec"]["selector"] == {"matchLabels": labels}
    assert deployment["spec"]["template"]["metadata"]["labels"] == labels
    (owner,) = deployment["metadata"]["ownerReferences"]
    assert owner == {
        "apiVersion": FOO[0],
        "kind": "Foo",
        "name": "web",
        "uid": foo["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }
    managers = {entry["manager"] for entry in deployment["metadata"]["managedFields"]}
    assert managers == {"sample-controller"}
    (synced, *_) = await world.events("web", "Synced")
    assert (synced["type"], synced["message"]) == ("Normal", "Foo synced successfully")
    await world.idle()
    assert world.reconciles("error") == 0


async def test_the_deployments_available_replicas_are_copied_into_the_foo_status(
    world: FooWorld,
) -> None:
    await world.create_foo("web", {"deploymentName": "web", "replicas": 1})
    deployment = await world.deployment("web")
    # No kube-controller-manager here either: the test plays the Deployment controller.
    await world.client.status().patch(
        DEPLOYMENT,
        "web",
        {"status": {"availableReplicas": 1, "replicas": 1}},
        namespace=NS,
    )

    async def available() -> int | None:
        foo = await world.client.get(FOO, "web", namespace=NS)
        return (foo.get("status") or {}).get("availableReplicas")

    assert await eventually(available, describe="Foo status.availableReplicas") == 1
    assert deployment["metadata"]["name"] == "web"


async def test_replicas_that_differ_from_the_foos_are_put_back(world: FooWorld) -> None:
    await world.create_foo("web", {"deploymentName": "web", "replicas": 1})
    await world.deployment("web")
    # The Foo changes: the Deployment follows.
    await world.client.patch(FOO, "web", {"spec": {"replicas": 3}}, namespace=NS)

    async def replicas() -> int:
        return int((await world.client.get(DEPLOYMENT, "web", namespace=NS))["spec"]["replicas"])

    await eventually(lambda: _equals(replicas(), 3), describe="Deployment replicas 3")
    # Someone scales the Deployment by hand: the Foo's number wins again.
    await world.client.patch(DEPLOYMENT, "web", {"spec": {"replicas": 7}}, namespace=NS)
    await eventually(lambda: _equals(replicas(), 3), describe="Deployment back to 3")


async def test_a_foreign_deployment_is_reported_and_retried_with_backoff_on_the_clock(
    world: FooWorld,
) -> None:
    foreign = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "taken", "namespace": NS},
        "spec": {
            "selector": {"matchLabels": {"app": "other"}},
            "template": {
                "metadata": {"labels": {"app": "other"}},
                "spec": {"containers": [{"name": "c", "image": "busybox"}]},
            },
        },
    }
    await world.client.create(foreign)
    await world.create_foo("web", {"deploymentName": "taken", "replicas": 1})
    (warning, *_) = await world.events("web", "ErrResourceExists")
    assert warning["type"] == "Warning"
    assert warning["message"] == 'Resource "taken" already exists and is not managed by Foo'
    queue = world.controller.queue
    # main.rate_limiter(): 5 ms per key, doubling on each failure; the waits are fake time.
    for failures, delay in enumerate((0.005, 0.010, 0.020), start=1):
        await eventually(lambda n=failures: world.reconciles("error") == n)
        await world.idle()
        assert queue.statistics().waiting == 1
        failed_at = world.clock.now()
        world.clock.set(failed_at + delay * 0.9)
        await world.idle()
        assert world.reconciles("error") == failures, f"retried before {delay} s"
        world.clock.set(failed_at + delay)
        await eventually(
            lambda n=failures: world.reconciles("error") == n + 1, describe=f"retry {failures}"
        )
    untouched = await world.client.get(DEPLOYMENT, "taken", namespace=NS)
    assert "ownerReferences" not in untouched["metadata"]
    assert world.reconciles("success") == 0


async def test_a_foo_without_deployment_name_is_logged_and_not_retried(
    world: FooWorld, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="sample_controller")
    await world.create_foo("nameless", {"replicas": 1})
    await eventually(
        lambda: "default/nameless: deployment name must be specified" in caplog.text,
        describe="the error log line",
    )
    await world.idle()
    assert world.controller.queue.statistics().waiting == 0  # nothing to retry
    assert world.reconciles("error") == 0
    deployments = await world.client.list(DEPLOYMENT, namespace=NS)
    assert deployments["items"] == []


async def test_a_deleted_foo_is_logged_and_its_deployment_collected(
    world: FooWorld, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="sample_controller")
    await world.create_foo("web", {"deploymentName": "web", "replicas": 1})
    await world.deployment("web")
    await world.client.delete(FOO, "web", namespace=NS)
    await eventually(
        lambda: "foo 'default/web' in work queue no longer exists" in caplog.text,
        describe="the Foo-gone log line",
    )

    async def collected() -> bool:
        try:
            await world.client.get(DEPLOYMENT, "web", namespace=NS)
        except NotFoundError:
            return True
        return False

    await eventually(collected, describe="the Deployment garbage-collected")
    await world.idle()
    assert world.reconciles("error") == 0


async def test_already_exists_on_create_reads_the_deployment_live(world: FooWorld) -> None:
    # The cache has not seen a Deployment the Foo owns (its watch event is late): the create gets
    # AlreadyExists, and the reconciler reads the Deployment from the API server and goes on.
    # Its Deployment informer's stream ends and whatever it does next (watch again or relist)
    # waits an hour of the fake clock, which the test never moves.
    world.api.delay_next("watch", "Deployment", 3600)
    world.api.delay_next("list", "Deployment", 3600)
    world.api.drop_watches("Deployment")
    foo = await world.create_foo("web", {"replicas": 2})  # no deploymentName yet
    owned = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "web",
            "namespace": NS,
            "ownerReferences": [
                {
                    "apiVersion": FOO[0],
                    "kind": "Foo",
                    "name": "web",
                    "uid": foo["metadata"]["uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "nginx", "controller": "web"}},
            "template": {
                "metadata": {"labels": {"app": "nginx", "controller": "web"}},
                "spec": {"containers": [{"name": "nginx", "image": "nginx:latest"}]},
            },
        },
    }
    await world.client.create(owned)
    await world.client.patch(FOO, "web", {"spec": {"deploymentName": "web"}}, namespace=NS)
    await world.events("web", "Synced")
    await world.idle()
    assert world.reconciles("error") == 0
    with pytest.raises(NotFoundError):  # the cache never saw it: the live read did the work
        await world.manager.client.get(DEPLOYMENT, "web", namespace=NS)


async def _equals(value: Any, expected: object) -> bool:
    return bool(await value == expected)


async def test_the_docs_example_runs(sample: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/testing.md's Foo example, as written, with the sample's names in scope."""
    doc = (EXAMPLE.parents[1] / "docs" / "testing.md").read_text(encoding="utf-8")
    section = doc.split("## Unit tests on the fake", 1)[1]
    source = re.findall(r"```python\n(.*?)```", section, re.S)[0]
    controller = sys.modules["sample_controller_controller"]
    scope: dict[str, Any] = {
        "Foo": sys.modules["sample_controller_api"].Foo,
        "FooReconciler": controller.FooReconciler,
        "V1Deployment": V1Deployment,
    }
    exec(compile(source, "docs/testing.md", "exec"), scope)
    monkeypatch.chdir(EXAMPLE)  # the example's CRD path is relative to its directory
    await scope["test_foo_gets_its_deployment"]()
