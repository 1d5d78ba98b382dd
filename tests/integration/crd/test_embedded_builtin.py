"""Built-in Kubernetes types embedded in a custom resource, on a real kube-apiserver (issue 21).

A pod template (int-or-string port, resources, env) in the spec and object references and
conditions in the status: the server accepts the generated CRD, stores every field the client
sends under the name it sends it with (camelCase), prunes what upstream's schema does not
declare, and refuses a template without containers naming the field. The generated schema of
``V1JobTemplateSpec`` is compared with the server's own published schema.
"""

from __future__ import annotations

import copy
import datetime
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes.client import (
    V1Condition,
    V1JobTemplateSpec,
    V1ObjectReference,
    V1PodTemplateSpec,
)
from pydantic import Field

from kubectrl import crd as crd_module
from kubectrl.client import AsyncClient, load_kubeconfig
from kubectrl.envtest import ControlPlane
from kubectrl.resources import CustomResource, ResourceModel

pytestmark = pytest.mark.integration

GROUP = "embedded.kubectrl.example.com"


class WorkerPoolSpec(ResourceModel):
    replicas: int = 1
    template: V1PodTemplateSpec
    job_template: V1JobTemplateSpec | None = None


class WorkerPoolStatus(ResourceModel):
    active: list[V1ObjectReference] = Field(default_factory=list)
    conditions: list[V1Condition] = Field(default_factory=list)


class WorkerPool(CustomResource, group=GROUP, version="v1", kind="WorkerPool"):
    spec: WorkerPoolSpec
    status: WorkerPoolStatus | None = None


TEMPLATE: dict[str, Any] = {
    "metadata": {"labels": {"app": "worker"}, "annotations": {"a": "b"}},
    "spec": {
        "restartPolicy": "Always",
        "terminationGracePeriodSeconds": 5,
        "containers": [
            {
                "name": "main",
                "image": "registry.example.com/worker:1.2",
                "args": ["--serve", "--port=8080"],
                "env": [
                    {"name": "MODE", "value": "fast"},
                    {
                        "name": "POD",
                        "valueFrom": {
                            "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}
                        },
                    },
                ],
                "ports": [
                    {"name": "http", "containerPort": 8080, "protocol": "TCP"},
                    {"name": "metrics", "containerPort": 9090, "protocol": "TCP"},
                ],
                "resources": {
                    "requests": {"cpu": "250m", "memory": "64Mi"},
                    "limits": {"cpu": "1", "memory": "128Mi"},
                },
                "readinessProbe": {
                    "httpGet": {"path": "/ready", "port": "http", "scheme": "HTTP"},
                    "periodSeconds": 5,
                },
                "livenessProbe": {"tcpSocket": {"port": 8080}, "failureThreshold": 3},
            }
        ],
    },
}


@pytest.fixture(scope="module")
def installed(
    control_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Any]:
    crd = crd_module.generate(WorkerPool, embedded_object_meta=True)
    path = tmp_path_factory.mktemp("crds") / "workerpools.yaml"
    path.write_text(crd_module.to_yaml(crd), encoding="utf-8")
    (installed,) = control_plane.install_crds([path])
    return installed


@pytest.fixture
async def client(kubeconfig: Path, installed: dict[str, Any]) -> AsyncIterator[AsyncClient]:
    async with AsyncClient(load_kubeconfig(kubeconfig)) as c:
        yield c


def _path(namespace: str, name: str = "") -> str:
    base = f"/apis/{GROUP}/v1/namespaces/{namespace}/workerpools"
    return f"{base}/{name}" if name else base


def _pool(name: str) -> WorkerPool:
    return WorkerPool.model_validate(
        {"metadata": {"name": name}, "spec": {"replicas": 2, "template": TEMPLATE}}
    )


def test_the_generated_crd_is_established(installed: dict[str, Any]) -> None:
    conditions = {c["type"]: c["status"] for c in installed["status"]["conditions"]}
    assert conditions["Established"] == "True"
    assert conditions.get("NonStructuralSchema", "False") == "False"


