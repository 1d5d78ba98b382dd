"""The fenced Python blocks of the Markdown docs, with what the docs tests do with each.

A block is a fence opened by ```` ```python ```` (or ```` ```py ````). An HTML comment on the
line right before the fence says what happens to it:

* no comment: executed, in order with the page's other blocks, in one namespace per page;
* ``<!-- docs-test: typecheck -->``: not executed; type-checked with mypy;
* ``<!-- docs-test: envtest -->``: executed with ``KUBECONFIG`` set to a real control plane's
  admin kubeconfig;
* ``<!-- docs-test: skip: <reason> -->``: not run (the reason is required);
* ``<!-- file: <relative path> -->``: a file of the tutorial's project, written and tested by
  ``test_tutorial.py``, not run by the page runner.

A block may ``await`` at top level (as in ``python -m asyncio``): the blocks of a page share one
event loop. Blocks in other languages are not run.
"""

from __future__ import annotations

import importlib
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

MODES = ("run", "typecheck", "envtest", "skip", "file")

_FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,})\s*(?P<info>[^`\s]*)[^`]*$")
_MARKER = re.compile(r"^\s*<!--\s*(?P<body>.*?)\s*-->\s*$")
_PYTHON = {"python", "py", "python3"}


class MarkerError(ValueError):
    """A ``<!-- docs-test: ... -->`` or ``<!-- file: ... -->`` comment the runner cannot read."""


@dataclass(frozen=True)
class Block:
    """One fenced Python block of a page."""

    page: Path
    line: int  # 1-based line of the first line of code (the line after the fence)
    source: str
    mode: str  # one of MODES
    argument: str = ""  # the skip reason, or the file path of a `file:` block

    @property
    def where(self) -> str:
        """``docs/page.md:LINE``, for messages and tracebacks."""
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def _mode(page: Path, line_no: int, previous: str) -> tuple[str, str]:
    match = _MARKER.match(previous)
    if match is None:
        return "run", ""
    body = match.group("body")
    if body.startswith("file:"):
        path = body.removeprefix("file:").strip()
        if not path:
            raise MarkerError(f"{page}:{line_no}: `<!-- file: -->` needs a relative path")
        return "file", path
    if not body.startswith("docs-test:"):
        return "run", ""  # an unrelated comment
    directive = body.removeprefix("docs-test:").strip()
    if directive in ("typecheck", "envtest"):
        return directive, ""
    if directive.startswith("skip"):
        reason = directive.removeprefix("skip").lstrip(":").strip()
        if not reason:
            raise MarkerError(f"{page}:{line_no}: `docs-test: skip` needs a reason (skip: why)")
        return "skip", reason
    raise MarkerError(
        f"{page}:{line_no}: unknown directive `docs-test: {directive}` "
        "(expected typecheck, envtest or skip: <reason>)"
    )


def blocks(page: Path) -> list[Block]:
    """The Python blocks of ``page`` in order, each with its mode."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if opening is None:
            i += 1
            continue
        fence, indent = opening.group("fence"), opening.group("indent")
        body: list[str] = []
        j = i + 1
        while j < len(lines):
            stripped = lines[j].strip()
            if stripped.startswith(fence[0] * len(fence)) and stripped.strip(fence[0]) == "":
                break
            body.append(lines[j][len(indent) :] if lines[j].startswith(indent) else lines[j])
            j += 1
        if opening.group("info").lower() in _PYTHON:
            previous = lines[i - 1] if i > 0 else ""
            mode, argument = _mode(page, i, previous)
            source = textwrap.dedent("\n".join(body)) + "\n"
            found.append(Block(page, i + 2, source, mode, argument))
        i = j + 1
    return found


def pages() -> list[Path]:
    """Every Markdown page under docs/, sorted."""
    return sorted(DOCS.rglob("*.md"))


def resolve(dotted: str) -> object:
    """Import the longest importable prefix of ``dotted`` and get the rest as attributes."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            target: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attribute in parts[cut:]:
            target = getattr(target, attribute)
        return target
    raise ModuleNotFoundError(dotted)
