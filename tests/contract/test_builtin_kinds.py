"""Built-in kinds controllers create: decoded, defaulted and validated as the apiserver does.

Upstream: pkg/apis/batch/v1/defaults.go (SetDefaults_Job), pkg/registry/batch/job/strategy.go
(generateSelector: the controller-uid selector and labels), pkg/apis/core/validation/
validation.go (ValidatePodSpec: containers required), staging/src/k8s.io/apimachinery/pkg/api/
validation/objectmeta.go (annotations, finalizers), encoding/json via the typed decoder (a label
value that is not a string, ``finalizers: "abc"``: 400), metav1.MicroTime (six fractional
digits) and staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/micro_time.go.
"""

from __future__ import annotations

from typing import Any

import pytest
from contract_helpers import Target, unique

from kubectrl.errors import BadRequestError, InvalidError

JOB = ("batch/v1", "Job")
POD = ("v1", "Pod")


def job(name: str, namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "c", "image": "busybox:1"}],
                }
            }
        },
    }


def pod(name: str, namespace: str, **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, **meta},
        "spec": {"containers": [{"name": "c", "image": "nginx:1"}]},
    }


async def test_a_job_is_defaulted_with_its_generated_selector_and_labels(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("job")
    created = await c.create(job(name, ns))
    uid = created["metadata"]["uid"]
    spec = created["spec"]
    assert spec["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    generated = {
        "batch.kubernetes.io/controller-uid": uid,
        "batch.kubernetes.io/job-name": name,
        "controller-uid": uid,
        "job-name": name,
    }
    assert spec["template"]["metadata"]["labels"] == generated
    assert created["metadata"]["labels"] == generated
    assert {k: spec[k] for k in ("parallelism", "completions", "backoffLimit", "suspend")} == {
        "parallelism": 1,
        "completions": 1,
        "backoffLimit": 6,
        "suspend": False,
    }
    assert spec["completionMode"] == "NonIndexed"
    assert spec["podReplacementPolicy"] == "TerminatingOrFailed"
    assert spec["manualSelector"] is False
    container = spec["template"]["spec"]["containers"][0]
    assert container["terminationMessagePolicy"] == "File"
    assert container["resources"] == {}
    selected = await c.list(
        JOB, namespace=ns, label_selector=f"batch.kubernetes.io/controller-uid={uid}"
    )
    assert [j["metadata"]["name"] for j in selected["items"]] == [name]


async def test_a_pod_without_containers_is_invalid(target: Target) -> None:
    c, ns = target.client, target.namespace
    body = pod(unique("empty"), ns)
    body["spec"]["containers"] = []
    with pytest.raises(InvalidError) as info:
        await c.create(body)
    assert [cause.field for cause in info.value.causes] == ["spec.containers"]


async def test_container_names_images_and_ports_are_validated(target: Target) -> None:
    c, ns = target.client, target.namespace
    body = pod(unique("bad"), ns)
    body["spec"]["containers"] = [
        {"name": "c", "image": "nginx:1", "ports": [{"containerPort": 70000}]},
        {"name": "c"},
    ]
    with pytest.raises(InvalidError) as info:
        await c.create(body)
    assert sorted(cause.field for cause in info.value.causes) == [
        "spec.containers[0].ports[0].containerPort",
        "spec.containers[1].image",
        "spec.containers[1].name",
    ]


@pytest.mark.parametrize(
    "meta",
    [
        {"labels": {"a": 1}},
        {"annotations": {"a": True}},
        {"finalizers": "abc"},
    ],
    ids=["label-number", "annotation-bool", "finalizers-string"],
)
async def test_metadata_of_the_wrong_type_is_a_bad_request(
    target: Target, meta: dict[str, Any]
) -> None:
    c, ns = target.client, target.namespace
    with pytest.raises(BadRequestError) as info:
        await c.create(pod(unique("meta"), ns, **meta))
    assert "cannot be handled as a Pod" in info.value.server_message


async def test_annotation_keys_and_finalizer_names_are_validated(target: Target) -> None:
    c, ns = target.client, target.namespace
    body = pod(unique("names"), ns, annotations={"a/b/c": "x"}, finalizers=["abc"])
    with pytest.raises(InvalidError) as info:
        await c.create(body)
    assert sorted(cause.field for cause in info.value.causes) == [
        "metadata.annotations",
        "metadata.finalizers[0]",
    ]


async def test_a_micro_time_needs_six_fractional_digits(target: Target) -> None:
    c, ns = target.client, target.namespace
    lease = {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": unique("lease"), "namespace": ns},
        "spec": {"holderIdentity": "me", "renewTime": "2024-01-01T00:00:05.5Z"},
    }
    with pytest.raises(BadRequestError):
        await c.create(lease)
    lease["spec"]["renewTime"] = "2024-01-01T02:00:05.500000+02:00"
    created = await c.create(lease)
    assert created["spec"]["renewTime"] == "2024-01-01T00:00:05.500000Z"


async def test_unknown_fields_are_dropped_and_null_is_the_zero_value(target: Target) -> None:
    c, ns = target.client, target.namespace
    body = pod(unique("unknown"), ns)
    body["spec"]["notAField"] = 1
    body["spec"]["nodeName"] = None
    created = await c.create(body)
    assert "notAField" not in created["spec"]
    assert "nodeName" not in created["spec"]
