"""Every third-party module the library imports comes from a distribution it declares: one it
imports at module level is a dependency, one imported on demand (inside a function, or for type
checking only) is at least in an extra. Read from the installed metadata, so it checks what pip
sees."""

from __future__ import annotations

import ast
import importlib.metadata
import pathlib
import re
import sys

import kubectrl

SRC = pathlib.Path(kubectrl.__file__).parent
# Loaded by pytest itself (the pytest11 entry point), so pytest is there whenever it is imported.
PYTEST_PLUGIN = SRC / "envtest" / "pytest_plugin.py"


def _name(requirement: str) -> str:
    match = re.match(r"[A-Za-z0-9._-]+", requirement)
    assert match, requirement
    return re.sub(r"[-_.]+", "-", match.group(0)).lower()


def _declared() -> tuple[set[str], set[str]]:
    """Normalized names of the dependencies, and of everything any extra adds."""
    core: set[str] = set()
    extras: set[str] = set()
    for requirement in importlib.metadata.requires("kubectrl") or []:
        (extras if "extra ==" in requirement else core).add(_name(requirement))
    return core, extras


def _is_type_checking(node: ast.If) -> bool:
    return isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"


def _imports(tree: ast.Module) -> tuple[set[str], set[str]]:
    """Top-level module names imported at module level, and imported anywhere."""
    anywhere: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            anywhere.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            anywhere.add(node.module.split(".")[0])
    eager: set[str] = set()
    pending: list[ast.stmt] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Import):
            eager.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            eager.add(node.module.split(".")[0])
        elif isinstance(node, ast.If) and not _is_type_checking(node):
            pending.extend(node.body + node.orelse)
        elif isinstance(node, ast.Try):
            # A guarded import (`except ImportError`) is optional by construction.
            continue
    return eager, anywhere


def _third_party(modules: set[str]) -> set[str]:
    return {m for m in modules if m not in sys.stdlib_module_names and m != "kubectrl"}


def test_every_imported_distribution_is_declared() -> None:
    core, extras = _declared()
    providers = importlib.metadata.packages_distributions()
    undeclared: list[str] = []
    for path in sorted(SRC.rglob("*.py")):
        eager, anywhere = _imports(ast.parse(path.read_text(encoding="utf-8")))
        where = path.relative_to(SRC.parent)
        for module in sorted(_third_party(anywhere)):
            names = {_name(d) for d in providers.get(module, [module])}
            if path == PYTEST_PLUGIN and names == {"pytest"}:
                continue
            allowed = core if module in eager else core | extras
            if not names & allowed:
                kind = "a dependency" if module in eager else "a dependency or an extra"
                undeclared.append(
                    f"{where} imports {module} ({', '.join(sorted(names))}): not {kind}"
                )
    assert not undeclared, "\n".join(undeclared)


def test_the_scan_sees_module_level_and_deferred_imports() -> None:
    tree = ast.parse(
        "import httpx\n"
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from prometheus_client import CollectorRegistry\n"
        "def f():\n"
        "    import cryptography\n"
    )
    eager, anywhere = _imports(tree)
    assert _third_party(eager) == {"httpx"}
    assert _third_party(anywhere) == {"httpx", "prometheus_client", "cryptography"}
