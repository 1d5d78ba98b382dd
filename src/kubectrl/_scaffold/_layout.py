"""Lines of scaffolded Python laid out as ``ruff format`` lays them out, whatever the names.

A template line holds a project name, a package, a domain or a kind; with long ones it passes the
project's line length (100, its ``[tool.ruff]``). :func:`layout` splits such a line the way ruff
does for the shapes the templates use: a ``from ... import`` becomes a parenthesised list, one
name a line; a call, a decorator or a ``def`` whose brackets end the line gets its arguments on
an indented line of their own, or one a line with a trailing comma when they do not fit; a
string or a ``/`` path assigned to a name is parenthesised when that makes it fit (else split at
the ``/``). A line it does not recognise is left as it is (the scaffold tests run
``ruff format --check`` on projects with long names to keep the two in step).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize

LINE_LENGTH = 100
_INDENT = "    "
_OPEN = {"(": ")", "[": "]", "{": "}"}
# ruff leaves pragma comments out of a line's width.
_PRAGMA = re.compile(r"\s+#\s*(noqa|type:|pyright:|pylint:)")


def layout_text(text: str) -> str:
    """``text`` with every line :func:`layout` splits, split."""
    out: list[str] = []
    for line in text.split("\n"):
        out.extend(layout(line))
    return "\n".join(out)


def layout(line: str) -> list[str]:
    """One line of Python as ruff formats it: itself when it fits, else split (see the module)."""
    pragma = _PRAGMA.search(line)
    if pragma is not None:
        if pragma.start() <= LINE_LENGTH:
            return [line]
        # ruff splits the code and keeps the pragma after the closing bracket.
        split = layout(line[: pragma.start()])
        split[-1] += line[pragma.start() :]
        return split
    if len(line) <= LINE_LENGTH:
        return [line]
    indent = line[: len(line) - len(line.lstrip())]
    code = line.strip()
    tokens = _tokens(code)
    if tokens is None or any(t.type == tokenize.COMMENT for t in tokens):
        return [line]
    if code.startswith("from ") and " import " in code and "(" not in code:
        head, names = code.split(" import ", 1)
        return [
            f"{indent}{head} import (",
            *(f"{indent}{_INDENT}{n.strip()}," for n in names.split(",")),
            f"{indent})",
        ]
    brackets = _brackets(tokens, first=code.startswith(("def ", "async def ")))
    if brackets is not None:
        start, end = brackets
        return _split_brackets(indent, code, start, end, tokens)
    return _split_assignment(indent, code, line)


def _tokens(code: str) -> list[tokenize.TokenInfo] | None:
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, SyntaxError):
        return None
    ignored = (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER, tokenize.INDENT, tokenize.DEDENT)
    return [t for t in tokens if t.type not in ignored]


def _brackets(tokens: list[tokenize.TokenInfo], *, first: bool) -> tuple[int, int] | None:
    """The indexes of the opening and closing bracket to split at: the last bracket pair of the
    line (ruff's right-hand split) or, for a ``def``, the parameters' (its left-hand split);
    ``None`` when the line ends in no bracket."""
    pairs: list[tuple[int, int]] = []
    stack: list[int] = []
    for index, token in enumerate(tokens):
        if token.type != tokenize.OP:
            continue
        if token.string in _OPEN:
            stack.append(index)
        elif token.string in _OPEN.values():
            if not stack:
                return None
            opened = stack.pop()
            if not stack:
                pairs.append((opened, index))
    if stack or not pairs:
        return None
    if first:
        return pairs[0]
    opened, closed = pairs[-1]
    tail = tokens[closed + 1 :]
    if any(t.string not in (":", ")") for t in tail):
        return None
    return opened, closed


def _split_brackets(
    indent: str, code: str, start: int, end: int, tokens: list[tokenize.TokenInfo]
) -> list[str]:
    opened, closed = tokens[start], tokens[end]
    head = code[: opened.end[1]]
    tail = code[closed.start[1] :]
    items: list[str] = []
    depth = 0
    begin = opened.end[1]
    for token in tokens[start + 1 : end]:
        if token.type == tokenize.OP and token.string in _OPEN:
            depth += 1
        elif token.type == tokenize.OP and token.string in _OPEN.values():
            depth -= 1
        elif token.type == tokenize.OP and token.string == "," and depth == 0:
            items.append(code[begin : token.start[1]].strip())
            begin = token.end[1]
    last = code[begin : closed.start[1]].strip()
    if last:
        items.append(last)
    inner = indent + _INDENT
    together = inner + ", ".join(items)
    if len(together) <= LINE_LENGTH and not code[: closed.start[1]].rstrip().endswith(","):
        return [indent + head, together, indent + tail]
    return [indent + head, *(f"{inner}{item}," for item in items), indent + tail]


def _split_assignment(indent: str, code: str, line: str) -> list[str]:
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return [line]
    statement = tree.body[0] if len(tree.body) == 1 else None
    if not (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.value, (ast.Constant, ast.JoinedStr, ast.BinOp))
    ):
        return [line]
    value = ast.get_source_segment(code, statement.value) or ""
    target = code[: code.index(value)].rstrip()
    inner = indent + _INDENT
    if len(inner + value) <= LINE_LENGTH:
        return [f"{indent}{target} (", inner + value, f"{indent})"]
    if isinstance(statement.value, ast.BinOp) and isinstance(statement.value.op, ast.Div):
        parts: list[str] = []
        node: ast.expr = statement.value
        while isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            parts.insert(0, "/ " + (ast.get_source_segment(code, node.right) or ""))
            node = node.left
        parts.insert(0, ast.get_source_segment(code, node) or "")
        return [f"{indent}{target} (", *(inner + p for p in parts), f"{indent})"]
    return [line]
