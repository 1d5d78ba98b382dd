"""Classes the built-in differential fuzzer found, one case each (each failed on the fake before
its fix).

Upstream: pkg/registry/apps/daemonset/strategy.go (PrepareForUpdate: the template generation)
with pkg/apis/apps/v1/conversion.go (its deprecated.daemonset.template.generation annotation),
pkg/registry/apps/deployment/strategy.go (annotation changes bump the generation),
staging/src/k8s.io/apimachinery/pkg/api/resource/quantity.go (canonical quantities) with
pkg/apis/core/v1/defaults.go (SetDefaults_ResourceList), staging/src/k8s.io/apiserver/pkg/
endpoints/handlers/patch.go (a patched object that does not decode), staging/src/k8s.io/
apiserver/pkg/registry/rest/update.go (BeforeUpdate: metadata validated by each pass),
pkg/apis/apps/validation/validation.go (selectors and templates), pkg/apis/core/v1/defaults.go
(SetDefaults_Container: the pull policy of an image reference that does not parse).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from contract_helpers import Target, kubernetes_at_least, unique

from kubectrl.errors import InvalidError

DS = ("apps/v1", "DaemonSet")
DEPLOY = ("apps/v1", "Deployment")
CM = ("v1", "ConfigMap")
GENERATION = "deprecated.daemonset.template.generation"


def _template(image: str = "nginx:1") -> dict[str, Any]:
    return {
        "metadata": {"labels": {"app": "x"}},
        "spec": {"containers": [{"name": "c", "image": image}]},
    }


def daemon_set(name: str, namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"selector": {"matchLabels": {"app": "x"}}, "template": _template()},
    }


async def test_a_daemon_sets_template_generation_follows_its_template(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("ds")
    created = await c.create(daemon_set(name, ns))
    assert created["metadata"]["annotations"][GENERATION] == "1"
    created["metadata"]["annotations"][GENERATION] = "7"  # not read from the request
    created["metadata"].setdefault("labels", {})["x"] = "y"
    relabelled = await c.update(created)
    assert relabelled["metadata"]["annotations"][GENERATION] == "1"
    relabelled["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:2"
    changed = await c.update(relabelled)
    assert changed["metadata"]["annotations"][GENERATION] == "2"
    assert changed["metadata"]["generation"] == 2


async def test_a_deployments_annotations_bump_its_generation(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("dep")
    body = daemon_set(name, ns) | {"kind": "Deployment"}
    created = await c.create(body)
    generation = created["metadata"]["generation"]
    created["metadata"]["annotations"] = {"a": "b"}
    updated = await c.update(created)  # refreshes ``created`` too
    assert updated["metadata"]["generation"] == generation + 1


async def test_requests_are_stored_as_canonical_quantities(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("quota")
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "image": "nginx:1",
                    "resources": {"requests": {"cpu": "0.5", "memory": "1.5Gi"}},
                }
            ]
        },
    }
    created = await c.create(pod, dry_run=True)
    requests = created["spec"]["containers"][0]["resources"]["requests"]
    assert requests == {"cpu": "500m", "memory": "1536Mi"}


async def test_a_patch_that_does_not_decode_is_invalid_at_patch(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("cm")
    await c.create(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": ns}}
    )
    with pytest.raises(InvalidError) as caught:
        await c.patch(CM, name, {"data": "text"}, namespace=ns)
    assert caught.value.code == 422
    assert [cause.field for cause in caught.value.causes] == ["patch"]


async def test_an_update_reports_a_bad_label_once_per_validation_pass(target: Target) -> None:
    """Up to 1.36 each pass reports it (4 for a ConfigMap); from 1.37 the ConfigMap strategy
    embeds rest.DeclarativeValidation (pkg/registry/core/configmap/strategy.go, v1.37.2), whose
    filter of the handwritten errors (staging/src/k8s.io/apiserver/pkg/registry/rest/
    validate.go, ErrorList.Filter through ToAggregate) keeps one of equal causes."""
    c, ns, name = target.client, target.namespace, unique("cm")
    created = await c.create(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": ns}}
    )
    created["metadata"]["labels"] = {"a/b/c": "x"}
    with pytest.raises(InvalidError) as caught:
        await c.update(created)
    passes = 1 if kubernetes_at_least("1.37") else 4
    assert [cause.field for cause in caught.value.causes] == ["metadata.labels"] * passes


async def test_a_deployment_without_selector_also_fails_its_template_labels(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("dep")
    body = daemon_set(name, ns) | {"kind": "Deployment"}
    del body["spec"]["selector"]
    with pytest.raises(InvalidError) as caught:
        await c.create(body)
    fields = sorted(cause.field for cause in caught.value.causes)
    assert fields == ["spec.selector", "spec.template.metadata.labels"]


async def test_an_image_reference_that_does_not_parse_is_pulled_if_not_present(
    target: Target,
) -> None:
    c, ns, name = target.client, target.namespace, unique("pod")
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"containers": [{"name": "a", "image": "Bad_Name"}, {"name": "b", "image": "x"}]},
    }
    created = await c.create(pod, dry_run=True)
    policies = [x["imagePullPolicy"] for x in created["spec"]["containers"]]
    assert policies == ["IfNotPresent", "Always"]


async def test_a_job_with_a_null_spec_still_gets_its_selector(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("job")
    body = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": ns}}
    with pytest.raises(InvalidError) as caught:
        await c.create(body | {"spec": None})
    # the generated selector matches the generated labels: only the pod spec is wrong
    assert sorted(cause.field for cause in caught.value.causes) == [
        "spec.template.spec.containers",
        "spec.template.spec.restartPolicy",
    ]


async def test_a_services_empty_target_port_is_its_port(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("svc")
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"selector": {"app": "x"}, "ports": [{"port": 80, "targetPort": ""}]},
    }
    # A copy: a write (dry run too) refreshes the body, and ``service`` is sent again below.
    created = await c.create(copy.deepcopy(service), dry_run=True)
    assert created["spec"]["ports"][0]["targetPort"] == 80
    service["spec"]["ports"][0]["targetPort"] = "Bad_Name"
    service["spec"]["selector"] = {"app": "a/b/c"}
    with pytest.raises(InvalidError) as caught:
        await c.create(service, dry_run=True)
    fields = {cause.field for cause in caught.value.causes}
    assert fields == {"spec.selector", "spec.ports[0].targetPort"}


async def test_a_role_bindings_role_ref_is_defaulted_and_immutable(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("rb")
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": name, "namespace": ns},
        "roleRef": {"apiGroup": None, "kind": "Role", "name": "r"},
        "subjects": [{"kind": "ServiceAccount", "name": "sa", "namespace": ns}],
    }
    created = await c.create(binding)
    assert created["roleRef"]["apiGroup"] == "rbac.authorization.k8s.io"
    created["roleRef"]["name"] = "other"
    with pytest.raises(InvalidError) as caught:
        await c.update(created)
    assert [cause.field for cause in caught.value.causes] == ["roleRef"]
    created["roleRef"]["name"] = "r"
    created["subjects"][0]["name"] = "Bad_Name"
    with pytest.raises(InvalidError) as caught:
        await c.update(created)
    assert [cause.field for cause in caught.value.causes] == ["subjects[0].name"]


async def test_an_ingress_backend_names_a_service_by_a_dns_label(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("ing")
    backend = {"service": {"name": "a.b", "port": {"number": 80}}}
    ingress = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"defaultBackend": backend},
    }
    with pytest.raises(InvalidError) as caught:
        await c.create(ingress, dry_run=True)
    assert [cause.field for cause in caught.value.causes] == ["spec.defaultBackend.service.name"]


async def test_an_empty_optional_string_is_left_out_but_a_pointers_is_kept(
    target: Target,
) -> None:
    c, ns, name = target.client, target.namespace, unique("rb")
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": name, "namespace": ns},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"},
        "subjects": [{"kind": "ServiceAccount", "name": "sa", "namespace": ""}],
    }
    created = await c.create(binding, dry_run=True)
    assert created["subjects"] == [{"kind": "ServiceAccount", "name": "sa"}]
    lease = {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"holderIdentity": ""},
    }
    assert (await c.create(lease, dry_run=True))["spec"] == {"holderIdentity": ""}


async def test_an_ingress_path_without_path_type_is_not_checked_further(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("ing")
    ingress = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"rules": [{"host": "a.example.com", "http": {"paths": [{"path": "/"}]}}]},
    }
    with pytest.raises(InvalidError) as caught:
        await c.create(ingress, dry_run=True)
    assert [cause.field for cause in caught.value.causes] == [
        "spec.rules[0].http.paths[0].pathType"
    ]


async def test_a_jobs_generated_labels_must_stay_on_its_template(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("job")
    body = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "suspend": True,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "c", "image": "busybox:1"}],
                }
            },
        },
    }
    created = await c.create(body)
    created["spec"]["template"]["metadata"]["labels"] = {}
    with pytest.raises(InvalidError) as caught:
        await c.update(created)
    fields = [cause.field for cause in caught.value.causes]
    if kubernetes_at_least("1.37"):
        # jobStrategy.ValidateUpdate is ValidateJobUpdate alone from 1.37 (pkg/registry/batch/
        # job/strategy.go, v1.36.3 -> v1.37.2): the generated labels are checked on create,
        # an update finds only that the selector no longer matches the template.
        assert fields == ["spec.template.metadata.labels"]
        return
    assert "spec.template.metadata.labels[batch.kubernetes.io/controller-uid]" in fields
    assert "spec.template.metadata.labels[job-name]" in fields
    # a suspended Job that never started may change its template's labels
    # (AllowMutableSchedulingDirectives, pkg/apis/batch/validation/validation.go)
    assert "spec.template" not in fields
