"""Typed objects against the real API server: model classes name kinds, results are instances,
updates through a model keep fields the model does not know, and a stored object that does not
fit its model fails with an error naming it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from kubernetes.client.models import (
    V1ConfigMap,
    V1Container,
    V1Deployment,
    V1DeploymentSpec,
    V1LabelSelector,
    V1ObjectMeta,
    V1PodSpec,
    V1PodTemplateSpec,
)
from pydantic import BaseModel, ConfigDict, Field

from kubectrl.client import AsyncClient, BlockingClient, ClientConfig, ModelList
from kubectrl.envtest import ControlPlane
from kubectrl.errors import ModelValidationError, NotFoundError
from kubectrl.kinds import KindInfo

pytestmark = pytest.mark.integration

CRD = Path(__file__).with_name("typed_gadgets_crd.yaml")
GADGETS = KindInfo("typed.kubectrl.test", "v1", "Gadget", "gadgets", True)


class GadgetSpec(BaseModel):
    """What this (older) model knows of spec: only ``size``."""

    size: int | None = None


class GadgetStatus(BaseModel):
    phase: str | None = None


class Gadget(BaseModel):
    """A custom resource as a plain pydantic model naming its kind."""

    __kubectrl_kind__ = GADGETS
    model_config = ConfigDict(populate_by_name=True)

    api_version: str | None = Field(default=None, alias="apiVersion")
    kind: str | None = None
    metadata: V1ObjectMeta
    spec: GadgetSpec
    status: GadgetStatus | None = None


class StrictGadgetSpec(BaseModel):
    size: int = Field(ge=0)


class StrictGadget(BaseModel):
    """The same kind with a constraint the stored object breaks."""

    __kubectrl_kind__ = GADGETS

    metadata: V1ObjectMeta
    spec: StrictGadgetSpec


@pytest.fixture(scope="module")
def gadgets_crd(control_plane: ControlPlane) -> None:
    control_plane.install_crds([CRD])


def web_deployment(namespace: str) -> V1Deployment:
    labels = {"app": "web"}
    return V1Deployment(
        metadata=V1ObjectMeta(name="web", namespace=namespace),
        spec=V1DeploymentSpec(
            replicas=1,
            selector=V1LabelSelector(match_labels=labels),
            template=V1PodTemplateSpec(
                metadata=V1ObjectMeta(labels=labels),
                spec=V1PodSpec(containers=[V1Container(name="web", image="nginx:1.27")]),
            ),
        ),
    )


async def test_typed_builtin_get_change_update_reread(client: AsyncClient, namespace: str) -> None:
    created = await client.create(
        V1ConfigMap(metadata=V1ObjectMeta(name="typed", namespace=namespace), data={"a": "1"})
    )
    assert isinstance(created, V1ConfigMap)
    assert created.metadata.uid

    cm = await client.get(V1ConfigMap, "typed", namespace=namespace)
    assert isinstance(cm, V1ConfigMap)
    cm.data = {"a": "2"}
    read_version = cm.metadata.resource_version
    updated = await client.update(cm)
    assert isinstance(updated, V1ConfigMap)
    assert updated.metadata.resource_version != read_version
    assert cm.metadata.resource_version == updated.metadata.resource_version  # refreshed
    reread = await client.get(V1ConfigMap, "typed", namespace=namespace)
    assert reread.data == {"a": "2"}

    dep = await client.create(web_deployment(namespace))
    assert isinstance(dep, V1Deployment)
    dep.spec.replicas = 3
    await client.update(dep)
    again = await client.get(V1Deployment, "web", namespace=namespace)
    assert again.spec.replicas == 3
    # The template the model never touched came back exactly as the server defaulted it.
    assert again.spec.template.spec.containers[0].image == "nginx:1.27"
    assert again.spec.template.spec.containers[0].termination_message_path


async def test_typed_list_patch_apply_and_watch(client: AsyncClient, namespace: str) -> None:
    for name in ("l1", "l2", "l3"):
        await client.create(V1ConfigMap(metadata=V1ObjectMeta(name=name, namespace=namespace)))
    listed = await client.list(V1ConfigMap, namespace=namespace, limit=2)
    assert isinstance(listed, ModelList)
    assert all(isinstance(item, V1ConfigMap) for item in listed.items)
    assert {"l1", "l2", "l3"} <= {item.metadata.name for item in listed.items}
    assert listed.resource_version
    names = [cm.metadata.name async for cm in client.list_items(V1ConfigMap, namespace=namespace)]
    assert {"l1", "l2", "l3"} <= set(names)
    pages = [page async for page in client.list_pages(V1ConfigMap, namespace=namespace, limit=1)]
    assert len(pages) >= 3
    assert all(isinstance(item, V1ConfigMap) for page in pages for item in page.items)

    patched = await client.patch(V1ConfigMap, "l1", {"data": {"p": "1"}}, namespace=namespace)
    assert isinstance(patched, V1ConfigMap)
    assert patched.data == {"p": "1"}
    applied = await client.apply(
        V1ConfigMap(metadata=V1ObjectMeta(name="l2", namespace=namespace), data={"ssa": "y"}),
        field_manager="typed-test",
    )
    assert isinstance(applied, V1ConfigMap)
    assert applied.data == {"ssa": "y"}

    async with client.watch(
        V1ConfigMap, namespace=namespace, resource_version=listed.resource_version
    ) as events:
        async for event in events:
            cm = event.as_model(V1ConfigMap)
            if cm.metadata.name == "l2" and (cm.data or {}).get("ssa") == "y":
                break


async def test_unknown_fields_survive_a_typed_update(
    client: AsyncClient, namespace: str, gadgets_crd: None
) -> None:
    await client.create(
        {
            "apiVersion": "typed.kubectrl.test/v1",
            "kind": "Gadget",
            "metadata": {"name": "g", "namespace": namespace},
            "spec": {"size": 1, "newerField": "keep me", "extras": {"deep": {"x": [1, 2]}}},
        }
    )
    gadget = await client.get(Gadget, "g", namespace=namespace)
    assert isinstance(gadget, Gadget)
    assert gadget.spec.size == 1
    gadget.spec.size = 2
    updated = await client.update(gadget)
    assert isinstance(updated, Gadget)

    stored = await client.get(("typed.kubectrl.test/v1", "Gadget"), "g", namespace=namespace)
    assert stored["spec"] == {
        "size": 2,
        "newerField": "keep me",
        "extras": {"deep": {"x": [1, 2]}},
    }

    # Status through the model, too (status subresource): spec stays as stored.
    updated.status = GadgetStatus(phase="Ready")
    with_status = await client.status().update(updated)
    assert with_status.status is not None
    assert with_status.status.phase == "Ready"
    stored = await client.get(("typed.kubectrl.test/v1", "Gadget"), "g", namespace=namespace)
    assert stored["spec"]["newerField"] == "keep me"
    assert stored["status"] == {"phase": "Ready"}


async def test_a_stored_object_that_does_not_fit_the_model_is_named(
    client: AsyncClient, namespace: str, gadgets_crd: None
) -> None:
    await client.create(
        {
            "apiVersion": "typed.kubectrl.test/v1",
            "kind": "Gadget",
            "metadata": {"name": "negative", "namespace": namespace},
            "spec": {"size": -1},  # the CRD allows it; StrictGadget does not
        }
    )
    with pytest.raises(ModelValidationError) as info:
        await client.get(StrictGadget, "negative", namespace=namespace)
    err = info.value
    assert (err.kind, err.namespace, err.name) == ("Gadget", namespace, "negative")
    assert err.fields == ("spec.size",)
    assert f"Gadget {namespace}/negative does not validate as StrictGadget" in str(err)
    assert "spec.size: Input should be greater than or equal to 0" in str(err)
    with pytest.raises(ModelValidationError, match="negative"):
        await client.list(StrictGadget, namespace=namespace)
    # The same object as a dict is fine: only the typed view fails.
    raw = await client.get(("typed.kubectrl.test/v1", "Gadget"), "negative", namespace=namespace)
    assert raw["spec"]["size"] == -1


def test_blocking_client_is_typed_too(client_config: ClientConfig, namespace: str) -> None:
    with BlockingClient(client_config) as client:
        created = client.create(
            V1ConfigMap(metadata=V1ObjectMeta(name="sync", namespace=namespace), data={"a": "1"})
        )
        assert isinstance(created, V1ConfigMap)
        got = client.get(V1ConfigMap, "sync", namespace=namespace)
        assert got.data == {"a": "1"}
        assert [cm.metadata.name for cm in client.list_items(V1ConfigMap, namespace=namespace)]
        client.delete(V1ConfigMap, "sync", namespace=namespace)
        with pytest.raises(NotFoundError):
            client.get(V1ConfigMap, "sync", namespace=namespace)


async def test_a_crd_installed_after_first_use_is_found(
    client: AsyncClient, control_plane: ControlPlane, namespace: str, tmp_path: Path
) -> None:
    class Late(BaseModel):
        __kubectrl_kind__ = KindInfo("late.kubectrl.test", "v1", "Late", "lates", True)
        metadata: V1ObjectMeta

    text = CRD.read_text().replace("typed.kubectrl.test", "late.kubectrl.test")
    text = text.replace("gadgets", "lates").replace("gadget", "late").replace("Gadget", "Late")
    path = tmp_path / "late.yaml"
    path.write_text(text)
    with pytest.raises(Exception, match="Late"):
        await client.get(Late, "x", namespace=namespace)
    await asyncio.to_thread(control_plane.install_crds, [path])
    with pytest.raises(NotFoundError):
        await client.get(Late, "x", namespace=namespace)