async def test_a_full_pod_template_and_status_round_trip_field_for_field(
    client: AsyncClient, namespace: str
) -> None:
    sent = _pool("round-trip")
    created = await client.create(sent, namespace=namespace)
    assert isinstance(created, WorkerPool)
    assert created.spec.template == sent.spec.template
    assert created.spec.template.model_dump(by_alias=True, exclude_none=True) == TEMPLATE

    when = datetime.datetime(2024, 5, 1, 12, 0, tzinfo=datetime.timezone.utc)
    created.status = WorkerPoolStatus(
        active=[
            V1ObjectReference(
                api_version="batch/v1",
                kind="Job",
                name="job-1",
                namespace=namespace,
                resource_version="42",
                uid="0b4d6c8e-0000-4000-8000-000000000001",
                field_path="spec",
            )
        ],
        conditions=[
            V1Condition(
                type="Ready",
                status="True",
                reason="AllGood",
                message="every worker is up",
                last_transition_time=when,
                observed_generation=1,
            )
        ],
    )
    await client.status().update(created, namespace=namespace)
    read = await client.get(WorkerPool, "round-trip", namespace=namespace)
    assert read.status is not None
    (ref,) = read.status.active
    # Finding 2: these came back None when the schema named them api_version/resource_version.
    assert ref.api_version == "batch/v1"
    assert ref.resource_version == "42"
    assert ref.field_path == "spec"
    assert ref == created.status.active[0]
    (condition,) = read.status.conditions
    assert condition.last_transition_time == when
    assert condition.observed_generation == 1
    assert condition == created.status.conditions[0]
    assert read.spec.template == sent.spec.template


async def test_unknown_fields_in_the_template_are_pruned_as_upstreams_crd_prunes_them(
    installed: dict[str, Any], namespace: str, control_plane: ControlPlane
) -> None:
    body = _pool("pruned").model_dump(by_alias=True, exclude_none=True, mode="json")
    container = body["spec"]["template"]["spec"]["containers"][0]
    container["imagePullPolicyy"] = "Always"  # a typo: not in upstream's Container
    container["ports"][0]["bogus"] = 1
    body["spec"]["template"]["metadata"]["uid"] = "not-kept"  # ObjectMeta keeps five fields
    with control_plane.http_client() as http:
        response = http.post(_path(namespace), json=body)
        assert response.status_code == 201, response.text
        stored = http.get(_path(namespace, "pruned")).json()
    container = stored["spec"]["template"]["spec"]["containers"][0]
    assert "imagePullPolicyy" not in container
    assert "bogus" not in container["ports"][0]
    assert stored["spec"]["template"]["metadata"] == TEMPLATE["metadata"]
    assert container["ports"] == TEMPLATE["spec"]["containers"][0]["ports"]
    warnings = response.headers.get_list("warning")
    assert any("imagePullPolicyy" in w for w in warnings), warnings


