"""Generate the blocking client interfaces from the asyncio ones.

The client's verbs are declared once, as asyncio protocols, in
``src/kubectrl/client/_interfaces.py``. Their blocking twins (``BlockingReader``,
``BlockingWriter``, ...) are the same declarations without ``async``: this script writes them to
``src/kubectrl/client/_interfaces_blocking.py``, formatted by ruff. With ``--check`` it writes
nothing and exits 1 when that file is not what it would write (``nox -s lint`` runs it so).

The rewrite, token by token, of the part of the source after its ``# unasync:`` marker:
``async def`` -> ``def``; ``AsyncIterator`` -> ``Iterator``; ``await ``, ``async for`` and
``async with`` in the examples lose ``async``/``await``; each protocol class ``Name`` defined
there (and every reference to it) -> ``BlockingName``. The imports are the source's, with the
same renames, keeping only the names the generated code uses.

Usage::

    python scripts/unasync.py            # regenerate
    python scripts/unasync.py --check    # fail if the generated file is stale
"""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "src" / "kubectrl" / "client" / "_interfaces.py"
TARGET = ROOT / "src" / "kubectrl" / "client" / "_interfaces_blocking.py"
MARKER = "# unasync:"

HEADER = '''"""The blocking client interfaces, generated from :mod:`kubectrl.client._interfaces` by
``scripts/unasync.py``: do not edit (``nox -s lint`` fails when the two drift).
"""
'''

_WORDS = [
    (re.compile(r"\basync def "), "def "),
    (re.compile(r"\basync for "), "for "),
    (re.compile(r"\basync with "), "with "),
    (re.compile(r"\bawait "), ""),
    (re.compile(r"\bAsyncIterator\b"), "Iterator"),
]


def _protocols(tree: ast.Module, start_line: int) -> list[str]:
    return [
        node.name
        for node in tree.body
        if isinstance(node, ast.ClassDef) and node.lineno > start_line
    ]


def _rewrite(text: str, names: list[str]) -> str:
    for pattern, replacement in _WORDS:
        text = pattern.sub(replacement, text)
    if names:
        # Protocol names, not the qualified ones of other modules (``client.Reader`` stays).
        pattern = re.compile(r"(?<![.\w])(" + "|".join(map(re.escape, names)) + r")\b")
        text = pattern.sub(r"Blocking\1", text)
    return text


def _imports(tree: ast.Module, body: str) -> list[str]:
    """The source's imports, renamed, each keeping only the names ``body`` uses."""
    lines: list[str] = []
    type_checking: list[str] = []
    for node in tree.body:
        target = lines
        statements: list[ast.stmt] = [node]
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            target, statements = type_checking, node.body
        for statement in statements:
            if not isinstance(statement, ast.ImportFrom) or statement.module == "__future__":
                continue
            kept = []
            for alias in statement.names:
                name = _rewrite(alias.name, [])
                if re.search(rf"(?<![.\w]){re.escape(name)}\b", body):
                    kept.append(name)
            if kept:
                target.append(f"from {statement.module} import {', '.join(sorted(set(kept)))}")
    if type_checking:
        lines.insert(0, "from typing import TYPE_CHECKING")
        lines += ["", "if TYPE_CHECKING:", *(f"    {line}" for line in type_checking)]
    return lines


