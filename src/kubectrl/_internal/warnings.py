"""The HTTP ``Warning`` header (RFC 7234 5.5) as the apiserver writes it and clients read it:
``299 - "text"``, the text quoted with ``\\"`` and ``\\\\`` escapes, an optional quoted date,
several entries comma-separated. The API servers write it; the client reads it."""

from __future__ import annotations

import re

__all__ = ["parse_warning_header", "warning_header"]

# code SP agent SP quoted-text [SP quoted-date], entries separated by commas.
_ENTRY = re.compile(
    r'\s*(?P<code>\d{3})\s+(?P<agent>[^\s"]+)\s+"(?P<text>(?:[^"\\]|\\.)*)"'
    r'(?:\s+"(?:[^"\\]|\\.)*")?\s*(?:,|$)'
)
_ESCAPE = re.compile(r"\\(.)")


def parse_warning_header(value: str) -> list[tuple[int, str, str]]:
    """The ``(code, agent, text)`` warnings of one ``Warning`` header value (RFC 7234 5.5;
    several may be comma-separated). Raises ``ValueError`` naming a malformed value.

    Example::

        >>> parse_warning_header('299 - "unknown field \\\\"spec.x\\\\""')
        [(299, '-', 'unknown field "spec.x"')]
    """
    found: list[tuple[int, str, str]] = []
    position = 0
    value = value.strip()
    while position < len(value):
        match = _ENTRY.match(value, position)
        if match is None or match.end() == position:
            raise ValueError(f"malformed Warning header {value!r} at offset {position}")
        text = _ESCAPE.sub(r"\1", match.group("text"))
        found.append((int(match.group("code")), match.group("agent"), text))
        position = match.end()
    return found


def warning_header(text: str, *, code: int = 299, agent: str = "-") -> str:
    """The ``Warning`` header value for ``text``, as the apiserver writes it.

    Example::

        >>> warning_header('unknown field "spec.x"')
        '299 - "unknown field \\\\"spec.x\\\\""'
    """
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'{code} {agent} "{escaped}"'
