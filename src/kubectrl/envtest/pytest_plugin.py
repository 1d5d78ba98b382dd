"""pytest fixtures backed by a real local control plane.

Registered automatically (entry point ``pytest11``) when kubectrl is installed; the control plane
starts only when a test asks for one of these fixtures.

* ``control_plane`` (session): a running :class:`kubectrl.envtest.ControlPlane`.
* ``kubeconfig`` (session): the path of its admin kubeconfig.
* ``namespace`` (function): the name of a new namespace, deleted after the test. With no
  controller-manager running, a deleted namespace stays ``Terminating``; names never repeat.

If the control plane cannot start, every test that needs it errors with the reason and the last
lines of etcd's and kube-apiserver's logs; the rest of the suite still runs.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from kubectrl.envtest import ControlPlane

__all__ = ["control_plane", "kubeconfig", "namespace"]

_failed_start: list[BaseException] = []


@pytest.fixture(scope="session")
def control_plane() -> Iterator[ControlPlane]:
    """A running etcd + kube-apiserver shared by the whole test session."""
    from kubectrl.envtest import ControlPlane, ControlPlaneError

    if _failed_start:
        # Start once per session: a broken build or binary would otherwise be retried per test.
        pytest.fail(f"the local control plane failed to start: {_failed_start[0]}", pytrace=False)
    cp = ControlPlane()
    try:
        cp.start()
    except ControlPlaneError as exc:
        _failed_start.append(exc)
        pytest.fail(f"the local control plane failed to start: {exc}", pytrace=False)
    try:
        yield cp
    finally:
        cp.stop()


@pytest.fixture(scope="session")
def kubeconfig(control_plane: ControlPlane) -> Path:
    """Path of the control plane's admin (system:masters) kubeconfig."""
    return control_plane.kubeconfig.path


def _namespace_name(node_name: str) -> str:
    stem = re.sub(r"[^a-z0-9]+", "-", node_name.lower()).strip("-")[:40].strip("-")
    return f"{stem or 'test'}-{secrets.token_hex(3)}"


@pytest.fixture
def namespace(control_plane: ControlPlane, request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh namespace for one test, deleted afterwards."""
    name = _namespace_name(request.node.name)
    with control_plane.http_client() as http:
        response = http.post(
            "/api/v1/namespaces",
            json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}},
        )
        if response.status_code != 201:
            pytest.fail(
                f"creating test namespace {name}: HTTP {response.status_code} {response.text}"
            )
    try:
        yield name
    finally:
        with control_plane.http_client() as http:
            response = http.delete(f"/api/v1/namespaces/{name}")
            if response.status_code not in (200, 202, 404):
                pytest.fail(
                    f"deleting test namespace {name}: HTTP {response.status_code} {response.text}"
                )
