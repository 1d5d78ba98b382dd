"""Defaults and conversions the apiserver applies to built-in kinds a controller writes.

Upstream: pkg/apis/core/v1/defaults.go (SetDefaults_Service, SetDefaults_Container,
SetDefaults_PodSpec, SetDefaults_Secret), pkg/apis/core/v1/conversion.go (Secret stringData is
merged into data), pkg/apis/apps/v1/defaults.go (SetDefaults_Deployment) and
staging/src/k8s.io/apiserver/pkg/endpoints/handlers/rest.go (the body's name must match the
URL's: 400).
"""

from __future__ import annotations

import base64
from typing import Any

import pytest
from contract_helpers import DEPLOY, Target, deployment, kubernetes_at_least, unique

from kubectrl.errors import BadRequestError


async def test_secret_string_data_is_merged_into_data(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("secret")
    created = await c.create(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": name, "namespace": ns},
            "data": {"a": base64.b64encode(b"1").decode()},
            "stringData": {"b": "2"},
        }
    )
    assert "stringData" not in created
    assert created["type"] == "Opaque"
    decoded = {k: base64.b64decode(v).decode() for k, v in created["data"].items()}
    assert decoded == {"a": "1", "b": "2"}


async def test_deployment_defaults(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("ddef")
    spec = (await c.create(deployment(name, ns)))["spec"]
    assert spec["revisionHistoryLimit"] == 10
    assert spec["progressDeadlineSeconds"] == 600
    assert spec["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"},
    }
    container = spec["template"]["spec"]["containers"][0]
    assert container["imagePullPolicy"] == "IfNotPresent"
    assert container["terminationMessagePolicy"] == "File"
    assert spec["template"]["spec"]["restartPolicy"] == "Always"
    assert spec["template"]["spec"]["dnsPolicy"] == "ClusterFirst"


async def test_latest_image_defaults_to_always_pull(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("latest")
    obj = deployment(name, ns, [{"name": "app", "image": "nginx"}])
    created = await c.create(obj)
    container = created["spec"]["template"]["spec"]["containers"][0]
    assert container["imagePullPolicy"] == "Always"


async def test_service_defaults(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("svc")
    created = await c.create(
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"selector": {"app": "x"}, "ports": [{"port": 80}]},
        }
    )
    spec = created["spec"]
    assert spec["type"] == "ClusterIP"
    assert spec["sessionAffinity"] == "None"
    assert spec["ports"] == [{"port": 80, "protocol": "TCP", "targetPort": 80}]
    assert spec["clusterIP"]
    assert spec["clusterIPs"] == [spec["clusterIP"]]


async def test_patch_renaming_the_object_is_refused(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("rename")
    await c.create(deployment(name, ns))
    with pytest.raises(BadRequestError) as info:
        await c.patch(DEPLOY, name, {"metadata": {"name": "other"}}, namespace=ns)
    assert "does not match the name on the URL" in info.value.server_message
    assert (await c.get(DEPLOY, name, namespace=ns))["metadata"]["name"] == name


async def test_a_statefulsets_max_unavailable_follows_its_feature_gate(target: Target) -> None:
    """``MaxUnavailableStatefulSet`` (pkg/features/kube_features.go: beta and off in 1.35 and
    1.36, on from 1.37): off, pkg/registry/apps/statefulset/strategy.go
    ``dropStatefulSetDisabledFields`` drops a new ``rollingUpdate.maxUnavailable``; on,
    pkg/apis/apps/v1/defaults.go ``SetDefaults_StatefulSet`` defaults it to 1."""
    c, ns = target.client, target.namespace
    labels = {"app": "x"}
    template = {
        "metadata": {"labels": labels},
        "spec": {"containers": [{"name": "c", "image": "x"}]},
    }

    def sts(name: str, rolling: dict[str, int]) -> dict[str, Any]:
        return {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {"name": name, "namespace": ns},
            "spec": {
                "selector": {"matchLabels": labels},
                "template": template,
                "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": rolling},
            },
        }

    on = kubernetes_at_least("1.37")
    asked = await c.create(sts(unique("sts"), {"maxUnavailable": 2}))
    assert asked["spec"]["updateStrategy"]["rollingUpdate"] == (
        {"partition": 0, "maxUnavailable": 2} if on else {"partition": 0}
    )
    plain = await c.create(sts(unique("sts"), {}))
    assert plain["spec"]["updateStrategy"]["rollingUpdate"] == (
        {"partition": 0, "maxUnavailable": 1} if on else {"partition": 0}
    )
    plain["spec"]["updateStrategy"]["rollingUpdate"]["maxUnavailable"] = 3
    updated = await c.update(plain)
    assert updated["spec"]["updateStrategy"]["rollingUpdate"].get("maxUnavailable") == (
        3 if on else None
    )
