"""The sample controller's shipped RBAC is the one its declarations generate.

``examples/sample_controller/controller.py`` declares its rules with ``kubectrl.rbac.rule``;
``artifacts/rbac.yaml`` must hold the generated ClusterRole (and the leader-election Role's
rules), as kubebuilder projects keep ``config/rbac/role.yaml`` equal to ``make manifests``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "sample_controller"
REGENERATE = (
    "cd examples/sample_controller && "
    "python -m kubectrl rbac controller:RBAC --name sample-controller (its ClusterRole)"
)


def generated() -> list[dict[str, Any]]:
    # The CLI, run as the header of rbac.yaml says (the example directory is not a package).
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "kubectrl",
            "rbac",
            "controller:RBAC",
            "--name",
            "sample-controller",
        ],
        cwd=EXAMPLE,
        capture_output=True,
        text=True,
        check=True,
    )
    return list(yaml.safe_load_all(out.stdout))


def shipped(kind: str, name: str) -> dict[str, Any]:
    documents = yaml.safe_load_all((EXAMPLE / "artifacts" / "rbac.yaml").read_text())
    (found,) = [d for d in documents if d["kind"] == kind and d["metadata"]["name"] == name]
    return dict(found)


def test_shipped_cluster_role_equals_the_generated_one() -> None:
    cluster_role, role = generated()
    assert cluster_role["kind"] == "ClusterRole"
    assert shipped("ClusterRole", "sample-controller") == cluster_role, (
        f"artifacts/rbac.yaml is stale: {REGENERATE}"
    )
    # The Lease Role keeps its own name; its rules are the generated Role's.
    assert role["kind"] == "Role"
    assert role["metadata"]["namespace"] == "sample-controller"
    assert shipped("Role", "sample-controller-leader-election")["rules"] == role["rules"], (
        f"artifacts/rbac.yaml is stale: {REGENERATE}"
    )


def test_the_reconciler_declares_every_verb_it_was_granted_by_hand() -> None:
    """The hand-written least-privilege role (proven by tests/e2e) had exactly these."""
    (cluster_role, _) = generated()
    grants = {
        (group, resource, verb)
        for rule in cluster_role["rules"]
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
    }
    assert ("samplecontroller.k8s.io", "foos/status", "patch") in grants
    assert ("apps", "deployments", "update") in grants
    assert ("", "events", "patch") in grants
    assert ("apps", "deployments", "delete") not in grants
    assert len(grants) == 13
