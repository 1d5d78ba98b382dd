"""The sample controller's committed CRD is the one its models generate, byte for byte."""

from __future__ import annotations

import doctest
import importlib.util
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
import yaml

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "sample_controller"
REGENERATE = "python examples/sample_controller/api.py"


def load(name: str, path: Path) -> ModuleType:
    """Import ``path`` as module ``name``."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # pydantic resolves the postponed annotations through it
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def api() -> ModuleType:
    # Loaded under a name of its own: the example's directory is not a package, and its module
    # names (api, controller, main) are too common to put on sys.path inside the test process.
    return load("sample_controller_api", EXAMPLE / "api.py")


def crd_drift_message(committed: str, generated: str) -> str:
    """What a failing check says: which line differs first, and the command that fixes it."""
    old, new = committed.splitlines(), generated.splitlines()
    line = next(
        (i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b),
        min(len(old), len(new)),
    )
    return (
        f"examples/sample_controller/artifacts/crd.yaml is not what the models in "
        f"examples/sample_controller/api.py generate (first difference at line {line + 1}); "
        f"regenerate it with: {REGENERATE}"
    )


def keys_of(node: object, path: str = "") -> list[str]:
    """Every key path in a schema (``.properties.spec.type``, ...)."""
    if not isinstance(node, dict):
        return []
    out = []
    for key, value in node.items():
        out.append(f"{path}.{key}")
        out.extend(keys_of(value, f"{path}.{key}"))
    return out


def test_committed_crd_equals_the_generated_one(api: ModuleType) -> None:
    committed = api.CRD_PATH.read_text(encoding="utf-8")
    generated = api.crd_yaml()
    assert committed == generated, crd_drift_message(committed, generated)


def test_the_cli_prints_the_committed_crd_but_the_in_cluster_conversion(api: ModuleType) -> None:
    """``python -m kubectrl crd api:Foo api:FooV1beta1`` (controller-gen's role) generates the
    committed file, the ``api-approved.kubernetes.io`` annotation (declared by the model)
    included; what ``crd_manifest`` adds for a cluster (kubebuilder's ``config/crd/patches``:
    the conversion webhook and cert-manager's CA injection) is all that differs."""
    result = subprocess.run(
        [sys.executable, "-m", "kubectrl", "crd", "api:Foo", "api:FooV1beta1"],
        cwd=EXAMPLE,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    key, value = api.API_APPROVED
    annotation = f"  annotations:\n    {key}: {value}\n"
    committed_text = api.CRD_PATH.read_text(encoding="utf-8")
    assert annotation in committed_text
    printed = yaml.safe_load(result.stdout)
    committed = yaml.safe_load(committed_text)
    assert printed["spec"].pop("conversion") == {"strategy": "None"}
    assert committed["spec"].pop("conversion") == {
        "strategy": "Webhook",
        "webhook": {
            "clientConfig": {
                "service": {
                    "name": "sample-controller-webhook-service",
                    "namespace": "sample-controller",
                    "path": "/convert",
                    "port": 443,
                }
            },
            "conversionReviewVersions": ["v1"],
        },
    }
    assert committed["metadata"]["annotations"].pop("cert-manager.io/inject-ca-from") == (
        "sample-controller/sample-controller-serving-cert"
    )
    assert printed == committed


def test_drift_message_says_how_to_regenerate() -> None:
    message = crd_drift_message("a: 1\nb: 2\n", "a: 1\nb: 3\n")
    assert "first difference at line 2" in message
    assert message.endswith("regenerate it with: python examples/sample_controller/api.py")


def test_the_schema_means_what_the_hand_written_crd_meant(api: ModuleType) -> None:
    """Field by field: nothing required, replicas an int32 in 1..10, no defaults (the webhook
    defaults replicas: a schema default would hide it), status subresource, the approval
    annotation a ``*.k8s.io`` group needs; v1alpha1 is stored, v1beta1 served too."""
    manifest = yaml.safe_load(api.CRD_PATH.read_text(encoding="utf-8"))
    assert manifest["metadata"]["annotations"] == {
        "api-approved.kubernetes.io": (
            "unapproved, sample controller used by kubectrl's examples and tests"
        ),
        "cert-manager.io/inject-ca-from": "sample-controller/sample-controller-serving-cert",
    }
    spec = manifest["spec"]
    assert (spec["group"], spec["scope"]) == ("samplecontroller.k8s.io", "Namespaced")
    assert spec["names"] == {
        "kind": "Foo",
        "listKind": "FooList",
        "plural": "foos",
        "singular": "foo",
    }
    version, beta = spec["versions"]
    assert (version["name"], version["served"], version["storage"]) == ("v1alpha1", True, True)
    assert (beta["name"], beta["served"], beta["storage"]) == ("v1beta1", True, False)
    assert beta["subresources"] == {"status": {}}
    beta_spec = beta["schema"]["openAPIV3Schema"]["properties"]["spec"]
    beta_deployment = beta_spec["properties"]["deployment"]
    assert beta_deployment["properties"]["name"]["type"] == "string"
    beta_replicas = beta_deployment["properties"]["replicas"]
    assert (beta_replicas["minimum"], beta_replicas["maximum"]) == (1, 10)
    assert not [path for path in keys_of(beta) if path.endswith(".default")]
    assert spec["conversion"]["strategy"] == "Webhook"
    assert version["subresources"] == {"status": {}}
    assert [(c["name"], c["jsonPath"]) for c in version["additionalPrinterColumns"]] == [
        ("Deployment", ".spec.deploymentName"),
        ("Replicas", ".spec.replicas"),
        ("Available", ".status.availableReplicas"),
        ("Age", ".metadata.creationTimestamp"),
    ]
    assert [c["jsonPath"] for c in beta["additionalPrinterColumns"]][:2] == [
        ".spec.deployment.name",
        ".spec.deployment.replicas",
    ]
    root = version["schema"]["openAPIV3Schema"]
    foo_spec = root["properties"]["spec"]
    foo_status = root["properties"]["status"]
    for node in (root, foo_spec, foo_status):
        assert "required" not in node
    replicas = foo_spec["properties"]["replicas"]
    assert {k: replicas[k] for k in ("type", "format", "minimum", "maximum")} == {
        "type": "integer",
        "format": "int32",
        "minimum": 1,
        "maximum": 10,
    }
    assert foo_spec["properties"]["deploymentName"]["type"] == "string"
    available = foo_status["properties"]["availableReplicas"]
    assert (available["type"], available["format"]) == ("integer", "int32")
    assert not [path for path in keys_of(root) if path.endswith(".default")]


def test_the_models_read_what_the_controller_reads(api: ModuleType) -> None:
    foo = api.Foo.model_validate(
        {
            "apiVersion": "samplecontroller.k8s.io/v1alpha1",
            "kind": "Foo",
            "metadata": {"name": "a", "namespace": "ns"},
            "spec": {"deploymentName": "web", "replicas": 3},
            "status": {"availableReplicas": 2},
        }
    )
    assert (foo.spec.deployment_name, foo.spec.replicas) == ("web", 3)
    assert foo.status.available_replicas == 2
    # A Foo without spec (the CRD allows it) reads as spec None, not as an error.
    assert api.Foo.model_validate({"metadata": {"name": "b"}}).spec is None


@pytest.fixture(scope="module")
def controller(api: ModuleType) -> Iterator[ModuleType]:
    # controller.py imports its models as ``api``: let that name be the module loaded above
    # while it is imported, so both see the same Foo class.
    saved = sys.modules.get("api")
    sys.modules["api"] = api
    try:
        yield load("sample_controller_controller", EXAMPLE / "controller.py")
    finally:
        if saved is None:
            del sys.modules["api"]
        else:
            sys.modules["api"] = saved


@pytest.mark.parametrize("name", ["api", "controller"])
def test_the_module_examples_run(name: str, request: pytest.FixtureRequest) -> None:
    # examples/ is outside pytest's doctest collection (testpaths); run its docstrings here.
    module = request.getfixturevalue(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
