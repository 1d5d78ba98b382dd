"""Run ``python -m kubectrl`` and a scaffolded project's pytest in subprocesses (same venv)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def kubectrl(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m kubectrl ARGS`` in ``cwd``."""
    return subprocess.run(
        [sys.executable, "-m", "kubectrl", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def project_pytest(cwd: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """The project's own test suite, as its developer runs it (``pytest`` in its directory)."""
    return project_python(
        cwd, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args, timeout=timeout
    )


def project_python(cwd: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``python ARGS`` in the project's directory, with this interpreter."""
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


def scaffold(root: Path, *, webhooks: bool = True) -> Path:
    """``init guestbook`` + ``create api`` (Guestbook, with webhooks) in the empty dir ``root``."""
    done = kubectrl(root, "init", "guestbook", "--domain", "my.domain")
    assert done.returncode == 0, done.stderr
    extra = ["--webhooks"] if webhooks else []
    create = ["create", "api", "--group", "webapp", "--version", "v1", "--kind", "Guestbook"]
    done = kubectrl(root, *create, *extra)
    assert done.returncode == 0, done.stderr
    return root
