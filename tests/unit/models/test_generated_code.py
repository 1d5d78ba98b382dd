"""Generated modules are code a project commits: formatted as ``ruff format`` formats them and
clean under ``mypy --strict``, for every corpus CRD."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from . import corpus


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    directory = tmp_path_factory.mktemp("generated_code")
    return [corpus.write(d, directory) for d in corpus.corpus().values()]


def _ruff() -> str:
    for candidate in (
        corpus.ROOT / ".nox" / "lint" / "bin" / "ruff",
        Path(sys.executable).with_name("ruff"),
    ):
        if candidate.exists():
            return str(candidate)
    found = shutil.which("ruff")
    if found is None:
        pytest.skip("ruff is not installed (nox -s lint --install-only installs it)")
    return found


def test_generated_modules_are_ruff_formatted(generated: list[Path]) -> None:
    result = subprocess.run(
        [_ruff(), "format", "--check", "--diff", "--no-cache", "--line-length", "100"]
        + [str(p) for p in generated],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]


def test_generated_modules_pass_mypy_strict(generated: list[Path]) -> None:
    directory = generated[0].parent
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-incremental",
            "--python-version",
            "3.10",
            "--config-file",
            "",
            *[p.name for p in generated],
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=directory,
    )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert f"no issues found in {len(generated)} source files" in result.stdout
