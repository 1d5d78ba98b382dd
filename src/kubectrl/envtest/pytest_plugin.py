"""pytest fixtures backed by a real local control plane, or a whole local cluster.

Registered automatically (entry point ``pytest11``) when kubectrl is installed; nothing starts
until a test asks for one of these fixtures.

* ``kubectrl_control_plane`` (session): a running :class:`kubectrl.envtest.ControlPlane`
  (plain mode: etcd + kube-apiserver).
* ``kubectrl_kubeconfig`` (session): the path of its admin kubeconfig.
* ``kubectrl_cluster`` (session): a running :class:`kubectrl.envtest.LocalCluster` (cluster
  mode: also kube-controller-manager, kube-scheduler and 3 kwok nodes). It is a second, separate
  apiserver: start it only in tests that need Pods, garbage collection or namespace deletion.
* ``kubectrl_control_planes`` (session): a function starting more control planes by name, side
  by side (``kubectrl_control_planes("east", "west")``), each kept for the session and shared by
  the tests asking for the same name: a multicluster controller's clusters.
* ``kubectrl_namespace`` (function): the name of a new namespace, unique per test, in the
  cluster if the test also uses ``kubectrl_cluster``, otherwise in the plain control plane.
  In cluster mode the fixture first waits (up to 60 s) for the namespace's ``default``
  ServiceAccount, which kube-controller-manager creates a moment after the namespace: until
  it exists the ServiceAccount admission plugin refuses every Pod that names none, and a
  ReplicaSet whose Pods were refused retries only after its growing backoff (the Kubernetes
  e2e framework waits the same way, WaitForDefaultServiceAccountInNamespace).
  Afterwards it is deleted:

  - in cluster mode, for real: the namespace controller deletes everything in it and the
    fixture waits (up to 60 s) until the namespace is gone, failing the test if it is not;
  - in plain mode, no namespace controller runs, so the namespace stays ``Terminating`` with
    its objects in it, forever (names never repeat, so no test sees another's objects by name;
    a test listing across all namespaces does).

The unprefixed names ``control_plane``, ``kubeconfig`` and ``namespace`` are aliases of the
prefixed ones (they request them), kept for existing suites; new code should use the prefixed
names, which cannot clash with a project's own fixtures.

If the control plane cannot start, every test that needs it errors with the reason and the last
lines of the components' logs; the rest of the suite still runs.
"""

from __future__ import annotations

import re
import secrets
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    import httpx

    from kubectrl.envtest import ControlPlane, LocalCluster

__all__ = [
    "control_plane",
    "kubeconfig",
    "kubectrl_cluster",
    "kubectrl_control_plane",
    "kubectrl_control_planes",
    "kubectrl_kubeconfig",
    "kubectrl_namespace",
    "namespace",
]

#: Seconds the cluster-mode namespace fixture waits for its namespace to be gone.
NAMESPACE_DELETE_TIMEOUT = 60.0
#: Seconds the cluster-mode namespace fixture waits for the new namespace's default
#: ServiceAccount.
SERVICE_ACCOUNT_TIMEOUT = 60.0

_failed_start: dict[str, BaseException] = {}


def _start(kind: str, cp: ControlPlane) -> ControlPlane:
    from kubectrl.envtest import ControlPlaneError

    if kind in _failed_start:
        # Start once per session: a broken build or binary would otherwise be retried per test.
        pytest.fail(f"the local {kind} failed to start: {_failed_start[kind]}", pytrace=False)
    try:
        cp.start()
    except ControlPlaneError as exc:
        _failed_start[kind] = exc
        pytest.fail(f"the local {kind} failed to start: {exc}", pytrace=False)
    return cp


@pytest.fixture(scope="session")
def kubectrl_control_plane() -> Iterator[ControlPlane]:
    """A running etcd + kube-apiserver shared by the whole test session (plain mode)."""
    from kubectrl.envtest import ControlPlane

    cp = _start("control plane", ControlPlane())
    try:
        yield cp
    finally:
        cp.stop()


