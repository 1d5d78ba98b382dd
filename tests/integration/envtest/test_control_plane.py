"""The local control plane against itself: HTTPS, RBAC, CRDs, and clean shutdown."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from kubectrl.envtest import ControlPlane, ControlPlaneError

pytestmark = pytest.mark.integration

DATA = Path(__file__).resolve().parents[2] / "data"


def wait_for(condition: Callable[[], bool], *, timeout: float = 30.0, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what or condition}")
        time.sleep(0.05)


def process_gone(pid: int) -> bool:
    """True when ``pid`` no longer runs (a zombie awaiting its reaper counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(") ", 1)[1].startswith("Z")


def test_configmap_crud_over_https_as_admin(
    kubectrl_control_plane: ControlPlane, kubectrl_namespace: str
) -> None:
    namespace = kubectrl_namespace
    assert kubectrl_control_plane.server.startswith("https://127.0.0.1:")
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    with kubectrl_control_plane.http_client() as http:
        created = http.post(
            base,
            json={
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "cm"},
                "data": {"k": "v"},
            },
        )
        assert created.status_code == 201, created.text
        got = http.get(f"{base}/cm")
        assert got.status_code == 200
        assert got.json()["data"] == {"k": "v"}
        listed = http.get(base).json()
        assert [item["metadata"]["name"] for item in listed["items"]] == ["cm"]
        assert http.delete(f"{base}/cm").status_code == 200
        assert http.get(f"{base}/cm").status_code == 404


def test_kubeconfig_file_matches_memory_and_verifies_tls(
    kubectrl_control_plane: ControlPlane,
) -> None:
    kubeconfig = kubectrl_control_plane.kubeconfig
    assert json.loads(kubeconfig.path.read_text()) == kubeconfig.data
    assert kubeconfig.user == "admin"
    assert kubeconfig.groups == ("system:masters",)
    assert oct(kubeconfig.path.stat().st_mode & 0o777) == "0o600"
    cluster = kubeconfig.data["clusters"][0]["cluster"]
    assert cluster["server"] == kubectrl_control_plane.server
    assert "insecure-skip-tls-verify" not in cluster
    # The key material is not in the repr.
    assert "client-key-data" not in repr(kubeconfig)

    # The official client's loader accepts the file and reaches the server with it.
    from kubernetes import client, config

    api = client.CoreV1Api(config.new_client_from_config(config_file=str(kubeconfig.path)))
    names = [ns.metadata.name for ns in api.list_namespace().items]
    assert "kube-system" in names or "default" in names


def test_add_user_is_forbidden_until_a_rolebinding_grants_access(
    kubectrl_control_plane: ControlPlane, kubectrl_namespace: str
) -> None:
    namespace = kubectrl_namespace
    alice = kubectrl_control_plane.add_user("alice", groups=["dev"])
    assert alice.user == "alice"
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    with kubectrl_control_plane.http_client(alice) as as_alice:
        denied = as_alice.get(path)
        assert denied.status_code == 403
        assert 'User "alice"' in denied.json()["message"]

        with kubectrl_control_plane.http_client() as admin:
            role = {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "Role",
                "metadata": {"name": "configmap-reader"},
                "rules": [
                    {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}
                ],
            }
            binding = {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "RoleBinding",
                "metadata": {"name": "alice-reads-configmaps"},
                "roleRef": {
                    "apiGroup": "rbac.authorization.k8s.io",
                    "kind": "Role",
                    "name": "configmap-reader",
                },
                "subjects": [
                    {"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"}
                ],
            }
            rbac = f"/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}"
            assert admin.post(f"{rbac}/roles", json=role).status_code == 201
            assert admin.post(f"{rbac}/rolebindings", json=binding).status_code == 201

        # The apiserver's RBAC authorizer reads bindings from its own cache: wait for it.
        wait_for(lambda: as_alice.get(path).status_code == 200, what="alice's RoleBinding")
        # Still nothing beyond what the Role grants.
        assert as_alice.post(path, json={"metadata": {"name": "x"}}).status_code == 403


def test_group_membership_comes_from_the_certificate(
    kubectrl_control_plane: ControlPlane, kubectrl_namespace: str
) -> None:
    namespace = kubectrl_namespace
    boss = kubectrl_control_plane.add_user("boss", groups=["system:masters"])
    with kubectrl_control_plane.http_client(boss) as http:
        assert http.get(f"/api/v1/namespaces/{namespace}/secrets").status_code == 200


