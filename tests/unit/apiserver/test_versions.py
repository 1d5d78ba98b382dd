"""The behaviours that changed between the supported Kubernetes releases follow the core's
version (``APICore(version=...)``, ``FakeAPI(version=...)``); the contract suite checks each
against the real apiserver of that release (``KUBECTRL_ENVTEST_K8S_VERSION``), these check the
choice without one.

Upstream, each between the pinned releases (v1.35.4, v1.36.3, v1.37.2 of k8s.io/kubernetes and
its staging modules): pkg/registry/*/strategy.go embed ``rest.DeclarativeValidation`` in 1.37
(staging/src/k8s.io/apiserver/pkg/registry/rest/validate.go filters the handwritten causes
through ``ErrorList.Filter``, which keeps one of equal ones); pkg/registry/batch/job/strategy.go
(1.37: ``ValidateUpdate`` is ``ValidateJobUpdate`` alone); pkg/apis/apps/v1/defaults.go with
pkg/features/kube_features.go (1.37: ``MaxUnavailableStatefulSet`` on by default);
staging/src/k8s.io/apiserver/pkg/endpoints/handlers/patch.go (1.37:
``validateAndTranscodePatch``); staging/src/k8s.io/apiextensions-apiserver/pkg/apiserver/
validation/formats.go and kube-openapi pkg/validation/validate/schema.go (1.36: an integer's
format is kept and its range checked).
"""

from __future__ import annotations

from typing import Any

import pytest

from kubectrl._internal.clock import RealClock
from kubectrl.apiserver.inprocess import APICore, Reply, Request
from kubectrl.client import AsyncClient
from kubectrl.errors import InvalidError
from kubectrl.testing import FakeAPI

NS = "default"


def test_the_core_takes_a_supported_version_and_serves_as_it() -> None:
    assert APICore(RealClock()).version == "1.37"
    core = APICore(RealClock(), version="v1.35.4")
    assert (core.version, core.server_version) == ("1.35", "v1.35.4")
    with pytest.raises(ValueError, match=r"choose one of 1\.35, 1\.36, 1\.37"):
        APICore(RealClock(), version="1.38")


async def _invalid(api: FakeAPI, write: Any) -> list[tuple[str, str]]:
    async with AsyncClient(api.config()) as client:
        with pytest.raises(InvalidError) as caught:
            await write(client)
    return [(cause.type, cause.field) for cause in caught.value.causes]


@pytest.mark.parametrize(("version", "repeats"), [("1.36", 4), ("1.37", 1)])
async def test_a_bad_label_on_an_update_is_reported_per_pass_until_1_37(
    version: str, repeats: int
) -> None:
    api = FakeAPI(version=version)
    (cm,) = api.seed({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}})
    cm["metadata"]["labels"] = {"a/b/c": "x"}

    async def update(client: AsyncClient) -> None:
        await client.update(cm)

    assert await _invalid(api, update) == [("FieldValueInvalid", "metadata.labels")] * repeats


@pytest.mark.parametrize("version", ["1.35", "1.36", "1.37"])
async def test_a_jobs_generated_labels_are_checked_on_update_until_1_37(version: str) -> None:
    api = FakeAPI(version=version)
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j", "namespace": NS},
        "spec": {
            "suspend": True,
            "template": {
                "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "x"}]}
            },
        },
    }
    async with AsyncClient(api.config()) as client:
        created = await client.create(job)
    created["spec"]["template"]["metadata"]["labels"] = {}

    async def update(client: AsyncClient) -> None:
        await client.update(created)

    fields = [field for _, field in await _invalid(api, update)]
    # a suspended Job that never started may change its template's labels
    assert "spec.template" not in fields
    if version == "1.37":
        assert fields == ["spec.template.metadata.labels"]
    else:
        assert "spec.template.metadata.labels[batch.kubernetes.io/controller-uid]" in fields
        assert fields.count("spec.template.metadata.labels") == 2


@pytest.mark.parametrize(("version", "rolling"), [
    ("1.36", {"partition": 0}),
    ("1.37", {"partition": 0, "maxUnavailable": 1}),
])  # fmt: skip
async def test_a_statefulsets_max_unavailable_defaults_from_1_37(
    version: str, rolling: dict[str, Any]
) -> None:
    api = FakeAPI(version=version)
    labels = {"app": "x"}
    (sts,) = api.seed(
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {"name": "s", "namespace": NS},
            "spec": {
                "selector": {"matchLabels": labels},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {"containers": [{"name": "c", "image": "x"}]},
                },
            },
        }
    )
    assert sts["spec"]["updateStrategy"]["rollingUpdate"] == rolling


@pytest.mark.parametrize(("version", "prefix"), [
    ("1.36", "error decoding YAML: error converting YAML to JSON: yaml: line 2: "),
    ("1.37", "error encoding patch: yaml: line 2: "),
])  # fmt: skip
def test_an_apply_body_that_is_not_yaml_is_worded_per_release(version: str, prefix: str) -> None:
    core = APICore(RealClock(), version=version)
    request = Request(
        "PATCH",
        "/api/v1/namespaces/default/configmaps/c",
        {"fieldManager": "m"},
        {"content-type": "application/apply-patch+yaml"},
        b"a: b\n c: d\n",
    )
    reply = core.handle(request)
    assert isinstance(reply, Reply)
    assert reply.code == 400
    assert reply.body["message"].startswith(prefix)


@pytest.mark.parametrize(("version", "refused"), [("1.35", False), ("1.36", True)])
async def test_an_int32_fields_range_is_checked_from_1_36(version: str, refused: bool) -> None:
    api = FakeAPI(version=version)
    api.install_crd(
        {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "nums.v.test"},
            "spec": {
                "group": "v.test",
                "scope": "Namespaced",
                "names": {"plural": "nums", "singular": "num", "kind": "Num"},
                "versions": [
                    {
                        "name": "v1",
                        "served": True,
                        "storage": True,
                        "schema": {
                            "openAPIV3Schema": {
                                "type": "object",
                                "properties": {"small": {"type": "integer", "format": "int32"}},
                            }
                        },
                    }
                ],
            },
        }
    )
    num = {"apiVersion": "v.test/v1", "kind": "Num", "metadata": {"name": "n", "namespace": NS}}
    num["small"] = 2**40
    async with AsyncClient(api.config()) as client:
        if not refused:
            assert (await client.create(num))["small"] == 2**40
            return
        with pytest.raises(InvalidError, match="must be of type integer with format int32"):
            await client.create(num)