@pytest.fixture(scope="session")
def kubectrl_cluster() -> Iterator[LocalCluster]:
    """A running :class:`~kubectrl.envtest.LocalCluster` (3 kwok nodes) shared by the session."""
    from kubectrl.envtest import LocalCluster

    cluster = LocalCluster()
    _start("cluster", cluster)
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def kubectrl_control_planes() -> Iterator[Callable[..., dict[str, ControlPlane]]]:
    """A function starting more control planes by name, side by side, for the session.

    ``kubectrl_control_planes("east", "west")`` returns ``{"east": ControlPlane, ...}``; a name
    asked for again gets the same running plane (test modules share them), and every plane is
    stopped at the end of the session. Keyword options go to each new ``ControlPlane``.

    Example::

        def test_two_clusters(kubectrl_control_planes):
            planes = kubectrl_control_planes("east", "west")
            assert planes["east"].server != planes["west"].server
    """
    from kubectrl.envtest import ControlPlane, ControlPlaneError
    from kubectrl.envtest._several import start_all, stop_all

    running: dict[str, ControlPlane] = {}

    def start(*names: str, **options: Any) -> dict[str, ControlPlane]:
        if "control planes" in _failed_start:
            pytest.fail(
                f"the local control planes failed to start: {_failed_start['control planes']}",
                pytrace=False,
            )
        new = {n: ControlPlane(**options) for n in dict.fromkeys(names) if n not in running}
        try:
            running.update(start_all(new))
        except ControlPlaneError as exc:
            _failed_start["control planes"] = exc
            pytest.fail(f"the local control planes failed to start: {exc}", pytrace=False)
        return {n: running[n] for n in names}

    try:
        yield start
    finally:
        stop_all(running.values())


@pytest.fixture(scope="session")
def kubectrl_kubeconfig(kubectrl_control_plane: ControlPlane) -> Path:
    """Path of the plain control plane's admin (system:masters) kubeconfig."""
    return kubectrl_control_plane.kubeconfig.path


def _namespace_name(node_name: str) -> str:
    stem = re.sub(r"[^a-z0-9]+", "-", node_name.lower()).strip("-")[:40].strip("-")
    return f"{stem or 'test'}-{secrets.token_hex(3)}"


@pytest.fixture
def kubectrl_namespace(request: pytest.FixtureRequest) -> Iterator[str]:
    """A new namespace for one test; in cluster mode deleted for real (see the module doc)."""
    cluster_mode = "kubectrl_cluster" in request.fixturenames
    cp: ControlPlane = request.getfixturevalue(
        "kubectrl_cluster" if cluster_mode else "kubectrl_control_plane"
    )
    name = _namespace_name(request.node.name)
    with cp.http_client() as http:
        response = http.post(
            "/api/v1/namespaces",
            json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}},
        )
        if response.status_code != 201:
            pytest.fail(
                f"creating test namespace {name}: HTTP {response.status_code} {response.text}"
            )
        if cluster_mode:
            _wait_default_service_account(http, name)
    try:
        yield name
    finally:
        with cp.http_client() as http:
            response = http.delete(f"/api/v1/namespaces/{name}")
            if response.status_code not in (200, 202, 404):
                pytest.fail(
                    f"deleting test namespace {name}: HTTP {response.status_code} {response.text}"
                )
            if cluster_mode:
                _wait_namespace_gone(http, name)


def _wait_default_service_account(http: httpx.Client, namespace: str) -> None:
    deadline = time.monotonic() + SERVICE_ACCOUNT_TIMEOUT
    while True:
        response = http.get(f"/api/v1/namespaces/{namespace}/serviceaccounts/default")
        if response.status_code == 200:
            return
        if response.status_code != 404 or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    pytest.fail(
        f"namespace {namespace}: no default ServiceAccount {SERVICE_ACCOUNT_TIMEOUT:.0f}s after "
        f"its creation (kube-controller-manager's serviceaccount controller makes it); last "
        f"answer: HTTP {response.status_code} {response.text[:200]}"
    )


def _wait_namespace_gone(http: httpx.Client, name: str) -> None:
    deadline = time.monotonic() + NAMESPACE_DELETE_TIMEOUT
    while time.monotonic() < deadline:
        response = http.get(f"/api/v1/namespaces/{name}")
        if response.status_code == 404:
            return
        time.sleep(0.2)
    conditions = response.json().get("status", {}).get("conditions", [])
    pytest.fail(
        f"namespace {name} was not gone {NAMESPACE_DELETE_TIMEOUT:.0f}s after its deletion; "
        f"its conditions: {conditions}"
    )


@pytest.fixture(scope="session")
def control_plane(kubectrl_control_plane: ControlPlane) -> ControlPlane:
    """Alias of ``kubectrl_control_plane``."""
    return kubectrl_control_plane


@pytest.fixture(scope="session")
def kubeconfig(kubectrl_kubeconfig: Path) -> Path:
    """Alias of ``kubectrl_kubeconfig``."""
    return kubectrl_kubeconfig


@pytest.fixture
def namespace(kubectrl_namespace: str) -> str:
    """Alias of ``kubectrl_namespace``."""
    return kubectrl_namespace
