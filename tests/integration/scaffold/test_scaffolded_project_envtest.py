"""A scaffolded project's envtest test passes: ``init`` + ``create api --webhooks``, then the
project's ``pytest -m integration`` (its controller against a real local kube-apiserver, which
the project's test session starts through kubectrl's pytest plugin)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration


def run(cwd: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    return subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,
    )


def test_the_scaffolded_projects_envtest_test_passes(tmp_path: Path) -> None:
    assert run(tmp_path, "-m", "kubectrl", "init", "guestbook").returncode == 0
    create = ["create", "api", "--group", "webapp", "--version", "v1", "--kind", "Guestbook"]
    done = run(tmp_path, "-m", "kubectrl", *create, "--webhooks")
    assert done.returncode == 0, done.stderr
    result = run(
        tmp_path, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-m", "integration", timeout=600
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout, result.stdout
