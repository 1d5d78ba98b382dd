"""Cluster mode (LocalCluster): what the controller-manager, the scheduler and kwok add.

One session-scoped cluster (the ``kubectrl_cluster`` fixture) serves every test here but the
two that are about starting and killing one.
"""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest

from kubectrl.envtest import ControlPlaneError, LocalCluster, find_binaries
from kubectrl.envtest._binaries import ALL_SPECS, specs_for

pytestmark = pytest.mark.integration

#: Deadline for what the controllers, the scheduler and kwok do. A fresh cluster under the
#: parallel CI load once needed more than 60 s to bring a Deployment to 3 available replicas.
DEADLINE = 180.0
T = TypeVar("T")


def wait_for(what: str, probe: Callable[[], T], timeout: float = DEADLINE) -> T:
    deadline = time.monotonic() + timeout
    value = probe()
    while not value:
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}: {value!r}")
        time.sleep(0.1)
        value = probe()
    return value


def process_gone(pid: int) -> bool:
    """True when ``pid`` no longer runs (a zombie awaiting its reaper counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(") ", 1)[1].startswith("Z")


def deployment(name: str, replicas: int) -> dict[str, Any]:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]},
            },
        },
    }


def items(http: httpx.Client, path: str, **params: str) -> list[dict[str, Any]]:
    response = http.get(path, params=params)
    response.raise_for_status()
    found: list[dict[str, Any]] = response.json()["items"]
    return found


@pytest.fixture
def http(kubectrl_cluster: LocalCluster) -> Iterator[httpx.Client]:
    with kubectrl_cluster.http_client() as client:
        yield client


def create_deployment(http: httpx.Client, namespace: str, name: str, replicas: int) -> None:
    response = http.post(
        f"/apis/apps/v1/namespaces/{namespace}/deployments", json=deployment(name, replicas)
    )
    assert response.status_code == 201, response.text


def test_deployment_gets_three_running_ready_pods_on_kwok_nodes(
    kubectrl_cluster: LocalCluster, http: httpx.Client, kubectrl_namespace: str
) -> None:
    ns = kubectrl_namespace
    create_deployment(http, ns, "web", 3)

    def available() -> bool:
        status = http.get(f"/apis/apps/v1/namespaces/{ns}/deployments/web").json()["status"]
        return int(status.get("availableReplicas", 0)) == 3

    try:
        wait_for("Deployment web availableReplicas 3", available)
    except AssertionError as failure:
        # Say how far it got: ReplicaSets, and each Pod's node and phase.
        sets = [
            (r["metadata"]["name"], r.get("status", {}))
            for r in items(http, f"/apis/apps/v1/namespaces/{ns}/replicasets")
        ]
        found = [
            (p["metadata"]["name"], p["spec"].get("nodeName"), p.get("status", {}).get("phase"))
            for p in items(http, f"/api/v1/namespaces/{ns}/pods")
        ]
        raise AssertionError(f"{failure}; replicasets {sets}; pods {found}") from None
    pods = items(http, f"/api/v1/namespaces/{ns}/pods", labelSelector="app=web")
    assert len(pods) == 3
    for pod in pods:
        assert pod["status"]["phase"] == "Running"
        ready = {c["type"]: c["status"] for c in pod["status"]["conditions"]}
        assert ready["Ready"] == "True"
        assert pod["spec"]["nodeName"] in kubectrl_cluster.node_names
        assert pod["status"]["podIP"].startswith("10.244.")
        # The owner chain the controller-manager made: Pod -> ReplicaSet -> Deployment.
        (owner,) = pod["metadata"]["ownerReferences"]
        assert owner["kind"] == "ReplicaSet"
    # The ServiceAccount admission plugin runs, as in a real cluster.
    assert pods[0]["spec"]["serviceAccountName"] == "default"
    nodes = items(http, "/api/v1/nodes")
    assert sorted(n["metadata"]["name"] for n in nodes) == kubectrl_cluster.node_names


@pytest.mark.parametrize("policy", ["Background", "Foreground"])
def test_deleting_the_owner_removes_its_dependents(
    http: httpx.Client, kubectrl_namespace: str, policy: str
) -> None:
    """The garbage collector honours both propagation policies (kubernetes
    pkg/controller/garbagecollector/garbagecollector.go): Foreground keeps the owner, with the
    ``foregroundDeletion`` finalizer, until its blocking dependents are gone."""
    ns = kubectrl_namespace
    name = policy.lower()
    create_deployment(http, ns, name, 2)

    def running() -> bool:
        pods = items(http, f"/api/v1/namespaces/{ns}/pods", labelSelector=f"app={name}")
        return [p["status"].get("phase") for p in pods] == ["Running", "Running"]

    wait_for("2 Running Pods", running)
    response = http.request(
        "DELETE",
        f"/apis/apps/v1/namespaces/{ns}/deployments/{name}",
        json={"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": policy},
    )
    assert response.status_code in (200, 202), response.text
    if policy == "Foreground":
        assert "foregroundDeletion" in response.json()["metadata"]["finalizers"]

    def all_gone() -> bool:
        deployments = items(http, f"/apis/apps/v1/namespaces/{ns}/deployments")
        replicasets = items(http, f"/apis/apps/v1/namespaces/{ns}/replicasets")
        pods = items(http, f"/api/v1/namespaces/{ns}/pods")
        return not deployments and not replicasets and not pods

    wait_for(f"{policy} deletion to remove the Deployment, ReplicaSet and Pods", all_gone)


def test_a_namespace_with_objects_is_deleted_completely(
    kubectrl_cluster: LocalCluster, http: httpx.Client
) -> None:
    ns = f"doomed-{os.getpid()}-{time.monotonic_ns() % 10**6}"
    assert http.post("/api/v1/namespaces", json={"metadata": {"name": ns}}).status_code == 201
    create_deployment(http, ns, "app", 1)
    configmap = {"metadata": {"name": "settings"}, "data": {"k": "v"}}
    assert http.post(f"/api/v1/namespaces/{ns}/configmaps", json=configmap).status_code == 201
    wait_for(
        "a Running Pod",
        lambda: any(
            p["status"].get("phase") == "Running"
            for p in items(http, f"/api/v1/namespaces/{ns}/pods")
        ),
    )
    # What the controller-manager adds to every namespace.
    assert http.get(f"/api/v1/namespaces/{ns}/configmaps/kube-root-ca.crt").status_code == 200
    wait_for(
        "the default ServiceAccount",
        lambda: http.get(f"/api/v1/namespaces/{ns}/serviceaccounts/default").status_code == 200,
    )

    assert http.delete(f"/api/v1/namespaces/{ns}").status_code == 200
    wait_for(
        f"namespace {ns} to be gone",
        lambda: http.get(f"/api/v1/namespaces/{ns}").status_code == 404,
    )
    for path in (f"/api/v1/namespaces/{ns}/pods", f"/api/v1/namespaces/{ns}/configmaps"):
        assert items(http, path) == []


def test_the_namespace_fixture_is_ready_for_pods(
    http: httpx.Client, kubectrl_namespace: str
) -> None:
    """The cluster-mode namespace comes with its default ServiceAccount, so a Pod that names
    none is admitted at once: the ServiceAccount admission plugin refuses it while the account
    is missing (kubernetes plugin/pkg/admission/serviceaccount/admission.go, "error looking up
    service account"), and a ReplicaSet refused so retries only after its backoff."""
    ns = kubectrl_namespace
    assert http.get(f"/api/v1/namespaces/{ns}/serviceaccounts/default").status_code == 200
    pod = {
        "metadata": {"name": "at-once"},
        "spec": {"containers": [{"name": "app", "image": "nginx:1"}]},
    }
    response = http.post(f"/api/v1/namespaces/{ns}/pods", json=pod)
    assert response.status_code == 201, response.text
    assert response.json()["spec"]["serviceAccountName"] == "default"


def test_service_account_tokens(http: httpx.Client, kubectrl_namespace: str) -> None:
    """TokenRequest issues a token the apiserver authenticates as the ServiceAccount. Since 1.24
    no token Secret is generated for a ServiceAccount (still so in 1.36); a Secret of type
    ``kubernetes.io/service-account-token`` that someone creates is filled in by the
    controller-manager's tokens controller (kubernetes
    pkg/controller/serviceaccount/tokens_controller.go)."""
    ns = kubectrl_namespace
    sa = {"metadata": {"name": "robot"}}
    assert http.post(f"/api/v1/namespaces/{ns}/serviceaccounts", json=sa).status_code == 201

    response = http.post(
        f"/api/v1/namespaces/{ns}/serviceaccounts/robot/token",
        json={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}},
    )
    assert response.status_code == 201, response.text
    token = response.json()["status"]["token"]
    review = http.post(
        "/apis/authentication.k8s.io/v1/tokenreviews",
        json={
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenReview",
            "spec": {"token": token},
        },
    ).json()
    assert review["status"]["authenticated"] is True
    assert review["status"]["user"]["username"] == f"system:serviceaccount:{ns}:robot"

    # No Secret is generated for it.
    robot = http.get(f"/api/v1/namespaces/{ns}/serviceaccounts/robot").json()
    assert "secrets" not in robot
    secret_types = {s["type"] for s in items(http, f"/api/v1/namespaces/{ns}/secrets")}
    assert "kubernetes.io/service-account-token" not in secret_types

    # A token Secret created by hand is populated.
    secret = {
        "metadata": {
            "name": "robot-token",
            "annotations": {"kubernetes.io/service-account.name": "robot"},
        },
        "type": "kubernetes.io/service-account-token",
    }
    assert http.post(f"/api/v1/namespaces/{ns}/secrets", json=secret).status_code == 201

    def populated() -> dict[str, str]:
        data: dict[str, str] = (
            http.get(f"/api/v1/namespaces/{ns}/secrets/robot-token").json().get("data") or {}
        )
        return data if "token" in data else {}

    data = wait_for("the tokens controller to fill robot-token", populated)
    assert set(data) >= {"token", "ca.crt", "namespace"}
    assert base64.b64decode(data["namespace"]).decode() == ns


