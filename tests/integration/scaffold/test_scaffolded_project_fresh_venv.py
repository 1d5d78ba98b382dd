"""A project scaffolded from this checkout (``init --kubectrl-source <checkout>``) installs
kubectrl from its ``kubectrl @ file://...`` dependency into a fresh virtualenv, as its own
``nox -s tests`` does (``pip install -e .[test]``; here without ``-e``), and its tests pass
there.

No network: the fresh venv sees the third-party packages of this test venv (a ``.pth`` naming a
directory of links to them, kubectrl's own left out) and pip runs with ``--no-index``, so the
one package it installs is kubectrl, built from the checkout, and the project itself.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

import kubectrl

pytestmark = pytest.mark.integration

CHECKOUT = Path(kubectrl.__file__).resolve().parents[2]
_NOT_SHARED = ("kubectrl", "_editable_impl_kubectrl", "__editable__", "guestbook")


def run(cwd: Path, *command: str | Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    environment = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PYTEST", "PYTHON", "VIRTUAL_ENV", "PIP_"))
    }
    environment["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return subprocess.run(
        [str(part) for part in command],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,
    )


def fresh_venv(root: Path) -> Path:
    """A venv without kubectrl whose other packages are this venv's; its python."""
    venv = root / "venv"
    done = run(root, sys.executable, "-m", "venv", "--without-pip", venv)
    assert done.returncode == 0, done.stderr
    python = venv / "bin" / "python"
    purelib = run(root, python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])")
    shared = root / "shared-site-packages"
    shared.mkdir()
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if not entry.name.startswith(_NOT_SHARED) and entry.suffix != ".pth":
            (shared / entry.name).symlink_to(entry)
    Path(purelib.stdout.strip(), "shared.pth").write_text(f"{shared}\n")
    return python


def test_a_project_scaffolded_from_a_checkout_installs_it_and_passes_its_tests(
    tmp_path: Path,
) -> None:
    project = tmp_path / "guestbook"
    project.mkdir()
    kubectrl_cli = (sys.executable, "-m", "kubectrl")
    done = run(project, *kubectrl_cli, "init", "guestbook", "--kubectrl-source", CHECKOUT)
    assert done.returncode == 0, done.stderr
    create = ["create", "api", "--group", "webapp", "--version", "v1", "--kind", "Guestbook"]
    done = run(project, *kubectrl_cli, *create, "--webhooks")
    assert done.returncode == 0, done.stderr

    python = fresh_venv(tmp_path)
    missing = run(project, python, "-c", "import kubectrl")
    assert missing.returncode != 0, "the fresh venv must not see this venv's kubectrl"

    install = run(
        project,
        sys.executable,
        "-m",
        "pip",
        "--python",
        python,
        "install",
        "--no-index",
        "--no-build-isolation",  # hatchling from this venv: nothing is downloaded
        ".[test]",  # not -e: hatchling's editable build wants `editables`, which isolation adds
        timeout=600,
    )
    assert install.returncode == 0, install.stdout + install.stderr
    where = run(project, python, "-c", "import kubectrl; print(kubectrl.__file__)")
    assert where.returncode == 0, where.stderr
    assert Path(where.stdout.strip()).is_relative_to(tmp_path / "venv"), where.stdout

    tests = run(project, python, "-m", "pytest", "-p", "no:cacheprovider", "-q", timeout=600)
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert " passed" in tests.stdout
