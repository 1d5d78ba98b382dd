"""The contract suite's marks as data, for the docs' known-differences table.

``python tests/contract/contract_marks.py`` prints a Markdown table of every
``known_difference`` (the fake raises UnsupportedFeatureError), ``fake_only`` (the envtest
control plane cannot show it) and ``fake_xfail`` (a fake bug still open) mark, read from the
test files' source (nothing is imported or run).
"""

from __future__ import annotations

import ast
import dataclasses
import sys
from pathlib import Path

KINDS = {
    "known_difference": "not implemented by FakeAPI (raises UnsupportedFeatureError)",
    "fake_only": "not shown by the envtest control plane (checked on the fake only)",
    "fake_xfail": "open FakeAPI bug (expected to fail on the fake)",
}


@dataclasses.dataclass(frozen=True)
class ContractMark:
    kind: str
    reason: str
    test: str
    path: str


def _mark_of(decorator: ast.expr) -> tuple[str, str] | None:
    if not isinstance(decorator, ast.Call) or not isinstance(decorator.func, ast.Attribute):
        return None
    kind = decorator.func.attr
    inner = decorator.func.value
    if kind not in KINDS or not (isinstance(inner, ast.Attribute) and inner.attr == "mark"):
        return None
    args = decorator.args
    if (
        len(args) != 1
        or not isinstance(args[0], ast.Constant)
        or not isinstance(args[0].value, str)
    ):
        raise ValueError(f"@pytest.mark.{kind} needs one string reason")
    return kind, args[0].value


def collect(directory: Path | None = None) -> list[ContractMark]:
    """Every contract mark in ``directory`` (this one by default), in file and line order."""
    root = directory or Path(__file__).parent
    found: list[ContractMark] = []
    for path in sorted(root.glob("test_*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in tree.body:
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for decorator in node.decorator_list:
                mark = _mark_of(decorator)
                if mark is not None:
                    found.append(ContractMark(mark[0], mark[1], node.name, path.name))
    return found


def markdown_table(marks: list[ContractMark]) -> str:
    """A Markdown table: behaviour, what differs, and the contract case that pins it."""
    lines = ["| Behaviour | Difference | Contract case |", "| --- | --- | --- |"]
    for mark in marks:
        lines.append(f"| {mark.reason} | {KINDS[mark.kind]} | `{mark.path}::{mark.test}` |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.stdout.write(markdown_table(collect()) + "\n")