def test_kubectl_subcommand_runs_the_pinned_kubectl(
    kubectrl_cluster: LocalCluster, tmp_path: Path
) -> None:
    kubectl = find_binaries(build=False, kubectl=True, version=kubectrl_cluster.version).kubectl
    assert kubectl is not None
    env = {
        **os.environ,
        "KUBECTRL_CACHE_DIR": str(tmp_path / "cache"),  # no state file: $KUBECONFIG is used
        "KUBECONFIG": str(kubectrl_cluster.kubeconfig.path),
        "TEST_ASSET_KUBECTL": str(kubectl),
    }
    version = subprocess.run(
        [sys.executable, "-m", "kubectrl.envtest", "kubectl", "version", "-o", "json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert version.returncode == 0, version.stderr
    versions = json.loads(version.stdout)
    pinned = specs_for(kubectrl_cluster.version)[1].version()  # the chosen release's pin
    assert versions["clientVersion"]["gitVersion"] == pinned
    assert versions["serverVersion"]["gitVersion"] == pinned
    nodes = subprocess.run(
        [sys.executable, "-m", "kubectrl.envtest", "kubectl", "get", "nodes", "--no-headers"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert nodes.returncode == 0, nodes.stderr
    lines = nodes.stdout.splitlines()
    assert [line.split()[:2] for line in lines] == [
        [name, "Ready"] for name in kubectrl_cluster.node_names
    ]


def test_a_component_that_fails_to_start_is_named_with_its_log() -> None:
    cluster = LocalCluster(nodes=1, scheduler_args=["--no-such-flag=1"])
    with pytest.raises(ControlPlaneError) as failure:
        cluster.start()
    message = str(failure.value)
    assert message.startswith("kube-scheduler exited with code 1 before /healthz")
    assert "--- kube-scheduler (" in message
    assert "unknown flag: --no-such-flag" in message
    assert not cluster.running
    assert cluster.pids == {}


def test_start_cluster_then_sigkill_of_the_owner_leaves_no_process(tmp_path: Path) -> None:
    """``start --cluster`` writes its state; killing the owning process with SIGKILL takes
    etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok with it."""
    binaries = find_binaries(build=False, cluster=True, kubectl=True)
    env = {**os.environ, "KUBECTRL_CACHE_DIR": str(tmp_path / "cache")}
    for spec in ALL_SPECS:  # the binaries found now, whatever the isolated cache holds
        env[spec.env_var] = str(binaries.get(spec.name))
    started = subprocess.run(
        [sys.executable, "-m", "kubectrl.envtest", "start", "--cluster", "--nodes", "1"],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    state_file = tmp_path / "cache" / "run" / f"shell-{os.getpid()}" / "state.json"
    state = json.loads(state_file.read_text()) if state_file.exists() else {}
    try:
        assert started.returncode == 0, started.stdout + started.stderr
        assert "python -m kubectrl.envtest kubectl get nodes" in started.stdout
        assert state["mode"] == "cluster"
        pids = {name: pid for name, pid in state["pids"].items() if name != "watchdog"}
        assert set(pids) == {
            "etcd",
            "kube-apiserver",
            "kube-controller-manager",
            "kube-scheduler",
            "kwok",
        }
        nodes = subprocess.run(
            [sys.executable, "-m", "kubectrl.envtest", "kubectl", "get", "nodes", "-o", "name"],
            env={k: v for k, v in env.items() if k != "KUBECONFIG"},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert nodes.stdout.split() == ["node/kwok-node-0"], nodes.stderr

        os.kill(int(state["pid"]), signal.SIGKILL)
        wait_for(
            f"every component to exit: {state['pids']}",
            lambda: all(process_gone(pid) for pid in state["pids"].values()),
        )
        wait_for(f"{state['work_dir']} to be removed", lambda: not Path(state["work_dir"]).exists())
    finally:
        for pid in [state.get("pid"), *state.get("pids", {}).values()]:
            if pid and not process_gone(int(pid)):
                os.kill(int(pid), signal.SIGKILL)
