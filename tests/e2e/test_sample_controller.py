"""End to end: the Foo controller, run as a subprocess with least privilege, on a local cluster.

The controller runs as a user bound only to the ClusterRole shipped in
``examples/sample_controller/artifacts/rbac.yaml``, so every behaviour below also proves those
permissions are enough. The cluster (``kubectrl_cluster``) runs the controller-manager, the
scheduler and kwok nodes, so the Foos' Deployments get real Pods that become Ready, and the
controller reports what the Deployment controller counts. Every test has its own namespace,
deleted for real afterwards: no test depends on another's leftovers or on the order.
"""

from __future__ import annotations

import copy
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest
import yaml

from kubectrl.client import BlockingClient, load_kubeconfig
from kubectrl.envtest import LocalCluster
from kubectrl.errors import InvalidError, NotFoundError

pytestmark = pytest.mark.integration

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sample_controller"
ARTIFACTS = EXAMPLE / "artifacts"
FOO = ("samplecontroller.k8s.io/v1alpha1", "Foo")
DEPLOYMENT = ("apps/v1", "Deployment")
EVENT = ("v1", "Event")
# Generous: status.availableReplicas waits on kube-controller-manager and kwok, which share
# 2 cores with the rest of CI (the unit suites of the other Pythons run alongside).
DEADLINE = 120.0
T = TypeVar("T")


def wait_for(what: str, probe: Callable[[], T | None], timeout: float = DEADLINE) -> T:
    """Poll ``probe`` until it returns something truthy; fail naming ``what`` at the deadline."""
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        try:
            value = probe()
        except NotFoundError as err:
            value, last = None, err
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}" + (f" (last: {last})" if last else ""))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ControllerProcess:
    """The controller subprocess, with its log lines collected by a thread."""

    def __init__(
        self, proc: subprocess.Popen[str], *, user_kubeconfig: Path, metrics: str = "0"
    ) -> None:
        self.proc = proc
        self.user_kubeconfig = user_kubeconfig
        self.metrics = metrics
        self.lines: list[str] = []
        self._lock = threading.Lock()
        assert proc.stdout is not None
        threading.Thread(target=self._read, args=(proc.stdout,), daemon=True).start()

    def _read(self, stream: Any) -> None:
        for line in stream:
            with self._lock:
                self.lines.append(line.rstrip("\n"))

    def log_lines(self, needle: str) -> list[str]:
        with self._lock:
            return [line for line in self.lines if needle in line]

    def log(self) -> str:
        with self._lock:
            return "\n".join(self.lines[-40:])


@pytest.fixture(scope="module")
def admin(kubectrl_cluster: LocalCluster) -> Iterator[BlockingClient]:
    # The shipped CRD without its conversion webhook (no webhook server runs here): the
    # namespace controller and the garbage collector read Foos at the preferred version, and an
    # unserved webhook would keep test namespaces from being deleted. Only the storage version
    # is used, so nothing needs converting.
    crd = yaml.safe_load((ARTIFACTS / "crd.yaml").read_text())
    crd["spec"]["conversion"] = {"strategy": "None"}
    path = kubectrl_cluster.work_dir / "foo-crd-e2e.yaml"
    path.write_text(yaml.safe_dump(crd))
    kubectrl_cluster.install_crds([path])
    with BlockingClient(load_kubeconfig(kubectrl_cluster.kubeconfig.path)) as client:
        yield client


