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

Where it departs from the original, to converge fast with a cache that lags its own writes
(reads come from the shared cache; a write is seen there only when its watch event arrives):

* A create that gets ``AlreadyExists`` means the cache has not seen the Deployment yet (most
  often the one this controller created a moment ago): read it from the API server and go on,
  instead of failing the key into backoff.
* The status is written with a merge patch of ``status.availableReplicas`` alone, so a Foo read
  from a stale cache never causes a ``Conflict``; and only when it differs, so a sync that changes
  nothing spends no request (every request counts against the client's rate limit).
* A Deployment controlled by another object is an expected condition: its error is a
  :class:`~kubectrl.errors.KubectrlError`, logged as one line (no traceback), as the original's
  ``utilruntime.HandleError`` does.
"""

from __future__ import annotations

import logging
from typing import Any

from kubectrl.errors import AlreadyExistsError, KubectrlError, NotFoundError
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


class ResourceExistsError(KubectrlError):
    """The Deployment named by a Foo exists and is controlled by something else (retried).

    Expected, not a bug: as a :class:`~kubectrl.errors.KubectrlError` the controller logs it as
    one line, without traceback.
    """


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
            deployment = await self.create_deployment(foo)

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

    async def create_deployment(self, foo: dict[str, Any]) -> dict[str, Any]:
        """Create the Foo's Deployment; if it exists already, read it from the API server.

        ``AlreadyExists`` here means the cache lags: the Deployment was created (usually by this
        controller, one reconcile ago) but its watch event has not arrived. Reading it live lets
        this sync go on at once; failing would send the key into backoff, and a key that failed
        repeatedly (say, while the API server was unreachable) waits long between retries.
        """
        deployment = new_deployment(foo)
        try:
            return await self.client.create(deployment, field_manager=FIELD_MANAGER)
        except AlreadyExistsError:
            meta = deployment["metadata"]
            return await self.client.reader.get(
                DEPLOYMENT, meta["name"], namespace=meta["namespace"]
            )

    async def update_foo_status(self, foo: dict[str, Any], deployment: dict[str, Any]) -> None:
        """Copy the Deployment's available replicas into the Foo's status subresource.

        A merge patch of that one field: it holds no resourceVersion, so a Foo read from a stale
        cache cannot make it fail with ``Conflict``, and it leaves other status fields alone.
        Skipped when the status already says so.
        """
        available = (deployment.get("status") or {}).get("availableReplicas", 0)
        if (foo.get("status") or {}).get("availableReplicas") == available:
            return
        meta = foo["metadata"]
        await self.client.status().patch(
            FOO,
            meta["name"],
            {"status": {"availableReplicas": available}},
            namespace=meta["namespace"],
            field_manager=FIELD_MANAGER,
        )
