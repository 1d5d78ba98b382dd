"""A CRD generated from pydantic models, on a real kube-apiserver.

The server is the judge of what the generated schema means: it must accept the CRD (structural,
Established), enforce every constraint with a 422 naming the field, apply the model's defaults,
serve the printer columns, the status and scale subresources and both versions.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from kubectrl import crd as crd_module
from kubectrl.envtest import ControlPlane

from .everything import GROUP, Everything, EverythingV1Alpha1

pytestmark = pytest.mark.integration

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"


@pytest.fixture(scope="module")
def installed(
    control_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Any]:
    crd = crd_module.generate(EverythingV1Alpha1, Everything)
    path = tmp_path_factory.mktemp("crds") / "everythings.yaml"
    path.write_text(crd_module.to_yaml(crd), encoding="utf-8")
    (installed,) = control_plane.install_crds([path])
    return installed


@pytest.fixture
def http(control_plane: ControlPlane, installed: dict[str, Any]) -> Iterator[httpx.Client]:
    with control_plane.http_client() as client:
        yield client


def _path(namespace: str, name: str = "", version: str = "v1") -> str:
    base = f"/apis/{GROUP}/{version}/namespaces/{namespace}/everythings"
    return f"{base}/{name}" if name else base


def _valid(name: str) -> dict[str, Any]:
    return Everything.model_validate(
        {"metadata": {"name": name}, "spec": {"name": "web"}}
    ).model_dump(by_alias=True, exclude_none=True, mode="json")


def test_the_generated_two_version_crd_is_established(installed: dict[str, Any]) -> None:
    """Every supported construct in one structural schema, two versions, v1 stored, conversion None.

    Structural-schema rules: apiextensions-apiserver pkg/apiserver/schema/structural.go; the
    generated shape follows controller-tools pkg/crd/schema.go.
    """
    conditions = {c["type"]: c["status"] for c in installed["status"]["conditions"]}
    assert conditions["Established"] == "True"
    assert conditions.get("NonStructuralSchema", "False") == "False"
    versions = {v["name"]: v["storage"] for v in installed["spec"]["versions"]}
    assert versions == {"v1alpha1": False, "v1": True}
    assert installed["spec"]["conversion"]["strategy"] == "None"


# (what to change in a valid spec, the field the server must name)
INVALID: list[tuple[str, dict[str, Any], str]] = [
    ("maximum", {"replicas": 11}, "spec.replicas"),
    ("minimum", {"replicas": -1}, "spec.replicas"),
    ("exclusive minimum", {"size": 0}, "spec.size"),
    ("exclusive maximum", {"size": 100}, "spec.size"),
    ("pattern", {"name": "Not_Valid"}, "spec.name"),
    ("max length", {"name": "x" * 21}, "spec.name"),
    ("min length", {"name": ""}, "spec.name"),
    ("enum (Literal)", {"mode": "slow"}, "spec.mode"),
    ("enum (Enum)", {"tier": "bronze"}, "spec.tier"),
    ("multiple of", {"step": 7}, "spec.step"),
    (
        "list max items",
        {"ports": [{"name": f"p{i}", "port": 80 + i} for i in range(9)]},
        "spec.ports",
    ),
    ("list item max length", {"hosts": ["h" * 64]}, "spec.hosts[0]"),
    ("list-type set", {"tags": ["a", "a"]}, "spec.tags[1]"),
    (
        "list-type map",
        {"ports": [{"name": "a", "port": 1}, {"name": "a", "port": 2}]},
        "spec.ports[1]",
    ),
    ("required in item", {"ports": [{"name": "a"}]}, "spec.ports[0].port"),
    ("CEL rule on a field", {"odd": 2}, "spec.odd"),
    ("CEL rule on a model, field path", {"range": {"min": 5, "max": 1}}, "spec.range.min"),
    ("int-or-string", {"maxUnavailable": True}, "spec.maxUnavailable"),
    ("embedded resource without kind", {"template": {"apiVersion": "v1"}}, "spec.template.kind"),
]


@pytest.mark.parametrize(("case", "change", "field"), INVALID, ids=[c[0] for c in INVALID])
def test_the_server_enforces_each_constraint_naming_the_field(
    http: httpx.Client, namespace: str, case: str, change: dict[str, Any], field: str
) -> None:
    """Constraints map as controller-tools pkg/crd/markers/validation.go maps its markers."""
    body = _valid("bad")
    body["spec"].update(change)
    response = http.post(_path(namespace), json=body)
    assert response.status_code == 422, (case, response.text)
    causes = [c.get("field") for c in response.json()["details"]["causes"]]
    assert field in causes, (case, response.json()["details"])


def test_a_missing_required_field_is_named(http: httpx.Client, namespace: str) -> None:
    body = _valid("missing")
    del body["spec"]["name"]
    response = http.post(_path(namespace), json=body)
    assert response.status_code == 422, response.text
    assert "spec.name" in [c.get("field") for c in response.json()["details"]["causes"]]


def test_the_server_applies_the_models_defaults(http: httpx.Client, namespace: str) -> None:
    """Defaults from the model are in the schema (controller-tools' +kubebuilder:default)."""
    body = {
        "apiVersion": f"{GROUP}/v1",
        "kind": "Everything",
        "metadata": {"name": "defaults"},
        "spec": {"name": "web"},
    }
    response = http.post(_path(namespace), json=body)
    assert response.status_code == 201, response.text
    spec = http.get(_path(namespace, "defaults")).json()["spec"]
    assert spec == {
        "name": "web",
        "replicas": 1,
        "size": 5,
        "ratio": 1.0,
        "step": 10,
        "enabled": True,
        "mode": "safe",
        "tier": "silver",
        "big": 0,
        "labels": {},
        "tags": [],
        "ports": [],
        "hosts": [],
        "selector": {},
        "maxUnavailable": "25%",
        "range": {"min": 0, "max": 10},
        "odd": 1,
    }
    # What the server returns reads back as the model.
    assert (
        Everything.model_validate(http.get(_path(namespace, "defaults")).json()).spec.replicas == 1
    )


def test_null_is_kept_only_where_the_model_says_nullable(
    http: httpx.Client, namespace: str
) -> None:
    """``nullable: true`` only with the Nullable marker (controller-tools' +nullable)."""
    body = _valid("nulls")
    body["spec"].update({"note": None, "started": None})
    response = http.post(_path(namespace), json=body)
    assert response.status_code == 201, response.text
    spec = response.json()["spec"]
    assert "note" in spec
    assert spec["note"] is None
    assert "started" not in spec


def test_every_construct_round_trips(http: httpx.Client, namespace: str) -> None:
    """A full object (embedded resource, preserved fields, int-or-string) is kept as sent."""
    body = _valid("full")
    body["spec"].update(
        {
            "ports": [{"name": "http", "port": 80, "protocol": "TCP"}],
            "maxUnavailable": 2,
            "template": {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "t"},
                "data": {"k": "v"},
            },
            "config": {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "c", "labels": {"a": "b"}},
                "data": {"k": "v"},
                "dropped": "not in the model's schema",
            },
            "extra": {"free": {"form": [1, 2]}},
            "anything": [1, "two"],
            "started": "2026-01-02T03:04:05Z",
        }
    )
    response = http.post(_path(namespace), json=body)
    assert response.status_code == 201, response.text
    spec = response.json()["spec"]
    for key in ("ports", "maxUnavailable", "extra", "anything", "started"):
        assert spec[key] == body["spec"][key], key
    assert spec["template"]["data"] == {"k": "v"}
    # A typed embedded resource keeps its declared fields and metadata; the rest is pruned.
    assert spec["config"] == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c", "labels": {"a": "b"}},
        "data": {"k": "v"},
    }
    typed = Everything.model_validate(response.json())
    assert typed.spec.max_unavailable == 2
    assert typed.spec.ports[0].port == 80


