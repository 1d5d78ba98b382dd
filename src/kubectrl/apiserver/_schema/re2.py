"""Go regular expressions (RE2 syntax and semantics) through Google's RE2 engine.

The apiserver checks a schema's ``pattern`` and CEL's ``matches()`` with Go's ``regexp``
(RE2): ``(?i)`` inside the pattern, ``\\z``, ``\\pL``, no look-arounds or backreferences, ``$``
only at the very end of the text, ``\\w``/``\\s``/``\\d`` ASCII-only. Python's ``re`` differs on
each of them, so the core compiles patterns with the ``google-re2`` binding (the ``testing``
extra: ``pip install 'kubectrl[testing]'``), never with ``re``.
"""

from __future__ import annotations

import functools
import importlib
from typing import Any

from kubectrl.apiserver._status import FeatureNotImplementedError

__all__ = ["PatternError", "compile_pattern", "search"]

#: The extra that brings the engine in.
EXTRA = "kubectrl[testing]"


class PatternError(ValueError):
    """A pattern RE2 does not accept; the message is the engine's."""


@functools.lru_cache(maxsize=1)
def _engine() -> Any:
    try:
        return importlib.import_module("re2")
    except ImportError:
        raise FeatureNotImplementedError(
            f"schema patterns and CEL regexes without the RE2 engine (install {EXTRA}, which "
            "brings google-re2)"
        ) from None


@functools.lru_cache(maxsize=1024)
def compile_pattern(pattern: str) -> Any:
    """The compiled RE2 program of ``pattern``; :class:`PatternError` when RE2 refuses it."""
    re2 = _engine()
    options = re2.Options()
    options.log_errors = False
    try:
        return re2.compile(pattern, options)
    except re2.error as err:
        detail = err.args[0] if err.args else err
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", "replace")
        raise PatternError(str(detail)) from None


def search(pattern: str, text: str) -> bool:
    """Whether ``pattern`` matches somewhere in ``text`` (Go's ``regexp.MatchString``)."""
    return compile_pattern(pattern).search(text) is not None