@pytest.fixture(scope="module")
def controller(
    kubectrl_cluster: LocalCluster, admin: BlockingClient
) -> Iterator[ControllerProcess]:
    user = kubectrl_cluster.add_user("sample-controller-e2e")
    shipped = [doc for doc in yaml.safe_load_all((ARTIFACTS / "rbac.yaml").read_text()) if doc]
    (role,) = [
        doc
        for doc in shipped
        if doc["kind"] == "ClusterRole" and doc["metadata"]["name"] == "sample-controller"
    ]
    role = copy.deepcopy(role)
    role["metadata"]["name"] = "sample-controller-e2e"
    admin.create(role)
    admin.create(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "sample-controller-e2e"},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "sample-controller-e2e",
            },
            "subjects": [
                {"kind": "User", "name": user.user, "apiGroup": "rbac.authorization.k8s.io"}
            ],
        }
    )
    metrics = f"127.0.0.1:{free_port()}"
    proc = subprocess.Popen(
        [
            sys.executable,
            str(EXAMPLE),
            "--kubeconfig",
            str(user.path),
            "--workers",
            "2",
            "--metrics-bind-address",
            metrics,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=dict(os.environ, PYTHONUNBUFFERED="1"),
    )
    running = ControllerProcess(proc, user_kubeconfig=user.path, metrics=metrics)
    try:
        yield running
    finally:
        proc.terminate()
        try:
            code = proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise
        assert code == 0, f"controller exited {code}:\n{running.log()}"
        admin.delete(
            ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"), "sample-controller-e2e"
        )
        admin.delete(("rbac.authorization.k8s.io/v1", "ClusterRole"), "sample-controller-e2e")


def new_foo(namespace: str, name: str, deployment: str, replicas: int | None = 1) -> dict[str, Any]:
    spec: dict[str, Any] = {"deploymentName": deployment}
    if replicas is not None:
        spec["replicas"] = replicas
    return {
        "apiVersion": "samplecontroller.k8s.io/v1alpha1",
        "kind": "Foo",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def events_for(
    admin: BlockingClient, namespace: str, name: str, reason: str
) -> list[dict[str, Any]]:
    events = admin.list(
        EVENT,
        namespace=namespace,
        field_selector=f"involvedObject.name={name},involvedObject.kind=Foo,reason={reason}",
    )
    return list(events["items"])


def foo_available(admin: BlockingClient, namespace: str, name: str) -> int | None:
    status = admin.get(FOO, name, namespace=namespace).get("status") or {}
    available: int | None = status.get("availableReplicas")
    return available


def wait_for_available(
    admin: BlockingClient,
    controller: ControllerProcess,
    namespace: str,
    foo: str,
    deployment: str,
    replicas: int,
) -> None:
    """Wait for the Foo's ``status.availableReplicas`` to be ``replicas``; at the deadline, say
    where the chain stopped: the Deployment's status (kube-controller-manager and kwok), the
    Pods, or the controller (its log tail)."""
    try:
        wait_for(
            f"Foo {foo} status.availableReplicas {replicas}",
            lambda: foo_available(admin, namespace, foo) == replicas,
        )
    except AssertionError as err:
        status = admin.get(DEPLOYMENT, deployment, namespace=namespace).get("status")
        pods = admin.list(("v1", "Pod"), namespace=namespace)["items"]
        phases = [
            (
                pod["metadata"]["name"],
                pod.get("spec", {}).get("nodeName"),
                pod.get("status", {}).get("phase"),
                [
                    (c["type"], c["status"])
                    for c in pod.get("status", {}).get("conditions", [])
                    if c["type"] == "Ready"
                ],
            )
            for pod in pods
        ]
        warnings = [
            (e["involvedObject"]["kind"], e["involvedObject"]["name"], e["reason"], e["message"])
            for e in admin.list(EVENT, namespace=namespace, field_selector="type=Warning")["items"]
        ]
        raise AssertionError(
            f"{err}; Foo status: {admin.get(FOO, foo, namespace=namespace).get('status')}; "
            f"Deployment status: {status}; Pods: {phases}; Warning events: {warnings[-10:]}; "
            "controller log tail:\n" + "\n".join(controller.log().splitlines()[-20:])
        ) from None


def test_example_foo_gets_its_deployment_and_a_synced_event(
    admin: BlockingClient, controller: ControllerProcess, kubectrl_namespace: str
) -> None:
    namespace = kubectrl_namespace
    example = yaml.safe_load((ARTIFACTS / "example-foo.yaml").read_text())
    example["metadata"]["namespace"] = namespace
    foo = admin.create(example)

    deployment = wait_for(
        "Deployment example-foo",
        lambda: admin.get(DEPLOYMENT, "example-foo", namespace=namespace),
    )
    assert deployment["spec"]["replicas"] == 1
    # As in the Go original, the labels go on the selector and the pod template.
    labels = {"app": "nginx", "controller": "example-foo"}
    assert deployment["spec"]["selector"] == {"matchLabels": labels}
    assert deployment["spec"]["template"]["metadata"]["labels"] == labels
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert (container["name"], container["image"]) == ("nginx", "nginx:latest")
    (owner,) = deployment["metadata"]["ownerReferences"]
    assert owner == {
        "apiVersion": "samplecontroller.k8s.io/v1alpha1",
        "kind": "Foo",
        "name": "example-foo",
        "uid": foo["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }
    # The controller writes the object; the Deployment controller (in kube-controller-manager)
    # writes only its status.
    managers = {
        (entry["manager"], entry.get("subresource", ""))
        for entry in admin.get(DEPLOYMENT, "example-foo", namespace=namespace)["metadata"][
            "managedFields"
        ]
    }
    assert {manager for manager, subresource in managers if not subresource} == {
        "sample-controller"
    }
    assert managers <= {("sample-controller", ""), ("kube-controller-manager", "status")}

    (synced,) = wait_for(
        "a Synced event", lambda: events_for(admin, namespace, "example-foo", "Synced")
    )
    assert synced["type"] == "Normal"
    assert synced["message"] == "Foo synced successfully"
    assert synced["source"]["component"] == "sample-controller"
    # The Pod the Deployment controller made becomes Ready on a kwok node; the Deployment
    # counts it and the controller copies the count.
    wait_for_available(admin, controller, namespace, "example-foo", "example-foo", 1)
    assert admin.get(FOO, "example-foo", namespace=namespace)["status"] == {"availableReplicas": 1}


def test_deployment_is_recreated_rescaled_and_reported(
    admin: BlockingClient, controller: ControllerProcess, kubectrl_namespace: str
) -> None:
    namespace = kubectrl_namespace
    admin.create(new_foo(namespace, "web", "web-nginx"))
    first = wait_for(
        "Deployment web-nginx", lambda: admin.get(DEPLOYMENT, "web-nginx", namespace=namespace)
    )

    # Deleted -> re-created (a new object, not the old one).
    admin.delete(DEPLOYMENT, "web-nginx", namespace=namespace)

    def recreated() -> dict[str, Any] | None:
        current = admin.get(DEPLOYMENT, "web-nginx", namespace=namespace)
        return current if current["metadata"]["uid"] != first["metadata"]["uid"] else None

    wait_for("the Deployment to be re-created", recreated)

    # spec.replicas 1 -> 3 -> the Deployment follows.
    admin.patch(FOO, "web", {"spec": {"replicas": 3}}, namespace=namespace)
    wait_for(
        "Deployment replicas 3",
        lambda: admin.get(DEPLOYMENT, "web-nginx", namespace=namespace)["spec"]["replicas"] == 3,
    )

    # status.availableReplicas follows the Pods becoming Ready (kwok marks them so).
    wait_for_available(admin, controller, namespace, "web", "web-nginx", 3)
    pods = admin.list(("v1", "Pod"), namespace=namespace, label_selector="controller=web")
    assert len(pods["items"]) == 3
    assert {pod["status"]["phase"] for pod in pods["items"]} == {"Running"}

    # Back to 1: the Deployment controller removes two Pods and the Foo reports 1.
    admin.patch(FOO, "web", {"spec": {"replicas": 1}}, namespace=namespace)
    wait_for_available(admin, controller, namespace, "web", "web-nginx", 1)


def test_foreign_deployment_is_left_alone_with_a_warning(
    admin: BlockingClient, controller: ControllerProcess, kubectrl_namespace: str
) -> None:
    namespace = kubectrl_namespace
    foreign = admin.create(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "taken", "namespace": namespace},
            "spec": {
                "replicas": 5,
                "selector": {"matchLabels": {"app": "other"}},
                "template": {
                    "metadata": {"labels": {"app": "other"}},
                    "spec": {"containers": [{"name": "app", "image": "busybox"}]},
                },
            },
        }
    )
    admin.create(new_foo(namespace, "intruder", "taken", replicas=2))

    # Retried with backoff: the identical warning is recorded again and again (its count grows).
    (warning,) = wait_for(
        "a repeated ErrResourceExists warning",
        lambda: [
            e
            for e in events_for(admin, namespace, "intruder", "ErrResourceExists")
            if e.get("count", 1) >= 3
        ],
    )
    assert warning["type"] == "Warning"
    assert warning["message"] == 'Resource "taken" already exists and is not managed by Foo'

    # Its spec and metadata are untouched (the Deployment controller updates its status).
    untouched = admin.get(DEPLOYMENT, "taken", namespace=namespace)
    assert untouched["metadata"]["generation"] == foreign["metadata"]["generation"]
    assert untouched["spec"] == foreign["spec"]
    assert "ownerReferences" not in untouched["metadata"]
    assert untouched["metadata"].get("labels") == foreign["metadata"].get("labels")
    assert not events_for(admin, namespace, "intruder", "Synced")


def test_invalid_foos(
    admin: BlockingClient, controller: ControllerProcess, kubectrl_namespace: str
) -> None:
    namespace = kubectrl_namespace
    # The API server rejects replicas outside 1..10 (the CRD's schema).
    with pytest.raises(InvalidError) as rejected:
        admin.create(new_foo(namespace, "too-big", "too-big", replicas=11))
    assert "spec.replicas" in str(rejected.value)

    # An empty deploymentName is logged and not retried.
    admin.create(new_foo(namespace, "nameless", ""))
    needle = f"{namespace}/nameless: deployment name must be specified"
    wait_for("the controller to log the empty deploymentName", lambda: controller.log_lines(needle))
    # A later Foo goes all the way through the same two workers; had "nameless" been requeued
    # (5 ms, 10 ms, ... backoff), its line would repeat meanwhile.
    admin.create(new_foo(namespace, "marker", "marker"))
    wait_for("the marker's Synced event", lambda: events_for(admin, namespace, "marker", "Synced"))
    assert len(controller.log_lines(needle)) == 1
    names = [d["metadata"]["name"] for d in admin.list(DEPLOYMENT, namespace=namespace)["items"]]
    assert names == ["marker"]


def test_metrics_are_served_on_the_flag_address(controller: ControllerProcess) -> None:
    def scrape() -> str | None:
        try:
            response = httpx.get(f"http://{controller.metrics}/metrics", timeout=5)
        except httpx.HTTPError:
            return None
        return response.text if response.status_code == 200 else None

    text = wait_for("/metrics", scrape)
    assert 'controller_runtime_reconcile_total{controller="foo"' in text


def test_secure_metrics_only_for_authorized_tokens(
    kubectrl_cluster: LocalCluster,
    admin: BlockingClient,
    controller: ControllerProcess,
    kubectrl_namespace: str,
) -> None:
    """--metrics-secure with the shipped RBAC: 401 without a token, 403 for a token without the
    shipped metrics-reader role, 200 with it (the in-cluster deployment.yaml runs it so)."""
    namespace = kubectrl_namespace
    port = free_port()
    # Its own (empty) namespace, so it does not reconcile alongside the module's controller.
    proc = subprocess.Popen(
        [
            sys.executable,
            str(EXAMPLE),
            "--kubeconfig",
            str(controller.user_kubeconfig),
            "--namespace",
            namespace,
            "--metrics-secure",
            "--metrics-bind-address",
            f"127.0.0.1:{port}",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=dict(os.environ, PYTHONUNBUFFERED="1"),
    )
    secure = ControllerProcess(proc, user_kubeconfig=controller.user_kubeconfig)
    try:
        admin.create(
            {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "scraper"}},
            namespace=namespace,
        )
        with kubectrl_cluster.http_client() as http:
            response = http.post(
                f"/api/v1/namespaces/{namespace}/serviceaccounts/scraper/token",
                json={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest"},
            )
            response.raise_for_status()
            token = response.json()["status"]["token"]

        def status(headers: dict[str, str]) -> int | None:
            try:
                url = f"https://127.0.0.1:{port}/metrics"
                return httpx.get(url, headers=headers, verify=False, timeout=5).status_code
            except httpx.HTTPError:
                return None  # not listening yet

        bearer = {"Authorization": f"Bearer {token}"}
        assert wait_for("a 401 without a token", lambda: status({})) == 401
        assert status(bearer) == 403

        shipped = [doc for doc in yaml.safe_load_all((ARTIFACTS / "rbac.yaml").read_text()) if doc]
        (reader,) = [
            d for d in shipped if d["metadata"]["name"] == "sample-controller-metrics-reader"
        ]
        reader = copy.deepcopy(reader)
        reader["metadata"]["name"] = f"{namespace}-metrics-reader"
        admin.create(reader)
        admin.create(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding",
                "metadata": {"name": f"{namespace}-metrics-reader"},
                "roleRef": {
                    "apiGroup": "rbac.authorization.k8s.io",
                    "kind": "ClusterRole",
                    "name": reader["metadata"]["name"],
                },
                "subjects": [{"kind": "ServiceAccount", "name": "scraper", "namespace": namespace}],
            }
        )
        wait_for("a 200 for the scraper's token", lambda: status(bearer) == 200)
    finally:
        proc.terminate()
        code = proc.wait(timeout=60)
    assert code == 0, secure.log()