@pytest.mark.parametrize(
    ("case", "change", "field"),
    [
        ("no containers", lambda t: t["spec"].pop("containers"), "spec.template.spec.containers"),
        (
            "container without a name",
            lambda t: t["spec"]["containers"][0].pop("name"),
            "spec.template.spec.containers[0].name",
        ),
        (
            "int-or-string port of the wrong type",
            lambda t: t["spec"]["containers"][0]["readinessProbe"]["httpGet"].update(port=True),
            "spec.template.spec.containers[0].readinessProbe.httpGet.port",
        ),
        (
            "a quantity that is not one",
            lambda t: t["spec"]["containers"][0]["resources"]["limits"].update(cpu="lots"),
            "spec.template.spec.containers[0].resources.limits.cpu",
        ),
        (
            "duplicate container names (list-type map)",
            lambda t: t["spec"]["containers"].append(dict(t["spec"]["containers"][0])),
            "spec.template.spec.containers[1]",
        ),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_an_invalid_template_is_refused_naming_the_field(
    installed: dict[str, Any],
    namespace: str,
    control_plane: ControlPlane,
    case: str,
    change: Any,
    field: str,
) -> None:
    body = _pool("invalid").model_dump(by_alias=True, exclude_none=True, mode="json")
    change(body["spec"]["template"])
    with control_plane.http_client() as http:
        response = http.post(_path(namespace), json=body)
    assert response.status_code == 422, (case, response.text)
    causes = [c.get("field") for c in response.json()["details"]["causes"]]
    assert field in causes, (case, response.json()["details"])


# --- the generated schema against the server's published one ------------------------------------

_KNOWN = {
    "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta": {"type": "object"},
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time": {"type": "string", "format": "date-time"},
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": {
        "anyOf": [{"type": "integer"}, {"type": "string"}],
        "x-kubernetes-int-or-string": True,
    },
}


def _compare(
    generated: dict[str, Any], published: dict[str, Any], schemas: dict[str, Any]
) -> list[str]:
    """Differences between a generated CRD schema and the published OpenAPI one, by path.

    Compared: property names, required, type, format, items, additionalProperties and the
    list/map topology extensions. Expected differences (controller-gen's rendering): references
    inlined, ObjectMeta/Time/IntOrString/Quantity as controller-gen's known types, no
    descriptions, no enum, no implicit zero-value defaults.
    """
    problems: list[str] = []

    def resolve(node: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
        ref = node.get("$ref")
        if ref is None and len(node.get("allOf") or []) == 1:
            ref = node["allOf"][0]["$ref"]
        if ref is None:
            return node, None
        name = ref.rsplit("/", 1)[-1]
        return schemas[name], name

    def walk(gen: dict[str, Any], pub: dict[str, Any], path: str) -> None:
        pub, name = resolve(pub)
        if name == "io.k8s.apimachinery.pkg.api.resource.Quantity":
            if not (gen.get("x-kubernetes-int-or-string") and gen.get("pattern")):
                problems.append(f"{path}: Quantity rendered as {gen}")
            return
        if name in _KNOWN:
            if gen != _KNOWN[name]:
                problems.append(f"{path}: {name} rendered as {gen}")
            return
        if "description" in gen:
            problems.append(f"{path}: has a description")
        if "enum" in gen:
            problems.append(f"{path}: has an enum")
        for key in (
            "type",
            "format",
            "x-kubernetes-list-type",
            "x-kubernetes-list-map-keys",
            "x-kubernetes-map-type",
        ):
            if gen.get(key) != pub.get(key):
                problems.append(f"{path}: {key} {gen.get(key)!r} != published {pub.get(key)!r}")
        if set(gen.get("required", [])) != set(pub.get("required", [])):
            problems.append(f"{path}: required {gen.get('required')} != {pub.get('required')}")
        gen_props, pub_props = gen.get("properties", {}), pub.get("properties", {})
        if set(gen_props) != set(pub_props):
            problems.append(f"{path}: properties {sorted(gen_props)} != {sorted(pub_props)}")
        for prop in set(gen_props) & set(pub_props):
            walk(gen_props[prop], pub_props[prop], f"{path}.{prop}")
            default = pub_props[prop].get("default")
            implicit = default in ({}, "", 0, False) and (
                default == {} or prop in pub.get("required", [])
            )
            expected = None if implicit else default
            if gen_props[prop].get("default") != expected:
                problems.append(f"{path}.{prop}: default {gen_props[prop].get('default')!r}")
        if "items" in pub or "items" in gen:
            walk(gen.get("items", {}), pub.get("items", {}), f"{path}[]")
        if isinstance(pub.get("additionalProperties"), dict):
            walk(gen.get("additionalProperties", {}), pub["additionalProperties"], f"{path}{{}}")

    walk(generated, published, "")
    return problems


def test_the_job_template_schema_is_the_servers_published_one(
    installed: dict[str, Any], control_plane: ControlPlane
) -> None:
    with control_plane.http_client() as http:
        document = http.get("/openapi/v3/apis/batch/v1").json()
    schemas = document["components"]["schemas"]
    published = schemas["io.k8s.api.batch.v1.JobTemplateSpec"]
    served = installed["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    generated = served["properties"]["spec"]["properties"]["jobTemplate"]
    # The server stored the generated schema as it was sent (nothing dropped or rewritten).
    sent = crd_module.schema(WorkerPool, embedded_object_meta=True)
    assert generated == sent["properties"]["spec"]["properties"]["jobTemplate"]
    # Compared with the published schema: controller-gen's default rendering (metadata is
    # {type: object}), which the comparison expects of ObjectMeta.
    plain = crd_module.schema(WorkerPool)["properties"]["spec"]["properties"]["jobTemplate"]
    assert _compare(plain, published, schemas) == []
    # It is a real comparison: the pod spec below it was walked, to the container ports.
    containers = plain["properties"]["spec"]["properties"]["template"]["properties"]["spec"][
        "properties"
    ]["containers"]
    assert "containerPort" in containers["items"]["properties"]["ports"]["items"]["properties"]
    # And it can fail: a dropped list type, a renamed property and a lost default are reported.
    broken = copy.deepcopy(plain)
    pod = broken["properties"]["spec"]["properties"]["template"]["properties"]["spec"]
    del pod["properties"]["containers"]["x-kubernetes-list-type"]
    pod["properties"]["service_account_name"] = pod["properties"].pop("serviceAccountName")
    del pod["properties"]["containers"]["items"]["properties"]["ports"]["items"]["properties"][
        "protocol"
    ]["default"]
    problems = _compare(broken, published, schemas)
    assert len(problems) == 3, problems
