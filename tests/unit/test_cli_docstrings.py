"""The docstring examples of ``kubectrl.__main__``, which pytest's doctest collection skips.

pytest never collects doctests from a ``__main__.py`` (it would run the program), so they are run
here explicitly.
"""

from __future__ import annotations

import doctest

import kubectrl.__main__ as cli


def test_cli_docstring_examples_pass() -> None:
    result = doctest.testmod(cli, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0, "kubectrl.__main__ has no docstring example left"
    assert result.failed == 0
