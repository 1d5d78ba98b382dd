"""The Foo reconciler: kubernetes/sample-controller's sync logic, written with kubectrl.

It works on typed objects: the :class:`~api.Foo` model read from the shared cache, and the
``kubernetes`` package's ``V1Deployment`` it builds, writes and reads back (mypy checks every
field name; a typo such as ``foo.spec.replicaz`` is an error before anything runs).

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

from api import Foo
from kubernetes.client.models import (
    V1Container,
    V1Deployment,
    V1DeploymentSpec,
    V1LabelSelector,
    V1ObjectMeta,
    V1PodSpec,
    V1PodTemplateSpec,
)

from kubectrl import rbac
from kubectrl.errors import AlreadyExistsError, KubectrlError, NotFoundError
from kubectrl.events import NORMAL, WARNING, EventRecorder
from kubectrl.runtime import CachedClient, Reconciler, Request
from kubectrl.runtime.controllerutil import set_controller_reference

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
    """Go's ``%q`` for the plain names Kubernetes allows: a double-quoted string.

    Example::

        >>> go_quote("web")
        '"web"'
    """
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


class ResourceExistsError(KubectrlError):
    """The Deployment named by a Foo exists and is controlled by something else (retried).

    Expected, not a bug: as a :class:`~kubectrl.errors.KubectrlError` the controller logs it as
    one line, without traceback.
    """


def is_controlled_by(deployment: V1Deployment, foo: Foo) -> bool:
    """Whether ``foo`` (matched by uid) is the Deployment's controller (``metav1.IsControlledBy``).

    Example::

        >>> foo = Foo.model_validate({"metadata": {"name": "a", "uid": "u1"}})
        >>> other = Foo.model_validate({"metadata": {"name": "b", "uid": "u2"}})
        >>> is_controlled_by(new_deployment(foo, "web", "ns"), foo)
        True
        >>> is_controlled_by(new_deployment(other, "web", "ns"), foo)
        False
    """
    refs = (deployment.metadata.owner_references if deployment.metadata else None) or []
    controller = next((ref for ref in refs if ref.controller), None)
    return controller is not None and bool(foo.metadata.uid) and controller.uid == foo.metadata.uid


def new_deployment(foo: Foo, name: str, namespace: str) -> V1Deployment:
    """The Deployment ``foo`` asks for, controlled by it (``newDeployment`` in the original).

    Example::

        >>> foo = Foo.model_validate({"metadata": {"name": "a", "uid": "u1"},
        ...                           "spec": {"deploymentName": "web", "replicas": 3}})
        >>> deployment = new_deployment(foo, "web", "ns")
        >>> deployment.spec.replicas, deployment.spec.selector.match_labels
        (3, {'app': 'nginx', 'controller': 'a'})
        >>> (owner,) = deployment.metadata.owner_references
        >>> owner.kind, owner.name, owner.uid, owner.controller, owner.block_owner_deletion
        ('Foo', 'a', 'u1', True, True)
    """
    labels = {"app": "nginx", "controller": foo.metadata.name or ""}
    deployment = V1Deployment(
        api_version="apps/v1",
        kind="Deployment",
        metadata=V1ObjectMeta(name=name, namespace=namespace),
        spec=V1DeploymentSpec(
            # None is left out of the request: the server defaults it to 1, as in Go.
            replicas=foo.spec.replicas if foo.spec else None,
            selector=V1LabelSelector(match_labels=dict(labels)),
            template=V1PodTemplateSpec(
                metadata=V1ObjectMeta(labels=dict(labels)),
                spec=V1PodSpec(containers=[V1Container(name="nginx", image="nginx:latest")]),
            ),
        ),
    )
    # Go's newDeployment puts metav1.NewControllerRef(foo, ...) in the literal; the library's
    # helper writes the same reference (controller and blockOwnerDeletion set) into the model.
    set_controller_reference(foo, deployment)
    return deployment


# The API access the reconciler needs, declared where it is used: exactly the verbs it calls,
# nothing more. artifacts/rbac.yaml holds the ClusterRole generated from them, from this
# directory: python -m kubectrl rbac controller:RBAC --name sample-controller
@rbac.rule(Foo, verbs=["get", "list", "watch"])  # the informer lists and watches; reads: cache
@rbac.rule(Foo, subresources=["status"], verbs=["patch"])  # status.availableReplicas
@rbac.rule(V1Deployment, verbs=["get", "list", "watch", "create", "update"])  # owned
@rbac.rule(groups=[""], resources=["events"], verbs=["create", "patch"])  # Synced, repeats
class FooReconciler(Reconciler):
    """Makes each Foo's Deployment exist with the right replicas, and reports its status.

    Reads come from the manager's shared cache (``client``); writes go to the API server.
    """

    def __init__(self, client: CachedClient, recorder: EventRecorder) -> None:
        self.client = client
        self.recorder = recorder

    async def reconcile(self, request: Request) -> None:
        namespace = request.namespace
        try:
            foo = await self.client.get(Foo, request.name, namespace=namespace)
        except NotFoundError:
            # The Foo was deleted; its Deployment goes with it through garbage collection.
            log.info("foo '%s/%s' in work queue no longer exists", request.namespace, request.name)
            return

        deployment_name = (foo.spec.deployment_name if foo.spec else None) or ""
        if not deployment_name:
            # Nothing can fix this until the Foo changes, so don't retry.
            log.error("%s/%s: deployment name must be specified", request.namespace, request.name)
            return

        try:
            deployment = await self.client.get(V1Deployment, deployment_name, namespace=namespace)
        except NotFoundError:
            deployment = await self.create_deployment(foo, deployment_name, namespace)

        if not is_controlled_by(deployment, foo):
            message = MESSAGE_RESOURCE_EXISTS % go_quote(deployment_name)
            self.record(foo, WARNING, ERR_RESOURCE_EXISTS, message)
            raise ResourceExistsError(message)

        wanted = foo.spec.replicas if foo.spec else None
        current = deployment.spec.replicas if deployment.spec else None
        if wanted is not None and wanted != current:
            log.info("Foo %s replicas: %s, deployment replicas: %s", request.name, wanted, current)
            deployment = await self.client.update(
                new_deployment(foo, deployment_name, namespace), field_manager=FIELD_MANAGER
            )

        await self.update_foo_status(foo, deployment)
        self.record(foo, NORMAL, SUCCESS_SYNCED, MESSAGE_RESOURCE_SYNCED)

    def record(self, foo: Foo, event_type: str, reason: str, message: str) -> None:
        """Record an event about ``foo`` (the recorder takes the object's dict)."""
        self.recorder.event(foo, event_type, reason, message)

    async def create_deployment(self, foo: Foo, name: str, namespace: str) -> V1Deployment:
        """Create the Foo's Deployment; if it exists already, read it from the API server.

        ``AlreadyExists`` here means the cache lags: the Deployment was created (usually by this
        controller, one reconcile ago) but its watch event has not arrived. Reading it live lets
        this sync go on at once; failing would send the key into backoff, and a key that failed
        repeatedly (say, while the API server was unreachable) waits long between retries.
        """
        try:
            return await self.client.create(
                new_deployment(foo, name, namespace), field_manager=FIELD_MANAGER
            )
        except AlreadyExistsError:
            return await self.client.reader.get(V1Deployment, name, namespace=namespace)

    async def update_foo_status(self, foo: Foo, deployment: V1Deployment) -> None:
        """Copy the Deployment's available replicas into the Foo's status subresource.

        A merge patch of that one field: it holds no resourceVersion, so a Foo read from a stale
        cache cannot make it fail with ``Conflict``, and it leaves other status fields alone.
        Skipped when the status already says so.
        """
        available = (deployment.status.available_replicas if deployment.status else None) or 0
        if foo.status is not None and foo.status.available_replicas == available:
            return
        await self.client.status().patch(
            Foo,
            foo.metadata.name or "",
            {"status": {"availableReplicas": available}},
            namespace=foo.metadata.namespace,
            field_manager=FIELD_MANAGER,
        )


#: Everything the controller process needs: the reconciler's rules, --metrics-secure's
#: TokenReviews and SubjectAccessReviews, and --leader-elect's Lease (a Role in the controller's
#: namespace, deployment.yaml's).
RBAC = [
    FooReconciler,
    rbac.METRICS_AUTH_RULES,
    rbac.leader_election_rules("sample-controller"),
]
