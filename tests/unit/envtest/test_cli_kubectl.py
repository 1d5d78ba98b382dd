"""`python -m kubectrl.envtest kubectl ...`: which kubeconfig it uses, what it passes on."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from kubectrl.envtest.__main__ import main

FAKE_KUBECTL = """#!{python}
import json, os, sys
with open({out!r}, "w") as out:
    json.dump({{"args": sys.argv[1:], "kubeconfig": os.environ.get("KUBECONFIG")}}, out)
sys.exit(3)
"""


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    out = tmp_path / "recorded.json"
    kubectl = tmp_path / "kubectl"
    kubectl.write_text(FAKE_KUBECTL.format(python=sys.executable, out=str(out)))
    kubectl.chmod(0o755)
    monkeypatch.setenv("TEST_ASSET_KUBECTL", str(kubectl))
    monkeypatch.setenv("KUBECTRL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("KUBEBUILDER_ASSETS", raising=False)
    # etcd and kube-apiserver must resolve too; fake ones do, nothing runs them here.
    for name in ("etcd", "kube-apiserver"):
        fake = tmp_path / "bin" / name
        fake.parent.mkdir(exist_ok=True)
        fake.write_text("#!/bin/sh\n")
        fake.chmod(0o755)
        monkeypatch.setenv(f"TEST_ASSET_{name.upper().replace('-', '_')}", str(fake))
    return out


def test_every_argument_after_kubectl_is_kubectls_and_its_exit_code_is_returned(
    recorded: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KUBECONFIG", "/some/kubeconfig")
    code = main(["kubectl", "-n", "kube-system", "get", "pods", "--help"])
    assert code == 3
    seen = json.loads(recorded.read_text())
    assert seen == {
        "args": ["-n", "kube-system", "get", "pods", "--help"],
        "kubeconfig": "/some/kubeconfig",
    }


def test_the_started_control_planes_kubeconfig_wins_over_kubeconfig(
    recorded: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("KUBECONFIG", "/some/kubeconfig")
    monkeypatch.setenv("KUBECTRL_ENVTEST_NAME", "mine")
    state = tmp_path / "cache" / "run" / "mine" / "state.json"
    state.parent.mkdir(parents=True)
    state.write_text(json.dumps({"pid": os.getpid(), "kubeconfig": "/started/kubeconfig"}))
    main(["kubectl", "get", "nodes"])
    assert json.loads(recorded.read_text())["kubeconfig"] == "/started/kubeconfig"


def test_without_a_control_plane_or_kubeconfig_it_says_how_to_start_one(
    recorded: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("KUBECONFIG", raising=False)
    assert main(["kubectl", "get", "nodes"]) == 1
    assert "python -m kubectrl.envtest start --cluster" in capsys.readouterr().err
    assert not recorded.exists()
