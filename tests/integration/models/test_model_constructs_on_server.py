"""The constructs a model can now say (tagged unions, Quantity, float | str, schema extras,
selectableFields, optionalOldSelf, explicit aliases for initialisms) on a real kube-apiserver:
the generated CRD is accepted and the server enforces what the model means."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, Literal, Union

import httpx
import pytest
from pydantic import ConfigDict, Field

from kubectrl import crd as crd_module
from kubectrl.envtest import ControlPlane
from kubectrl.resources import CustomResource, Quantity, ResourceModel, Rule

pytestmark = pytest.mark.integration

GROUP = "gaps.kubectrl.test"


class Http(ResourceModel):
    type: Literal["HTTP"]
    path: str
    port: int = 80


class Tcp(ResourceModel):
    type: Literal["TCP"]
    port: int = 80


class Contact(ResourceModel):
    model_config = ConfigDict(
        json_schema_extra={"oneOf": [{"required": ["email"]}, {"required": ["phone"]}]}
    )
    email: str | None = None
    phone: str | None = None


class ProbeSpec(ResourceModel):
    probe: Annotated[Union[Http, Tcp], Field(discriminator="type")]  # noqa: UP007
    memory: Quantity = "1Gi"
    threshold: float | str = 0.5
    is_ca: bool = Field(default=False, alias="isCA")
    name: str = Field(default="probe", json_schema_extra={"not": {"pattern": "^kube-"}})
    color: Literal["red", "blue"] = "red"
    owner: Annotated[
        str,
        Rule(
            "!oldSelf.hasValue() || oldSelf.value() == '' || self == oldSelf.value()",
            message="owner is immutable once set",
            optional_old_self=True,
        ),
        Field(max_length=32),
    ] = ""
    contact: Contact | None = None


class Probe(
    CustomResource,
    group=GROUP,
    version="v1",
    kind="Probe",
    selectable_fields=(".spec.color",),
):
    spec: ProbeSpec


@pytest.fixture(scope="module")
def installed(control_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory) -> None:
    path: Path = tmp_path_factory.mktemp("gaps") / "probes.yaml"
    path.write_text(crd_module.to_yaml(crd_module.generate(Probe)), encoding="utf-8")
    control_plane.install_crds([path])


@pytest.fixture
def http(control_plane: ControlPlane, installed: None) -> Iterator[httpx.Client]:
    with control_plane.http_client() as client:
        yield client


def _path(namespace: str, name: str = "") -> str:
    base = f"/apis/{GROUP}/v1/namespaces/{namespace}/probes"
    return f"{base}/{name}" if name else base


def _body(name: str, **spec: Any) -> dict[str, Any]:
    probe = Probe.model_validate(
        {"metadata": {"name": name}, "spec": {"probe": {"type": "TCP"}, **spec}}
    )
    return probe.model_dump(by_alias=True, exclude_none=True, mode="json")


def test_a_valid_object_reads_back_equal(http: httpx.Client, namespace: str) -> None:
    body = _body(
        "ok",
        probe={"type": "HTTP", "path": "/healthz"},
        memory="500m",
        threshold="80%",
        isCA=True,
        contact={"email": "a@example.com"},
    )
    created = http.post(_path(namespace), json=body)
    assert created.status_code == 201, created.text
    back = Probe.model_validate(http.get(_path(namespace, "ok")).json())
    assert back.spec == Probe.model_validate(body).spec
    assert back.spec.is_ca is True


@pytest.mark.parametrize(
    ("case", "spec", "field"),
    [
        ("tagged union: a variant's required field", {"probe": {"type": "HTTP"}}, "spec.probe"),
        ("tagged union: an unknown tag", {"probe": {"type": "UDP"}}, "spec.probe.type"),
        ("quantity pattern", {"memory": "lots"}, "spec.memory"),
        ("json_schema_extra not", {"name": "kube-system"}, "spec.name"),
        ("model json_schema_extra oneOf", {"contact": {}}, "spec.contact"),
    ],
)
def test_the_server_enforces_the_constructs(
    http: httpx.Client, namespace: str, case: str, spec: dict[str, Any], field: str
) -> None:
    body = _body("bad")
    body["spec"].update(spec)
    response = http.post(_path(namespace), json=body)
    assert response.status_code == 422, (case, response.text)
    # The server names the field, a field inside it, or (for not / oneOf) says it in the message.
    causes = response.json()["details"]["causes"]
    assert any(
        (c.get("field") or "").startswith(field) or f'"{field}"' in c.get("message", "")
        for c in causes
    ), (case, causes)


def test_optional_old_self_rule_runs_on_update(http: httpx.Client, namespace: str) -> None:
    created = http.post(_path(namespace), json=_body("owned", owner="team-a"))
    assert created.status_code == 201, created.text
    changed = created.json()
    changed["spec"]["owner"] = "team-b"
    response = http.put(_path(namespace, "owned"), json=changed)
    assert response.status_code == 422, response.text
    assert "owner is immutable once set" in response.text


def test_a_selectable_field_filters_a_list(http: httpx.Client, namespace: str) -> None:
    for name, color in (("red-one", "red"), ("blue-one", "blue")):
        response = http.post(_path(namespace), json=_body(name, color=color))
        assert response.status_code == 201, response.text
    listed = http.get(_path(namespace), params={"fieldSelector": "spec.color=blue"})
    assert listed.status_code == 200, listed.text
    assert [i["metadata"]["name"] for i in listed.json()["items"]] == ["blue-one"]
