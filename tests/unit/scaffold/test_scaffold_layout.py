"""A fresh scaffold is formatted whatever its names, ignores the tools' caches, and its
reconciler takes a live client as well as the cached one.

controller-runtime's scaffolded reconcilers hold a ``client.Client`` (kubebuilder's
pkg/plugins/golang/v4/scaffolds/internal/templates/controllers/controller.go), the interface
both the manager's cached client and ``client.New``'s live one satisfy; its tests build the
reconciler with the envtest's live client (``k8sClient``). Here that interface is
``kubectrl.client.KubeClient``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from scaffold_helpers import project_python

from kubectrl import _scaffold
from kubectrl._scaffold._layout import layout


def _ruff() -> str:
    beside = Path(sys.executable).with_name("ruff")
    found = str(beside) if beside.exists() else shutil.which("ruff")
    if found is None:
        pytest.skip("ruff is not installed (nox -s lint --install-only installs it)")
    return found


def _project(root: Path, name: str, domain: str, group: str, kind: str) -> Path:
    _scaffold.init(root, name, domain=domain)
    _scaffold.create_api(root, group=group, version="v1alpha1", kind=kind, webhooks=True,
                         generate=False)  # fmt: skip
    # A second version, a cluster-scoped kind and one sorted before it: imports added at the
    # markers of every registry.
    _scaffold.create_api(root, group=group, version="v1", kind=kind, generate=False)
    _scaffold.create_api(root, group="g", version="v1", kind="Zebra", namespaced=False,
                         webhooks=True, generate=False)  # fmt: skip
    _scaffold.create_api(root, group="g", version="v1", kind="Ant", generate=False)
    return root


@pytest.mark.parametrize(
    ("name", "domain", "group", "kind"),
    [
        ("a", "my.domain", "webapp", "Guestbook"),
        ("guestbook", "example.com", "ship", "Frigate"),
        ("my-operator", "my.domain", "webapp", "Guestbook"),
        ("x1-2-3", "k8s.example.org", "batch", "CronJob"),
        # 56 characters, the longest name: a package of 56 with underscores.
        ("a-very-long-project-name-that-makes-long-lines-everywhere"[:56], "my.domain", "g", "K"),
        (
            "operator-for-the-long-named-resources-of-a-big-company",
            "platform.engineering.some-very-long-company-name.example.com",
            "infrastructuremanagement",
            "AVeryLongKindNameThatMakesLongLines",
        ),
    ],
)
def test_a_fresh_scaffold_passes_ruff_format_check_whatever_the_names(
    tmp_path: Path, name: str, domain: str, group: str, kind: str
) -> None:
    root = _project(tmp_path, name, domain, group, kind)
    result = subprocess.run(
        [_ruff(), "format", "--check", "--diff", "--no-cache", "."],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]


@pytest.mark.parametrize(
    "line",
    [
        f"from {'x' * 80}.api import a, b",
        f"from {'x' * 60} import c as {'d' * 40}",
        f'    run("python", "-m", "{"x" * 40}", "{"y" * 40}")',
        f'    parser = argparse.ArgumentParser(prog="{"x" * 60}", description=__doc__)',
        f'@rbac.rule({"K" * 50}, subresources=["status"], verbs=["get", "update", "patch"])',
        f"    Builder(manager).for_({'K' * 40}).complete({'K' * 40}Reconciler(manager.client))",
        f"    def validate_update(self, old: {'K' * 40}, new: {'K' * 40}) -> list[str] | None:",
        f'NAME = "{"x" * 80}{"x" * 80}"',
        f'NAME = "{"x" * 80}.x"',
        f'CRD = CONFIG / "crd" / "{"x" * 90}.yaml"',
        f'CRD = CONFIG / "crd" / "{"x" * 80}.yaml"',
        f'print(f"{"x" * 90}: {{err}}", file=sys.stderr)  # noqa: T201',
    ],
)
def test_layout_splits_a_line_as_ruff_format_does(line: str, tmp_path: Path) -> None:
    """Each line laid out is what ``ruff format`` makes of it (a def gets a body to parse)."""
    body = "        pass\n" if line.lstrip().startswith("def ") else ""
    wrap = "class C:\n" if line.startswith("    ") else ""
    if line.startswith("@"):
        body = "def f() -> None:\n    pass\n"
    source = wrap + line + "\n" + body
    ours = wrap + "\n".join(layout(line)) + "\n" + body
    path = tmp_path / "sample.py"
    path.write_text(source, encoding="utf-8")
    subprocess.run(
        [_ruff(), "format", "--no-cache", "--line-length", "100", str(path)],
        capture_output=True,
        check=True,
    )
    assert ours == path.read_text(encoding="utf-8")


def test_the_gitignore_covers_the_tools_caches_and_build_artefacts(tmp_path: Path) -> None:
    _scaffold.init(tmp_path, "guestbook")
    ignored = (tmp_path / ".gitignore").read_text(encoding="utf-8").splitlines()
    for entry in (
        "__pycache__/",
        ".pytest_cache/",
        ".mypy_cache/",
        ".ruff_cache/",
        ".nox/",
        ".venv/",
        "build/",
        "*.egg-info/",
        ".coverage",
    ):
        assert entry in ignored, entry


def test_the_reconciler_takes_a_live_async_client_as_well_as_the_cached_one(
    tmp_path: Path,
) -> None:
    """A test that builds the reconciler with an ``AsyncClient`` (as a ported Go test passes
    envtest's live client) type-checks under ``mypy --strict``, and so does the manager's
    cached client the scaffold's ``setup`` passes."""
    root = tmp_path
    _scaffold.init(root, "guestbook", domain="my.domain")
    _scaffold.create_api(root, group="webapp", version="v1", kind="Guestbook", generate=False)
    (root / "tests" / "test_live_client.py").write_text(
        '''"""The reconciler built with a live client."""

from kubectrl.client import AsyncClient
from kubectrl.testing import FakeAPI

from guestbook.controllers.guestbook import GuestbookReconciler


async def test_a_live_client() -> None:
    api = FakeAPI()
    async with AsyncClient(api.config()) as client:
        reconciler = GuestbookReconciler(client)
        assert reconciler.client is client
''',
        encoding="utf-8",
    )
    cache = f"--cache-dir={tmp_path / 'mypy-cache'}"
    typed = project_python(root, "-m", "mypy", "--strict", cache, "guestbook", "tests")
    assert typed.returncode == 0, typed.stdout + typed.stderr
