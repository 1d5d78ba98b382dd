"""The CronJob tutorial's project, assembled from docs/tutorial-cronjob/*.md, passes its own tests.

As ``test_tutorial.py`` does for the Foo tutorial: the pages are read in order; the scaffold
commands (``python -m kubectrl init ...``, ``python -m kubectrl create api ...``) and the
manifests generator (``python -m <package>.manifests``) of ``bash`` blocks run in the project
directory, and every block preceded by ``<!-- file: <path> -->`` is written to that path (a later
block for the same path replaces an earlier one). One more step: a ``toml`` block preceded by
``<!-- project-dependencies -->`` is the ``dependencies = [...]`` line of the project's
``pyproject.toml`` (the tutorial adds ``croniter``), which replaces the scaffolded one. Then the
project's unit tests (on FakeAPI) and ``mypy --strict`` run, and in the integration suite its
envtest tests (a real kube-apiserver: webhooks, conversion).
"""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
import yaml
from test_tutorial import Step, run

TUTORIAL = Path(__file__).resolve().parents[2] / "docs" / "tutorial-cronjob"
PROJECT = "cronjob-tutorial"
PACKAGE = "cronjob_tutorial"

_FENCE = re.compile(r"^(`{3,})\s*([\w+-]*)")
_FILE = re.compile(r"^<!--\s*file:\s*(?P<path>\S+)\s*-->$")
_DEPENDENCIES = "<!-- project-dependencies -->"
_COMMAND = re.compile(r"^python -m (kubectrl (init|create) |\w+\.manifests$)")
_DEPENDENCY_LINE = re.compile(r"^dependencies = \[.*\]$", re.MULTILINE)


def steps() -> list[Step]:
    """The tutorial's commands, files and dependency line, in the order the pages give them."""
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
            where = f"docs/tutorial-cronjob/{page.name}:{start}"
            previous = lines[index - 1].strip() if index else ""
            marker = _FILE.match(previous)
            if marker:
                path = PurePosixPath(marker.group("path"))
                assert not path.is_absolute(), f"{where}: {path} must be relative to the project"
                assert ".." not in path.parts, f"{where}: {path} leaves the project"
                result.append(Step(where, path=str(path), text="\n".join(body) + "\n"))
            elif previous == _DEPENDENCIES:
                assert language == "toml", f"{where}: the dependencies are a toml block"
                result.append(Step(where, path="pyproject.toml", text="\n".join(body)))
            elif language in ("bash", "sh", "console"):
                for line in body:
                    if _COMMAND.match(line.strip()):
                        result.append(Step(where, command=tuple(shlex.split(line))))
            index = end + 1
    return result


def assemble(root: Path) -> Path:
    """Follow the tutorial in ``root/cronjob-tutorial``; the project directory."""
    project = root / PROJECT
    project.mkdir()
    for step in steps():
        if step.command:
            assert step.command[0] == "python", step
            done = run(project, *step.command[1:])
            assert done.returncode == 0, f"{step.where}: {shlex.join(step.command)}:\n{done.stderr}"
        elif step.path == "pyproject.toml" and step.text.startswith("dependencies"):
            pyproject = project / "pyproject.toml"
            text = pyproject.read_text(encoding="utf-8")
            assert _DEPENDENCY_LINE.search(text), f"{step.where}: no dependencies line to replace"
            line = step.text.strip()
            text = _DEPENDENCY_LINE.sub(lambda _: line, text, count=1)  # noqa: B023 (used at once)
            pyproject.write_text(text, encoding="utf-8")
        else:
            target = project / step.path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(step.text, encoding="utf-8")
    return project


def test_the_tutorial_gives_its_commands_files_and_dependencies_in_order(tmp_path: Path) -> None:
    all_steps = steps()
    commands = [" ".join(s.command) for s in all_steps if s.command]
    assert commands[0].startswith(f"python -m kubectrl init {PROJECT}")
    assert commands[1].startswith("python -m kubectrl create api --group batch --version v1")
    files = {s.path for s in all_steps if s.path}
    assert {
        "pyproject.toml",
        f"{PACKAGE}/api/v1/cronjob.py",
        f"{PACKAGE}/api/v2/cronjob.py",
        f"{PACKAGE}/controllers/cronjob.py",
        f"{PACKAGE}/webhooks/cronjob.py",
        "tests/test_cronjob_controller.py",
        "tests/integration/test_cronjob_envtest.py",
    } <= files
    order = [s.path or " ".join(s.command) for s in all_steps]
    create_v2 = next(i for i, s in enumerate(order) if "--version v2" in s)
    assert order.index(f"{PACKAGE}/api/v2/cronjob.py") > create_v2
    (line,) = [s.text for s in all_steps if s.text.startswith("dependencies")]
    assert '"croniter' in line, line


def _keys(schema: Any) -> set[str]:
    """Every mapping key anywhere in ``schema``."""
    if isinstance(schema, dict):
        return set(schema).union(*(_keys(v) for v in schema.values()))
    if isinstance(schema, list):
        return set().union(*(_keys(v) for v in schema))
    return set()


def test_the_crd_embeds_the_job_template_and_converts_through_the_webhook(tmp_path: Path) -> None:
    project = assemble(tmp_path)
    crd = yaml.safe_load(
        (project / "config/crd/cronjobs.batch.tutorial.kubebuilder.io.yaml").read_text()
    )
    assert crd["spec"]["conversion"]["strategy"] == "Webhook"
    versions = {v["name"]: v for v in crd["spec"]["versions"]}
    assert set(versions) == {"v1", "v2"}
    for version in versions.values():
        spec = version["schema"]["openAPIV3Schema"]["properties"]["spec"]
        template = spec["properties"]["jobTemplate"]["properties"]["spec"]
        # The Job's own schema, field for field: no preserve-unknown-fields escape hatch.
        assert "x-kubernetes-preserve-unknown-fields" not in _keys(template)
        pod = template["properties"]["template"]["properties"]["spec"]
        assert pod["required"] == ["containers"]


def test_the_tutorial_project_passes_its_unit_tests_and_mypy(tmp_path: Path) -> None:
    project = assemble(tmp_path)
    check = run(project, "-m", f"{PACKAGE}.manifests", "--check")
    assert check.returncode == 0, check.stderr
    result = run(project, "-m", "pytest", "-p", "no:cacheprovider", "-q")
    assert result.returncode == 0, result.stdout + result.stderr
    assert " passed" in result.stdout
    assert "failed" not in result.stdout
    sources = [p.read_text() for p in project.rglob("*.py")]
    assert not [s for s in sources if "type: ignore" in s], "the project needs no type: ignore"
    cache = f"--cache-dir={tmp_path / 'mypy-cache'}"
    typed = run(project, "-m", "mypy", "--strict", cache, PACKAGE, "tests")
    assert typed.returncode == 0, typed.stdout + typed.stderr


@pytest.mark.integration
def test_the_tutorial_project_passes_its_envtest_tests(tmp_path: Path) -> None:
    project = assemble(tmp_path)
    result = run(
        project, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-m", "integration", timeout=900
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 passed" in result.stdout, result.stdout


def test_this_interpreter_can_run_the_project() -> None:
    """The project's schedule parser (and its stubs, for mypy) are in the test environment."""
    done = run(Path.cwd(), "-c", "import croniter; print(croniter.__name__)")
    assert done.returncode == 0, f"{sys.executable}: croniter is missing ({done.stderr})"
