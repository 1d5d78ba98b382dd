"""A scaffolded project's admission policies (``api.POLICIES``) are rendered by its
``manifests`` command with the CRDs and RBAC, as kubebuilder's ``make manifests`` renders what
the project declares (``config/`` from the code, ``dist/install.yaml`` with all of it)."""

from __future__ import annotations

from pathlib import Path

import yaml
from scaffold_helpers import project_python, scaffold

POLICY = """
from kubectrl.admission import ValidatingPolicy, Validation

_foo = ValidatingPolicy(
    "guestbook-foo.my.domain",
    kinds=[guestbook_v1.Guestbook],
    validations=[Validation("!has(object.spec.foo) || object.spec.foo != 'bar'")],
)
POLICIES += [_foo, _foo.bind(actions=["Deny"])]
"""


def test_the_policies_are_written_with_the_crds(tmp_path: Path) -> None:
    root = scaffold(tmp_path, webhooks=False)
    api = root / "guestbook/api/__init__.py"
    api.write_text(api.read_text() + POLICY)
    done = project_python(root, "-m", "guestbook.manifests")
    assert done.returncode == 0, done.stderr
    policy, binding = yaml.safe_load_all((root / "config/admission/policies.yaml").read_text())
    assert policy["kind"] == "ValidatingAdmissionPolicy"
    assert policy["spec"]["matchConstraints"]["resourceRules"][0]["resources"] == ["guestbooks"]
    assert binding["spec"] == {"policyName": "guestbook-foo.my.domain",
                               "validationActions": ["Deny"]}  # fmt: skip
    kinds = [d["kind"] for d in yaml.safe_load_all((root / "dist/install.yaml").read_text())]
    assert kinds[:4] == [
        "Namespace",
        "CustomResourceDefinition",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
    ]
    check = project_python(root, "-m", "guestbook.manifests", "--check")
    assert check.returncode == 0, check.stderr


def test_a_policy_reading_a_field_the_model_lacks_fails_the_command(tmp_path: Path) -> None:
    root = scaffold(tmp_path, webhooks=False)
    api = root / "guestbook/api/__init__.py"
    api.write_text(api.read_text() + POLICY.replace("object.spec.foo != ", "object.spec.fo != "))
    done = project_python(root, "-m", "guestbook.manifests")
    assert done.returncode != 0
    assert "undefined field 'fo'" in done.stderr
