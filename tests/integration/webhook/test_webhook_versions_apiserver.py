"""A kind in two versions on the real kube-apiserver, its manifests generated from what the
WebhookBuilder registered (as a scaffolded project's ``manifests.py`` generates them), served
from the test process through envtest's ``WebhookInstallOptions``:

- the conversion registration names its kind, so the CRD says ``strategy: Webhook`` and an
  object created at the stored version v1 reads back at v2 in v2's shape;
- a defaulter registered for the v2 spoke runs when a v2 object is created (controller-runtime
  serves one per version, at ``/mutate-<group>-<version>-<kind>``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from pydantic import Field

from kubectrl import crd
from kubectrl.client import ClientConfig
from kubectrl.envtest import ControlPlane, WebhookInstallOptions
from kubectrl.resources import CustomResource, ResourceModel
from kubectrl.runtime import Manager, ManagerOptions, WebhookBuilder
from kubectrl.webhook import (
    WebhookServer,
    WebhookServerOptions,
    conversion_stanza,
    webhook_configurations,
)

from .conftest import ThreadedServer

pytestmark = pytest.mark.integration

GROUP = "versions.webhooks.kubectrl.dev"
CRD_NAME = f"sprockets.{GROUP}"
SERVICE = ("sprocket-webhook-service", "sprocket-system")


class SprocketSpec(ResourceModel):
    size: int | None = None
    unit: str | None = None


class Sprocket(CustomResource, group=GROUP, version="v1", kind="Sprocket", storage=True):
    """The hub: stored."""

    spec: SprocketSpec = Field(default_factory=SprocketSpec)


class Dimensions(ResourceModel):
    size: int | None = None
    unit: str | None = None


class SprocketV2Spec(ResourceModel):
    dimensions: Dimensions = Field(default_factory=Dimensions)


class SprocketV2(CustomResource, group=GROUP, version="v2", kind="Sprocket"):
    """The spoke: ``spec.dimensions`` nests v1's ``spec.size`` and ``spec.unit``."""

    spec: SprocketV2Spec = Field(default_factory=SprocketV2Spec)

    def to_hub(self) -> Sprocket:
        dims = self.spec.dimensions
        return Sprocket(metadata=self.metadata, spec=SprocketSpec(size=dims.size, unit=dims.unit))

    @classmethod
    def from_hub(cls, hub: Sprocket) -> SprocketV2:
        dims = Dimensions(size=hub.spec.size, unit=hub.spec.unit)
        return cls(metadata=hub.metadata, spec=SprocketV2Spec(dimensions=dims))


class V2Defaulter:
    """Only on v2: a v2 Sprocket without a unit gets millimetres."""

    def default(self, sprocket: SprocketV2) -> None:
        if sprocket.spec.dimensions.unit is None:
            sprocket.spec.dimensions.unit = "mm"


def register(manager: Manager) -> None:
    WebhookBuilder(manager).for_(Sprocket).with_conversion(SprocketV2).complete()
    WebhookBuilder(manager).for_(SprocketV2).with_defaulter(V2Defaulter()).complete()


def crd_manifest(server: WebhookServer) -> dict[str, Any]:
    """The CRD as a scaffolded project's ``manifests.crds()`` writes it."""
    manifest = crd.generate(Sprocket, SprocketV2)
    for reg in server.registrations:
        if reg.type == "conversion" and (reg.group, reg.kind) == (GROUP, "Sprocket"):
            manifest["spec"]["conversion"] = conversion_stanza(
                service_name=SERVICE[0], service_namespace=SERVICE[1], path=reg.path
            )
    return manifest


