"""Credentials against the real apiserver: exec plugin tokens and in-memory client certificates."""

from __future__ import annotations

import base64
import os
import stat
import tempfile
from pathlib import Path

import pytest
import yaml

from kubectrl.client import BlockingClient, load_kubeconfig
from kubectrl.envtest import ControlPlane

pytestmark = pytest.mark.integration

REVIEW = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}


def test_exec_plugin_token_authenticates_a_real_request(
    control_plane: ControlPlane,
    kubeconfig: Path,
    namespace: str,
    tmp_path: Path,
) -> None:
    """A token printed by an exec plugin (client-go's ExecCredential protocol,
    plugin/pkg/client/auth/exec/exec.go) is what the apiserver sees: the request is made as the
    service account the token belongs to, not as system:anonymous."""
    with control_plane.http_client() as http:
        http.post(
            f"/api/v1/namespaces/{namespace}/serviceaccounts",
            json={"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "robot"}},
        ).raise_for_status()
        response = http.post(
            f"/api/v1/namespaces/{namespace}/serviceaccounts/robot/token",
            json={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}},
        )
        response.raise_for_status()
    token = response.json()["status"]["token"]
    plugin = tmp_path / "plugin.sh"
    plugin.write_text(
        "#!/bin/sh\n"
        'echo \'{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",'
        f'"status":{{"token":"{token}"}}}}\'\n'
    )
    plugin.chmod(plugin.stat().st_mode | stat.S_IXUSR)
    admin = yaml.safe_load(kubeconfig.read_text())
    cluster = admin["clusters"][0]["cluster"]
    path = tmp_path / "config"
    path.write_text(
        yaml.safe_dump(
            {
                "current-context": "robot",
                "clusters": [{"name": "envtest", "cluster": cluster}],
                "users": [
                    {
                        "name": "robot",
                        "user": {
                            "exec": {
                                "apiVersion": "client.authentication.k8s.io/v1",
                                "command": str(plugin),
                                "interactiveMode": "Never",
                            }
                        },
                    }
                ],
                "contexts": [{"name": "robot", "context": {"cluster": "envtest", "user": "robot"}}],
            }
        )
    )
    with BlockingClient(load_kubeconfig(path)) as robot:
        review = robot.create(REVIEW)
    username = review["status"]["userInfo"]["username"]
    assert username == f"system:serviceaccount:{namespace}:robot"


def test_client_certificate_kubeconfig_works_and_leaves_no_key_on_disk(
    kubeconfig: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The envtest admin kubeconfig authenticates with client-certificate-data; loading it and
    making requests writes the key to no file (temporary files included)."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    admin = yaml.safe_load(kubeconfig.read_text())
    key_pem = base64.b64decode(admin["users"][0]["user"]["client-key-data"])
    config = load_kubeconfig(kubeconfig)
    with BlockingClient(config) as client:
        review = client.create(REVIEW)
        with client.watch(("v1", "Namespace"), timeout_seconds=1) as stream:
            for _ in stream:
                break
    assert review["status"]["userInfo"]["username"] != "system:anonymous"
    body = key_pem.splitlines()[1]
    leftovers = [
        Path(root, name)
        for root, _, names in os.walk(scratch)
        for name in names
        if body in Path(root, name).read_bytes()
    ]
    assert leftovers == []
