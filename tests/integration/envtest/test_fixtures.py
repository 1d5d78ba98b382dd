"""The pytest plugin's fixtures, seen from a project's test session (an inner pytest run).

Cluster mode's namespace deletion is exercised by every test that uses ``kubectrl_cluster`` with
``kubectrl_namespace`` (the fixture fails a test whose namespace is not gone); here the plain
mode's promise and the aliases are checked without starting a second cluster.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

INNER = """
import pathlib

SEEN = pathlib.Path(__file__).with_name("seen.txt")


def test_a_uses_a_namespace(kubectrl_control_plane, kubectrl_namespace):
    with kubectrl_control_plane.http_client() as http:
        r = http.post(
            f"/api/v1/namespaces/{kubectrl_namespace}/configmaps",
            json={"metadata": {"name": "left"}, "data": {"k": "v"}},
        )
        assert r.status_code == 201
    SEEN.write_text(kubectrl_namespace)


def test_b_plain_mode_leaves_it_terminating_with_its_objects(kubectrl_control_plane):
    name = SEEN.read_text()
    with kubectrl_control_plane.http_client() as http:
        namespace = http.get(f"/api/v1/namespaces/{name}").json()
        assert namespace["status"]["phase"] == "Terminating"
        assert http.get(f"/api/v1/namespaces/{name}/configmaps/left").status_code == 200


def test_c_the_old_names_are_the_same_objects(
    control_plane, kubectrl_control_plane, kubeconfig, kubectrl_kubeconfig,
    namespace, kubectrl_namespace,
):
    assert control_plane is kubectrl_control_plane
    assert kubeconfig == kubectrl_kubeconfig == kubectrl_control_plane.kubeconfig.path
    assert namespace == kubectrl_namespace
    assert namespace.startswith("test-c-the-old-names-are-the-same")
"""


def test_plain_namespace_fixture_and_aliases(tmp_path: Path) -> None:
    (tmp_path / "test_inner_fixtures.py").write_text(INNER)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", str(tmp_path)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 passed" in result.stdout