def test_install_crds_accepts_valid_and_rejects_invalid_objects(
    kubectrl_control_plane: ControlPlane, kubectrl_namespace: str
) -> None:
    namespace = kubectrl_namespace
    installed = kubectrl_control_plane.install_crds([DATA / "crds" / "widgets.yaml"])
    assert [crd["metadata"]["name"] for crd in installed] == ["widgets.test.kubectrl.dev"]
    conditions = {c["type"]: c["status"] for c in installed[0]["status"]["conditions"]}
    assert conditions["Established"] == "True"
    # Installing again (an update) is fine.
    kubectrl_control_plane.install_crds([DATA / "crds"])

    base = f"/apis/test.kubectrl.dev/v1/namespaces/{namespace}/widgets"
    with kubectrl_control_plane.http_client() as http:
        good = {
            "apiVersion": "test.kubectrl.dev/v1",
            "kind": "Widget",
            "metadata": {"name": "good"},
            "spec": {"size": 3},
        }
        created = http.post(base, json=good)
        assert created.status_code == 201, created.text
        assert created.json()["spec"] == {"size": 3}

        bad = {
            "apiVersion": "test.kubectrl.dev/v1",
            "kind": "Widget",
            "metadata": {"name": "bad"},
            "spec": {"size": 11},
        }
        rejected = http.post(base, json=bad)
        assert rejected.status_code == 422
        status = rejected.json()
        assert status["reason"] == "Invalid"
        fields = [cause["field"] for cause in status["details"]["causes"]]
        assert "spec.size" in fields


def test_install_crds_names_the_file_the_server_refuses(
    kubectrl_control_plane: ControlPlane, tmp_path: Path
) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text(
        (DATA / "crds" / "widgets.yaml")
        .read_text()
        .replace("name: widgets.test.kubectrl.dev", "name: wrong.test.kubectrl.dev")
    )
    with pytest.raises(ControlPlaneError, match=r"broken\.yaml.*wrong\.test\.kubectrl\.dev.*422"):
        kubectrl_control_plane.install_crds([broken])


def test_stop_leaves_no_process_or_directory() -> None:
    cp = ControlPlane().start()
    pids = cp.pids
    work_dir = cp.work_dir
    assert set(pids) == {"etcd", "kube-apiserver", "watchdog"}
    assert work_dir.is_dir()
    cp.stop()
    assert all(process_gone(pid) for pid in pids.values()), pids
    assert not work_dir.exists()
    cp.stop()  # idempotent


def test_startup_failure_reports_the_apiserver_log() -> None:
    cp = ControlPlane(apiserver_args=["--no-such-flag=1"])
    with pytest.raises(ControlPlaneError) as failure:
        cp.start()
    message = str(failure.value)
    assert "kube-apiserver exited with code" in message
    assert "unknown flag: --no-such-flag" in message
    assert "--- etcd" in message  # etcd's last lines are shown too
    assert not cp.running


CHILD = """
import json, sys, time
from kubectrl.envtest import ControlPlane
cp = ControlPlane().start()
print(json.dumps({"pids": cp.pids, "work_dir": str(cp.work_dir)}), flush=True)
time.sleep(600)
"""


def test_sigkill_of_the_owner_leaves_no_control_plane_behind() -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert child.stdout is not None
        line = child.stdout.readline()
        assert line, f"child exited early with {child.wait()}"
        started = json.loads(line)
        pids = started["pids"]
        work_dir = Path(started["work_dir"])
        assert all(not process_gone(pid) for pid in pids.values())
        assert work_dir.is_dir()

        os.kill(child.pid, signal.SIGKILL)
        child.wait()

        wait_for(
            lambda: all(process_gone(p) for p in pids.values()),
            timeout=30,
            what=f"etcd, kube-apiserver and the watchdog to exit: {pids}",
        )
        wait_for(lambda: not work_dir.exists(), timeout=10, what=f"{work_dir} to be removed")
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


def test_restart_apiserver_keeps_data_port_and_credentials(
    kubectrl_control_plane: ControlPlane, kubectrl_namespace: str
) -> None:
    namespace = kubectrl_namespace
    before = kubectrl_control_plane.pids["kube-apiserver"]
    server = kubectrl_control_plane.server
    with kubectrl_control_plane.http_client() as http:
        created = http.post(
            f"/api/v1/namespaces/{namespace}/configmaps", json={"metadata": {"name": "kept"}}
        )
        assert created.status_code == 201
    kubectrl_control_plane.restart_apiserver()
    assert kubectrl_control_plane.pids["kube-apiserver"] != before
    assert process_gone(before)
    assert kubectrl_control_plane.server == server
    with kubectrl_control_plane.http_client() as http:
        got = http.get(f"/api/v1/namespaces/{namespace}/configmaps/kept")
        assert got.status_code == 200
        assert got.json()["metadata"]["uid"] == created.json()["metadata"]["uid"]
