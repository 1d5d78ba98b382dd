"""The tutorial's final project, assembled from docs/tutorial/*.md, passes its own tests.

The pages are read in order. In ```` ```bash ```` blocks, the scaffold commands
(``python -m kubectrl init ...``, ``python -m kubectrl create api ...``) and the manifests
generator (``python -m <package>.manifests``) run in the project directory; every block preceded
by ``<!-- file: <path> -->`` is written to that path of the project (a later block for the same
path replaces an earlier one). Then the project's unit tests run, and in the integration suite
its envtest tests: the tutorial cannot show code that does not work.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import pytest

TUTORIAL = Path(__file__).resolve().parents[2] / "docs" / "tutorial"
PROJECT = "foo-operator"

_FENCE = re.compile(r"^(`{3,})\s*([\w+-]*)")
_FILE = re.compile(r"^<!--\s*file:\s*(?P<path>\S+)\s*-->$")
_COMMAND = re.compile(r"^python -m (kubectrl (init|create) |\w+\.manifests$)")


@dataclass(frozen=True)
class Step:
    """A command to run, or a file to write, and where the page says so."""

    where: str
    command: tuple[str, ...] = ()
    path: str = ""
    text: str = ""


def steps() -> list[Step]:
    """The tutorial's commands and files, in the order the pages give them."""
    result: list[Step] = []
    for page in sorted(TUTORIAL.glob("*.md")):
        lines = page.read_text(encoding="utf-8").splitlines()
        index = 0
        while index < len(lines):
            opening = _FENCE.match(lines[index])
            if not opening:
                index += 1
                continue
            fence, language = opening.groups()
            start = index + 1
            end = start
            while not lines[end].startswith(fence):
                end += 1
            body = lines[start:end]
            where = f"docs/tutorial/{page.name}:{start}"
            marker = _FILE.match(lines[index - 1].strip()) if index else None
            if marker:
                path = PurePosixPath(marker.group("path"))
                assert not path.is_absolute(), f"{where}: {path} must be relative to the project"
                assert ".." not in path.parts, f"{where}: {path} leaves the project"
                result.append(Step(where, path=str(path), text="\n".join(body) + "\n"))
            elif language in ("bash", "sh", "console"):
                for line in body:
                    if _COMMAND.match(line.strip()):
                        result.append(Step(where, command=tuple(shlex.split(line))))
            index = end + 1
    return result


def run(cwd: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``python ARGS`` with this interpreter (the project's dependencies are this venv's)."""
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


def assemble(root: Path) -> Path:
    """Follow the tutorial in ``root/foo-operator``; the project directory."""
    project = root / PROJECT
    project.mkdir()
    for step in steps():
        if step.command:
            assert step.command[0] == "python", step
            done = run(project, *step.command[1:])
            assert done.returncode == 0, f"{step.where}: {shlex.join(step.command)}:\n{done.stderr}"
        else:
            target = project / step.path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(step.text, encoding="utf-8")
    return project


def test_the_tutorial_gives_its_scaffold_commands_and_files_in_order() -> None:
    all_steps = steps()
    commands = [" ".join(s.command) for s in all_steps if s.command]
    assert commands[0].startswith("python -m kubectrl init foo-operator")
    assert commands[1].startswith("python -m kubectrl create api --group samples")
    files = {s.path for s in all_steps if s.path}
    assert {
        "foo_operator/api/v1/foo.py",
        "foo_operator/api/v2/foo.py",
        "foo_operator/controllers/foo.py",
        "foo_operator/webhooks/foo.py",
        "tests/test_foo_controller.py",
        "tests/integration/test_foo_envtest.py",
    } <= files
    # The v2 model is written after `create api --version v2` made its place.
    order = [s.path or " ".join(s.command) for s in all_steps]
    create_v2 = next(i for i, s in enumerate(order) if "--version v2" in s)
    assert order.index("foo_operator/api/v2/foo.py") > create_v2


def test_the_tutorial_project_passes_its_unit_tests(tmp_path: Path) -> None:
    project = assemble(tmp_path)
    check = run(project, "-m", "foo_operator.manifests", "--check")
    assert check.returncode == 0, check.stderr
    result = run(project, "-m", "pytest", "-p", "no:cacheprovider", "-q")
    assert result.returncode == 0, result.stdout + result.stderr
    assert " passed" in result.stdout
    assert "failed" not in result.stdout
    cache = f"--cache-dir={tmp_path / 'mypy-cache'}"
    typed = run(project, "-m", "mypy", "--strict", cache, "foo_operator", "tests")
    assert typed.returncode == 0, typed.stdout + typed.stderr


@pytest.mark.integration
def test_the_tutorial_project_passes_its_envtest_tests(tmp_path: Path) -> None:
    project = assemble(tmp_path)
    result = run(
        project, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-m", "integration", timeout=900
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 passed" in result.stdout, result.stdout
