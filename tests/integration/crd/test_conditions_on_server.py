"""kubectrl.conditions on a real kube-apiserver: the generated schema of ``Conditions`` is
metav1.Condition's (k8s.io/apimachinery/pkg/apis/meta/v1/types.go kubebuilder markers).

The server accepts the generated CRD, stores a condition set by ``set_status_condition`` as sent
(and ``Condition`` reads it back equal), and accepts or refuses each condition exactly when the
``Condition`` model does, naming the field it refuses.
"""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from pydantic import Field, ValidationError

from kubectrl import crd as crd_module
from kubectrl.conditions import (
    Condition,
    Conditions,
    is_status_condition_true,
    set_status_condition,
)
from kubectrl.envtest import ControlPlane
from kubectrl.resources import CustomResource, ResourceModel

pytestmark = pytest.mark.integration

GROUP = "conditions.kubectrl.example.com"
T0 = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)


class ProbeStatus(ResourceModel):
    conditions: Conditions = Field(default_factory=list)


class Probe(CustomResource, group=GROUP, version="v1", kind="Probe"):
    status: ProbeStatus | None = None


@pytest.fixture(scope="module")
def installed(
    control_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Any]:
    path = tmp_path_factory.mktemp("crds") / "probes.yaml"
    path.write_text(crd_module.to_yaml(crd_module.generate(Probe)), encoding="utf-8")
    (installed,) = control_plane.install_crds([path])
    return installed


def _path(namespace: str, name: str = "", status: bool = False) -> str:
    base = f"/apis/{GROUP}/v1/namespaces/{namespace}/probes"
    return base + (f"/{name}" if name else "") + ("/status" if status else "")


def _create(control_plane: ControlPlane, namespace: str, name: str) -> dict[str, Any]:
    body = {"apiVersion": f"{GROUP}/v1", "kind": "Probe", "metadata": {"name": name}}
    with control_plane.http_client() as http:
        response = http.post(_path(namespace), json=body)
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


def test_a_condition_set_by_the_helper_is_stored_as_sent(
    installed: dict[str, Any], control_plane: ControlPlane, namespace: str
) -> None:
    probe = _create(control_plane, namespace, "set")
    conditions = probe.setdefault("status", {}).setdefault("conditions", [])
    assert set_status_condition(
        conditions,
        {
            "type": "example.com/Ready",
            "status": "True",
            "reason": "Up",
            "message": "all good",
            "observedGeneration": probe["metadata"]["generation"],
        },
        now=T0,
    )
    with control_plane.http_client() as http:
        response = http.put(_path(namespace, "set", status=True), json=probe)
    assert response.status_code == 200, response.text
    stored = response.json()["status"]["conditions"]
    assert stored == conditions
    assert is_status_condition_true(stored, "example.com/Ready")
    typed = Probe.model_validate(response.json())
    assert typed.status is not None
    assert typed.status.conditions[0].last_transition_time == T0


_VALID: dict[str, Any] = {
    "type": "Ready",
    "status": "True",
    "reason": "Up",
    "message": "",
    "lastTransitionTime": "2026-01-01T00:00:00Z",
}

CASES: list[tuple[str, dict[str, Any]]] = [
    ("valid", {}),
    ("prefixed type", {"type": "example.com/Ready"}),
    ("type 316 chars", {"type": "x" * 316}),
    ("type 317 chars", {"type": "x" * 317}),
    ("type upper-case prefix", {"type": "Example.com/Ready"}),
    ("type leading dash", {"type": "-Ready"}),
    ("empty type", {"type": ""}),
    ("status lower-case", {"status": "true"}),
    ("status Unknown", {"status": "Unknown"}),
    ("observedGeneration 0", {"observedGeneration": 0}),
    ("observedGeneration -1", {"observedGeneration": -1}),
    ("empty reason", {"reason": ""}),
    ("reason with comma and colon", {"reason": "A,b:c_1"}),
    ("reason ending in a comma", {"reason": "Up,"}),
    ("reason starting with a digit", {"reason": "1Up"}),
    ("reason 1024 chars", {"reason": "R" * 1024}),
    ("reason 1025 chars", {"reason": "R" * 1025}),
    ("message 32768 chars", {"message": "m" * 32768}),
    ("message 32769 chars", {"message": "m" * 32769}),
    ("time with offset", {"lastTransitionTime": "2026-01-01T02:00:00+02:00"}),
    ("time not a date", {"lastTransitionTime": "yesterday"}),
    ("no lastTransitionTime", {"lastTransitionTime": None}),
    ("no message", {"message": None}),
    ("no reason", {"reason": None}),
]


@pytest.mark.parametrize(("case", "change"), CASES, ids=[case for case, _ in CASES])
def test_the_server_and_the_model_agree_on_each_condition(
    installed: dict[str, Any],
    control_plane: ControlPlane,
    namespace: str,
    case: str,
    change: dict[str, Any],
) -> None:
    condition = {k: v for k, v in {**_VALID, **change}.items() if v is not None}
    try:
        Condition.model_validate(condition)
    except ValidationError as err:
        refused_by_model: set[str] = {str(e["loc"][0]) for e in err.errors()}
    else:
        refused_by_model = set()
    name = f"case-{[c for c, _ in CASES].index(case)}"
    probe = _create(control_plane, namespace, name)
    probe["status"] = {"conditions": [condition]}
    with control_plane.http_client() as http:
        response = http.put(_path(namespace, name, status=True), json=probe)
    if not refused_by_model:
        assert response.status_code == 200, (case, response.text)
        return
    assert response.status_code == 422, (case, response.text)
    causes = {c.get("field") for c in response.json()["details"]["causes"]}
    expected = {f"status.conditions[0].{field}" for field in refused_by_model}
    assert expected <= causes, (case, causes)
