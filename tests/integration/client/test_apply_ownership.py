"""Server-side apply of a model claims the fields the caller set, never the class's defaults.

The API server makes an apply's field manager the owner of every field in the body
(k8s.io/apiserver ``pkg/endpoints/handlers/patch.go``'s ``applyPatcher`` ->
k8s.io/apimachinery ``pkg/util/managedfields/internal/structuredmerge.go``'s ``Apply``), and with
``force=True`` its value replaces another manager's. client-go's apply configurations
(``k8s.io/client-go/applyconfigurations``) are all-pointer structs, so only what the caller set
is sent; a pydantic model with a defaulted field (``replicas: int = 1``) must send the same, or
every re-apply takes ``spec.replicas`` back from whoever scaled the object (a user, an HPA).

``extract`` is client-go's ``Extract<Kind>`` (``ExtractDeployment``: k8s.io/apimachinery
``pkg/util/managedfields/extract.go``'s ``ExtractInto``): what the manager applied, read back
from ``managedFields``; applying it again changes nothing. ``ClientConfig.field_owner`` is
controller-runtime's ``client.WithFieldOwner``: the manager of a write that names none.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubectrl import crd as crd_module
from kubectrl.client import AsyncClient, ClientConfig, extract
from kubectrl.client._apply import apply_body
from kubectrl.envtest import ControlPlane
from kubectrl.resources import CustomResource, ObjectMeta, ResourceModel

pytestmark = pytest.mark.integration

GROUP = "ownership.kubectrl.test"
ROLLOUTS = (f"{GROUP}/v1", "Rollout")


class RolloutSpec(ResourceModel):
    image: str
    replicas: int = 1  # a default: generated into the CRD schema too (the server fills it in)
    paused: bool = False


class Rollout(CustomResource, group=GROUP, version="v1", kind="Rollout"):
    spec: RolloutSpec


@pytest.fixture(scope="module")
def rollouts_crd(control_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory) -> None:
    path = tmp_path_factory.mktemp("ownership-crd") / "rollouts.yaml"
    path.write_text(crd_module.to_yaml(crd_module.generate(Rollout)), encoding="utf-8")
    control_plane.install_crds([path])


def desired(namespace: str) -> Rollout:
    """What manager "a" wants, built fresh each reconcile as a controller does."""
    return Rollout(
        metadata=ObjectMeta(name="r", namespace=namespace), spec=RolloutSpec(image="nginx")
    )


def fields_of(obj: dict[str, Any], manager: str, operation: str) -> dict[str, Any]:
    entries = [
        e
        for e in obj["metadata"]["managedFields"]
        if e["manager"] == manager and e["operation"] == operation
    ]
    assert len(entries) == 1, obj["metadata"]["managedFields"]
    fields: dict[str, Any] = entries[0]["fieldsV1"]
    return fields


async def test_reapply_with_force_keeps_what_another_manager_set(
    client: AsyncClient, namespace: str, rollouts_crd: None
) -> None:
    # (a) "a" applies a model whose spec has defaults (replicas=1, paused=False) it never set.
    await client.apply(desired(namespace), field_manager="a")
    created = await client.get(ROLLOUTS, "r", namespace=namespace)
    assert created["spec"] == {"image": "nginx", "replicas": 1, "paused": False}  # CRD defaults
    assert fields_of(created, "a", "Apply")["f:spec"] == {"f:image": {}}

    # "b" scales it (an update, as `kubectl scale` or an HPA writing spec.replicas).
    await client.patch(
        ROLLOUTS, "r", {"spec": {"replicas": 5}}, namespace=namespace, field_manager="b"
    )
    # "a" reconciles again and forces its configuration: replicas is not in it.
    await client.apply(desired(namespace), field_manager="a", force=True)
    live = await client.get(ROLLOUTS, "r", namespace=namespace)
    assert live["spec"]["replicas"] == 5
    assert "f:replicas" not in fields_of(live, "a", "Apply")["f:spec"]
    assert "f:paused" not in fields_of(live, "a", "Apply")["f:spec"]
    assert fields_of(live, "b", "Update")["f:spec"] == {"f:replicas": {}}

    # (b) What "a" owns, read back, is what "a" applied: from a dict and from a model.
    applied = apply_body(desired(namespace))
    assert extract(live, "a") == applied
    typed = await client.get(Rollout, "r", namespace=namespace)
    mine = extract(typed, "a")
    assert type(mine) is Rollout
    assert apply_body(mine) == applied
    assert extract(live, "b") == {  # an Update is no apply configuration
        "apiVersion": f"{GROUP}/v1",
        "kind": "Rollout",
        "metadata": {"name": "r", "namespace": namespace},
    }
    # Applying the extracted configuration changes nothing: no new resourceVersion.
    again = await client.apply(mine, field_manager="a")
    assert again.metadata.resource_version == live["metadata"]["resourceVersion"]
    assert again.spec.replicas == 5


async def test_field_owner_names_the_manager_of_an_apply_without_one(
    client_config: ClientConfig, namespace: str
) -> None:
    # (c) controller-runtime's client.WithFieldOwner: every write's manager by default.
    async with AsyncClient(client_config.with_options(field_owner="owner-x")) as owned:
        await owned.apply(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "owned", "namespace": namespace},
                "data": {"a": "1"},
            }
        )
        live = await owned.get(("v1", "ConfigMap"), "owned", namespace=namespace)
    assert fields_of(live, "owner-x", "Apply") == {"f:data": {"f:a": {}}}
