"""Typed kinds through the cache and the runtime, on a real kube-apiserver.

A Manager + Builder ``for_(Widget).owns(V1ConfigMap)`` controller names every kind by its class:
it reads a typed Widget from the cache, creates a typed ConfigMap it controls
(``set_controller_reference(widget, cm)``), writes the Widget's status with a model
(``status().update``) and through ``status().patch(Widget, ...)`` (typed result), and re-creates
the ConfigMap when it is deleted: the owner handler was built from the class. A second test puts
an object that does not fit its model in the cache next to one that does: only the bad key's
reconcile fails, with an error naming the object, the kind and the field.

Owner handling follows controller-runtime's ``EnqueueRequestForOwner``
(pkg/handler/enqueue_owner.go: owner group/kind from the type, any version) and
``controllerutil.SetControllerReference`` (pkg/controller/controllerutil/controllerutil.go).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from kubernetes.client.models import V1ConfigMap, V1ObjectMeta
from pydantic import ConfigDict

from kubectrl import crd as crd_module
from kubectrl.client import AsyncClient, ClientConfig, load_kubeconfig
from kubectrl.envtest import ControlPlane
from kubectrl.errors import ModelValidationError, NotFoundError
from kubectrl.resources import CustomResource, ObjectMeta, ResourceModel
from kubectrl.runtime import Builder, Manager, ManagerOptions, Request
from kubectrl.runtime.controllerutil import (
    OperationResult,
    create_or_patch,
    create_or_update,
    set_controller_reference,
)

pytestmark = pytest.mark.integration

GROUP = "typed.kubectrl.dev"
DEADLINE = 90.0


class WidgetSpec(ResourceModel):
    size: int = 1


class WidgetStatus(ResourceModel):
    config_map: str | None = None
    observed_size: int | None = None


class Widget(CustomResource, group=GROUP, version="v1", kind="Widget"):
    spec: WidgetSpec
    status: WidgetStatus | None = None


class LooseGadgetSpec(ResourceModel):
    size: str


class LooseGadget(CustomResource, group=GROUP, version="v1", kind="Gadget"):
    """What the CRD is generated from: the server takes any string as ``spec.size``."""

    spec: LooseGadgetSpec


class GadgetSpec(ResourceModel):
    size: int


class Gadget(CustomResource, group=GROUP, version="v1", kind="Gadget"):
    """What the controller reads: ``spec.size`` must be an integer (``"big"`` does not fit)."""

    spec: GadgetSpec


class ThingSpec(ResourceModel):
    size: int = 1
    color: str = ""


class ThingStatus(ResourceModel):
    ready: bool | None = None


class Thing(CustomResource, group=GROUP, version="v1", kind="Thing"):
    """What the CRD is generated from (a newer version of the API, say)."""

    spec: ThingSpec
    status: ThingStatus | None = None


class SlimThingSpec(ResourceModel):
    # An older model: it does not know spec.color and does not keep unknown keys itself.
    model_config = ConfigDict(extra="ignore")
    size: int = 1


class SlimThing(CustomResource, group=GROUP, version="v1", kind="Thing"):
    spec: SlimThingSpec = SlimThingSpec()
    status: ThingStatus | None = None


@pytest.fixture(scope="module")
def crds(control_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory) -> None:
    folder = tmp_path_factory.mktemp("typed-crds")
    for name, model in (("widgets", Widget), ("gadgets", LooseGadget), ("things", Thing)):
        path = folder / f"{name}.yaml"
        path.write_text(crd_module.to_yaml(crd_module.generate(model)), encoding="utf-8")
    control_plane.install_crds([folder])


@pytest.fixture
def config(kubeconfig: Path) -> ClientConfig:
    return load_kubeconfig(kubeconfig).with_options(rate_limit=None)


@pytest.fixture
async def api(config: ClientConfig, crds: None) -> AsyncIterator[AsyncClient]:
    async with AsyncClient(config) as client:
        yield client


@pytest.fixture
async def manager(config: ClientConfig, namespace: str, crds: None) -> AsyncIterator[Manager]:
    made = Manager(
        config,
        options=ManagerOptions(
            metrics_bind_address="127.0.0.1:0",
            health_probe_bind_address="127.0.0.1:0",
            cache_namespace=namespace,
            graceful_shutdown_timeout=10.0,
        ),
    )
    yield made
    made.stop()


async def eventually(condition: Callable[[], Awaitable[bool] | bool], what: str) -> None:
    """Poll until ``condition`` holds; fail at the deadline (never a timing assertion)."""
    end = time.monotonic() + DEADLINE
    while True:
        result = condition()
        if not isinstance(result, bool):
            result = await result
        if result:
            return
        if time.monotonic() > end:
            raise AssertionError(f"not reached before the deadline: {what}")
        await asyncio.sleep(0.05)


async def run(manager: Manager) -> asyncio.Task[None]:
    task = asyncio.ensure_future(manager.start())

    def ready() -> bool:
        if task.done():
            task.result()  # surface a start failure
        return manager.caches_synced and manager.is_leader()

    await eventually(ready, "manager caches synced")
    return task


async def stop(manager: Manager, task: asyncio.Task[None]) -> None:
    manager.stop()
    with contextlib.suppress(asyncio.CancelledError):
        await asyncio.wait_for(task, 30)


async def test_typed_widget_controller_owns_a_typed_configmap(
    manager: Manager, api: AsyncClient, namespace: str
) -> None:
    """for_(Widget).owns(V1ConfigMap): typed reads, typed writes, the owner handler by class."""
    client = manager.client
    read_types: set[type] = set()
    patched: list[Widget] = []

    async def reconcile(request: Request) -> None:
        try:
            widget = await client.get(Widget, request.name, namespace=request.namespace)
        except NotFoundError:
            return
        read_types.add(type(widget))
        name = f"{request.name}-config"
        try:
            await client.get(V1ConfigMap, name, namespace=request.namespace)
        except NotFoundError:
            cm = V1ConfigMap(
                metadata=V1ObjectMeta(name=name, namespace=request.namespace),
                data={"size": str(widget.spec.size)},
            )
            set_controller_reference(widget, cm)
            await client.create(cm)
        if widget.status is None:
            widget.status = WidgetStatus(config_map=name, observed_size=widget.spec.size)
            await client.status().update(widget)
        elif widget.status.observed_size != widget.spec.size:
            result = await client.status().patch(
                Widget,
                request.name,
                {"status": {"observedSize": widget.spec.size}},
                namespace=request.namespace,
            )
            patched.append(result)

    controller = Builder(manager).for_(Widget).owns(V1ConfigMap).complete(reconcile)
    assert controller.name == "widget"
    task = await run(manager)
    try:
        created = await api.create(
            Widget(metadata=ObjectMeta(name="w1", namespace=namespace), spec=WidgetSpec(size=3))
        )
        assert isinstance(created, Widget)

        async def status_is(size: int) -> bool:
            widget = await api.get(Widget, "w1", namespace=namespace)
            return widget.status is not None and widget.status.observed_size == size

        await eventually(lambda: status_is(3), "status written by status().update(widget)")
        widget = await api.get(Widget, "w1", namespace=namespace)
        assert widget.status is not None
        assert widget.status.config_map == "w1-config"
        cm = await api.get(V1ConfigMap, "w1-config", namespace=namespace)
        assert cm.data == {"size": "3"}
        assert cm.metadata is not None
        assert cm.metadata.owner_references is not None
        (ref,) = cm.metadata.owner_references
        assert (ref.api_version, ref.kind, ref.name) == (f"{GROUP}/v1", "Widget", "w1")
        assert ref.uid == created.metadata.uid
        assert ref.controller is True
        assert read_types == {Widget}

        # A spec change: the status is merge-patched and the patch answers with a Widget.
        await api.patch(Widget, "w1", {"spec": {"size": 5}}, namespace=namespace)
        await eventually(lambda: status_is(5), "status patched by status().patch(Widget, ...)")
        # The server commits the patch before the reconciler reads the answer: the poll above
        # can see status 5 while the reconcile still awaits its response.
        await eventually(lambda: bool(patched), "the reconcile received the patch's answer")
        assert all(isinstance(p, Widget) for p in patched)

        # Deleting the owned ConfigMap enqueues its owner (handler built from the class).
        first_uid = cm.metadata.uid
        await api.delete(V1ConfigMap, "w1-config", namespace=namespace)

        async def recreated() -> bool:
            try:
                again = await api.get(V1ConfigMap, "w1-config", namespace=namespace)
            except NotFoundError:
                return False
            return again.metadata is not None and again.metadata.uid != first_uid

        await eventually(recreated, "ConfigMap re-created after its deletion")
    finally:
        await stop(manager, task)


async def test_an_object_that_does_not_fit_its_model_fails_only_its_own_reconcile(
    manager: Manager, api: AsyncClient, namespace: str
) -> None:
    """One bad and one good object in the cache: the bad key's reconcile gets a
    ModelValidationError naming namespace/name, kind and field; the good one is reconciled,
    the informer keeps delivering, and the bad object reconciles once it is fixed."""
    client = manager.client
    good: list[tuple[str, int]] = []
    errors: dict[str, ModelValidationError] = {}

    async def reconcile(request: Request) -> None:
        try:
            gadget = await client.get(Gadget, request.name, namespace=request.namespace)
        except NotFoundError:
            return
        except ModelValidationError as err:
            errors[request.name] = err
            raise
        good.append((request.name, gadget.spec.size))

    Builder(manager).for_(Gadget).complete(reconcile)
    task = await run(manager)
    try:
        for name, size in (("bad", "big"), ("good", "2")):
            await api.create(
                LooseGadget(
                    metadata=ObjectMeta(name=name, namespace=namespace),
                    spec=LooseGadgetSpec(size=size),
                )
            )
        await eventually(lambda: ("good", 2) in good and "bad" in errors, "both reconciled")
        err = errors["bad"]
        assert (err.kind, err.namespace, err.name, err.model) == (
            "Gadget",
            namespace,
            "bad",
            "Gadget",
        )
        assert err.fields == ("spec.size",)
        assert f"Gadget {namespace}/bad does not validate as Gadget: spec.size" in str(err)

        # The informer goes on: a later change to the good object and the fix of the bad one
        # both reach their reconciles.
        await api.patch(LooseGadget, "good", {"spec": {"size": "7"}}, namespace=namespace)
        await api.patch(LooseGadget, "bad", {"spec": {"size": "4"}}, namespace=namespace)
        await eventually(
            lambda: ("good", 7) in good and ("bad", 4) in good, "later events reconciled"
        )

        # A list of the kind with one bad item names that item.
        await api.patch(LooseGadget, "bad", {"spec": {"size": "huge"}}, namespace=namespace)

        async def list_fails_on_bad() -> bool:
            try:
                await client.list(Gadget, namespace=namespace)
            except ModelValidationError as failure:
                return failure.name == "bad"
            return False

        await eventually(list_fails_on_bad, "list names the bad item")
        typed = await client.list(LooseGadget, namespace=namespace)
        assert sorted((g.metadata.name, g.spec.size) for g in typed.items) == [
            ("bad", "huge"),
            ("good", "7"),
        ]
        assert typed.kind == "GadgetList"
    finally:
        await stop(manager, task)


async def test_cached_reads_are_fresh_instances_and_share_one_informer(
    manager: Manager, api: AsyncClient, namespace: str
) -> None:
    """A class, a tuple and a GVK name one informer; each typed read is a new instance, and
    mutating one changes neither the cache nor the next read."""
    from kubectrl.objects import GroupVersionKind

    await api.create(
        V1ConfigMap(metadata=V1ObjectMeta(name="shared", namespace=namespace), data={"k": "v"})
    )
    factory = manager.informer_factory
    task = await run(manager)
    try:
        client = manager.client
        await eventually(
            lambda: _exists(client.get(V1ConfigMap, "shared", namespace=namespace)), "cached"
        )
        first = await client.get(V1ConfigMap, "shared", namespace=namespace)
        second = await client.get(V1ConfigMap, "shared", namespace=namespace)
        assert isinstance(first, V1ConfigMap)
        assert first is not second
        assert first.data is not None
        first.data["k"] = "changed"
        assert (await client.get(V1ConfigMap, "shared", namespace=namespace)).data == {"k": "v"}
        raw = await client.get(("v1", "ConfigMap"), "shared", namespace=namespace)
        assert raw["data"] == {"k": "v"}
        # The blocking client (sync reconcilers) reads typed objects the same way.
        blocking = manager.blocking_client
        from_thread = await asyncio.to_thread(
            lambda: blocking.get(V1ConfigMap, "shared", namespace=namespace)
        )
        assert isinstance(from_thread, V1ConfigMap)
        assert from_thread.data == {"k": "v"}
        listed = await asyncio.to_thread(lambda: blocking.list(V1ConfigMap, namespace=namespace))
        assert "shared" in [c.metadata.name for c in listed.items if c.metadata]
        by_class = await factory.get_informer(V1ConfigMap, namespace=namespace)
        assert await factory.get_informer(("v1", "ConfigMap"), namespace=namespace) is by_class
        gvk = GroupVersionKind("", "v1", "ConfigMap")
        assert await factory.get_informer(gvk, namespace=namespace) is by_class
    finally:
        await stop(manager, task)


async def test_create_or_update_and_patch_with_models_keep_fields_the_model_does_not_know(
    api: AsyncClient, namespace: str
) -> None:
    """create_or_update/create_or_patch on a model instance: mutate changes that instance, the
    result is reported as controller-runtime does (controllerutil.go: CreateOrUpdate,
    CreateOrPatch), and spec.color, unknown to the model, survives every write."""

    def slim(name: str) -> SlimThing:
        return SlimThing(metadata=ObjectMeta(name=name, namespace=namespace))

    def size(value: int) -> Callable[[SlimThing], None]:
        def mutate(thing: SlimThing) -> None:
            thing.spec.size = value

        return mutate

    obj = slim("t1")
    assert await create_or_update(api, obj, size(2)) is OperationResult.CREATED
    assert obj.metadata.uid  # obj now holds what the server stored
    await api.patch(Thing, "t1", {"spec": {"color": "red"}}, namespace=namespace)

    assert await create_or_update(api, slim("t1"), size(2)) is OperationResult.UNCHANGED
    obj = slim("t1")
    assert await create_or_update(api, obj, size(3)) is OperationResult.UPDATED
    assert obj.spec.size == 3
    stored = await api.get(Thing, "t1", namespace=namespace)
    assert (stored.spec.size, stored.spec.color) == (3, "red")
    # The instance create_or_update filled in carries spec.color on to the caller's next write.
    await api.update(obj)
    stored = await api.get(Thing, "t1", namespace=namespace)
    assert stored.spec.color == "red"

    def ready(thing: SlimThing) -> None:
        thing.status = ThingStatus(ready=True)

    obj = slim("t1")
    assert await create_or_patch(api, obj, ready) is OperationResult.UPDATED_STATUS_ONLY
    assert obj.status is not None
    assert obj.status.ready is True

    def both(thing: SlimThing) -> None:
        thing.spec.size = 4
        thing.status = ThingStatus(ready=False)

    assert await create_or_patch(api, slim("t1"), both) is OperationResult.UPDATED_STATUS
    assert await create_or_patch(api, slim("t1"), size(4)) is OperationResult.UNCHANGED
    stored = await api.get(Thing, "t1", namespace=namespace)
    assert (stored.spec.size, stored.spec.color) == (4, "red")
    assert stored.status is not None
    assert stored.status.ready is False


async def _exists(read: Awaitable[Any]) -> bool:
    try:
        await read
    except NotFoundError:
        return False
    return True
