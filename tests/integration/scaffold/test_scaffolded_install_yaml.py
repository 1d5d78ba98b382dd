"""A scaffolded project's ``dist/install.yaml`` is accepted by a real kube-apiserver.

Its namespace and CRD are created for real (the CRD through ``install_crds``, which waits until
it is established), every other object with ``dryRun=All`` (the apiserver validates and admits
it, stores nothing); cert-manager's Issuer and Certificate are
the only kinds the bare control plane does not serve (the tutorial's deploy chapter says
cert-manager must be installed).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubectrl.client import BlockingClient, load_kubeconfig
from kubectrl.envtest import ControlPlane
from kubectrl.errors import NotFoundError

pytestmark = pytest.mark.integration

CERT_MANAGER_KINDS = {"Issuer", "Certificate"}


def kubectrl(cwd: Path, *args: str) -> None:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    done = subprocess.run(
        [sys.executable, "-m", "kubectrl", *args],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr


def test_install_yaml_of_a_project_with_webhooks_is_valid(
    tmp_path: Path, kubectrl_control_plane: ControlPlane, kubectrl_kubeconfig: Path
) -> None:
    kubectrl(tmp_path, "init", "install-check", "--domain", "my.domain")
    create = ["create", "api", "--group", "fleet", "--version", "v1", "--kind", "Frigate"]
    kubectrl(tmp_path, *create, "--webhooks")
    objects: list[dict[str, Any]] = list(
        yaml.safe_load_all((tmp_path / "dist" / "install.yaml").read_text())
    )
    kinds = [o["kind"] for o in objects]
    assert kinds[:2] == ["Namespace", "CustomResourceDefinition"]
    assert {"Deployment", "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"} <= set(
        kinds
    )

    namespace, crd = objects[0], objects[1]
    kubectrl_control_plane.install_crds(
        [tmp_path / "config" / "crd" / "frigates.fleet.my.domain.yaml"]
    )
    with BlockingClient(load_kubeconfig(str(kubectrl_kubeconfig))) as client:
        try:
            client.get(("v1", "Namespace"), namespace["metadata"]["name"])
        except NotFoundError:
            client.create(namespace)
        for obj in objects[2:]:  # the CRD was installed for real above
            if obj["kind"] in CERT_MANAGER_KINDS:
                continue
            what = f"{obj['kind']} {obj['metadata']['name']}"
            try:
                created = client.create(obj, dry_run=True)
            except Exception as exc:  # the message names the object at fault
                pytest.fail(f"dist/install.yaml: the apiserver refused {what}: {exc}")
            assert created["metadata"]["name"] == obj["metadata"]["name"], what
    assert crd["metadata"]["name"] == "frigates.fleet.my.domain"