def blocking_body(source: str, marker: int, names: list[str]) -> str:
    """The protocols after ``marker``, rewritten blocking. A verb's docstring keeps its first
    paragraph and points at the asyncio declaration, which documents it in full (the blocking
    clients' verbs take their documentation from there too)."""
    lines = _rewrite("\n".join(source.splitlines()[marker:]), names).split("\n")
    tree = ast.parse("\n".join(lines))
    replacements: list[tuple[int, int, list[str]]] = []
    for cls in tree.body:
        if not isinstance(cls, ast.ClassDef):
            continue
        twin = cls.name.removeprefix("Blocking")
        doc = ast.get_docstring(cls)
        if doc:
            node = cls.body[0]
            indent = " " * node.col_offset
            first = doc.split("\n\n")[0].split("\n")
            text = [f'{indent}"""{first[0]}', *(f"{indent}{line}" for line in first[1:])]
            text += ["", f"{indent}The blocking twin of :class:`{twin}`, documented there."]
            replacements.append(
                (node.lineno, node.end_lineno or node.lineno, [*text, f'{indent}"""'])
            )
        for fn in cls.body:
            doc = ast.get_docstring(fn) if isinstance(fn, ast.FunctionDef) else None
            if not doc or not isinstance(fn, ast.FunctionDef):
                continue
            node = fn.body[0]
            indent = " " * node.col_offset
            first = doc.split("\n\n")[0].split("\n")
            text = [f'{indent}"""{first[0]}', *(f"{indent}{line}" for line in first[1:])]
            text += [
                "",
                f"{indent}The blocking twin of :meth:`{twin}.{fn.name}`, documented there.",
            ]
            text += [f'{indent}"""']
            replacements.append((node.lineno, node.end_lineno or node.lineno, text))
    for start, end, text in sorted(replacements, reverse=True):
        lines[start - 1 : end] = text
    return "\n".join(lines)


def generate() -> str:
    """The blocking interfaces module, formatted."""
    source = SOURCE.read_text()
    tree = ast.parse(source)
    marker = next(
        (n for n, line in enumerate(source.splitlines(), 1) if line.startswith(MARKER)), None
    )
    if marker is None:
        raise SystemExit(f"{SOURCE}: no {MARKER!r} line marks where the protocols start")
    names = _protocols(tree, marker)
    body = blocking_body(source, marker, names)
    aliases = [
        ast.get_source_segment(source, node) or ""
        for node in tree.body
        if isinstance(node, ast.AnnAssign)
        and node.lineno < marker
        and isinstance(node.target, ast.Name)
        and re.search(rf"\b{node.target.id}\b", body)
    ]
    exported = ", ".join(f'"Blocking{name}"' for name in sorted(names))
    text = "\n".join(
        [
            HEADER,
            "from __future__ import annotations",
            "",
            *_imports(tree, body + "\n".join(aliases)),
            "",
            f"__all__ = [{exported}]",
            "",
            *aliases,
            "",
            body,
        ]
    )
    return _format(text)


def _ruff(args: list[str], text: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "ruff", *args, "--stdin-filename", str(TARGET), "-"],
        input=text,
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"ruff {args[0]} failed on the generated code:\n{done.stderr}")
    return done.stdout


def _format(text: str) -> str:
    # imports sorted (isort's rules, as the project's lint has them), then formatted; a line
    # of text that the longer names pushed past the limit is broken at its last space before it
    formatted = _ruff(["format"], _ruff(["check", "--fix-only", "--select", "I"], text))
    return "\n".join(_fold(line) for line in formatted.split("\n"))


def _fold(line: str, limit: int = 100) -> str:
    if len(line) <= limit:
        return line
    cut = line.rfind(" ", 0, limit + 1)
    indent = line[: len(line) - len(line.lstrip())]
    if cut <= len(indent):
        return line
    return line[:cut] + "\n" + _fold(indent + line[cut + 1 :], limit)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if the generated file is stale")
    args = parser.parse_args(argv)
    wanted = generate()
    current = TARGET.read_text() if TARGET.exists() else ""
    if args.check:
        if current != wanted:
            sys.stderr.write(
                f"{TARGET.relative_to(ROOT)} is stale: run `python scripts/unasync.py` "
                f"(it is generated from {SOURCE.relative_to(ROOT)})\n"
            )
            return 1
        return 0
    if current != wanted:
        TARGET.write_text(wanted)
        sys.stdout.write(f"wrote {TARGET.relative_to(ROOT)}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
