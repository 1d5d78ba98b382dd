"""`python -m kubectrl.envtest start|stop|env|status|kubectl`: one control plane per name.

Two shells each start their own (``--name``, ``$KUBECTRL_ENVTEST_NAME``, else one per calling
shell) and find their own again. The detached ``serve`` process is replaced by a stand-in that
writes the state file as ``serve`` does, with this process's pid (alive), so nothing starts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, ClassVar

import pytest

from kubectrl.envtest import __main__ as cli
from kubectrl.envtest.__main__ import default_name, main, running

REAL_POPEN = subprocess.Popen


class FakeServe:
    """Stands in for ``subprocess.Popen([... "serve", "--state-file", F ...])``."""

    started: ClassVar[list[str]] = []

    def __init__(self, command: list[str], **_: Any) -> None:
        state_file = Path(command[command.index("--state-file") + 1])
        name = state_file.parent.name
        FakeServe.started.append(name)
        state = {
            "name": name,
            "pid": os.getpid(),
            "kubeconfig": f"/kubeconfigs/{name}",
            "server": f"https://127.0.0.1:{6443 + len(FakeServe.started)}",
        }
        state_file.write_text(json.dumps(state))

    def poll(self) -> int | None:
        return None

    def terminate(self) -> None:
        raise AssertionError("the stand-in serve process was started: it needs no terminate")


@pytest.fixture
def cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("KUBECTRL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("KUBECTRL_ENVTEST_NAME", raising=False)
    monkeypatch.setattr(cli, "find_binaries", lambda **_: type("B", (), {"kubectl": None})())
    monkeypatch.setattr(subprocess, "Popen", FakeServe)
    FakeServe.started = []
    return tmp_path / "cache"


def test_two_names_start_two_control_planes_with_their_own_state(
    cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["start", "--name", "left"]) == 0
    assert main(["start", "--name", "right"]) == 0
    out = capsys.readouterr().out
    assert "already running" not in out
    assert FakeServe.started == ["left", "right"]
    assert "export KUBECONFIG=/kubeconfigs/right KUBECTRL_ENVTEST_NAME=right" in out
    assert (cache / "run" / "left" / "state.json").exists()
    assert (cache / "run" / "right" / "state.json").exists()
    assert sorted(running()) == ["left", "right"]

    assert main(["env", "--name", "left"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "export KUBECONFIG=/kubeconfigs/left",
        "export KUBECTRL_ENVTEST_NAME=left",
    ]
    # The same name again is the one running, not a third.
    assert main(["start", "--name", "left"]) == 0
    assert "'left' is already running" in capsys.readouterr().out
    assert FakeServe.started == ["left", "right"]


def test_the_name_comes_from_the_environment_and_otherwise_from_the_calling_shell(
    cache: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert default_name({"KUBECTRL_ENVTEST_NAME": "ci"}, 7) == "ci"
    assert default_name({}, 7) == "shell-7"
    assert default_name({}) == f"shell-{os.getppid()}"
    monkeypatch.setenv("KUBECTRL_ENVTEST_NAME", "first-shell")
    assert main(["start"]) == 0
    monkeypatch.setenv("KUBECTRL_ENVTEST_NAME", "second-shell")
    assert main(["start"]) == 0
    assert FakeServe.started == ["first-shell", "second-shell"]
    capsys.readouterr()
    assert main(["env", "--kubeconfig"]) == 0
    assert capsys.readouterr().out.strip() == "/kubeconfigs/second-shell"
    monkeypatch.delenv("KUBECTRL_ENVTEST_NAME")
    # A shell that started none is told which ones run, not handed another shell's.
    assert main(["status"]) == 1
    said = capsys.readouterr().out
    assert f"'shell-{os.getppid()}' is not running" in said
    assert "running under other names: first-shell, second-shell" in said


def test_kubectl_takes_the_control_plane_of_its_name(
    cache: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert main(["start", "--name", "a"]) == 0
    assert main(["start", "--name", "b"]) == 0
    out = tmp_path / "seen.json"
    kubectl = tmp_path / "kubectl"
    kubectl.write_text(
        f"#!{sys.executable}\nimport json, os, sys\n"
        f"json.dump([sys.argv[1:], os.environ.get('KUBECONFIG')], open({str(out)!r}, 'w'))\n"
    )
    kubectl.chmod(0o755)
    monkeypatch.setattr(cli, "find_binary", lambda *_, **__: (kubectl, "test"))
    monkeypatch.setattr(subprocess, "Popen", REAL_POPEN)  # kubectl runs for real
    assert main(["kubectl", "--name", "a", "get", "pods", "--name", "x"]) == 0
    assert json.loads(out.read_text()) == [["get", "pods", "--name", "x"], "/kubeconfigs/a"]
    monkeypatch.setenv("KUBECTRL_ENVTEST_NAME", "b")
    assert main(["kubectl", "get", "pods"]) == 0
    assert json.loads(out.read_text()) == [["get", "pods"], "/kubeconfigs/b"]


def test_a_bad_name_is_refused_naming_it(
    cache: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["start", "--name", "../up"]) == 1
    assert "control plane name '../up' (--name)" in capsys.readouterr().err
    monkeypatch.setenv("KUBECTRL_ENVTEST_NAME", "a b")
    assert main(["stop"]) == 1
    assert "'a b' ($KUBECTRL_ENVTEST_NAME)" in capsys.readouterr().err
    assert FakeServe.started == []
