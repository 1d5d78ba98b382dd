"""``pods/ephemeralcontainers``: the apiserver stores and validates ephemeral containers (the
kubelet runs them), so the plain control plane answers as a cluster does.

Upstream: pkg/registry/core/pod/storage (EphemeralContainersREST: only
``spec.ephemeralContainers`` of the body is taken), pkg/apis/core/validation
(``ValidatePodEphemeralContainersUpdate``, ``validateEphemeralContainers``: names, images, the
allow-list of fields, ``targetContainerName``; existing ones may not change or go) and
pkg/apis/core/v1/defaults.go (a container's defaults).
"""

from __future__ import annotations

from typing import Any

import pytest
from contract_helpers import Target, unique

from kubectrl.errors import InvalidError

DEBUG = {"name": "debug", "image": "busybox", "targetContainerName": "app"}


async def _pod(target: Target) -> str:
    name = unique("pod")
    await target.client.create(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": target.namespace},
            "spec": {"containers": [{"name": "app", "image": "nginx:1"}]},
        }
    )
    return name


async def test_an_ephemeral_container_is_added_with_a_containers_defaults(target: Target) -> None:
    name = await _pod(target)
    pod = await target.client.pods.add_ephemeral_container(name, DEBUG, namespace=target.namespace)
    assert pod["spec"]["ephemeralContainers"] == [
        {
            "name": "debug",
            "image": "busybox",
            "resources": {},
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File",
            "imagePullPolicy": "Always",
            "targetContainerName": "app",
        }
    ]


async def test_only_the_ephemeral_containers_of_the_body_are_taken(target: Target) -> None:
    name = await _pod(target)
    await target.client.pods.add_ephemeral_container(name, DEBUG, namespace=target.namespace)
    patch = {
        "metadata": {"labels": {"a": "b"}},
        "spec": {
            "containers": [{"name": "app", "image": "nginx:2"}],
            "ephemeralContainers": [{"name": "second", "image": "busybox:1"}],
        },
    }
    pod = await target.client.subresource("ephemeralcontainers").patch(
        ("v1", "Pod"),
        name,
        patch,
        namespace=target.namespace,
        patch_type="strategic",
    )
    assert "labels" not in pod["metadata"]
    assert pod["spec"]["containers"][0]["image"] == "nginx:1"
    assert [c["name"] for c in pod["spec"]["ephemeralContainers"]] == ["second", "debug"]


@pytest.mark.parametrize(
    ("container", "expected"),
    [
        ({"name": "app", "image": "b"}, [("FieldValueDuplicate", "name")]),
        ({"name": "d"}, [("FieldValueRequired", "image")]),
        ({"name": "d", "image": "b", "ports": [{"containerPort": 80}]},
         [("FieldValueForbidden", "ports")]),
        (
            {"name": "D_5", "image": "b", "resources": {"limits": {"cpu": "1"}},
             "readinessProbe": {"exec": {"command": ["a"]}}},
            [("FieldValueInvalid", "name"), ("FieldValueForbidden", "resources"),
             ("FieldValueForbidden", "readinessProbe")],
        ),
        ({"name": "d", "image": "b", "targetContainerName": "nope"},
         [("FieldValueNotFound", "targetContainerName")]),
    ],
    ids=["duplicate-name", "no-image", "ports", "name-resources-probe", "unknown-target"],
)  # fmt: skip
async def test_an_ephemeral_container_the_server_refuses(
    target: Target, container: dict[str, Any], expected: list[tuple[str, str]]
) -> None:
    name = await _pod(target)
    with pytest.raises(InvalidError) as caught:
        await target.client.pods.add_ephemeral_container(
            name, container, namespace=target.namespace
        )
    prefix = "spec.ephemeralContainers[0]."
    assert [(c.type, c.field.removeprefix(prefix)) for c in caught.value.causes] == expected
    forbidden = [c.message for c in caught.value.causes if c.type == "FieldValueForbidden"]
    assert all(m == "Forbidden: cannot be set for an Ephemeral Container" for m in forbidden)


async def test_an_existing_ephemeral_container_may_not_change(target: Target) -> None:
    name = await _pod(target)
    await target.client.pods.add_ephemeral_container(name, DEBUG, namespace=target.namespace)
    with pytest.raises(InvalidError) as caught:
        await target.client.pods.add_ephemeral_container(
            name, {**DEBUG, "image": "busybox:2"}, namespace=target.namespace
        )
    [cause] = caught.value.causes
    assert cause.field == "spec.ephemeralContainers"
    assert cause.message.startswith(
        'Forbidden: existing ephemeral containers "debug" may not be changed\n'
    )


async def test_an_existing_ephemeral_container_may_not_go(target: Target) -> None:
    name = await _pod(target)
    pod = await target.client.pods.add_ephemeral_container(name, DEBUG, namespace=target.namespace)
    pod["spec"]["ephemeralContainers"] = []
    with pytest.raises(InvalidError) as caught:
        await target.client.subresource("ephemeralcontainers").update(pod, resource=("v1", "Pod"))
    assert [(c.field, c.message) for c in caught.value.causes] == [
        (
            "spec.ephemeralContainers",
            'Forbidden: existing ephemeral containers "debug" may not be removed\n',
        )
    ]