@pytest.fixture(scope="module")
def sprockets_served(
    control_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[None]:
    manifests = Manager(ClientConfig(server="https://manifests.invalid"))
    register(manifests)
    definition = crd_manifest(manifests.webhook_server)
    crd_path = tmp_path_factory.mktemp("sprocket-crd") / "sprockets.yaml"
    crd_path.write_text(crd.to_yaml(definition), encoding="utf-8")
    install = WebhookInstallOptions(
        configurations=webhook_configurations(
            manifests, service_name=SERVICE[0], service_namespace=SERVICE[1]
        ),
        # Only a CRD whose manifest asks for the conversion webhook is pointed at the server.
        conversion_crds=[CRD_NAME]
        if definition["spec"]["conversion"]["strategy"] == "Webhook"
        else [],
        local_serving_cert_dir=str(tmp_path_factory.mktemp("sprocket-certs")),
    ).prepare()
    manager = Manager(
        ClientConfig(server="https://127.0.0.1:9"),  # never contacted: only the webhook server runs
        options=ManagerOptions(
            metrics_bind_address="0",
            webhook_server=WebhookServerOptions(
                host=install.local_serving_host,
                port=install.local_serving_port,
                cert_dir=install.local_serving_cert_dir,
            ),
        ),
    )
    register(manager)
    threaded = ThreadedServer(manager.webhook_server)
    threaded.start()
    try:
        control_plane.install_crds([crd_path])
        install.install(control_plane)
        try:
            yield
        finally:
            install.uninstall(control_plane)
            with control_plane.http_client() as http:
                http.delete(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{CRD_NAME}")
    finally:
        threaded.stop()
        install.cleanup()


@pytest.fixture
def http(control_plane: ControlPlane, sprockets_served: None) -> Iterator[httpx.Client]:
    with control_plane.http_client() as client:
        yield client


def sprockets(namespace: str, version: str, name: str = "") -> str:
    path = f"/apis/{GROUP}/{version}/namespaces/{namespace}/sprockets"
    return f"{path}/{name}" if name else path


def test_the_generated_crd_asks_for_the_conversion_webhook() -> None:
    manager = Manager(ClientConfig(server="https://manifests.invalid"))
    register(manager)
    conversion = crd_manifest(manager.webhook_server)["spec"]["conversion"]
    assert conversion["strategy"] == "Webhook"
    assert conversion["webhook"]["conversionReviewVersions"] == ["v1"]
    assert conversion["webhook"]["clientConfig"]["service"] == {
        "name": SERVICE[0],
        "namespace": SERVICE[1],
        "path": "/convert",
        "port": 443,
    }


def test_an_object_created_at_v1_reads_back_at_v2_in_v2s_shape(
    http: httpx.Client, namespace: str
) -> None:
    v1 = {
        "apiVersion": f"{GROUP}/v1",
        "kind": "Sprocket",
        "metadata": {"name": "made-as-v1"},
        "spec": {"size": 3, "unit": "cm"},
    }
    created = http.post(sprockets(namespace, "v1"), json=v1)
    assert created.status_code == 201, created.text
    read = http.get(sprockets(namespace, "v2", "made-as-v1"))
    assert read.status_code == 200, read.text
    as_v2 = SprocketV2.model_validate(read.json())  # a v1 shape would not validate
    assert as_v2.api_version == f"{GROUP}/v2"
    assert as_v2.spec.dimensions == Dimensions(size=3, unit="cm")
    assert "size" not in read.json()["spec"]


def test_the_v2_defaulter_runs_when_a_v2_object_is_created(
    http: httpx.Client, namespace: str
) -> None:
    v2 = {
        "apiVersion": f"{GROUP}/v2",
        "kind": "Sprocket",
        "metadata": {"name": "made-as-v2"},
        "spec": {"dimensions": {"size": 7}},
    }
    created = http.post(sprockets(namespace, "v2"), json=v2)
    assert created.status_code == 201, created.text
    assert created.json()["spec"] == {"dimensions": {"size": 7, "unit": "mm"}}
    stored = http.get(sprockets(namespace, "v1", "made-as-v2")).json()
    assert stored["spec"] == {"size": 7, "unit": "mm"}
    # A v1 object too: the rule lists v2 and the default matchPolicy (Equivalent) has the
    # apiserver convert the v1 request to v2 for that webhook.
    plain = {**v2, "apiVersion": f"{GROUP}/v1", "metadata": {"name": "v1-no-unit"}}
    plain["spec"] = {"size": 1}
    made = http.post(sprockets(namespace, "v1"), json=plain)
    assert made.status_code == 201, made.text
    assert made.json()["spec"] == {"size": 1, "unit": "mm"}
