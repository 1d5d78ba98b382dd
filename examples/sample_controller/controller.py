"""The Foo reconciler: kubernetes/sample-controller's sync logic, written with kubectrl.

A ``Foo`` (``samplecontroller.k8s.io/v1alpha1``) asks for an nginx Deployment named
``spec.deploymentName`` with ``spec.replicas`` replicas; the controller creates and corrects that
Deployment and copies its ``status.availableReplicas`` back into the Foo's status.

The sync of one key, step by step as in the Go original (``syncHandler``):

1. The Foo is gone: nothing to do (garbage collection removes its Deployment).
2. ``spec.deploymentName`` is empty: log it and give up on this change (no retry).
3. The Deployment is missing: create it, owned by the Foo (field manager ``sample-controller``).
4. The Deployment exists but another object controls it: record a Warning ``ErrResourceExists``
   event and fail, so the key is retried with backoff.
5. Its replicas differ from the Foo's: update it.
6. Write ``status.availableReplicas`` through the status subresource, and record a Normal
   ``Synced`` event.
"""

from __future__ import annotations

import copy
import logging
from typing import Any

from kubectrl.errors import NotFoundError
from kubectrl.events import NORMAL, WARNING, EventRecorder
from kubectrl.objects import is_controlled_by
from kubectrl.runtime import CachedClient, Reconciler, Request, set_controller_reference

FOO = ("samplecontroller.k8s.io/v1alpha1", "Foo")
DEPLOYMENT = ("apps/v1", "Deployment")

#: The field manager the original passes on every write.
FIELD_MANAGER = "sample-controller"
#: The event source (``reportingComponent``) of the original.
CONTROLLER_AGENT_NAME = "sample-controller"

# Event reasons and messages, exactly as the Go original's.
SUCCESS_SYNCED = "Synced"
ERR_RESOURCE_EXISTS = "ErrResourceExists"
MESSAGE_RESOURCE_EXISTS = "Resource %s already exists and is not managed by Foo"
MESSAGE_RESOURCE_SYNCED = "Foo synced successfully"

log = logging.getLogger("sample_controller")


def go_quote(value: str) -> str:
    """Go's ``%q`` for the plain names Kubernetes allows: a double-quoted string."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


class ResourceExistsError(Exception):
    """The Deployment named by a Foo exists and is controlled by something else (retried)."""


def new_deployment(foo: dict[str, Any]) -> dict[str, Any]:
    """The Deployment a Foo asks for, controlled by the Foo (``newDeployment`` in the original)."""
    labels = {"app": "nginx", "controller": foo["metadata"]["name"]}
    deployment: dict[str, Any] = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": foo["spec"]["deploymentName"],
            "namespace": foo["metadata"]["namespace"],
        },
        "spec": {
            "replicas": foo["spec"].get("replicas"),
            "selector": {"matchLabels": dict(labels)},
            "template": {
                "metadata": {"labels": dict(labels)},
                "spec": {"containers": [{"name": "nginx", "image": "nginx:latest"}]},
            },
        },
    }
    if deployment["spec"]["replicas"] is None:
        del deployment["spec"]["replicas"]  # the server defaults it to 1, as in Go
    set_controller_reference(foo, deployment)
    return deployment


class FooReconciler(Reconciler):
    """Makes each Foo's Deployment exist with the right replicas, and reports its status.

    Reads come from the manager's shared cache (``client``); writes go to the API server.
    """

    def __init__(self, client: CachedClient, recorder: EventRecorder) -> None:
        self.client = client
        self.recorder = recorder

    async def reconcile(self, request: Request) -> None:
        try:
            foo = await self.client.get(FOO, request.name, namespace=request.namespace)
        except NotFoundError:
            # The Foo was deleted; its Deployment goes with it through garbage collection.
            log.info("foo '%s/%s' in work queue no longer exists", request.namespace, request.name)
            return

        deployment_name = (foo.get("spec") or {}).get("deploymentName") or ""
        if not deployment_name:
            # Nothing can fix this until the Foo changes, so don't retry.
            log.error("%s/%s: deployment name must be specified", request.namespace, request.name)
            return

        try:
            deployment = await self.client.get(
                DEPLOYMENT, deployment_name, namespace=request.namespace
            )
        except NotFoundError:
            deployment = await self.client.create(new_deployment(foo), field_manager=FIELD_MANAGER)

        if not is_controlled_by(deployment, foo):
            message = MESSAGE_RESOURCE_EXISTS % go_quote(deployment_name)
            self.recorder.event(foo, WARNING, ERR_RESOURCE_EXISTS, message)
            raise ResourceExistsError(message)

        wanted = foo["spec"].get("replicas")
        if wanted is not None and wanted != (deployment.get("spec") or {}).get("replicas"):
            log.info(
                "Foo %s replicas: %s, deployment replicas: %s",
                request.name,
                wanted,
                deployment["spec"].get("replicas"),
            )
            deployment = await self.client.update(new_deployment(foo), field_manager=FIELD_MANAGER)

        await self.update_foo_status(foo, deployment)
        self.recorder.event(foo, NORMAL, SUCCESS_SYNCED, MESSAGE_RESOURCE_SYNCED)

    async def update_foo_status(self, foo: dict[str, Any], deployment: dict[str, Any]) -> None:
        """Copy the Deployment's available replicas into the Foo's status subresource."""
        updated = copy.deepcopy(foo)
        available = (deployment.get("status") or {}).get("availableReplicas", 0)
        updated["status"] = {**(foo.get("status") or {}), "availableReplicas": available}
        await self.client.status().update(updated, field_manager=FIELD_MANAGER)