def test_printer_columns_appear_in_a_table(http: httpx.Client, namespace: str) -> None:
    assert http.post(_path(namespace), json=_valid("tabled")).status_code == 201
    response = http.get(_path(namespace), headers={"Accept": TABLE})
    assert response.status_code == 200, response.text
    table = response.json()
    assert table["kind"] == "Table"
    names = [c["name"] for c in table["columnDefinitions"]]
    assert names == ["Name", "Replicas", "Mode", "Phase", "Age"]
    phase = next(c for c in table["columnDefinitions"] if c["name"] == "Phase")
    assert phase["priority"] == 1
    (row,) = table["rows"]
    assert row["cells"][:3] == ["tabled", 1, "safe"]


def test_status_and_scale_subresources(http: httpx.Client, namespace: str) -> None:
    """PUT /status changes only the status; GET /scale reads the declared paths."""
    created = http.post(_path(namespace), json=_valid("scaled"))
    assert created.status_code == 201, created.text
    obj = created.json()
    # On the main resource the status is ignored (the status subresource owns it).
    with_status = copy.deepcopy(obj)
    with_status["status"] = {"replicas": 3}
    updated = http.put(_path(namespace, "scaled"), json=with_status)
    assert updated.status_code == 200, updated.text
    assert "status" not in updated.json()
    obj = updated.json()
    obj["status"] = {"replicas": 3, "selector": "app=web", "phase": "Ready"}
    response = http.put(_path(namespace, "scaled") + "/status", json=obj)
    assert response.status_code == 200, response.text
    assert response.json()["status"]["replicas"] == 3
    scale = http.get(_path(namespace, "scaled") + "/scale")
    assert scale.status_code == 200, scale.text
    assert scale.json()["spec"] == {"replicas": 1}
    assert scale.json()["status"] == {"replicas": 3, "selector": "app=web"}
    typed = Everything.model_validate(http.get(_path(namespace, "scaled")).json())
    assert typed.status is not None
    assert typed.status.phase == "Ready"


def test_the_other_version_is_served(http: httpx.Client, namespace: str) -> None:
    """v1alpha1 is served and read through the v1alpha1 model (conversion strategy None)."""
    body = EverythingV1Alpha1.model_validate(
        {"metadata": {"name": "old"}, "spec": {"name": "web"}}
    ).model_dump(by_alias=True, exclude_none=True, mode="json")
    response = http.post(_path(namespace, version="v1alpha1"), json=body)
    assert response.status_code == 201, response.text
    read = http.get(_path(namespace, "old", version="v1alpha1")).json()
    assert EverythingV1Alpha1.model_validate(read).api_version == f"{GROUP}/v1alpha1"
    assert http.get(_path(namespace, "old")).json()["apiVersion"] == f"{GROUP}/v1"
