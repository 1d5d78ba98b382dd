"""Python source text, laid out as ``ruff format`` lays it out (line length 100).

A generated module must pass ``ruff format --check`` without ruff being a dependency, so the
generator builds expressions as small trees and renders each one flat when it fits, else exploded
one element per line with a trailing comma (which keeps ruff from joining it back).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

LINE_LENGTH = 100
INDENT = "    "


@dataclasses.dataclass(frozen=True)
class Atom:
    """Source text that is never split (a name, a literal)."""

    text: str


@dataclasses.dataclass(frozen=True)
class Group:
    """``head(items)``, ``head[items]``, ``[items]``, ``{items}`` or ``(items)``.

    ``items`` are expressions or ``(prefix, expression)`` pairs (``key=value``, ``"k": v``).
    """

    head: str
    open: str
    close: str
    items: tuple[Item, ...]
    #: A one-element tuple keeps its comma when flat: ``("name",)``.
    tuple_comma: bool = False


@dataclasses.dataclass(frozen=True)
class Union:
    """``A | B``: split, if ever, inside its members."""

    members: tuple[Expr, ...]


Expr = Atom | Group | Union
Item = Expr | tuple[str, Expr]


def string(value: str) -> Atom:
    """A string literal with ruff's preferred quotes (double, unless that needs more escapes)."""
    text = repr(value)
    if text.startswith("'") and '"' not in value:
        text = '"' + text[1:-1].replace("\\'", "'") + '"'
    return Atom(text)


def literal(value: Any) -> Expr:
    """A JSON value as a Python literal."""
    if value is None or isinstance(value, bool):
        return Atom(repr(value))
    if isinstance(value, int):
        return Atom(repr(value))
    if isinstance(value, float):
        if not math.isfinite(value):
            # repr gives `nan` / `inf`: names, not literals (and not JSON numbers either).
            raise TypeError(f"not a JSON number: {value!r}")
        return Atom(repr(value))
    if isinstance(value, str):
        return string(value)
    if isinstance(value, dict):
        return Group(
            "", "{", "}", tuple((f"{flat(string(k))}: ", literal(v)) for k, v in value.items())
        )
    if isinstance(value, (list, tuple)):
        return Group("", "[", "]", tuple(literal(v) for v in value))
    raise TypeError(f"not a JSON value: {value!r}")


def call(name: str, *args: Expr, **kwargs: Expr) -> Group:
    """``name(args, key=value)``."""
    items: list[Item] = list(args)
    items.extend((f"{key}=", value) for key, value in kwargs.items())
    return Group(name, "(", ")", tuple(items))


def subscript(name: str, *args: Expr) -> Group:
    """``name[args]``."""
    return Group(name, "[", "]", tuple(args))


def tuple_of(values: Sequence[Expr]) -> Group:
    """``(a, b)``; ``(a,)`` for one."""
    return Group("", "(", ")", tuple(values), tuple_comma=len(values) == 1)


def flat(expr: Item) -> str:
    """The expression on one line."""
    if isinstance(expr, tuple):
        return expr[0] + flat(expr[1])
    if isinstance(expr, Atom):
        return expr.text
    if isinstance(expr, Union):
        return " | ".join(flat(m) for m in expr.members)
    inner = ", ".join(flat(i) for i in expr.items)
    if expr.tuple_comma:
        inner += ","
    return f"{expr.head}{expr.open}{inner}{expr.close}"


def lines(expr: Item, indent: int, before: int, after: int) -> list[str]:
    """The expression laid out from column ``before`` (its first line is unindented, the caller
    prefixes it), with ``after`` characters following its last line; later lines are indented
    ``indent`` levels."""
    text = flat(expr)
    if before + len(text) + after <= LINE_LENGTH or not _splittable(expr):
        return [text]
    prefix = ""
    if isinstance(expr, tuple):
        prefix, expr = expr
        before += len(prefix)
    if isinstance(expr, Union):
        # ruff splits the widest member that is splittable; members here are kept short enough
        # that the last one (the type, before `| None`) is the one to split.
        out = [prefix]
        for index, member in enumerate(expr.members):
            sep = "" if index == 0 else " | "
            rest = sum(len(" | " + flat(m)) for m in expr.members[index + 1 :])
            member_lines = lines(member, indent, before + len(out[-1]) + len(sep), after + rest)
            out[-1] += sep + member_lines[0]
            out.extend(member_lines[1:])
        return out
    if not isinstance(expr, Group):
        return [prefix + text]
    pad = INDENT * (indent + 1)
    out = [f"{prefix}{expr.head}{expr.open}"]
    for item in expr.items:
        item_lines = lines(item, indent + 1, len(pad), 1)
        out.append(pad + item_lines[0])
        out.extend(item_lines[1:])
        out[-1] += ","
    out.append(INDENT * indent + expr.close)
    return out


def _splittable(expr: Item) -> bool:
    if isinstance(expr, tuple):
        return _splittable(expr[1])
    if isinstance(expr, Group):
        return bool(expr.items)
    if isinstance(expr, Union):
        return any(_splittable(m) for m in expr.members)
    return False


# What a docstring or a comment cannot hold as itself: a NUL is not even allowed in Python
# source; the other control characters, the line and paragraph separators and the format
# characters (bidi overrides, zero-width characters) would end a line for str.splitlines (or for
# the tokenizer, in a comment), be invisible, or show a reader other text than Python reads. They
# are exactly the characters str.isprintable refuses (with the non-ASCII spaces, escaped too so
# that nothing is invisible), and are written as escapes of the same text.


_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def escaped(text: str, *, newlines: bool = False) -> str:
    """``text`` with each character ``str.isprintable`` refuses (but ``\\n`` if ``newlines``)
    written as its Python escape (``\\x00``, ``\\u202e``, ``\\U000e0001``)."""
    if (text.replace("\n", "") if newlines else text).isprintable():
        return text
    out: list[str] = []
    for char in text:
        if char.isprintable() or (newlines and char == "\n"):
            out.append(char)
            continue
        code = ord(char)
        if char in _SHORT:
            out.append(_SHORT[char])
        elif code < 0x100:
            out.append(f"\\x{code:02x}")
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    return "".join(out)


def comment(text: str) -> str:
    """Text for a ``# comment``: on one line whatever it holds (backslashes doubled, line ends and
    every other unprintable character escaped), so it can never end the comment."""
    return escaped(text.replace("\\", "\\\\"))


def docstring(text: str, indent: int) -> list[str]:
    """A docstring as ruff formats it: trailing spaces and the common indentation of the
    continuation lines removed, closing quotes on their own line when there are several lines."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").expandtabs(8)
    text = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    text = escaped(text, newlines=True)
    raw = [line.rstrip() for line in text.split("\n")]
    while raw and not raw[0].strip():
        raw.pop(0)
    while raw and not raw[-1].strip():
        raw.pop()
    if not raw:
        return []
    first, rest = raw[0].strip(), raw[1:]
    margin = min((len(r) - len(r.lstrip()) for r in rest if r.strip()), default=0)
    pad = INDENT * indent
    body = [pad + r[margin:] if r.strip() else "" for r in rest]
    if not body:
        closing = ' """' if first.endswith('"') else '"""'
        return [f'{pad}"""{first}{closing}']
    return [f'{pad}"""{first}', *body, f'{pad}"""']
