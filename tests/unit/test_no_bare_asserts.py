"""Library code checks its invariants with explicit errors, not ``assert``.

``python -O`` strips assert statements, and a failing one raises a bare ``AssertionError`` that
names nothing; the library raises an error that says what is wrong instead (or is structured so
the type checker proves the invariant). Asserts in docstring examples are fine (they are text);
the scaffold's templates are the generated project's tests, not library modules.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import kubectrl

SRC = Path(kubectrl.__file__).parent

# Files and folders (ending in "/") not yet checked; this list only shrinks (it is empty).
NOT_YET_CONVERTED: list[str] = []


def library_modules() -> list[Path]:
    return sorted(SRC.rglob("*.py"))


def exempt(relative: str) -> bool:
    return any(
        relative.startswith(entry) if entry.endswith("/") else relative == entry
        for entry in NOT_YET_CONVERTED
    )


def bare_asserts(path: Path) -> list[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Assert)]


def test_the_walk_sees_the_library() -> None:
    names = {path.relative_to(SRC).as_posix() for path in library_modules()}
    assert {"errors.py", "workqueue/_queue.py", "runtime/_manager.py"} <= names


def test_the_check_finds_an_assert_statement_but_not_one_in_a_docstring(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text('"""Example::\n\n    >>> assert True\n"""\n\nx = 1\nassert x\n')
    assert bare_asserts(module) == [7]


@pytest.mark.parametrize(
    "path",
    [p for p in library_modules() if not exempt(p.relative_to(SRC).as_posix())],
    ids=lambda p: p.relative_to(SRC).as_posix(),
)
def test_no_assert_statements_in_library_code(path: Path) -> None:
    lines = bare_asserts(path)
    assert not lines, (
        f"{path.relative_to(SRC)}: assert statement(s) at line(s) {lines}: raise an error that "
        "says what is wrong instead, or let the type checker prove the invariant"
    )
